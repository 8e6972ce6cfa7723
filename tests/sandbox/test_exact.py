"""The served sandbox answers exactly as the reference says (raw HTTP, no client).

Each test talks to ``surveykit sandbox serve`` with httpx directly, so what is checked is
the wire: statuses, bodies and what the journal shows was created. Where the client
changed with it, a client test follows.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


# ------------------------------------------------------------------ routing before size


@pytest.mark.parametrize(("method", "path", "status"), [
    pytest.param("POST", "/api/v3.2/Message", 404, id="3.1-prefix"),
    pytest.param("POST", "/Ab3dE9x", 405, id="link-path-other-method"),
    pytest.param("PUT", "/openapi.json", 405, id="openapi-other-method"),
    pytest.param("POST", "/api/v3.2/Message/Kill", 404, id="unknown-nested"),
])
def test_an_unknown_route_with_a_body_is_its_404_or_405(
    http: httpx.Client, method: str, path: str, status: int
) -> None:
    bare = http.request(method, path)
    answer = http.request(method, path, json=MESSAGE)
    assert (bare.status_code, answer.status_code) == (status, status)
    assert answer.json() == bare.json() and answer.json()["status"] == status
    assert answer.headers["connection"] == "close"  # the body was left unread


def test_an_unknown_route_is_a_404_on_its_headers_whatever_the_body(
    served: ServedSandbox,
) -> None:
    url = httpx.URL(served.base_url)
    assert url.host is not None and url.port is not None
    with socket.create_connection((url.host, url.port), timeout=WAIT) as sock:
        sock.sendall(b"POST /api/v3.2/Message HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{")
        data = b""
        with suppress(OSError):
            while chunk := sock.recv(65_536):  # until the server closes
                data += chunk
    assert data.startswith(b"HTTP/1.1 404 ")
    assert b'"status":404' in data


def test_a_body_on_a_route_that_takes_none_is_still_a_413(http: httpx.Client) -> None:
    answer = http.request("GET", "/Ab3dE9x", json=MESSAGE)
    assert answer.status_code == 413 and answer.json()["detail"] == (
        "This route takes no request body.")


# ------------------------------------------------------------------ import list of objects


@pytest.mark.parametrize(("records", "field"), [
    pytest.param(["Ana", 5], "list.0", id="text-and-number"),
    pytest.param([{"firstName": "Mei", "mobileNumber": "447700900150"}, None], "list.1",
                 id="object-then-null"),
    pytest.param([{"firstName": "Mei", "mobileNumber": "447700900150"}, [1]], "list.1",
                 id="object-then-array"),
])
def test_an_import_list_of_non_objects_is_refused_as_a_whole(
    http: httpx.Client, records: list[Any], field: str
) -> None:
    answer = http.post("/v3.2/Data/Import", json={"reference": "CSAT-SMS-2026",
                                                  "list": records})
    assert answer.status_code == 400
    body = answer.json()
    assert body["title"] == "One or more validation errors occurred."
    assert list(body["errors"]) == [field] and "expected an object" in body["errors"][field][0]
    # Nothing was imported: the valid record beside the bad one is new afterwards.
    again = http.post("/v3.2/Data/Import", json={
        "reference": "CSAT-SMS-2026",
        "list": [{"firstName": "Mei", "mobileNumber": "447700900150"}]})
    assert [item["message"] for item in again.json()] == ["Added"]


def test_a_bad_import_list_is_a_400_before_the_reference_is_looked_up(
    http: httpx.Client,
) -> None:
    answer = http.post("/v3.2/Data/Import", json={"reference": "NO-SUCH", "list": ["Ana"]})
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["list.0"]


# ------------------------------------------------------------------ windows and type


WINDOW = {"from": "09:00", "to": "17:00", "days": "1,2,3,4,5"}


@pytest.mark.parametrize(("extra", "field"), [
    pytest.param({"window": [{**WINDOW, "days": [1, 2, 3]}]}, "window.0.days", id="days-array"),
    pytest.param({"window": [{**WINDOW, "days": 1}]}, "window.0.days", id="days-number"),
    pytest.param({"window": [{**WINDOW, "from": 900}]}, "window.0.from", id="from-number"),
    pytest.param({"window": WINDOW}, "window", id="one-window-object"),
    pytest.param({"window": "09:00-17:00"}, "window", id="window-text"),
    pytest.param({"window": [WINDOW, "09:00-17:00"]}, "window.1", id="window-item-text"),
    pytest.param({"type": "whatsapp"}, "type", id="type-name"),
    pytest.param({"type": "WhatsApp"}, "type", id="type-name-case"),
    pytest.param({"type": "1.0"}, "type", id="type-decimal-text"),
])
def test_a_message_of_the_wrong_types_is_a_400_naming_the_field(
    http: httpx.Client, extra: dict[str, Any], field: str
) -> None:
    answer = http.post("/v3.2/Message", json={**MESSAGE, **extra})
    assert answer.status_code == 400
    assert list(answer.json()["errors"]) == [field]
    assert journal(http, "message") == []


@pytest.mark.parametrize("extra", [
    pytest.param({"window": [WINDOW]}, id="window-array"),
    pytest.param({"window": None}, id="window-null"),
    pytest.param({"window": [{"From": "09:00", "TO": "17:00", "Days": "1,2"}]}, id="any-case"),
    pytest.param({"type": 1}, id="type-number"),
    pytest.param({"type": "1"}, id="type-int-string"),
])
def test_the_reference_types_of_window_and_type_are_taken(
    http: httpx.Client, extra: dict[str, Any]
) -> None:
    answer = http.post("/v3.2/Message", json={**MESSAGE, **extra})
    assert answer.status_code == 200, answer.text


def test_the_client_sends_windows_and_types_as_the_reference_writes_them(
    served: ServedSandbox, http: httpx.Client
) -> None:
    with sk.Client(served.base_url, served.token) as client:
        client.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=True,
                             window={"from_": "09:00", "to": "17:00", "days": [1, 2, 3]},
                             type="whatsapp")
    (request,) = [e for e in journal(http, "request") if e["path"] == "/v3.2/Message"]
    assert request["body"]["window"] == [{"from": "09:00", "to": "17:00", "days": "1,2,3"}]
    assert request["body"]["type"] == 1 and request["status"] == 200


# ------------------------------------------------------------------ timeout has no minimum


@pytest.mark.parametrize("timeout", [
    pytest.param(0, id="zero"), pytest.param("0", id="zero-string"),
    pytest.param(-5, id="negative"), pytest.param("-5", id="negative-string"),
    pytest.param(-(2**31), id="int32-min")])
def test_a_timeout_of_zero_or_less_is_taken_and_closes_the_window_at_once(
    http: httpx.Client, timeout: Any
) -> None:
    answer = http.post("/v3.2/Message", json={**MESSAGE, "timeout": timeout})
    assert answer.status_code == 200, answer.text
    message_id = answer.json()["MessageID"]
    receipts = http.get("/_sandbox/events", params={"type": "Receipt"}).json()
    assert [(r["MessageID"], r["Status"]) for r in receipts] == [
        (message_id, "Sent"), (message_id, "Delivered"), (message_id, "Expired")]
    assert receipts[2]["Timestamp"] == receipts[0]["Timestamp"]  # open for no time
    reply = http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "5"})
    assert reply.json()["MessageID"] == "Unknown"  # no open message to match it to


@pytest.mark.parametrize("timeout", ["-05", "1.5", " 5", 2**31, True])
def test_a_timeout_that_is_no_int32_is_still_a_400(http: httpx.Client, timeout: Any) -> None:
    answer = http.post("/v3.2/Message", json={**MESSAGE, "timeout": timeout})
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["timeout"]


def test_a_positive_timeout_keeps_the_message_open_that_long(http: httpx.Client) -> None:
    answer = http.post("/v3.2/Message", json={**MESSAGE, "timeout": "1"})
    message_id = answer.json()["MessageID"]
    reply = http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "5"})
    assert reply.json()["MessageID"] == message_id
    http.post("/_sandbox/clock/advance", json={"seconds": 60})
    statuses = [r["Status"] for r in http.get("/_sandbox/events",
                                               params={"type": "Receipt"}).json()]
    assert statuses == ["Sent", "Delivered", "Expired"]


# ------------------------------------------------------------------ Segments is an integer


class _Catcher(BaseHTTPRequestHandler):
    bodies: list[bytes]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        type(self).bodies.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def catcher() -> Iterator[tuple[str, list[bytes]]]:
    handler = type("Catcher", (_Catcher,), {"bodies": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/cb", handler.bodies
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("destination", "status"), [
    pytest.param("442079460123", "Reachable", id="landline"),
    pytest.param("447700900903", "Blocked", id="blocked"),
    pytest.param("447700900902", "Failed", id="lookup-failed"),
])
def test_a_lookup_callback_carries_segments_as_an_integer(
    http: httpx.Client, catcher: tuple[str, list[bytes]], destination: str, status: str
) -> None:
    url, bodies = catcher
    assert http.post("/_sandbox/callback", json={"Url": url}).status_code == 200
    answer = http.post("/v3.2/Message",
                       json={**MESSAGE, "destination": destination, "lookup": True})
    assert answer.status_code == 200 and answer.json()["Status"] == status
    assert http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT}).status_code == 200
    (raw,) = bodies
    payload = json.loads(raw)
    assert payload["Type"] == "Lookup" and payload["Status"] == status
    assert payload["Segments"] == 0 and type(payload["Segments"]) is int


def test_a_click_on_a_link_in_no_message_carries_segments_as_an_integer(
    http: httpx.Client, catcher: tuple[str, list[bytes]]
) -> None:
    url, bodies = catcher
    assert http.post("/_sandbox/callback", json={"Url": url}).status_code == 200
    link = http.post("/v3.2/TinyUrl/Register", json={"fullUrl": "https://example.org/s"})
    short = link.json()["shortUrl"]
    assert http.post("/_sandbox/simulate/click", json={"url": short}).status_code == 200
    assert http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT}).status_code == 200
    (raw,) = bodies
    payload = json.loads(raw)
    assert payload["Type"] == "Click" and payload["Segments"] == 0
