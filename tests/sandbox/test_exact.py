"""The served sandbox answers exactly as the reference says (raw HTTP, no client).

Each test talks to ``surveykit sandbox serve`` with httpx directly, so what is checked is
the wire: statuses, bodies and what the journal shows was created. Where the client
changed with it, a client test follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import surveykit as sk
from surveykit.callbacks import listen
from surveykit.models import CallbackPayload
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

MOBILE = "447700900123"
SOURCE = "447700900100"
WAIT = 30.0  # seconds: a safety net for waits, never an assertion about speed
EMAIL = {"To": "ana@example.org", "From": "surveys", "Subject": "S", "Content": "<p>C</p>"}
MESSAGE = {"destination": MOBILE, "source": SOURCE, "message": "Hi", "reply": True}


@pytest.fixture(scope="module")
def served() -> Iterator[ServedSandbox]:
    with serve_sandbox() as server:
        yield server


@pytest.fixture
def http(served: ServedSandbox) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Basic {served.token}"}
    with httpx.Client(base_url=served.base_url, headers=headers, trust_env=False,
                      timeout=60) as client:
        assert client.post("/_sandbox/reset").status_code == 200
        yield client


def journal(http: httpx.Client, kind: str) -> list[dict[str, Any]]:
    answer = http.get("/_sandbox/journal", params={"kind": kind})
    assert answer.status_code == 200
    entries: list[dict[str, Any]] = answer.json()
    return entries


# ------------------------------------------------------------------ booleans are booleans


@pytest.mark.parametrize(("field", "value"), [
    ("reply", "true"), ("reply", 1), ("test", "yes"), ("lookup", "false"), ("test", 0)])
def test_a_message_boolean_written_otherwise_is_a_400(
    http: httpx.Client, field: str, value: Any
) -> None:
    answer = http.post("/v3.2/Message", json={**MESSAGE, field: value})
    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert list(errors) == [field] and "System.Boolean" in errors[field][0]
    assert repr(value) in errors[field][0]
    assert journal(http, "message") == []


def test_only_integers_may_be_strings_on_a_message(http: httpx.Client) -> None:
    answer = http.post("/v3.2/Message",
                       json={**MESSAGE, "surveyId": "4101", "timeout": "60", "type": "0"})
    assert answer.status_code == 200 and answer.json()["MessageID"].startswith("MS")
    assert len(journal(http, "message")) == 1


def test_email_test_yes_is_a_400_and_nothing_is_treated_as_a_test(http: httpx.Client) -> None:
    answer = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "Test": "yes"})
    assert answer.status_code == 400
    assert "System.Boolean" in answer.json()["errors"]["Test"][0]
    answer = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "Lookup": "false"})
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["Lookup"]
    assert journal(http, "email") == []
    tested = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "Test": True})
    assert tested.status_code == 200 and tested.json()["MessageID"] == "Unknown"


def test_a_short_link_and_results_boolean_written_as_text_is_a_400(http: httpx.Client) -> None:
    answer = http.post("/v3.2/TinyUrl/RegisterList",
                       json={"urls": [{"fullUrl": "https://example.org", "reuse": "no"}]})
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["urls[0].reuse"]


# ------------------------------------------------------------------ MetaData


def test_email_metadata_as_an_object_is_the_metadata_problem(http: httpx.Client) -> None:
    answer = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "MetaData": {"a": "1"}})
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.text == "There was a problem with the MetaData value"
    assert journal(http, "email") == []
    accepted = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "MetaData": [{"a": "1"}]})
    assert accepted.status_code == 200 and accepted.json()["MessageID"].startswith("MS")


# ------------------------------------------------------------------ one recipient


@pytest.mark.parametrize("to", [
    "Ana Silva <ana@example.org>", '"Silva, Ana" <ana@example.org>', "ana@example.org"])
def test_one_recipient_with_a_display_name_is_one_recipient(http: httpx.Client, to: str) -> None:
    answer = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "To": to})
    assert answer.status_code == 200, answer.text
    (entry,) = journal(http, "email")
    assert entry["destination"] == to and entry["message_id"] == answer.json()["MessageID"]


@pytest.mark.parametrize("to", [
    "ana@example.org, bo@example.org", "ana@example.org;bo@example.org",
    "Ana <ana@example.org>; Bo <bo@example.org>", "ana@example.org bo@example.org"])
def test_several_recipients_are_refused(http: httpx.Client, to: str) -> None:
    answer = http.post("/v3.2/Message/SendEmail", json={**EMAIL, "To": to})
    assert answer.status_code == 400
    assert "one recipient per request" in answer.json()["errors"]["To"][0]
    assert journal(http, "email") == []


def test_the_client_sends_a_display_name_recipient(served: ServedSandbox) -> None:
    with sk.Client(served.base_url, served.token) as client:
        sent = client.messages.send_email(to="Ana Silva <ana@example.org>", from_="surveys",
                                          subject="S", content="<p>C</p>")
        assert sent.created
        with pytest.raises(ValueError, match="one recipient per request"):
            client.messages.send_email(to="ana@example.org; bo@example.org", from_="surveys",
                                       subject="S", content="<p>C</p>")


# ------------------------------------------------------------------ keyword answers


def _keyword_round(http: httpx.Client) -> list[dict[str, Any]]:
    """Register SCORE with a response, send, reply SCORE; the messages sent after the reply."""
    created = http.post("/v3.2/Keyword", json={"keyword": "SCORE", "response": "Thanks (kw)"})
    assert created.status_code == 200
    assert http.post("/v3.2/Message", json=MESSAGE).status_code == 200
    reply = http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "score 9"})
    assert reply.status_code == 200 and reply.json()["Type"] == "Keyword"
    waited = http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT})
    assert waited.status_code == 200
    (inbound,) = journal(http, "inbound")
    return [m for m in journal(http, "message") if m["seq"] > inbound["seq"]]


def test_a_keyword_with_a_callback_sends_only_the_receivers_answer(http: httpx.Client) -> None:
    with listen() as listener:

        @listener.on("Keyword")
        def answer(payload: CallbackPayload) -> str:
            return "Thanks (receiver)"

        assert http.post("/_sandbox/callback", json={"Url": listener.url}).status_code == 200
        sent = _keyword_round(http)
    assert [(m["user"], m["destination"], m["text"]) for m in sent] == [
        ("callback", MOBILE, "Thanks (receiver)")]


def test_a_keyword_without_a_callback_sends_its_response(http: httpx.Client) -> None:
    sent = _keyword_round(http)
    assert [(m["user"], m["destination"], m["source"], m["text"]) for m in sent] == [
        ("keyword", MOBILE, SOURCE, "Thanks (kw)")]


# ------------------------------------------------------------------ import


def test_an_unknown_import_column_keeps_the_record_and_names_the_column(
    http: httpx.Client,
) -> None:
    record = {"firstName": "Mei", "mobileNumber": "447700900150", "shoeSize": "42"}
    answer = http.post("/v3.2/Data/Import", json={"reference": "CSAT-SMS-2026",
                                                  "list": [record]})
    assert answer.status_code == 200
    (item,) = answer.json()
    assert item["status"] == "Success" and item["mobileNumber"] == "447700900150"
    assert item["message"].startswith("Added; not imported: shoeSize (")
    results = http.post("/v3.2/Survey/GetResults",
                        json={"surveyReference": "CSAT-SMS-2026", "format": "JSON"})
    rows = sk.read_results(results.content, format="JSON")
    assert "447700900150" in set(rows["mobileNumber"].astype(str))
    assert "shoeSize" not in rows.columns


def test_an_unknown_column_beside_a_problem_is_named_too(http: httpx.Client) -> None:
    record = {"firstName": "Bad", "mobileNumber": "07700", "shoeSize": "42"}
    answer = http.post("/v3.2/Data/Import", json={"reference": "CSAT-SMS-2026",
                                                  "list": [record]})
    (item,) = answer.json()
    assert item["status"] == "Error"
    assert "mobileNumber" in item["message"] and "not imported: shoeSize" in item["message"]


# ------------------------------------------------------------------ failed lookup


def test_a_failed_lookup_is_a_400_with_its_lookup_response(
    http: httpx.Client, served: ServedSandbox
) -> None:
    answer = http.get("/v3.2/Message/Lookup/447700900902")
    assert answer.status_code == 400
    assert answer.json() == {"messageID": "Unknown", "status": "Error", "carrier": "Unknown",
                             "reachable": False, "numberType": "Unknown"}
    with sk.Client(served.base_url, served.token) as client, pytest.raises(
        sk.LookupFailedError
    ) as caught:
        client.messages.lookup("447700900902")
    looked = caught.value.lookup_response
    assert (looked.status, looked.reachable, looked.message_id) == ("Error", False, "Unknown")
    assert caught.value.body == answer.json()


def test_results_header_as_text_is_a_400_in_json_and_a_boolean_in_xml(
    http: httpx.Client,
) -> None:
    answer = http.post("/v3.2/Survey/GetResults",
                       json={"surveyReference": "CSAT-SMS-2026", "format": "CSV",
                             "header": "false"})
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["header"]
    xml = ("<ResultsRequestModel><surveyReference>CSAT-SMS-2026</surveyReference>"
           "<format>CSV</format><header>false</header></ResultsRequestModel>")
    answer = http.post("/v3.2/Survey/GetResults", content=xml,
                       headers={"Content-Type": "application/xml"})
    assert answer.status_code == 200
    with_header = http.post("/v3.2/Survey/GetResults",
                            json={"surveyReference": "CSAT-SMS-2026", "format": "CSV"})
    assert with_header.text.splitlines()[1:] == answer.text.splitlines()
