"""POST /v3.2/Survey/GetResults in the sandbox: formats, filters, streaming."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import anyio
import httpx
import pandas as pd
import pytest
from lxml import etree

import surveykit as sk
from surveykit.client import Client
from surveykit.results import RESPONDENT_COLUMNS, read_results
from surveykit.sandbox import Sandbox

FORMATS = ["CSV", "PIPE", "TAB", "XML", "JSON"]


def frame(client: Client, reference: str = "*", fmt: str = "JSON", **options: Any
          ) -> pd.DataFrame:
    text = client.surveys.get_results(reference, format=fmt, **options)
    return read_results(text.encode(), format=fmt, dtypes={"sortOrder": "Int64"})


def test_layout_is_respondent_columns_then_questions(client: Client) -> None:
    table = frame(client, "CSAT-SMS-2026")
    assert list(table.columns) == [*RESPONDENT_COLUMNS, "Q1", "Q2", "Q3"]
    assert len(table) == 12
    zoe = table.iloc[0]
    assert (zoe["firstName"], zoe["mobileNumber"], zoe["Q2"], zoe["sortOrder"]) == (
        "Zoë", "447700900123", "Collect an order", 3)


def test_all_surveys_union_their_questions(client: Client) -> None:
    table = frame(client, "*")
    assert list(table.columns)[-4:] == ["Q1", "Q2", "Q3", "Q4"]
    assert set(table["surveyReference"]) == {"CSAT-SMS-2026", "NPS-WA-Q1-2026", "EVT-DDLIS-2026"}
    assert len(table) == 12 + 11 + 8


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_gives_the_same_table(client: Client, fmt: str) -> None:
    pd.testing.assert_frame_equal(frame(client, "*", fmt), frame(client, "*", "JSON"))


@pytest.mark.parametrize("fmt", ["CSV", "PIPE", "TAB"])
def test_header_false_leaves_the_header_out(client: Client, fmt: str) -> None:
    with_header = client.surveys.get_results("NPS-WA-Q1-2026", format=fmt, header=True)
    without = client.surveys.get_results("NPS-WA-Q1-2026", format=fmt, header=False)
    assert with_header.startswith('"respondentId"')
    assert not without.startswith('"respondentId"')
    assert with_header.endswith(without)


def test_sort_order_keeps_respondents_with_enough_answers(client: Client) -> None:
    every = frame(client, "CSAT-SMS-2026", sort_order=1)
    at_least_two = frame(client, "CSAT-SMS-2026", sort_order=2)
    assert len(every) == 12
    assert len(at_least_two) == 9
    assert (at_least_two["sortOrder"] >= 2).all()


def test_since_keeps_what_changed_since(client: Client, sandbox: Sandbox) -> None:
    mark = sandbox.now()
    assert len(frame(client, "*", since=mark)) == 0
    sandbox.advance(timedelta(minutes=5))
    sandbox.simulate_answers("NPS-WA-Q1-2026", "12025550178", {"Q1": "8"})
    client.data.import_records("EVT-DDLIS-2026", [
        {"firstName": "Rui", "lastName": "Sousa", "emailAddress": "rui.sousa@example.com"}])
    newer = frame(client, "*", since=mark + timedelta(minutes=1))
    assert sorted(newer["firstName"]) == ["Hannah", "Rui"]


def test_unknown_survey_is_404(client: Client) -> None:
    with pytest.raises(sk.NotFoundError):
        client.surveys.get_results("NOPE")


def test_unknown_format_is_400(sandbox: Sandbox) -> None:
    response = _post(sandbox, json={"format": "EXCEL", "surveyReference": "*"})
    assert response.status_code == 400 and "format" in response.json()["errors"]


def test_xml_request_body(sandbox: Sandbox) -> None:
    body = (b"<ResultsRequestModel><format>JSON</format><header>true</header>"
            b"<surveyReference>EVT-DDLIS-2026</surveyReference><sortOrder>4</sortOrder>"
            b"</ResultsRequestModel>")
    response = _post(sandbox, content=body, headers={"Content-Type": "text/xml"})
    assert response.status_code == 200, response.text
    rows = response.json()
    assert {row["sortOrder"] for row in rows} == {"4"} and len(rows) == 5


@pytest.mark.parametrize(("fmt", "media"), [("CSV", "text/csv"), ("XML", "application/xml"),
                                            ("JSON", "application/json"),
                                            ("TAB", "text/tab-separated-values")])
def test_content_type_follows_the_format(sandbox: Sandbox, fmt: str, media: str) -> None:
    response = _post(sandbox, json={"format": fmt, "surveyReference": "*"})
    assert response.headers["content-type"].startswith(media)
    if fmt == "XML":
        assert etree.fromstring(response.content).tag == "Results"


def test_awkward_answers_survive(client: Client) -> None:
    table = frame(client, "*", "CSV")
    answers = set(table["Q2"].dropna()) | set(table["Q3"].dropna()) | set(table["Q4"].dropna())
    assert "Engineer came the next day,\nfixed the boiler in an hour." in answers
    assert "null" in answers and "N/A" in answers and "None" in answers
    assert "<b>Loved</b> the venue & the pastéis de nata." in answers


async def test_large_results_are_streamed_in_pieces() -> None:
    box = Sandbox(seed=3, sample_data=False)
    box.add_generated_survey("BENCH-60K", 60_000, questions=4)
    pieces: list[bytes] = []
    status: list[int] = []

    requests = [{"type": "http.request", "more_body": False,
                 "body": json.dumps({"format": "CSV", "surveyReference": "BENCH-60K"}).encode()}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await anyio.Event().wait()  # no disconnect until the response is done
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message.get("body"):
            pieces.append(message["body"])

    scope = {
        "type": "http", "method": "POST", "path": "/v3.2/Survey/GetResults",
        "raw_path": b"/v3.2/Survey/GetResults", "query_string": b"", "root_path": "",
        "scheme": "http", "server": ("sandbox.localhost", 80), "client": ("127.0.0.1", 1),
        "http_version": "1.1", "asgi": {"version": "3.0"},
        "headers": [(b"authorization", f"Basic {box.admin_token}".encode()),
                    (b"content-type", b"application/json"),
                    (b"host", b"sandbox.localhost")],
    }
    await box.app(scope, receive, send)
    assert status == [200]
    assert len(pieces) >= 3  # 60,000 rows in 20,000-row chunks: never one payload
    table = read_results(b"".join(pieces), format="CSV")
    assert len(table) == 60_000 and set(table["surveyReference"]) == {"BENCH-60K"}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        pytest.param({"reference": "", "rows": 1}, "reference", id="reference"),
        pytest.param({"reference": "G", "rows": -1}, "rows", id="rows"),
        pytest.param({"reference": "G", "rows": 1, "questions": 0}, "questions", id="questions"),
        pytest.param({"reference": "G", "rows": 1, "survey_id": -3}, "survey_id", id="survey-id"),
        pytest.param({"reference": "G", "rows": 1, "nasty": 1}, "nasty", id="nasty"),
    ],
)
def test_generated_survey_refuses_bad_arguments_naming_them(
    sandbox: Sandbox, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=rf"^{field}: "):
        sandbox.add_generated_survey(**arguments)
    assert sandbox.state.find_survey("G") is None


def _post(sandbox: Sandbox, **kwargs: Any) -> httpx.Response:
    from surveykit.client import ASGIPortalTransport

    with httpx.Client(transport=ASGIPortalTransport(sandbox.app), base_url=sandbox.base_url,
                      headers={"Authorization": f"Basic {sandbox.admin_token}"}) as raw:
        response = raw.post("/v3.2/Survey/GetResults", **kwargs)
        response.read()
        return response
