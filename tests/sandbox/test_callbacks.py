"""End to end over loopback: the sandbox delivers its events to a real callback listener.

The sandbox (in-process, or ``surveykit sandbox serve`` as a subprocess) sends with its
background delivery thread; ``surveykit.listen()`` receives on a free loopback port. Every
server and thread started here is stopped by its fixture or context manager.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pandas as pd
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typer.testing import CliRunner

import surveykit as sk
from surveykit._util.net import bind, url_of
from surveykit.callbacks import Listener, listen
from surveykit.cli import app
from surveykit.client import ASGIPortalTransport, Client
from surveykit.models import CallbackPayload
from surveykit.sandbox import Sandbox
from tests.helpers.sandbox_server import serve_sandbox

SOURCE = "447700900100"
MOBILE = "447700900123"
OTHER = "447700900124"
UNREACHABLE = "447700900900"
WAIT = 30.0  # seconds: a safety net for waits, never an assertion about speed


@pytest.fixture
def listener() -> Iterator[Listener]:
    """A callback listener on a free loopback port, stopped after the test."""
    with listen() as running:
        yield running


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """An in-process sandbox whose delivery thread is stopped after the test."""
    with Sandbox(seed=3) as box:
        yield box


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[Client]:
    """A client of ``sandbox``."""
    with Client.sandbox(sandbox, max_retries=0) as c:
        yield c


@contextmanager
def serve_app(handler: Callable[[Request], Any]) -> Iterator[str]:
    """Serve one async endpoint at ``/hook`` on a free loopback port; yield its URL."""
    app = Starlette(routes=[Route("/hook", handler, methods=["GET", "POST"])])
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_config=None,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "the test receiver did not start"
            time.sleep(0.01)
        yield url_of(sock, "127.0.0.1", "/hook")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def refused_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    sock = bind("127.0.0.1", 0)
    url = url_of(sock, "127.0.0.1", "/nobody")
    sock.close()
    return url


def sandbox_http(sandbox: Sandbox) -> httpx.Client:
    """An admin HTTP client of ``sandbox``'s app, in-process (no port)."""
    return httpx.Client(transport=ASGIPortalTransport(sandbox.app), base_url=sandbox.base_url,
                        headers={"Authorization": f"Basic {sandbox.admin_token}"})


def rows(listener: Listener) -> list[tuple[str, str, str]]:
    """The listener's events as (Type, Status, MessageID), in arrival order."""
    events = listener.events
    return list(zip(events["type"], events["status"], events["message_id"], strict=True))


def sandbox_rows(sandbox: Sandbox) -> list[tuple[str, str | None, str | None]]:
    """The sandbox's events as (Type, Status, MessageID), in the order they happened."""
    return [(e.type, e.status, e.message_id) for e in sandbox.events()]


# ------------------------------------------------------------------ receipts


def test_a_batch_sends_and_its_receipts_arrive_in_order(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url)
    df = pd.DataFrame({"firstName": ["Ada", "Grace", "Alan"],
                       "mobileNumber": [MOBILE, OTHER, UNREACHABLE]}, index=["a", "g", "t"])
    result: Any = sk.send_batch(client, df, message="Hi {firstName}, how did we do?",
                           source=SOURCE, reply=True, timeout=30, progress=False)
    ids = dict(zip(result.frame.index, result.frame["message_id"], strict=True))
    sandbox.simulate_status(ids["a"], "Read")          # a carrier progress update
    sandbox.advance(31 * 60)                            # every reply window closes
    sandbox.wait_for_deliveries(WAIT)
    listener.wait_for(len(sandbox.events()), timeout=WAIT)
    got = rows(listener)
    assert got == sandbox_rows(sandbox)  # one worker, FIFO: the sandbox's order
    by_message = {mid: [s for t, s, m in got if m == mid and t == "Receipt"]
                  for mid in ids.values()}
    assert by_message[ids["a"]] == ["Sent", "Delivered", "Read", "Expired"]
    assert by_message[ids["g"]] == ["Sent", "Delivered", "Expired"]
    assert by_message[ids["t"]] == ["Sent", "Failed", "Expired"]
    events = listener.events
    event = events[events["message_id"] == ids["a"]].iloc[0]  # the batch sends in any order
    assert (event["source"], event["destination"], event["timestamp"].isoformat()) == (
        SOURCE, MOBILE, "2026-03-02T09:00:00+00:00")
    assert event["method"] == "POST" and not event["inbound"] and event["segments"] == 1
    assert all(e.delivered for e in sandbox.events())
    assert {entry.status for entry in sandbox.journal("callback")} == {200}


# ------------------------------------------------------------------ replies


def test_stop_arrives_and_later_sends_to_that_number_are_blocked(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url)
    sent = client.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=True)
    sandbox.advance(60)
    stop = sandbox.simulate_reply(MOBILE, "STOP please")
    assert MOBILE in sandbox.stop_list()
    blocked = client.messages.send(destination=MOBILE, source=SOURCE, message="Again",
                                   reply=False)
    assert (blocked.message_id, blocked.status) == ("Unknown", "Blocked")
    sandbox.wait_for_deliveries(WAIT)
    events = listener.wait_for(4, timeout=WAIT)
    stops = events[events["type"] == "Stop"]
    assert list(stops["status"]) == ["Stopped"] and list(stops["message_id"]) == [sent.message_id]
    assert bool(stops["inbound"].iloc[0]) and stops["source"].iloc[0] == MOBILE
    (lookup,) = events[events["type"] == "Lookup"].itertuples()
    assert (lookup.status, lookup.destination, lookup.message_id) == ("Blocked", MOBILE, "Unknown")
    assert [m.text for m in sandbox.messages()] == ["Hi"]  # nothing else went out
    assert stop.seq == sandbox.events("Stop")[0].seq


def test_unstop_help_and_info_arrive(client: Client, sandbox: Sandbox,
                                     listener: Listener) -> None:
    sandbox.set_account_callback(listener.url)
    client.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=True)
    for minute, text in enumerate(["STOP", "HELP", "INFO", "START"], start=1):
        sandbox.advance(60 * minute)
        sandbox.simulate_reply(MOBILE, text)
    sandbox.wait_for_deliveries(WAIT)
    events = listener.wait_for(6, timeout=WAIT)
    inbound = events[events["inbound"].fillna(False).astype(bool)]
    assert list(zip(inbound["type"], inbound["status"], strict=True)) == [
        ("Stop", "Stopped"), ("Help", "Received"), ("Info", "Received"),
        ("Unstop", "Unstopped")]
    assert MOBILE not in sandbox.stop_list()


def test_keyword_reply_reaches_the_handler_and_its_answer_keeps_the_message_id(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    seen: list[str] = []

    @listener.on("Keyword")
    def answer(payload: CallbackPayload) -> str:
        seen.append(payload.message or "")
        return "Thanks! Your code is WIN-42."

    sandbox.set_account_callback(listener.url)
    client.keywords.create("PRIZE")
    sent = client.messages.send(destination=MOBILE, source=SOURCE, message="Text PRIZE",
                                reply=True)
    sandbox.advance(120)
    sandbox.simulate_reply(MOBILE, "prize please")
    sandbox.wait_for_deliveries(WAIT)
    assert seen == ["prize please"]
    replies = [m for m in sandbox.messages() if m.user == "callback"]
    assert [(m.message_id, m.destination, m.source, m.text, m.status) for m in replies] == [
        (sent.message_id, MOBILE, SOURCE, "Thanks! Your code is WIN-42.", "Delivered")]
    (journaled,) = [e for e in sandbox.journal("message") if e.user == "callback"]
    assert journaled.message_id == sent.message_id
    assert journaled.body["replyToEvent"] == sandbox.events("Keyword")[0].seq
    (attempt,) = [e for e in sandbox.journal("callback") if e.body["type"] == "Keyword"]
    assert attempt.body["reply"]["outcome"] == "sent"
    # The answer's own receipts come back too, under the original MessageID.
    events = listener.wait_for(5, timeout=WAIT)
    assert rows(listener)[-2:] == [("Receipt", "Sent", sent.message_id),
                                   ("Receipt", "Delivered", sent.message_id)]
    assert events[events["type"] == "Keyword"]["reply"].iloc[0]["message"] == (
        "Thanks! Your code is WIN-42.")


def test_keyword_answer_receipts_at_the_same_instant_are_not_merged(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    @listener.on("Keyword")
    def answer(payload: CallbackPayload) -> str:
        return "Thanks!"

    sandbox.set_account_callback(listener.url)
    client.keywords.create("PRIZE")
    sent = client.messages.send(destination=MOBILE, source=SOURCE, message="Text PRIZE",
                                reply=True)
    sandbox.simulate_reply(MOBILE, "PRIZE")  # the clock has not moved since the send
    sandbox.wait_for_deliveries(WAIT)  # every callback answered, so every event stored
    receipts = [e for e in sandbox.events("Receipt") if e.message_id == sent.message_id]
    assert [e.status for e in receipts] == ["Sent", "Delivered", "Sent", "Delivered"]
    first_sent, _, answer_sent, _ = (e.timestamp for e in receipts)
    assert answer_sent > first_sent  # a microsecond later: the clock stood still
    events = listener.events
    assert rows(listener) == sandbox_rows(sandbox)
    assert list(events["deliveries"]) == [1] * 5


def test_unknown_stops_and_helps_from_two_numbers_are_separate_events(
    sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url)
    for text in ("HELP", "STOP"):
        for number in (MOBILE, OTHER):  # nothing was sent to them: MessageID Unknown
            sandbox.simulate_reply(number, text)
    sandbox.wait_for_deliveries(WAIT)
    events = listener.events
    assert list(zip(events["type"], events["source"], events["message_id"], strict=True)) == [
        ("Help", MOBILE, "Unknown"), ("Help", OTHER, "Unknown"),
        ("Stop", MOBILE, "Unknown"), ("Stop", OTHER, "Unknown")]
    assert list(events["deliveries"]) == [1] * 4
    assert listener.funnel().loc["(none)", "opted_out"] == 2


def test_failed_lookups_of_a_batch_arrive_one_per_number(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url)
    landlines = ["441134960001", "441134960002", "442079460003"]
    blocked = ["447700900903", "447700900451"]  # the magic blocked number, a stop-listed one
    for number in landlines + blocked:
        answer = client.messages.send(destination=number, source=SOURCE, message="Hi",
                                      reply=False, lookup=True)
        assert answer.message_id == "Unknown"
    sandbox.wait_for_deliveries(WAIT)
    events = listener.events
    assert list(zip(events["type"], events["destination"], events["status"], strict=True)) == [
        *(("Lookup", n, "Reachable") for n in landlines),
        *(("Lookup", n, "Blocked") for n in blocked)]
    assert list(events["deliveries"]) == [1] * 5


def test_events_of_one_kind_get_strictly_later_timestamps_across_restarts(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    with Sandbox(seed=3, db=db) as box:
        box.simulate_reply(MOBILE, "HELP")
        box.simulate_reply(MOBILE, "HELP")
        box.simulate_reply(OTHER, "HELP")  # another number: nothing to tell apart
    with Sandbox(seed=3, db=db) as box:
        box.simulate_reply(MOBILE, "HELP")
        stamps = [(e.source, e.timestamp - box.now()) for e in box.events("Help")]
    micro = timedelta(microseconds=1)
    assert stamps == [(MOBILE, timedelta(0)), (MOBILE, micro), (OTHER, timedelta(0)),
                      (MOBILE, 2 * micro)]


def test_free_text_reply_is_a_message_callback_and_the_answer_is_sent(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    @listener.on("Message")
    def answer(payload: CallbackPayload) -> dict[str, Any]:
        return {"message": f"We read {len(payload.message or '')} characters", "reply": False}

    sandbox.set_account_callback(listener.url)
    sent = client.messages.send(destination=MOBILE, source=SOURCE, message="Any comments?",
                                reply=True)
    sandbox.advance(60)
    long_text = "x" * 2500
    sandbox.simulate_reply(MOBILE, long_text)
    sandbox.wait_for_deliveries(WAIT)
    events = listener.wait_for(3, timeout=WAIT)
    message = events[events["type"] == "Message"].iloc[0]
    assert message["message_id"] == sent.message_id and len(message["message"]) == 2000
    (reply,) = [m for m in sandbox.messages() if m.user == "callback"]
    assert reply.message_id == sent.message_id and reply.text == "We read 2000 characters"
    assert not reply.reply


def test_a_malformed_or_oversized_answer_sends_nothing(client: Client,
                                                       sandbox: Sandbox) -> None:
    answers = iter([b'{"message": "no destination"', b'{"source": "x"}', b"y" * 70_000])

    async def hook(request: Request) -> Response:
        if b'"Type":"Keyword"' not in await request.body():
            return Response(status_code=200)  # receipts: nothing to answer
        return Response(next(answers), media_type="application/json")

    with serve_app(hook) as url:
        sandbox.set_account_callback(url)
        client.keywords.create("PRIZE")
        client.messages.send(destination=MOBILE, source=SOURCE, message="Hi", reply=True)
        for minute in (1, 2, 3):
            sandbox.advance(60)
            sandbox.simulate_reply(MOBILE, f"PRIZE {minute}")
        sandbox.wait_for_deliveries(WAIT)
    keyword_attempts = [e for e in sandbox.journal("callback") if e.body["type"] == "Keyword"]
    outcomes = [e.body["reply"] for e in keyword_attempts if "reply" in e.body]
    assert [o["outcome"] for o in outcomes] == ["refused", "refused"]
    assert "not JSON" in outcomes[0]["error"] and "destination" in outcomes[1]["error"]
    oversized = keyword_attempts[-1]
    assert len(keyword_attempts) == 3 and oversized.status == 200
    assert "64 KiB" in oversized.body["error"]
    assert [m.user for m in sandbox.messages()] == ["admin"]


# ------------------------------------------------------------------ clicks


def test_a_click_arrives_with_the_message_it_was_sent_in(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url)
    link = client.tinyurl.register("https://example.org/survey?id=7")
    sent = client.messages.send(destination=MOBILE, source=SOURCE,
                                message=f"Tell us: {link}", reply=False)
    assert sandbox.follow_link(link, by=MOBILE) == "https://example.org/survey?id=7"
    sandbox.wait_for_deliveries(WAIT)
    events = listener.wait_for(3, timeout=WAIT)
    click = events[events["type"] == "Click"].iloc[0]
    assert (click["status"], click["message_id"], click["destination"], click["message"]) == (
        "Clicked", sent.message_id, MOBILE, "https://example.org/survey?id=7")
    funnel = listener.funnel()
    assert funnel.loc["(none)"].to_dict() == {"sent": 1, "delivered": 1, "clicked": 1,
                                              "replied": 0, "opted_out": 0}


# ------------------------------------------------------------------ delivery rules


def test_a_failing_receiver_gets_retries_then_the_fallback_url(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    hits: list[str] = []

    async def failing(request: Request) -> Response:
        hits.append(request.method)
        return Response(status_code=503)

    with serve_app(failing) as bad:
        sandbox.set_account_callback([bad, listener.url], retries=2, action="Email")
        sent = client.messages.send(destination=MOBILE, source=SOURCE, message="Hi",
                                    reply=False)
        sandbox.wait_for_deliveries(WAIT)
    attempts = [(e.body["event"], e.path, e.status, e.body["attempt"])
                for e in sandbox.journal("callback")]
    first, second = (e.seq for e in sandbox.events())
    assert attempts == [(first, bad, 503, 1), (first, bad, 503, 2), (first, listener.url, 200, 3),
                        (second, bad, 503, 1), (second, bad, 503, 2),
                        (second, listener.url, 200, 3)]
    assert hits == ["POST"] * 4
    assert rows(listener) == [("Receipt", "Sent", sent.message_id),
                              ("Receipt", "Delivered", sent.message_id)]
    assert sandbox.journal("alert") == []  # the fallback succeeded: no failure action


def test_when_every_url_fails_the_actions_are_journaled_as_alerts(
    client: Client, sandbox: Sandbox
) -> None:
    nobody = refused_url()
    sandbox.set_account_callback(nobody, retries=3, action="email,SMS", timeout_ms=2000)
    sandbox.simulate_reply(MOBILE, "HELP")
    sandbox.wait_for_deliveries(WAIT)
    attempts = sandbox.journal("callback")
    assert [(e.path, e.status, e.body["attempt"]) for e in attempts] == [
        (nobody, None, 1), (nobody, None, 2), (nobody, None, 3)]
    assert all("ConnectError" in e.body["error"] for e in attempts)
    alerts = sandbox.journal("alert")
    assert [(a.text, a.body["type"], a.body["attempts"]) for a in alerts] == [
        ("Email", "Help", 3), ("Sms", "Help", 3)]
    assert not sandbox.events("Help")[0].delivered


def test_total_timeout_stops_the_attempts(client: Client, sandbox: Sandbox) -> None:
    release = threading.Event()

    async def slow(request: Request) -> Response:
        # Never answers within the attempt's Timeout; released when the test ends.
        await anyio.to_thread.run_sync(release.wait, 10)
        return Response(status_code=200)

    with serve_app(slow) as url:
        try:
            sandbox.set_account_callback(url, retries=10, timeout_ms=200, total_timeout_ms=500,
                                         action="Sms")
            sandbox.simulate_reply(MOBILE, "INFO")
            sandbox.wait_for_deliveries(WAIT)
        finally:
            release.set()
    attempts = sandbox.journal("callback")
    assert 1 <= len(attempts) < 10
    assert all(e.status is None and "no answer within" in e.body["error"] for e in attempts)
    (alert,) = sandbox.journal("alert")
    assert alert.text == "Sms" and "TotalTimeout of 500 ms" in alert.body["error"]


def test_get_method_sends_the_payload_in_the_query_string(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url, method="GET")
    sent = client.messages.send_email(to="ada@example.org", from_="surveys", subject="Hi",
                                      content="<p>Hello</p>",
                                      metadata={"campaign": "spring", "wave": 2})
    sandbox.wait_for_deliveries(WAIT)
    events = listener.wait_for(2, timeout=WAIT)
    assert list(events["method"]) == ["GET", "GET"]
    assert list(events["status"]) == ["Sent", "Delivered"]
    first = events.iloc[0]
    assert first["message_id"] == sent.message_id and first["destination"] == "ada@example.org"
    assert first["metadata"] == {"tokenName": "sandbox-admin", "campaign": "spring", "wave": 2}
    assert first["reachable"] and not first["inbound"] and first["segments"] == 1
    assert first["timestamp"].isoformat() == "2026-03-02T09:00:00+00:00"
    assert [e.method for e in sandbox.journal("callback")] == ["GET", "GET"]


def test_an_email_callback_block_overrides_the_account_settings(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    nobody = refused_url()
    sandbox.set_account_callback(nobody)
    client.messages.send_email(to="ada@example.org", from_="surveys", subject="Hi",
                               content="Hello",
                               callback={"url": [nobody, listener.url], "retries": 1,
                                         "method": "GET"})
    sandbox.wait_for_deliveries(WAIT)
    assert [(e.path, e.method, e.status) for e in sandbox.journal("callback")] == [
        (nobody, "GET", None), (listener.url, "GET", 200),
        (nobody, "GET", None), (listener.url, "GET", 200)]
    assert len(listener.wait_for(2, timeout=WAIT)) == 2


def test_an_email_callback_blocks_timeout_and_action_are_applied(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    release = threading.Event()

    async def slow(request: Request) -> Response:
        # Never answers within the email's Timeout; released when the test ends.
        await anyio.to_thread.run_sync(release.wait, 10)
        return Response(status_code=200)

    sandbox.set_account_callback(listener.url, timeout_ms=30_000, action="Email")
    with serve_app(slow) as url:
        try:
            client.messages.send_email(
                to="ada@example.org", from_="surveys", subject="Hi", content="Hello",
                callback={"url": url, "timeout": 300, "retries": 2, "action": "sms,Pigeon"})
            sandbox.wait_for_deliveries(WAIT)
        finally:
            release.set()
    settings = {(e.callback or {}).get("timeout_ms") for e in sandbox.events()}
    assert settings == {300}
    attempts = sandbox.journal("callback")
    assert [(e.path, e.status, e.body["urlAttempt"]) for e in attempts] == [
        (url, None, 1), (url, None, 2), (url, None, 1), (url, None, 2)]
    assert all(e.body["error"] == "no answer within 300 ms" for e in attempts)
    # The email's Action (an unknown word ignored), not the account's: one Sms per event.
    assert [(a.text, a.body["type"]) for a in sandbox.journal("alert")] == [
        ("Sms", "Receipt"), ("Sms", "Receipt")]
    assert len(listener.events) == 0  # the account callback was not used


def test_an_email_callback_block_with_another_content_type_is_ignored(
    sandbox: Sandbox, listener: Listener
) -> None:
    hits: list[str] = []

    async def hook(request: Request) -> Response:
        hits.append(request.method)
        return Response(status_code=200)

    sandbox.set_account_callback(listener.url)
    with serve_app(hook) as url, sandbox_http(sandbox) as http:
        answer = http.post("/v3.2/Message/SendEmail", json={
            "To": "ada@example.org", "From": "surveys", "Subject": "Hi", "Content": "Hello",
            "Callback": [{"Url": url}, {"ContentType": "application/xml"}]})
        assert answer.status_code == 200 and answer.json()["Status"] == "Sent"
        sandbox.wait_for_deliveries(WAIT)
    assert hits == []  # the whole block was ignored (the reference) ...
    assert list(listener.events["status"]) == ["Sent", "Delivered"]  # ... the account's used


@pytest.mark.parametrize("content_type", ["application/xml", "text/plain", ""])
def test_control_api_refuses_a_content_type_other_than_json(
    sandbox: Sandbox, content_type: str
) -> None:
    with sandbox_http(sandbox) as http:
        refused = http.post("/_sandbox/callback", json={"Url": "http://127.0.0.1:9/cb",
                                                        "ContentType": content_type})
        assert refused.status_code == 400
        assert "ContentType" in refused.json()["detail"]
        accepted = http.post("/_sandbox/callback", json={"Url": "http://127.0.0.1:9/cb",
                                                         "contenttype": "application/json"})
        assert accepted.json()["ContentType"] == "application/json"
    account = sandbox.account_callback()
    assert account is not None and account.urls == ["http://127.0.0.1:9/cb"]


def test_a_burst_of_2000_callbacks_is_stored_with_none_lost(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url)
    ids = {client.messages.send(destination=f"336399{i:05d}", source=SOURCE, message="Hi",
                                reply=False).message_id for i in range(1000)}
    sandbox.wait_for_deliveries(120)
    events = listener.wait_for(2000, timeout=WAIT)
    assert len(events) == 2000 and int(events["deliveries"].sum()) == 2000
    assert set(events["message_id"]) == ids and len(ids) == 1000
    assert events.groupby("status").size().to_dict() == {"Delivered": 1000, "Sent": 1000}
    assert len(sandbox.journal("callback")) == 2000


def test_oversized_callbacks_are_refused_by_the_receiver_and_retried(
    client: Client, sandbox: Sandbox, listener: Listener
) -> None:
    sandbox.set_account_callback(listener.url, retries=2, action="Email")
    client.messages.send_email(to="ada@example.org", from_="surveys", subject="Hi",
                               content="Hello", metadata={"blob": "z" * 70_000})
    sandbox.wait_for_deliveries(WAIT)
    assert [e.status for e in sandbox.journal("callback")] == [413] * 4
    assert len(sandbox.journal("alert")) == 2
    assert len(listener.events) == 0


@pytest.mark.parametrize(
    ("content", "headers", "status"),
    [
        (b'{"Type": "Receipt", "MessageID": ', {"Content-Type": "application/json"}, 400),
        (b"[1, 2]", {"Content-Type": "application/json"}, 422),
        (b'{"MessageID": "MS1"}', {"Content-Type": "application/json"}, 422),
        (b'{"Type": "Receipt"}', {"Content-Type": "text/html"}, 415),
        (b'{"Type": "Receipt", "Message": "' + b"a" * 70_000 + b'"}',
         {"Content-Type": "application/json"}, 413),
    ],
    ids=["truncated-json", "not-an-object", "no-type", "wrong-media-type", "oversized"],
)
def test_malformed_and_oversized_bodies_are_refused(
    listener: Listener, content: bytes, headers: dict[str, str], status: int
) -> None:
    with httpx.Client(trust_env=False, timeout=WAIT) as http:
        response = http.post(listener.url, content=content, headers=headers)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/problem+json")
    assert len(listener.events) == 0


# ------------------------------------------------------------------ signatures


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_signed_callbacks_are_accepted_by_a_listener_with_the_same_secret(
    client: Client, sandbox: Sandbox, method: str
) -> None:
    with listen(secret="s3cret") as signed:
        sandbox.set_account_callback(signed.url, method=method, secret="s3cret")
        sent = client.messages.send(destination=MOBILE, source=SOURCE, message="Hi",
                                    reply=False)
        sandbox.wait_for_deliveries(WAIT)
        assert rows(signed) == [("Receipt", "Sent", sent.message_id),
                                ("Receipt", "Delivered", sent.message_id)]
        assert list(signed.events["method"]) == [method, method]
    assert [e.status for e in sandbox.journal("callback")] == [200, 200]


def test_a_wrong_secret_is_refused_with_401_then_retried_and_alerted(
    client: Client, sandbox: Sandbox
) -> None:
    with listen(secret="s3cret") as signed:
        sandbox.set_account_callback(signed.url, retries=2, action="Email", secret="guess")
        sandbox.simulate_reply(MOBILE, "HELP")
        sandbox.wait_for_deliveries(WAIT)
        assert len(signed.events) == 0
    attempts = sandbox.journal("callback")
    assert [(e.status, e.body["attempt"], e.body["error"]) for e in attempts] == [
        (401, 1, "HTTP 401"), (401, 2, "HTTP 401")]
    (alert,) = sandbox.journal("alert")
    assert (alert.text, alert.body["type"], alert.body["error"]) == ("Email", "Help", "HTTP 401")
    assert not sandbox.events("Help")[0].delivered


def test_an_unsigned_sandbox_is_refused_by_a_listener_that_wants_signatures(
    sandbox: Sandbox,
) -> None:
    with listen(secret="s3cret") as signed:
        sandbox.set_account_callback(signed.url, retries=1)
        sandbox.simulate_reply(MOBILE, "INFO")
        sandbox.wait_for_deliveries(WAIT)
        assert len(signed.events) == 0
    assert [e.status for e in sandbox.journal("callback")] == [401]


def test_an_email_callback_block_is_signed_with_the_account_secret(
    client: Client, sandbox: Sandbox
) -> None:
    headers: list[str | None] = []

    async def hook(request: Request) -> Response:
        headers.append(request.headers.get("X-Surveykit-Signature"))
        return Response(status_code=200)

    with serve_app(hook) as account_url, listen(secret="s3cret") as signed:
        sandbox.set_account_callback(account_url, secret="s3cret")
        client.messages.send_email(to="ada@example.org", from_="surveys", subject="Hi",
                                   content="Hello", callback={"url": signed.url})
        sandbox.wait_for_deliveries(WAIT)
        assert list(signed.events["status"]) == ["Sent", "Delivered"]
    assert headers == []  # the email's own Callback took the events


def test_the_secret_is_masked_kept_and_validated(sandbox: Sandbox) -> None:
    target = sandbox.set_account_callback("http://127.0.0.1:9/cb", secret="s3cret")
    assert target is not None and "s3cret" not in repr(target)
    assert target.wire()["Secret"] == "********"
    with pytest.raises(ValueError, match="secret: an empty secret"):
        sandbox.set_account_callback("http://127.0.0.1:9/cb", secret="")
    assert sandbox.account_callback() == target  # a refusal changes nothing


def test_control_api_sets_the_secret_and_never_shows_it(sandbox: Sandbox) -> None:
    http = sandbox_http(sandbox)
    with http:
        shown = http.post("/_sandbox/callback",
                          json={"url": "http://127.0.0.1:9/cb", "secret": "s3cret"}).json()
        assert shown["Secret"] == "********"
        assert "s3cret" not in http.get("/_sandbox/callback").text
        # Posting the settings back as shown keeps the secret.
        again = http.post("/_sandbox/callback", json={**shown, "Retries": 1}).json()
        assert (again["Secret"], again["Retries"]) == ("********", 1)
        account = sandbox.account_callback()
        assert account is not None and account.secret == "s3cret"
        refused = http.post("/_sandbox/callback",
                            json={"Url": "http://127.0.0.1:9/cb", "Secret": ""})
        assert refused.status_code == 400 and "secret" in refused.json()["detail"]
        http.delete("/_sandbox/callback")
        masked = http.post("/_sandbox/callback",
                           json={"Url": "http://127.0.0.1:9/cb", "Secret": "********"})
        assert masked.status_code == 400 and "Secret" in masked.json()["detail"]


# ------------------------------------------------------------------ control API and CLI


def test_served_sandbox_with_cli_callback_options_delivers_by_get(listener: Listener) -> None:
    with serve_sandbox("--callback-url", listener.url, "--callback-method", "GET") as served:
        auth = {"Authorization": f"Basic {served.token}"}
        with httpx.Client(base_url=served.base_url, headers=auth, trust_env=False,
                          timeout=WAIT) as http:
            shown = http.get("/_sandbox/callback").json()
            assert (shown["Url"], shown["Method"]) == ([listener.url], "GET")
            reply = http.post("/_sandbox/simulate/reply",
                              json={"from": MOBILE, "text": "HELP"}).json()
            assert http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT}).json() == {
                "pending": 0}
            (event,) = http.get("/_sandbox/events").json()
            assert event["delivered"] and event["seq"] == reply["seq"]
            changed = http.post("/_sandbox/callback", json={"url": [listener.url],
                                                            "retries": 1}).json()
            assert (changed["Method"], changed["Retries"]) == ("POST", 1)
            assert http.post("/_sandbox/callback", json={"Url": "ftp://x"}).status_code == 400
            assert http.delete("/_sandbox/callback").json() is None
    events = listener.wait_for(1, timeout=WAIT)
    assert list(zip(events["type"], events["method"], strict=True)) == [("Help", "GET")]


def test_served_sandbox_takes_every_account_callback_setting_from_the_cli(
    listener: Listener,
) -> None:
    nobody = refused_url()
    with serve_sandbox("--callback-url", nobody, "--callback-url", listener.url,
                       "--callback-retries", "2", "--callback-timeout", "2000",
                       "--callback-total-timeout", "20000", "--callback-action", "email",
                       "--callback-action", "Sms") as served:
        auth = {"Authorization": f"Basic {served.token}"}
        with httpx.Client(base_url=served.base_url, headers=auth, trust_env=False,
                          timeout=WAIT) as http:
            shown = http.get("/_sandbox/callback").json()
            assert {k: shown[k] for k in ("Url", "Method", "Retries", "Timeout", "TotalTimeout",
                                          "Action")} == {
                "Url": [nobody, listener.url], "Method": "POST", "Retries": 2,
                "Timeout": 2000, "TotalTimeout": 20000, "Action": "Email,Sms"}
            http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "HELP"})
            assert http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT}).json() == {
                "pending": 0}
            attempts = http.get("/_sandbox/journal", params={"kind": "callback"}).json()
            assert [(a["path"], a["status"]) for a in attempts] == [
                (nobody, None), (nobody, None), (listener.url, 200)]
            # Every URL now refuses: the two failure actions are journaled.
            http.post("/_sandbox/callback", json={**shown, "Url": [nobody]})
            http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "INFO"})
            http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT})
            alerts = http.get("/_sandbox/journal", params={"kind": "alert"}).json()
            assert [(a["text"], a["body"]["attempts"]) for a in alerts] == [("Email", 2),
                                                                            ("Sms", 2)]
    assert list(listener.events["type"]) == ["Help"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--callback-timeout", "0"], "--callback-timeout: Input should be greater than or"),
        (["--callback-total-timeout", "0"], "--callback-total-timeout: Input should be"),
        (["--callback-retries", "-1"], "--callback-retries: Input should be greater than"),
        (["--callback-action", "Pigeon"], "--callback-action: 'Pigeon' is not one of Email"),
        (["--callback-method", "PUT"], "--callback-method: Input should be 'POST' or 'GET'"),
        (["--callback-url", "ftp://x"], "--callback-url: 'ftp://x' is not an http(s) URL"),
        (["--callback-secret", ""], "--callback-secret: an empty secret would accept anyone"),
    ],
    ids=["timeout", "total-timeout", "retries", "action", "method", "url", "secret"],
)
def test_cli_refuses_bad_callback_settings_naming_the_option(args: list[str],
                                                              message: str) -> None:
    url = [] if args[0] == "--callback-url" else ["--callback-url", "http://127.0.0.1:9/cb"]
    result = CliRunner().invoke(app, ["sandbox", "serve", "--port", "0", *url, *args])
    assert result.exit_code == 2
    assert f"surveykit: {message}" in result.output


def test_cli_callback_settings_without_a_url_are_refused() -> None:
    result = CliRunner().invoke(app, ["sandbox", "serve", "--port", "0",
                                      "--callback-retries", "1", "--callback-action", "Sms"])
    assert result.exit_code == 2
    assert "--callback-retries, --callback-action: needs --callback-url" in result.output


def test_served_sandbox_signs_with_the_cli_secret(listener: Listener,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with listen(secret="from-the-cli") as signed:
        with serve_sandbox("--callback-url", signed.url, "--callback-secret",
                           "from-the-cli") as served:
            auth = {"Authorization": f"Basic {served.token}"}
            with httpx.Client(base_url=served.base_url, headers=auth, trust_env=False,
                              timeout=WAIT) as http:
                assert http.get("/_sandbox/callback").json()["Secret"] == "********"
                http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "HELP"})
                http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT})
                assert [a["status"] for a in http.get(
                    "/_sandbox/journal", params={"kind": "callback"}).json()] == [200]
        assert list(signed.events["type"]) == ["Help"]
    # The environment variable `surveykit listen` reads works too, and without a callback
    # URL it is not an error (there is nothing to sign).
    monkeypatch.setenv("SURVEYKIT_CALLBACK_SECRET", "from-the-env")
    with listen(secret="from-the-env") as signed:
        with serve_sandbox("--callback-url", signed.url) as served:
            auth = {"Authorization": f"Basic {served.token}"}
            with httpx.Client(base_url=served.base_url, headers=auth, trust_env=False,
                              timeout=WAIT) as http:
                http.post("/_sandbox/simulate/reply", json={"from": MOBILE, "text": "INFO"})
                http.post("/_sandbox/deliveries/wait", json={"timeout": WAIT})
        assert list(signed.events["type"]) == ["Info"]
    with serve_sandbox() as served:
        auth = {"Authorization": f"Basic {served.token}"}
        shown = httpx.get(served.base_url + "/_sandbox/callback", headers=auth,
                          trust_env=False, timeout=WAIT)
        assert shown.json() is None


def test_close_stops_the_delivery_thread(listener: Listener) -> None:
    before = set(threading.enumerate())
    sandbox = Sandbox(seed=3)
    try:
        assert sandbox.set_account_callback(listener.url, action="sms") is not None
        sandbox.simulate_reply(MOBILE, "HELP")
        sandbox.wait_for_deliveries(WAIT)
        (worker,) = [t for t in set(threading.enumerate()) - before
                     if t.name == "surveykit-sandbox-callbacks"]
        assert worker.is_alive()
    finally:
        sandbox.close()
    assert not worker.is_alive()
    sandbox.reset()
    assert sandbox.account_callback() is None


@pytest.mark.parametrize(
    ("settings", "match"),
    [({"action": "Pigeon"}, "Action"), ({"method": "PUT"}, "Method"),
     ({"retries": -1}, "Retries"), ({"timeout_ms": 0}, "Timeout")],
    ids=["action", "method", "retries", "timeout"],
)
def test_bad_account_callback_settings_are_refused(sandbox: Sandbox, settings: dict[str, Any],
                                                   match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sandbox.set_account_callback("http://127.0.0.1:9/cb", **settings)
    with pytest.raises(ValueError, match="Url"):
        sandbox.set_account_callback("ftp://example.org/cb")
    assert sandbox.account_callback() is None
