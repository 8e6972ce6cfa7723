"""The in-process transport: the body streams from the app's task, chunk by chunk."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from surveykit.client import ASGIPortalTransport, Client
from surveykit.client._transports import MAX_QUEUED_CHUNKS
from surveykit.results import read_results
from surveykit.sandbox import Sandbox

WAIT = 10.0  # seconds: a safety net for waits, never an assertion about speed

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@pytest.fixture
def raw() -> Iterator[Callable[[Any], httpx.Client]]:
    """Make an httpx client of an ASGI app through the transport; closed after the test."""
    clients: list[httpx.Client] = []

    def make(app: Any) -> httpx.Client:
        clients.append(httpx.Client(transport=ASGIPortalTransport(app),
                                    base_url="http://app.localhost"))
        return clients[-1]

    yield make
    for c in clients:
        c.close()


async def start(send: Send) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})


def until(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_first_chunk_reaches_the_reader_before_the_app_sent_the_rest(
    raw: Callable[[Any], httpx.Client],
) -> None:
    released = threading.Event()

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await receive()
        await start(send)
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        # Off the loop: the reader must hold the first chunk before the app goes on. A
        # transport that buffers the body would wait here for WAIT seconds.
        reader_had_it = await asyncio.to_thread(released.wait, WAIT)
        last = b"second" if reader_had_it else b"buffered"
        await send({"type": "http.response.body", "body": last, "more_body": False})

    with raw(app).stream("GET", "/") as response:
        chunks = response.iter_raw()
        assert next(chunks) == b"first"
        released.set()
        assert list(chunks) == [b"second"]


def test_the_app_runs_at_most_a_few_chunks_ahead_of_the_reader(
    raw: Callable[[Any], httpx.Client],
) -> None:
    sent = [0]

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await receive()
        await start(send)
        for _ in range(100):
            await send({"type": "http.response.body", "body": b"x" * 1024, "more_body": True})
            sent[0] += 1
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    with raw(app).stream("GET", "/") as response:
        chunks = response.iter_raw()
        next(chunks)
        assert until(lambda: sent[0] >= MAX_QUEUED_CHUNKS)
        time.sleep(0.1)  # room to run further ahead, if nothing held it back
        # A full queue, what one trip to the loop took (at most a queue's worth), one sending.
        assert sent[0] <= 2 * MAX_QUEUED_CHUNKS + 1
        assert sum(len(chunk) for chunk in chunks) == 99 * 1024
    assert sent[0] == 100


def test_closing_the_response_early_stops_the_app(raw: Callable[[Any], httpx.Client]) -> None:
    stopped = threading.Event()

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await receive()
        await start(send)
        try:
            for _ in range(100_000):  # more than anyone reads here
                await send({"type": "http.response.body", "body": b"x", "more_body": True})
        except asyncio.CancelledError:
            stopped.set()
            raise
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    with raw(app).stream("GET", "/") as response:
        assert next(response.iter_raw()) == b"x"
    assert stopped.wait(WAIT)


def test_a_response_dropped_unread_stops_the_app(raw: Callable[[Any], httpx.Client]) -> None:
    stopped = threading.Event()

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await receive()
        await start(send)
        try:
            for _ in range(100_000):
                await send({"type": "http.response.body", "body": b"x", "more_body": True})
        except asyncio.CancelledError:
            stopped.set()
            raise
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    client = raw(app)
    response = client.send(client.build_request("GET", "/"), stream=True)
    assert next(response.iter_raw()) == b"x"
    del response  # neither read to the end nor closed
    gc.collect()
    assert stopped.wait(WAIT), "the app still waits on a full queue"


def test_errors_before_the_response_are_raised_by_the_request_after_it_by_the_read(
    raw: Callable[[Any], httpx.Client],
) -> None:
    async def refuses(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        raise httpx.ConnectError("refused")

    async def breaks(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await start(send)
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        raise RuntimeError("broke mid-body")

    with pytest.raises(httpx.ConnectError, match="refused"):
        raw(refuses).get("/")
    with raw(breaks).stream("GET", "/") as response:
        chunks = response.iter_raw()
        assert next(chunks) == b"part"
        with pytest.raises(RuntimeError, match="mid-body"):
            next(chunks)


def test_reading_after_the_transport_closed_is_an_error_not_a_hang() -> None:
    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await start(send)
        await send({"type": "http.response.body", "body": b"x" * 10, "more_body": True})
        await asyncio.sleep(WAIT)

    transport = ASGIPortalTransport(app)
    with httpx.Client(transport=transport, base_url="http://app.localhost") as c, \
            c.stream("GET", "/") as response:
        chunks = response.iter_raw()
        assert next(chunks) == b"x" * 10
        transport.close()
        with pytest.raises(httpx.ReadError, match="closed"):
            next(chunks)


def test_head_gets_no_body(raw: Callable[[Any], httpx.Client]) -> None:
    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await start(send)
        await send({"type": "http.response.body", "body": b"not for HEAD"})

    response = raw(app).head("/")
    assert (response.status_code, response.content) == (200, b"")


def test_sandbox_results_arrive_in_pieces_in_process() -> None:
    box = Sandbox(seed=3, sample_data=False)
    box.add_generated_survey("BENCH-50K", 50_000, questions=3)
    body = json.dumps({"format": "CSV", "surveyReference": "BENCH-50K"})
    with httpx.Client(transport=ASGIPortalTransport(box.app), base_url=box.base_url,
                      headers={"Authorization": f"Basic {box.admin_token}",
                               "Content-Type": "application/json"}) as c, \
            c.stream("POST", "/v3.2/Survey/GetResults", content=body) as response:
        pieces = list(response.iter_raw())
    assert len(pieces) >= 3  # 20,000-row chunks, each handed over as it is encoded
    assert len(read_results(b"".join(pieces), format="CSV")) == 50_000
    with Client.sandbox(box) as client:  # and the client reads the stream as before
        assert len(client.surveys.results("BENCH-50K")) == 50_000


def test_a_sandbox_client_dropped_unclosed_closes_its_event_loop() -> None:
    """No "unclosed event loop" or socket warning when a sandbox client is only collected.

    (A command-line run or a notebook often drops the client; pytest turns such warnings
    into failures of whichever test happens to run at the next garbage collection.)
    """
    import subprocess
    import sys

    script = """
import gc, sys, warnings
warnings.simplefilter("error")
import surveykit as sk
def use():
    sk.Client.sandbox().surveys.results("CSAT-SMS-2026")
use()
hits = []
sys.unraisablehook = lambda u: hits.append(repr(u.exc_value))
gc.collect(); gc.collect()
print(hits)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout


def test_a_network_client_dropped_unclosed_closes_its_connections(served: object) -> None:
    """No "unclosed socket" warning when a client that talked to a server is only collected."""
    import subprocess
    import sys

    script = f"""
import gc, sys, warnings
warnings.simplefilter("error")
import surveykit as sk
def use():
    sk.Client({served.base_url!r}, {served.token!r}).surveys.results("CSAT-SMS-2026")
use()
hits = []
sys.unraisablehook = lambda u: hits.append(repr(u.exc_value))
gc.collect(); gc.collect()
print(hits)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout
