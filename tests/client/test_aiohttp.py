"""The async client's default transport (aiohttp under httpx), against real servers."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import pandas as pd
import pytest
import uvicorn
from aiohttp.client_reqrep import ConnectionKey
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

import surveykit as sk
from surveykit._util.net import bind, url_of
from surveykit.client import _aiohttp
from surveykit.client._aiohttp import AiohttpTransport, httpx_error
from surveykit.client._pool import AsyncShardedTransport
from surveykit.client._retry import NEVER_SENT, NOT_SENDABLE
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

SOURCE = "447700900999"
KEY = ConnectionKey("127.0.0.1", 8000, False, True, None, None, None)


@pytest.fixture(scope="module")
def served() -> Iterator[ServedSandbox]:
    with serve_sandbox() as server:
        yield server


def control(server: ServedSandbox) -> httpx.Client:
    return httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Basic {server.token}"}
    )


def transport_of(client: sk.AsyncClient) -> Any:
    return client._http._transport


def accepted(server: ServedSandbox) -> Counter[str]:
    with control(server) as http:
        answer = http.get("/_sandbox/journal", params={"kind": "message"}).json()
    entries = answer["entries"] if isinstance(answer, dict) else answer
    return Counter(str(entry["destination"]) for entry in entries)


def send_one(base_url: str, token: str, destination: str, **options: Any) -> str:
    """Send one message from a fresh async client in its own event loop; its MessageID."""

    async def send() -> str:
        async with sk.AsyncClient(base_url, token, **options) as client:
            answer = await client.messages.send(
                destination=destination, source=SOURCE, message="Hi", reply=False
            )
            return answer.message_id

    return asyncio.run(send())


def test_remote_async_clients_send_over_aiohttp_with_the_clients_limits() -> None:
    client = sk.AsyncClient("https://api.example.test", "t")
    transport = transport_of(client)
    assert isinstance(transport, AiohttpTransport)
    assert (transport._limits.max_connections, transport._limits.keepalive_expiry) == (100, 4.0)
    limited = sk.AsyncClient(
        "https://api.example.test", "t", limits=httpx.Limits(max_connections=3)
    )
    assert transport_of(limited)._limits.max_connections == 3
    # The embedded sandbox stays in-process, and a transport given by the caller is used.
    assert not isinstance(transport_of(sk.AsyncClient.sandbox()), AiohttpTransport)
    chosen = AsyncShardedTransport(httpx.Limits(max_connections=8))
    assert transport_of(sk.AsyncClient("https://api.example.test", "t", transport=chosen)) is (
        chosen
    )


@pytest.mark.parametrize(
    ("error", "expected", "never_sent"),
    [
        (aiohttp.ClientConnectorError(KEY, OSError(111, "refused")), httpx.ConnectError, True),
        (aiohttp.ConnectionTimeoutError("pool"), httpx.ConnectTimeout, True),
        (aiohttp.SocketTimeoutError("read"), httpx.ReadTimeout, False),
        (aiohttp.ServerTimeoutError("read"), httpx.ReadTimeout, False),
        (aiohttp.ServerDisconnectedError(), httpx.RemoteProtocolError, False),
        (aiohttp.ClientOSError(104, "reset by peer"), httpx.ReadError, False),
        (aiohttp.ClientPayloadError("cut"), httpx.ReadError, False),
        (aiohttp.ClientConnectionError("odd"), httpx.RemoteProtocolError, False),
        (TimeoutError(), httpx.ReadTimeout, False),
    ],
)
def test_only_failures_to_connect_count_as_never_sent(
    error: BaseException, expected: type[Exception], never_sent: bool
) -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v3.2/Message")
    mapped = httpx_error(error, request)
    assert type(mapped) is expected
    assert isinstance(mapped, NEVER_SENT) is never_sent
    assert mapped.request is request


def test_an_invalid_url_is_not_sendable() -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v3.2/Message")
    mapped = httpx_error(aiohttp.InvalidURL("http://[::1"), request)
    assert isinstance(mapped, NOT_SENDABLE) and not isinstance(mapped, NEVER_SENT)


def test_other_errors_are_not_mapped() -> None:
    request = httpx.Request("GET", "http://127.0.0.1/")
    assert httpx_error(ValueError("not a transport error"), request) is None


async def test_sends_and_answers_over_the_network(served: ServedSandbox) -> None:
    async with sk.AsyncClient(served.base_url, served.token) as client:
        answers = await asyncio.gather(
            *(
                client.messages.send(
                    destination=f"4479111240{i:02}", source=SOURCE, message="Hi", reply=False
                )
                for i in range(20)
            )
        )
        hooks = await client.webhooks.list()
    assert all(answer.created and answer.message_id.startswith("MS") for answer in answers)
    assert len({answer.message_id for answer in answers}) == 20
    assert len(hooks) > 0
    assert transport_of(client)._sessions == {}  # closed and let go


def test_faults_over_the_network_leave_one_outcome_per_row_and_never_send_twice(
    served: ServedSandbox,
) -> None:
    with control(served) as http:
        for fault in (
            {"status": 503, "rate": 0.15},
            {"status": 500, "rate": 0.05},
            {"drop": "after", "rate": 0.1},
            {"drop": "before", "rate": 0.1},
            {"latency": 0.005, "rate": 0.5},
        ):
            http.post("/_sandbox/faults", json={"route": "/v3.2/Message", **fault})
    df = pd.DataFrame({"mobileNumber": [f"4479112500{i:02d}" for i in range(100)]})
    try:
        client = sk.AsyncClient(
            served.base_url, served.token, retry=sk.RetryPolicy(max_retries=2, backoff_base=0.0)
        )
        result = asyncio.run(
            sk.send_batch(client, df, message="Hi", source=SOURCE, concurrency=16, progress=False)
        )
    finally:
        with control(served) as http:
            http.delete("/_sandbox/faults")
    frame = result.frame
    outcomes = Counter(frame["outcome"].astype(str))
    assert sum(outcomes.values()) == 100
    assert outcomes["sent"] > 0 and outcomes["failed"] > 0 and outcomes["unknown"] > 0
    got = accepted(served)
    ours = {d: n for d, n in got.items() if d.startswith("4479112500")}
    assert max(ours.values()) == 1, "no destination received a message twice"
    sent = set(frame.loc[frame["outcome"] == "sent", "destination"])
    failed = set(frame.loc[frame["outcome"] == "failed", "destination"])
    assert sent <= set(ours) and not failed & set(ours)


def test_a_refused_connection_is_reported_as_not_sent() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there

    with pytest.raises(sk.APIConnectionError, match="could not connect") as caught:
        send_one(
            f"http://127.0.0.1:{port}", "t", "447911124100", allow_insecure_http=True,
            retry=sk.RetryPolicy(max_retries=1, backoff_base=0.0),
        )
    assert not isinstance(caught.value, sk.OutcomeUnknownError)


def test_a_read_timeout_on_a_send_is_outcome_unknown_and_not_resent(
    served: ServedSandbox,
) -> None:
    destination = "447911124200"
    with control(served) as http:
        http.post("/_sandbox/faults", json={"route": "/v3.2/Message", "latency": 0.6, "times": 1})

    try:
        with pytest.raises(sk.OutcomeUnknownError, match="ReadTimeout"):
            send_one(served.base_url, served.token, destination, timeout=0.2)
        deadline = time.monotonic() + 10
        while accepted(served)[destination] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # the server finishes the slow request after we gave up
        assert accepted(served)[destination] == 1
    finally:
        with control(served) as http:
            http.delete("/_sandbox/faults")


def test_a_streamed_download_returns_its_connection(served: ServedSandbox) -> None:
    expected = sk.Client(served.base_url, served.token).surveys.results("*", format="CSV")

    async def run() -> pd.DataFrame:
        # One connection and a short pool wait: a download that kept its connection would
        # make the sends after it time out waiting for the pool.
        async with sk.AsyncClient(
            served.base_url, served.token,
            limits=httpx.Limits(max_connections=1),
            timeout=httpx.Timeout(10, pool=1.0),
        ) as client:
            frame = await client.surveys.results("*", format="CSV")
            for i in range(3):
                await client.messages.send(
                    destination=f"4479111243{i:02}", source=SOURCE, message="Hi", reply=False
                )
            return frame

    original = _aiohttp.CHUNK_SIZE
    _aiohttp.CHUNK_SIZE = 512  # many chunks, so the body really is streamed
    try:
        frame = asyncio.run(run())
    finally:
        _aiohttp.CHUNK_SIZE = original
    pd.testing.assert_frame_equal(frame, expected)


def test_one_client_works_in_successive_event_loops(
    served: ServedSandbox, caplog: pytest.LogCaptureFixture
) -> None:
    client = sk.AsyncClient(served.base_url, served.token)

    async def send(i: int) -> str:
        answer = await client.messages.send(
            destination=f"4479111244{i:02}", source=SOURCE, message="Hi", reply=False
        )
        return answer.message_id

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = asyncio.run(send(1)), asyncio.run(send(2))
        third = sk.AsyncClient(served.base_url, served.token)  # never closed, as in notebooks
        asyncio.run(third.webhooks.list())
        del third
        gc.collect()
    assert first != second
    asyncio.run(client.aclose())
    assert transport_of(client)._sessions == {}  # closed and let go
    noise = [str(w.message) for w in caught] + caplog.messages
    assert not [text for text in noise if "Unclosed" in text], noise


def test_off_asyncio_requests_go_through_the_sharded_pool(
    served: ServedSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_aiohttp, "on_asyncio", lambda: False)  # as under trio

    async def run() -> AiohttpTransport:
        async with sk.AsyncClient(served.base_url, served.token) as client:
            hooks = await client.webhooks.list()
            assert len(hooks) > 0
            transport: AiohttpTransport = transport_of(client)
            return transport

    transport = asyncio.run(run())
    assert transport._sessions == {}
    assert isinstance(transport._fallback, AsyncShardedTransport)


async def _zipped(request: Request) -> Response:
    return PlainTextResponse("survey " * 400)


async def _echo(request: Request) -> Response:
    body = await request.body()
    return JSONResponse({"headers": dict(request.headers), "length": len(body)})


@pytest.fixture
def gzip_server() -> Iterator[str]:
    app = Starlette(
        routes=[Route("/v3.2/Webhook", _zipped), Route("/echo", _echo, methods=["GET", "POST"])]
    )
    app.add_middleware(GZipMiddleware, minimum_size=10)
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield url_of(sock, "127.0.0.1")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_compressed_answers_are_decoded_once_by_httpx(gzip_server: str) -> None:
    async def fetch() -> httpx.Response:
        transport = AiohttpTransport(httpx.Limits(max_connections=2))
        async with httpx.AsyncClient(transport=transport) as http:
            return await http.get(gzip_server + "/v3.2/Webhook")

    response = asyncio.run(fetch())
    assert response.headers["content-encoding"] == "gzip"
    assert response.text == "survey " * 400
    assert int(response.headers["content-length"]) < len(response.content)  # it was zipped


def test_bodies_go_with_their_length_and_a_get_has_none(gzip_server: str) -> None:
    async def exchange() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async def chunks() -> Any:
            yield b"abc"
            yield b"def"

        transport = AiohttpTransport(httpx.Limits(max_connections=2))
        async with httpx.AsyncClient(transport=transport) as http:
            return (
                await http.get(gzip_server + "/echo"),
                await http.post(gzip_server + "/echo", json={"a": 1}),
                await http.post(gzip_server + "/echo", content=chunks()),
            )

    got, posted, streamed = asyncio.run(exchange())
    assert "content-length" not in got.json()["headers"]
    assert posted.json()["headers"]["content-length"] == str(posted.json()["length"]) == "7"
    # A streamed request body is sent whole, with its length, not chunked.
    assert streamed.json()["length"] == 6
    assert "transfer-encoding" not in streamed.json()["headers"]


def test_a_header_with_a_control_character_is_refused_before_sending(
    served: ServedSandbox,
) -> None:
    with pytest.raises(sk.APIConnectionError, match="nothing was sent") as caught:
        send_one(served.base_url, served.token, "447911126300",
                 headers={"X-Trace": "a\r\nInjected: 1"})
    assert not isinstance(caught.value, sk.OutcomeUnknownError)
    assert "Injected" not in str(caught.value)
    assert accepted(served)["447911126300"] == 0


def test_event_loops_in_two_threads_share_one_client(served: ServedSandbox) -> None:
    client = sk.AsyncClient(served.base_url, served.token)
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def thread(n: int) -> None:
        async def sends() -> list[str]:
            answers = []
            for i in range(5):
                answer = await client.messages.send(
                    destination=f"447911125{n}{i:02}", source=SOURCE, message="Hi", reply=False
                )
                answers.append(answer.message_id)
            return answers

        try:
            results[n] = asyncio.run(sends())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=thread, args=(n,)) for n in (1, 2)]
    for each in threads:
        each.start()
    for each in threads:
        each.join(60)
    assert not errors, errors
    assert sum(len(ids) for ids in results.values()) == 10
    asyncio.run(client.aclose())


def test_a_peer_that_stops_reading_cannot_hang_a_send() -> None:
    # aiohttp has no write timeout: the sum of httpx's timeouts bounds the whole exchange.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        async def post() -> None:
            transport = AiohttpTransport(httpx.Limits(max_connections=1))
            timeout = httpx.Timeout(1.0, write=0.2)
            async with httpx.AsyncClient(transport=transport, timeout=timeout) as http:
                await http.post(f"http://127.0.0.1:{port}/v3.2/Data/Import",
                                content=b"x" * 64_000_000)

        async def bounded() -> None:
            await asyncio.wait_for(post(), 30)  # a hang fails here instead of stalling CI

        with pytest.raises(httpx.TimeoutException) as caught:
            asyncio.run(bounded())
        assert not isinstance(caught.value, NEVER_SENT)  # part of it may have gone out
