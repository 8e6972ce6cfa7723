"""The callback receiver end to end: a real uvicorn on a loopback port, real HTTP requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit

import pandas as pd
import pytest

from surveykit.callbacks import (
    Listener,
    Receiver,
    build_reply,
    callback_signature,
    listen,
)
from surveykit.models import CallbackPayload, SendRequest
from tests.helpers.callbacks import OUR_NUMBER, RESPONDENT, async_client, client, inbound, receipt


@pytest.fixture
def listener() -> Iterator[Listener]:
    running = listen()
    try:
        yield running
    finally:
        running.stop()


def wait_until(predicate: Any, what: str, timeout: float = 10.0) -> None:
    # A guard against hanging, not a timing assertion: the condition is what is tested.
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


# -- status-type callbacks ----------------------------------------------------------------


@pytest.mark.parametrize(
    "type_",
    ["Receipt", "Lookup", "Info", "Help", "Stop", "Unstop", "Click", "Killed", "NotKilled", "Odd"],
)
def test_status_callbacks_are_stored_and_answered_empty(listener: Listener, type_: str) -> None:
    body = receipt("MS100", Type=type_, Carrier="Vodafone", Reachable=True)
    with client() as http:
        answer = http.post(listener.url, json=body)
    assert answer.status_code == 200
    assert answer.content == b""
    events = listener.wait_for(1, timeout=10)
    assert len(events) == 1
    row = events.iloc[0]
    assert row["type"] == type_
    assert row["message_id"] == "MS100"
    assert row["carrier"] == "Vodafone"
    assert bool(row["reachable"]) is True
    assert row["segments"] == 1
    assert row["deliveries"] == 1
    assert row["method"] == "POST"
    assert row["reply"] is None


def test_event_columns_have_useful_types(listener: Listener) -> None:
    body = receipt("MS1", timestamp="2026-03-02T10:00:00+01:00", campaign="spring", Extra="kept")
    body["messageid"] = body.pop("MessageID")  # any letter case
    with client() as http:
        assert http.post(listener.url, json=body).status_code == 200
    events = listener.wait_for(1, timeout=10)
    assert isinstance(events["timestamp"].dtype, pd.DatetimeTZDtype)
    assert str(events["timestamp"].dt.tz) == "UTC"
    assert events.loc[0, "timestamp"] == pd.Timestamp("2026-03-02T09:00:00Z")
    assert isinstance(events["received_at"].dtype, pd.DatetimeTZDtype)
    assert events.loc[0, "message_id"] == "MS1"
    assert events.loc[0, "metadata"] == {"campaign": "spring"}
    assert events.loc[0, "extra"] == {"Extra": "kept"}
    assert str(events["inbound"].dtype) == "boolean"
    assert events["deliveries"].dtype == "int64"


def test_get_callbacks_take_the_payload_from_the_query_string(listener: Listener) -> None:
    query = {
        "Type": "Click",
        "MessageID": "MS7",
        "Timestamp": "2026-03-02T10:00:00+01:00",
        "Inbound": "false",
        "Segments": "2",
        "MetaData[campaign]": "spring",
    }
    with client() as http:
        answer = http.get(listener.url, params=query)
        # An unencoded '+' in the offset arrives as a space; it is still read as +01:00.
        raw = http.get(
            f"{listener.url}?Type=Receipt&MessageID=MS7&Status=Delivered"
            "&Timestamp=2026-03-02T10:00:00+01:00"
        )
    assert (answer.status_code, answer.content) == (200, b"")
    assert raw.status_code == 200
    events = listener.wait_for(2, timeout=10)
    click = events[events["type"] == "Click"].iloc[0]
    assert click["method"] == "GET"
    assert click["segments"] == 2
    assert bool(click["inbound"]) is False
    assert click["metadata"] == {"campaign": "spring"}
    stamps = set(events["timestamp"])
    assert stamps == {pd.Timestamp("2026-03-02T09:00:00Z")}


# -- replies -------------------------------------------------------------------------------


def test_keyword_reply_is_the_send_request_and_a_retry_gets_the_same(listener: Listener) -> None:
    calls: list[CallbackPayload] = []

    @listener.on("Keyword")
    def answer(payload: CallbackPayload) -> str:
        calls.append(payload)
        return f"Thanks for {payload.message} (#{len(calls)})"

    body = inbound("Keyword", "MS9", "JOIN", Source="+" + RESPONDENT)
    with client() as http:
        first = http.post(listener.url, json=body)
        second = http.post(listener.url, json=body)
    assert first.status_code == second.status_code == 200
    assert first.headers["content-type"] == "application/json"
    expected = {
        "destination": RESPONDENT,
        "source": OUR_NUMBER,
        "message": "Thanks for JOIN (#1)",
        "reply": True,
    }
    assert first.json() == expected
    assert second.json() == expected
    assert len(calls) == 1
    events = listener.events
    assert len(events) == 1
    assert events.loc[0, "deliveries"] == 2
    assert events.loc[0, "reply"] == expected
    assert pd.isna(events.loc[0, "error"])


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        pytest.param(None, None, id="none"),
        pytest.param(
            {"message": "Hi", "reply": False, "surveyId": 12},
            {
                "destination": RESPONDENT,
                "source": OUR_NUMBER,
                "message": "Hi",
                "reply": False,
                "surveyId": 12,
            },
            id="dict-camel",
        ),
        pytest.param(
            {"message": "Hi", "on_behalf": "org", "destination": "15550001111"},
            {
                "destination": "15550001111",
                "source": OUR_NUMBER,
                "message": "Hi",
                "reply": True,
                "onBehalf": "org",
            },
            id="dict-snake-override",
        ),
        pytest.param(
            SendRequest(destination="15550002222", source="Acme", message="Bye", reply=False),
            {"destination": "15550002222", "source": "Acme", "message": "Bye", "reply": False},
            id="send-request",
        ),
    ],
)
def test_async_handler_return_values(
    listener: Listener, returned: Any, expected: dict[str, Any] | None
) -> None:
    @listener.on("message")
    async def answer(payload: CallbackPayload) -> Any:
        await asyncio.sleep(0)
        return returned

    with client() as http:
        response = http.post(listener.url, json=inbound("Message", "MS3", "hello"))
    assert response.status_code == 200
    if expected is None:
        assert response.content == b""
    else:
        assert response.json() == expected
    assert listener.events.loc[0, "reply"] == expected


def test_a_failing_handler_is_answered_200_without_reply_and_recorded(listener: Listener) -> None:
    calls = []

    @listener.on("Keyword")
    def broken(payload: CallbackPayload) -> str:
        calls.append(1)
        raise ValueError("no such survey")

    body = inbound("Keyword", "MS4", "JOIN")
    with client() as http:
        first = http.post(listener.url, json=body)
        again = http.post(listener.url, json=body)
    assert (first.status_code, first.content) == (200, b"")
    assert (again.status_code, again.content) == (200, b"")
    assert calls == [1], "the handler of an answered event never runs again"
    row = listener.events.iloc[0]
    assert row["error"] == "the handler raised ValueError: no such survey"
    assert row["reply"] is None
    assert row["deliveries"] == 2


def test_an_invalid_reply_is_recorded_as_an_error(listener: Listener) -> None:
    listener.on("Keyword")(lambda payload: {"message": "x", "colour": "red"})
    with client() as http:
        answer = http.post(listener.url, json=inbound("Keyword", "MS5", "JOIN"))
    assert (answer.status_code, answer.content) == (200, b"")
    error = listener.events.loc[0, "error"]
    assert "not a valid send request" in error
    assert "colour" in error


def test_a_slow_handler_times_out_and_the_callback_is_still_answered() -> None:
    receiver = Receiver(handler_timeout=0.3)
    release = asyncio.Event()

    @receiver.on("Keyword")
    async def slow(payload: CallbackPayload) -> str:
        await release.wait()  # never set: the timeout ends it
        return "too late"

    with listen(receiver=receiver) as running, client() as http:
        answer = http.post(running.url, json=inbound("Keyword", "MS6", "JOIN"))
        events = running.events
    assert (answer.status_code, answer.content) == (200, b"")
    assert "did not return within 0.3 s" in events.loc[0, "error"]


def test_concurrent_retry_shares_the_first_reply(listener: Listener) -> None:
    gate = threading.Event()
    calls: list[int] = []

    @listener.on("Keyword")
    def answer(payload: CallbackPayload) -> str:
        calls.append(1)
        gate.wait(20)
        return f"reply {len(calls)}"

    body = inbound("Keyword", "MS8", "JOIN")
    results: list[Any] = [None, None]

    def post(slot: int) -> None:
        with client() as http:
            results[slot] = http.post(listener.url, json=body)

    threads = [threading.Thread(target=post, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    try:
        wait_until(
            lambda: len(listener.events) == 1 and listener.events.loc[0, "deliveries"] == 2,
            "the second delivery to be counted",
        )
    finally:
        gate.set()
        for thread in threads:
            thread.join(30)
    assert [r.json()["message"] for r in results] == ["reply 1", "reply 1"]
    assert calls == [1]


def test_status_handlers_run_after_the_answer_once_per_event(listener: Listener) -> None:
    seen: list[str | None] = []

    @listener.on("Click")
    def click(payload: CallbackPayload) -> None:
        seen.append(payload.message_id)
        raise RuntimeError("dashboard offline")

    body = receipt("MS11", Type="Click")
    with client() as http:
        assert http.post(listener.url, json=body).content == b""
        assert http.post(listener.url, json=body).content == b""
    wait_until(lambda: not pd.isna(listener.events.loc[0, "error"]), "the handler error")
    assert seen == ["MS11"]
    assert listener.events.loc[0, "error"] == "the handler raised RuntimeError: dashboard offline"


def test_status_callbacks_do_not_wait_for_their_handler(listener: Listener) -> None:
    gate = threading.Event()
    finished: list[str | None] = []

    @listener.on("Receipt")
    def slow(payload: CallbackPayload) -> None:
        gate.wait(20)
        finished.append(payload.message_id)

    try:
        with client() as http:
            answer = http.post(listener.url, json=receipt("MS13"))
        # Answered while the handler is still blocked on the gate.
        assert (answer.status_code, finished) == (200, [])
    finally:
        gate.set()
    wait_until(lambda: finished == ["MS13"], "the handler to finish")


def test_fallback_handler_and_case_insensitive_types(listener: Listener) -> None:
    @listener.on()
    def anything(payload: CallbackPayload) -> str:
        return f"fallback {payload.type}"

    @listener.on("KEYWORD")
    def keyword(payload: CallbackPayload) -> str:
        return "keyword"

    with client() as http:
        by_message = http.post(listener.url, json=inbound("message", "MS12", "hi"))
        by_keyword = http.post(listener.url, json=inbound("Keyword", "MS12", "JOIN"))
    assert by_message.json()["message"] == "fallback Message"
    assert by_keyword.json()["message"] == "keyword"


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "content_type", "status", "words"),
    [
        pytest.param(b'{"Type": "Receipt",', "application/json", 400, "not valid JSON", id="json"),
        pytest.param(b"", "application/json", 400, "empty", id="empty"),
        pytest.param(b'{"Type": "Receipt"}', "text/plain", 415, "text/plain", id="text-plain"),
        pytest.param(b'{"Type": "Receipt"}', None, 415, "Content-Type is missing", id="no-type"),
        pytest.param(
            b'{"Type": "Receipt"}', "application/json; charset=latin-1", 415, "UTF-8", id="latin1"
        ),
        pytest.param(b'[{"Type": "Receipt"}]', "application/json", 422, "JSON object", id="list"),
        pytest.param(b'{"MessageID": "MS1"}', "application/json", 422, "Type", id="no-type-field"),
        pytest.param(
            b'{"Type": "Receipt", "Segments": "1.5"}', "application/json", 422, "Segments", id="int"
        ),
        pytest.param(
            b'{"Type": "Receipt", "Inbound": "perhaps"}',
            "application/json",
            422,
            "Inbound",
            id="bool",
        ),
        pytest.param(
            b'{"Type": "Receipt", "Timestamp": "yesterday"}',
            "application/json",
            422,
            "Timestamp",
            id="time",
        ),
        pytest.param(
            b'{"Type": "Receipt", "MetaData": ["a=1"]}',
            "application/json",
            422,
            "MetaData",
            id="metadata",
        ),
    ],
)
def test_bad_bodies_get_a_specific_4xx_and_nothing_is_stored(
    listener: Listener, content: bytes, content_type: str | None, status: int, words: str
) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    with client() as http:
        answer = http.post(listener.url, content=content, headers=headers)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert problem["status"] == status
    assert words in problem["detail"]
    if words in {"Type", "Segments", "Inbound", "Timestamp", "MetaData"}:
        assert words in {error["field"].split("[")[0] for error in problem["errors"]}
    assert len(listener.events) == 0


def test_metadata_elements_with_several_pairs_are_kept(listener: Listener) -> None:
    # The reference shows one pair per element; refusing another shape would only make the
    # platform send the callback again.
    body = {**receipt("MS1"), "MetaData": [{"campaign": "spring", "wave": 2}, {}]}
    with client() as http:
        answer = http.post(listener.url, json=body)
    assert answer.status_code == 200
    events = listener.wait_for(1, timeout=10)
    assert events.loc[0, "metadata"] == {"campaign": "spring", "wave": 2}


@pytest.mark.parametrize(
    "metadata",
    [
        pytest.param('[{"campaign": "spring"}, {"wave": 2}]', id="pairs"),
        pytest.param('{"campaign": "spring", "wave": 2}', id="object"),
    ],
)
def test_get_metadata_as_json(listener: Listener, metadata: str) -> None:
    with client() as http:
        answer = http.get(listener.url, params={"Type": "Click", "MetaData": metadata})
    assert answer.status_code == 200
    assert listener.events.loc[0, "metadata"] == {"campaign": "spring", "wave": 2}


def test_bad_get_callbacks_are_refused(listener: Listener) -> None:
    with client() as http:
        twice = http.get(listener.url + "?Type=Click&MessageID=A&messageid=B")
        no_type = http.get(listener.url, params={"MessageID": "MS1"})
        bad_meta = http.get(listener.url, params={"Type": "Click", "MetaData": "{oops"})
    assert twice.status_code == 422
    assert "more than once" in twice.json()["detail"]
    assert no_type.status_code == 422
    assert bad_meta.status_code == 422
    assert len(listener.events) == 0


def test_other_methods_and_paths_get_json_errors(listener: Listener) -> None:
    with client() as http:
        put = http.put(listener.url, json=receipt("MS1"))
        elsewhere = http.post(listener.url + "/nested", json=receipt("MS1"))
    assert put.status_code == 405
    assert put.headers["allow"] == "GET, POST"
    assert elsewhere.status_code == 404
    assert elsewhere.json()["status"] == 404
    assert len(listener.events) == 0


@pytest.fixture
def small_listener() -> Iterator[Listener]:
    running = listen(max_body=1024)
    try:
        yield running
    finally:
        running.stop()


def test_oversized_body_is_refused_413(small_listener: Listener) -> None:
    body = receipt("MS1", Message="x" * 2000)
    with client() as http:
        answer = http.post(small_listener.url, json=body)
        fits = http.post(small_listener.url, json=receipt("MS2"))
    assert answer.status_code == 413
    assert "at most 1024 bytes" in answer.json()["detail"]
    assert fits.status_code == 200
    assert list(small_listener.events["message_id"]) == ["MS2"]


def _raw_request(url: str, head: bytes, body: bytes) -> bytes:
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    answer = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head + body)
        # The body is deliberately unfinished: an answer proves the limit was applied
        # while streaming. A receiver that waited for the whole body would time out here.
        while b"\r\n\r\n" not in answer or not _complete(answer):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def _complete(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def test_body_limit_is_checked_while_streaming(small_listener: Listener) -> None:
    path = urlsplit(small_listener.url).path
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    chunk = b'{"Type": "Receipt", "Message": "' + b"x" * 1500
    answer = _raw_request(
        small_listener.url, head, f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"more than 1024 bytes" in answer
    assert len(small_listener.events) == 0


def test_declared_length_over_the_limit_is_refused_before_reading(
    small_listener: Listener,
) -> None:
    path = urlsplit(small_listener.url).path
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000000000\r\n\r\n"
    ).encode()
    answer = _raw_request(small_listener.url, head, b'{"Type": ')
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"Content-Length is 1000000000 bytes" in answer


# -- signatures ------------------------------------------------------------------------------


@pytest.fixture
def signed_listener() -> Iterator[Listener]:
    running = listen(secret="s3cret")
    try:
        yield running
    finally:
        running.stop()


def test_signed_callbacks_are_accepted(signed_listener: Listener) -> None:
    body = json.dumps(receipt("MS1")).encode()
    query = urlencode({"Type": "Click", "MessageID": "MS2"})
    with client() as http:
        posted = http.post(
            signed_listener.url,
            content=body,
            headers={
                "content-type": "application/json",
                "X-Surveykit-Signature": callback_signature(body, "s3cret"),
            },
        )
        got = http.get(
            f"{signed_listener.url}?{query}",
            headers={"x-surveykit-signature": callback_signature(query.encode(), b"s3cret")},
        )
    assert posted.status_code == 200
    assert got.status_code == 200
    assert sorted(signed_listener.events["message_id"]) == ["MS1", "MS2"]


@pytest.mark.parametrize(
    ("signature", "words"),
    [
        pytest.param(None, "missing", id="missing"),
        pytest.param("sha256=" + "0" * 64, "does not match", id="wrong"),
        pytest.param(callback_signature(b"{}", "s3cret"), "does not match", id="other-body"),
        pytest.param(callback_signature(b"x", "other"), "does not match", id="other-secret"),
        pytest.param("deadbeef", "must look like", id="no-prefix"),
        pytest.param(
            callback_signature(b"x", "s3cret", digest="sha512"), "must look like", id="digest"
        ),
    ],
)
def test_unsigned_or_badly_signed_callbacks_are_refused_401(
    signed_listener: Listener, signature: str | None, words: str
) -> None:
    body = json.dumps(receipt("MS1")).encode()
    headers = {"content-type": "application/json"}
    if signature is not None:
        headers["X-Surveykit-Signature"] = signature
    with client() as http:
        answer = http.post(signed_listener.url, content=body, headers=headers)
    assert answer.status_code == 401
    assert words in answer.json()["detail"]
    assert "s3cret" not in answer.text
    assert len(signed_listener.events) == 0


# -- load --------------------------------------------------------------------------------------


async def test_a_burst_of_2000_callbacks_loses_none(listener: Listener) -> None:
    total, clients, per_client = 2000, 8, 2
    bodies = [
        receipt(f"MS{n:05d}", "Delivered" if n % 3 else "Sent", campaign=f"c{n % 4}")
        for n in range(total)
    ]
    gate = asyncio.Semaphore(clients * per_client)

    async with contextlib.AsyncExitStack() as stack:
        # Several small pools: one httpx pool with many connections is the slow part here.
        pools = [await stack.enter_async_context(async_client(per_client)) for _ in range(clients)]

        async def deliver(n: int) -> int:
            async with gate:
                response = await pools[n % clients].post(listener.url, json=bodies[n])
                return int(response.status_code)

        statuses = await asyncio.gather(*(deliver(n) for n in range(total)))
    assert statuses.count(200) == total
    events = listener.events  # every answered callback is already committed
    assert len(events) == total
    assert set(events["message_id"]) == {body["MessageID"] for body in bodies}
    assert (events["deliveries"] == 1).all()


# -- build_reply on its own -------------------------------------------------------------------


def test_build_reply_maps_the_payload_numbers() -> None:
    payload = CallbackPayload.model_validate(inbound("Message", "MS1", "hi", Source="+15551234567"))
    request = build_reply(payload, "Thanks")
    assert request is not None
    assert request.to_wire() == {
        "source": OUR_NUMBER,
        "destination": "15551234567",
        "message": "Thanks",
        "reply": True,
    }
    assert build_reply(payload, None) is None
    with pytest.raises(TypeError, match="returned int"):
        build_reply(payload, 42)  # type: ignore[arg-type]
