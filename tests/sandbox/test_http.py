"""The same checks over HTTP, against ``surveykit sandbox serve`` on a free loopback port."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.client import AsyncClient, Client
from surveykit.results import read_results
from surveykit.sandbox.generator import generate_results_frame
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

SOURCE = "447700900100"
MOBILE = "447700900123"


@pytest.fixture
def http(served: ServedSandbox) -> Iterator[Client]:
    """A client of the served sandbox, reset to the sample data first."""
    control(served, "POST", "/_sandbox/reset")
    with Client(served.base_url, served.token, max_retries=0) as c:
        yield c


def control(served: ServedSandbox, method: str, path: str, **kwargs: Any) -> Any:
    response = httpx.request(method, served.base_url + path, timeout=30,
                             headers={"Authorization": f"Basic {served.token}"}, **kwargs)
    response.raise_for_status()
    return response.json()


def test_served_url_is_loopback_and_prints_tokens(served: ServedSandbox) -> None:
    url = httpx.URL(served.base_url)
    assert url.host == "127.0.0.1" and url.port and url.port > 0
    assert served.token.startswith("sandbox-admin-")
    assert served.restricted_token.startswith("sandbox-analyst-")


def test_message_rules_over_http(http: Client, served: ServedSandbox) -> None:
    sent = http.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=True)
    assert sent.created
    with pytest.raises(sk.SendRejectedError) as info:
        http.messages.send(destination="442079460123", source=SOURCE, message="Hi",
                           reply=False, lookup=True)
    assert info.value.send_response.number_type == "Landline"
    with pytest.raises(sk.BadRequestError):
        http.messages.send(destination=SOURCE, source=SOURCE, message="Hi", reply=False)
    journal = control(served, "GET", "/_sandbox/journal", params={"kind": "message"})
    assert [entry["message_id"] for entry in journal] == [sent.message_id]


def test_email_roles_and_text_errors_over_http(http: Client, served: ServedSandbox) -> None:
    assert http.messages.send_email(to="a@example.org", from_="surveys", subject="Hi",
                                    content="<p>x</p>").created
    with pytest.raises(sk.BadRequestError) as info:
        http.messages.send_email(to="a@example.org", from_="nowhere", subject="Hi",
                                 content="<p>x</p>")
    assert info.value.body == "unable to route email"
    with Client(served.base_url, served.restricted_token) as restricted, \
            pytest.raises(sk.PermissionDeniedError):
        restricted.messages.send_email(to="a@example.org", from_="surveys", subject="Hi",
                                       content="<p>x</p>")
    with Client(served.base_url, "not-a-token") as stranger, \
            pytest.raises(sk.AuthenticationError):
        stranger.webhooks.list()


def test_other_routes_over_http(http: Client) -> None:
    assert http.messages.lookup("447700900901").number_type == "VoIP"
    assert http.keywords.create("Http1").keyword == "HTTP1"
    assert http.data.import_records("CSAT-SMS-2026", [
        {"firstName": "Net", "mobileNumber": "447700900190"}])[0].ok
    assert len(http.webhooks.list()) == 3
    table = read_results(http.surveys.get_results("CSAT-SMS-2026", format="PIPE").encode(),
                         format="PIPE")
    assert "Net" in set(table["firstName"])


def test_short_link_redirect_over_http(http: Client, served: ServedSandbox) -> None:
    link = http.tinyurl.register("https://example.org/over-http")
    assert link.startswith(served.base_url + "/")
    response = httpx.get(link, follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "https://example.org/over-http"
    clicks = control(served, "GET", "/_sandbox/events", params={"type": "Click"})
    assert [event["Message"] for event in clicks] == ["https://example.org/over-http"]


def test_dropped_connection_after_processing_over_http(http: Client,
                                                       served: ServedSandbox) -> None:
    control(served, "POST", "/_sandbox/faults",
            json={"route": "/v3.2/Message", "drop": "after", "times": 1})
    with pytest.raises(sk.OutcomeUnknownError):
        http.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=False)
    messages = control(served, "GET", "/_sandbox/journal", params={"kind": "message"})
    assert len(messages) == 1  # accepted once, never resent
    requests = control(served, "GET", "/_sandbox/journal",
                       params={"kind": "request", "path": "/v3.2/Message"})
    assert [r["fault"] for r in requests] == ["drop-after"]
    assert http.messages.send(destination=MOBILE, source=SOURCE, message="Hi",
                              reply=False).created


def test_dropped_connection_before_processing_over_http(http: Client,
                                                        served: ServedSandbox) -> None:
    control(served, "POST", "/_sandbox/faults",
            json={"route": "/v3.2/Message", "drop": "before", "times": 1})
    with pytest.raises(sk.OutcomeUnknownError):  # a socket closed after sending: ambiguous
        http.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=False)
    assert control(served, "GET", "/_sandbox/journal", params={"kind": "message"}) == []


def test_status_fault_and_clock_over_http(http: Client, served: ServedSandbox) -> None:
    control(served, "POST", "/_sandbox/faults", json={"route": "/v3.2/Webhook", "status": 503,
                                                      "times": 1})
    with pytest.raises(sk.ServerError):
        http.webhooks.list()
    assert http.webhooks.list()
    later = "2026-03-02T12:00:00+00:00"
    http.messages.send(destination=MOBILE, source=SOURCE, message="Later", reply=False,
                       when=datetime.fromisoformat(later))
    assert control(served, "GET", "/_sandbox/events", params={"type": "Receipt"}) == []
    assert control(served, "POST", "/_sandbox/clock/advance", json={"to": later}) == {
        "now": later}
    receipts = control(served, "GET", "/_sandbox/events", params={"type": "Receipt"})
    assert [r["Status"] for r in receipts] == ["Sent", "Delivered"]


def test_simulated_stop_over_http(http: Client, served: ServedSandbox) -> None:
    event = control(served, "POST", "/_sandbox/simulate/reply",
                    json={"from": MOBILE, "text": "STOP"})
    assert event["Type"] == "Stop"
    with pytest.raises(sk.SendRejectedError):
        http.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=False)


def test_simulated_answers_over_http(http: Client, served: ServedSandbox) -> None:
    # Respondent 12025550178 of NPS-WA-Q1-2026 was invited and has answered nothing.
    given = control(served, "POST", "/_sandbox/simulate/answers",
                    json={"surveyReference": "NPS-WA-Q1-2026", "respondent": "12025550178",
                          "answers": {"Q1": 9, "Q2": "Quick, and the staff were kind"}})
    table = http.surveys.results("NPS-WA-Q1-2026")
    row = table.set_index("respondentId").loc[given["respondentId"]]
    assert (row["mobileNumber"], row["Q1"], row["Q2"]) == (
        "12025550178", 9, "Quick, and the staff were kind")
    assert pd.isna(row["Q3"]) and pd.isna(row["completed"]) and row["sortOrder"] == 2
    # No respondent, no answers: the first who has not completed answers every open question.
    drawn = control(served, "POST", "/_sandbox/simulate/answers",
                    json={"surveyReference": "NPS-WA-Q1-2026"})
    table = http.surveys.results("NPS-WA-Q1-2026")
    row = table.set_index("respondentId").loc[drawn["respondentId"]]
    assert pd.notna(row["completed"]) and row["sortOrder"] == 3
    refused = httpx.post(served.base_url + "/_sandbox/simulate/answers", timeout=30,
                         headers={"Authorization": f"Basic {served.token}"},
                         json={"surveyReference": "NPS-WA-Q1-2026", "answers": {"Q9": "x"}})
    assert refused.status_code == 400 and "Q9" in refused.json()["detail"]


def test_simulated_click_over_http(http: Client, served: ServedSandbox) -> None:
    link = http.tinyurl.register("https://example.org/survey/nps")
    sent = http.messages.send(destination=MOBILE, source=SOURCE, reply=False,
                              message=f"Tell us how we did: {link}")
    clicked = control(served, "POST", "/_sandbox/simulate/click",
                      json={"url": link, "by": MOBILE})
    assert clicked == {"fullUrl": "https://example.org/survey/nps", "clicks": 1}
    (event,) = control(served, "GET", "/_sandbox/events", params={"type": "Click"})
    assert (event["MessageID"], event["Destination"], event["Source"], event["Message"]) == (
        sent.message_id, MOBILE, link, "https://example.org/survey/nps")
    unknown = httpx.post(served.base_url + "/_sandbox/simulate/click", timeout=30,
                         headers={"Authorization": f"Basic {served.token}"},
                         json={"url": served.base_url + "/NoSuchLink"})
    assert unknown.status_code == 404 and "NoSuchLink" in unknown.json()["detail"]


async def test_async_client_over_http(served: ServedSandbox) -> None:
    async with AsyncClient(served.base_url, served.token) as c:
        assert (await c.messages.lookup("442079460123")).number_type == "Landline"


def test_state_survives_a_restart_with_db(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with serve_sandbox("--db", db, "--seed", "9") as first, \
            Client(first.base_url, first.token) as c:
        sent = c.messages.send(destination=MOBILE, source=SOURCE, message="Kept", reply=True)
        c.keywords.create("Restart", response="Still here")
        link = c.tinyurl.register("https://example.org/restart", slashtag="restart")
        c.data.import_records("NPS-WA-Q1-2026", [{"firstName": "Ayo", "lastName": "Bello",
                                                  "mobileNumber": "447700900195"}])
        control(first, "POST", "/_sandbox/simulate/reply",
                json={"from": "447700900196", "text": "STOP", "to": SOURCE})
        token = first.token
    with serve_sandbox("--db", db, "--seed", "9") as second, \
            Client(second.base_url, second.token) as c:
        assert second.token == token
        assert "RESTART" in [k.keyword for k in c.keywords.list()]
        messages = control(second, "GET", "/_sandbox/journal", params={"kind": "message"})
        assert [m["message_id"] for m in messages] == [sent.message_id]
        assert "447700900196" in control(second, "GET", "/_sandbox/stoplist")
        table = read_results(c.surveys.get_results("NPS-WA-Q1-2026").encode(), format="JSON")
        assert "Ayo" in set(table["firstName"])
        # The link was made on the first server's port; its path still resolves.
        response = httpx.get(second.base_url + httpx.URL(link).path)
        assert response.status_code == 302
        assert response.headers["location"] == "https://example.org/restart"


def test_generated_survey_over_http(http: Client, served: ServedSandbox) -> None:
    added = control(served, "POST", "/_sandbox/surveys/generate",
                    json={"reference": "GEN-HTTP", "rows": 2_500, "questions": 3, "seed": 5})
    assert added == {"reference": "GEN-HTTP", "surveyId": 9001, "rows": 2_500, "questions": 3,
                     "seed": 5, "nasty": False, "wave": 0, "design": False}
    table = http.surveys.results("GEN-HTTP")
    expected = generate_results_frame(2_500, seed=5, questions=3, nasty=False)
    assert len(table) == 2_500
    assert list(table["respondentId"]) == list(expected["respondentId"])
    assert set(table["surveyReference"]) == {"GEN-HTTP"}
    assert [c for c in table.columns if c.startswith("Q")] == ["Q1", "Q2", "Q3"]
    # The sandbox's seed is the default, as for Sandbox.add_generated_survey.
    seeded = control(served, "POST", "/_sandbox/surveys/generate",
                     json={"reference": "GEN-SEEDED", "rows": 0, "surveyId": 9002})
    assert (seeded["seed"], seeded["surveyId"]) == (0, 9002)
    assert len(http.surveys.results("GEN-SEEDED")) == 0
    wave = control(served, "POST", "/_sandbox/surveys/generate",
                   json={"reference": "GEN-W2", "rows": 300, "seed": 5, "wave": 2})
    assert wave["wave"] == 2
    expected = generate_results_frame(300, seed=5, nasty=False, wave=2)
    assert list(http.surveys.results("GEN-W2")["Q1"].astype("string")) == list(
        expected["Q1"].astype("string")
    )
    panel = control(served, "POST", "/_sandbox/surveys/generate",
                    json={"reference": "GEN-PANEL", "rows": 300, "seed": 5, "design": True})
    assert panel["design"] is True
    expected = generate_results_frame(300, seed=5, nasty=False, design=True)
    served_panel = http.surveys.results("GEN-PANEL")
    assert list(served_panel["household"]) == list(expected["household"])
    assert list(served_panel["baseWeight"]) == [float(w) for w in expected["baseWeight"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"rows": 10}, "reference", id="reference-missing"),
        pytest.param({"reference": " ", "rows": 10}, "reference", id="reference-blank"),
        pytest.param({"reference": "G"}, "rows", id="rows-missing"),
        pytest.param({"reference": "G", "rows": -1}, "rows", id="rows-negative"),
        pytest.param({"reference": "G", "rows": "many"}, "rows", id="rows-text"),
        pytest.param({"reference": "G", "rows": True}, "rows", id="rows-bool"),
        pytest.param({"reference": "G", "rows": 1, "questions": 0}, "questions", id="questions"),
        pytest.param(
            {"reference": "G", "rows": 1, "questions": 501}, "questions", id="questions-too-many"
        ),
        pytest.param({"reference": "G", "rows": 1, "seed": 1.5}, "seed", id="seed"),
        pytest.param({"reference": "G", "rows": 1, "nasty": "yes"}, "nasty", id="nasty"),
        pytest.param({"reference": "G", "rows": 1, "surveyId": 0}, "surveyId", id="survey-id"),
        pytest.param({"reference": "G", "rows": 1, "wave": -1}, "wave", id="wave-negative"),
        pytest.param({"reference": "G", "rows": 1, "design": "yes"}, "design", id="design"),
        pytest.param({"reference": "G", "rows": 1, "colour": "red"}, "colour", id="unknown"),
    ],
)
def test_generate_refuses_bad_fields_naming_them(served: ServedSandbox, body: dict[str, Any],
                                                 field: str) -> None:
    response = httpx.post(served.base_url + "/_sandbox/surveys/generate", json=body, timeout=30,
                          headers={"Authorization": f"Basic {served.token}"})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert field in detail
    if field != "colour":
        assert detail.startswith(f"{field}:")
    # Nothing was added.
    with Client(served.base_url, served.token) as c, pytest.raises(sk.NotFoundError):
        c.surveys.get_results("G")


def test_cli_generate_adds_surveys() -> None:
    with serve_sandbox("--no-sample-data", "--generate", "GEN-CLI:1200",
                       "--generate", "GEN:TWO:30") as server, \
            Client(server.base_url, server.token) as c:
        assert len(c.surveys.results("GEN-CLI")) == 1_200
        everything = c.surveys.results("*")  # by survey id: 9001, then 9002
        assert list(everything["surveyReference"].drop_duplicates()) == ["GEN-CLI", "GEN:TWO"]
        assert (everything["surveyReference"] == "GEN:TWO").sum() == 30
        assert "region" not in everything.columns


def test_cli_generate_design_draws_panels() -> None:
    with serve_sandbox("--no-sample-data", "--generate", "GEN-PANEL:200",
                       "--generate-design") as server, \
            Client(server.base_url, server.token) as c:
        panel = c.surveys.results("GEN-PANEL")
    expected = generate_results_frame(200, seed=0, nasty=False, design=True)
    assert list(panel["region"]) == list(expected["region"])
    assert list(panel["household"]) == list(expected["household"])


@pytest.mark.parametrize("spec", ["GEN-CLI", "GEN-CLI:", ":10", "GEN-CLI:-5", "GEN-CLI:ten"])
def test_cli_refuses_a_bad_generate_spec(spec: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "surveykit.cli", "sandbox", "serve", "--port", "0",
         "--generate", spec],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert "--generate" in done.stderr and "REF:ROWS" in done.stderr


def test_cli_refuses_a_port_in_use(served: ServedSandbox) -> None:
    port = str(httpx.URL(served.base_url).port)
    done = subprocess.run(
        [sys.executable, "-m", "surveykit.cli", "sandbox", "serve", "--port", port],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 1 and "cannot bind" in done.stderr


CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_headers_conformance,response_schema_conformance")


@pytest.mark.slow
@pytest.mark.parametrize(
    "selection",
    [
        pytest.param(["--phases", "examples,fuzzing", "--max-examples", "40"], id="fuzzing"),
        pytest.param(["--phases", "coverage", "--include-operation-id", "Webhook_List",
                      "--include-operation-id", "Keyword_List",
                      "--include-operation-id", "Keyword_Delete",
                      "--include-operation-id", "Message_Lookup",
                      "--include-operation-id", "Data_Import"], id="coverage"),
    ],
)
def test_schemathesis_finds_no_server_error_or_schema_break(
    served: ServedSandbox, selection: list[str], tmp_path: Path
) -> None:
    schemathesis = Path(sys.executable).with_name("schemathesis")
    done = subprocess.run(
        [str(schemathesis), "--no-color", "run", f"{served.base_url}/openapi.json",
         "-H", f"Authorization: Basic {served.token}", "--checks", CHECKS,
         "--workers", "2", "--seed", "1", *selection],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
