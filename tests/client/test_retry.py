"""Retries: read-only requests are retried; sends only when they provably never arrived."""

from __future__ import annotations

import contextlib
import inspect
import socket
import threading
import traceback
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

import surveykit as sk
from surveykit.client._retry import MAX_RATE_LIMITED, delay_after_rate_limit, parse_retry_after

BASE = "https://api.example.test"


class Script:
    """Answers each request with the next item; counts attempts."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.attempts = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.attempts += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@pytest.fixture(params=["sync", "async"])
def make_client(request: pytest.FixtureRequest) -> Callable[..., Any]:
    def make(script: Script, max_retries: int = 2) -> Any:
        policy = sk.RetryPolicy(max_retries=max_retries, backoff_base=0.0)
        cls = sk.Client if request.param == "sync" else sk.AsyncClient
        return cls(BASE, "tok", transport=httpx.MockTransport(script), retry=policy)

    return make


def ok_webhooks() -> httpx.Response:
    return httpx.Response(200, json=[])


def ok_send() -> httpx.Response:
    return httpx.Response(200, json={"MessageID": "MS1", "Status": "Sent"})


def do_send(client: Any) -> Any:
    return client.messages.send(
        destination="447700900123", source="447700900999", message="Hi", reply=False
    )


def do_email(client: Any) -> Any:
    return client.messages.send_email(
        to="ana@example.org", from_="surveys", subject="S", content="C"
    )


def do_import(client: Any) -> Any:
    return client.data.import_records("R", [{"mobileNumber": "447700900123"}])


def do_keyword(client: Any) -> Any:
    return client.keywords.create("JOIN")


def do_link(client: Any) -> Any:
    return client.tinyurl.register("https://example.org")


SENDS = [
    pytest.param(do_send, ok_send, id="message"),
    pytest.param(do_email, ok_send, id="email"),
    pytest.param(do_import, lambda: httpx.Response(200, json=[]), id="import"),
    pytest.param(do_keyword, lambda: httpx.Response(200), id="keyword-create"),
    pytest.param(do_link, lambda: httpx.Response(200, json="https://t.example/1"), id="tinyurl"),
]

READS = [
    pytest.param(lambda c: c.webhooks.list(), ok_webhooks, id="webhooks"),
    pytest.param(lambda c: c.keywords.list(), ok_webhooks, id="keywords"),
    pytest.param(
        lambda c: c.messages.lookup("447700900123"),
        lambda: httpx.Response(200, json={"status": "Success"}),
        id="lookup",
    ),
    pytest.param(lambda c: c.keywords.delete("JOIN"), lambda: httpx.Response(200), id="delete"),
    pytest.param(
        lambda c: c.surveys.get_results("S"), lambda: httpx.Response(200, text="[]"), id="results"
    ),
]


@pytest.mark.parametrize(("call", "ok"), READS)
@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(lambda: httpx.Response(503), id="503"),
        pytest.param(lambda: httpx.Response(502), id="502"),
        pytest.param(lambda: httpx.Response(504), id="504"),
        pytest.param(lambda: httpx.Response(429, headers={"Retry-After": "0"}), id="429"),
        pytest.param(lambda: httpx.ReadTimeout("slow"), id="read-timeout"),
        pytest.param(lambda: httpx.RemoteProtocolError("reset"), id="reset"),
        pytest.param(lambda: httpx.ConnectError("refused"), id="connect"),
    ],
)
async def test_reads_are_retried(
    make_client: Callable[..., Any], call: Any, ok: Any, failure: Any
) -> None:
    script = Script(failure(), failure(), ok())
    await resolve(call(make_client(script)))
    assert script.attempts == 3


@pytest.mark.parametrize(
    ("failure", "error"),
    [
        pytest.param(lambda: httpx.Response(503), sk.ServerError, id="503"),
        pytest.param(lambda: httpx.ReadTimeout("slow"), sk.APITimeoutError, id="timeout"),
        pytest.param(lambda: httpx.ReadError("reset"), sk.APIConnectionError, id="read-error"),
        pytest.param(lambda: httpx.ConnectError("refused"), sk.APIConnectionError, id="connect"),
    ],
)
async def test_reads_give_up_after_max_retries(
    make_client: Callable[..., Any], failure: Any, error: type[Exception]
) -> None:
    script = Script(*(failure() for _ in range(4)))
    with pytest.raises(error):
        await resolve(make_client(script, max_retries=3).webhooks.list())
    assert script.attempts == 4


async def test_no_retry_when_disabled(make_client: Callable[..., Any]) -> None:
    script = Script(httpx.Response(503), ok_webhooks())
    with pytest.raises(sk.ServerError):
        await resolve(make_client(script, max_retries=0).webhooks.list())
    assert script.attempts == 1


async def test_client_errors_are_not_retried(make_client: Callable[..., Any]) -> None:
    script = Script(httpx.Response(400, text="bad"), ok_webhooks())
    with pytest.raises(sk.BadRequestError):
        await resolve(make_client(script).webhooks.list())
    assert script.attempts == 1


@pytest.mark.parametrize(("call", "ok"), SENDS)
@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(lambda: httpx.ConnectError("refused"), id="connect-error"),
        pytest.param(lambda: httpx.ConnectTimeout("no syn-ack"), id="connect-timeout"),
        pytest.param(lambda: httpx.PoolTimeout("no connection free"), id="pool-timeout"),
    ],
)
async def test_sends_are_retried_when_provably_never_sent(
    make_client: Callable[..., Any], call: Any, ok: Any, failure: Any
) -> None:
    script = Script(failure(), ok())
    await resolve(call(make_client(script)))
    assert script.attempts == 2


@pytest.mark.parametrize(("call", "ok"), SENDS)
@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(lambda: httpx.ReadTimeout("no answer"), id="read-timeout"),
        pytest.param(lambda: httpx.WriteTimeout("half sent"), id="write-timeout"),
        pytest.param(lambda: httpx.ReadError("reset"), id="read-error"),
        pytest.param(lambda: httpx.RemoteProtocolError("disconnected"), id="protocol"),
    ],
)
async def test_ambiguous_send_failures_are_never_retried(
    make_client: Callable[..., Any], call: Any, ok: Any, failure: Any
) -> None:
    script = Script(failure(), ok())
    with pytest.raises(sk.OutcomeUnknownError) as caught:
        await resolve(call(make_client(script)))
    assert script.attempts == 1
    assert isinstance(caught.value.cause, httpx.TransportError)
    assert "not sent again" in str(caught.value)


@pytest.mark.parametrize(
    ("call", "ok"),
    [*SENDS, *READS],
)
async def test_a_request_the_http_library_refuses_to_write_is_not_sent_nor_retried(
    make_client: Callable[..., Any], call: Any, ok: Any
) -> None:
    # h11 raises LocalProtocolError before a byte is written; its text quotes the header.
    secret = "SECRET-abc123"
    failure = httpx.LocalProtocolError(f"Illegal header value b'Basic {secret}\\nX'")
    script = Script(failure, ok())
    with pytest.raises(sk.APIConnectionError) as caught:
        await resolve(call(make_client(script)))
    assert script.attempts == 1
    error = caught.value
    assert not isinstance(error, sk.OutcomeUnknownError)
    assert "nothing was sent" in str(error) and "LocalProtocolError" in str(error)
    shown = "".join(traceback.format_exception(error))
    assert secret not in str(error) and secret not in repr(error) and secret not in shown


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_sends_are_not_retried_on_error_statuses(
    make_client: Callable[..., Any], status: int
) -> None:
    script = Script(httpx.Response(status, headers={"Retry-After": "0"}), ok_send())
    with pytest.raises(sk.APIStatusError) as caught:
        await resolve(do_send(make_client(script)))
    assert caught.value.status_code == status
    assert script.attempts == 1


@pytest.mark.parametrize(("call", "ok"), SENDS)
@pytest.mark.parametrize("status", [500, 502, 504])
async def test_a_send_answered_500_502_or_504_has_an_unknown_outcome(
    make_client: Callable[..., Any], call: Any, ok: Any, status: int
) -> None:
    script = Script(httpx.Response(status, text="upstream timed out"), ok())
    with pytest.raises(sk.ServerOutcomeUnknownError) as caught:
        await resolve(call(make_client(script)))
    assert script.attempts == 1
    error = caught.value
    # Both: the outcome is unknown (never resent), and it is a server error with its status.
    assert isinstance(error, sk.OutcomeUnknownError) and isinstance(error, sk.ServerError)
    assert error.status_code == status and error.body == "upstream timed out"
    assert error.cause is None and error.request is error.response.request
    assert "not sent again" in str(error)


@pytest.mark.parametrize(("call", "ok"), SENDS)
async def test_a_send_answered_503_is_a_definite_failure(
    make_client: Callable[..., Any], call: Any, ok: Any
) -> None:
    script = Script(httpx.Response(503, headers={"Retry-After": "0"}), ok())
    with pytest.raises(sk.ServerError) as caught:
        await resolve(call(make_client(script)))
    assert script.attempts == 1
    assert not isinstance(caught.value, sk.OutcomeUnknownError)


@pytest.mark.parametrize("status", [500, 502, 504])
async def test_a_read_answered_5xx_is_a_plain_server_error(
    make_client: Callable[..., Any], status: int
) -> None:
    script = Script(*(httpx.Response(status) for _ in range(3)))
    with pytest.raises(sk.ServerError) as caught:
        await resolve(make_client(script).webhooks.list())
    assert not isinstance(caught.value, sk.OutcomeUnknownError)
    assert caught.value.status_code == status


async def test_retry_after_longer_than_allowed_is_not_waited_for(
    make_client: Callable[..., Any],
) -> None:
    script = Script(httpx.Response(429, headers={"Retry-After": "3600"}), ok_webhooks())
    with pytest.raises(sk.RateLimitError) as caught:
        await resolve(make_client(script).webhooks.list())
    assert caught.value.retry_after == 3600
    assert script.attempts == 1


def test_retry_after_is_the_wait() -> None:
    policy = sk.RetryPolicy(backoff_base=100.0, max_retry_after=30)
    response = httpx.Response(503, headers={"Retry-After": "12"})
    assert policy.delay_after_status(response, 1, idempotent=True) == 12.0
    later = datetime.now(UTC) + timedelta(seconds=20)
    dated = httpx.Response(503, headers={"Retry-After": format_datetime(later, usegmt=True)})
    delay = policy.delay_after_status(dated, 1, idempotent=True)
    assert delay is not None and 15 <= delay <= 20
    assert policy.delay_after_status(response, 1, idempotent=False) is None


@pytest.mark.parametrize(
    ("header", "expected"),
    [("5", 5.0), ("0.25", 0.25), ("-3", 0.0), ("soon", None), (None, None)],
)
def test_parse_retry_after(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header) == expected


def test_backoff_grows_with_jitter_within_bounds() -> None:
    policy = sk.RetryPolicy(max_retries=5, backoff_base=1.0, backoff_max=4.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 4.0)]:
        waits = {policy.backoff(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= wait <= ceiling for wait in waits)
        assert len(waits) > 1  # jittered


def test_negative_max_retries_is_refused() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        sk.RetryPolicy(max_retries=-1)


def answer(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", f"{BASE}/v3.2/Message"))


def rate_limited(retry_after: float | None) -> sk.RateLimitError:
    return sk.RateLimitError("429", response=answer(429), retry_after=retry_after)


@pytest.mark.parametrize(
    ("result", "times", "expected"),
    [
        (rate_limited(3.5), 0, 3.5),
        (rate_limited(0.0), 4, 0.0),
        (rate_limited(None), 0, 2.0),
        (rate_limited(None), 2, 8.0),
        (rate_limited(1.0), MAX_RATE_LIMITED, None),
        (sk.ServerError("503", response=answer(503)), 0, None),
        ("a SendResponse", 0, None),
    ],
    ids=[
        "retry-after",
        "retry-after-zero-on-the-last-wait",
        "first-backoff",
        "third-backoff",
        "limit-reached",
        "not-a-429",
        "not-an-error",
    ],
)
def test_a_batch_row_waits_out_a_429_as_told_a_few_times(
    result: object, times: int, expected: float | None
) -> None:
    assert delay_after_rate_limit(result, times) == expected


# Over a real loopback socket: a server that reads the request and hangs up without answering.


class HangUpServer:
    """Accepts connections, reads one request, closes without a response; counts them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(65536)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def hang_up_server() -> Iterator[HangUpServer]:
    server = HangUpServer()
    yield server
    server.close()


def real_client(port: int) -> sk.Client:
    return sk.Client(
        f"http://127.0.0.1:{port}",
        "tok",
        retry=sk.RetryPolicy(max_retries=2, backoff_base=0.0),
        timeout=5,
    )


def test_real_hang_up_after_a_send_is_outcome_unknown(hang_up_server: HangUpServer) -> None:
    with real_client(hang_up_server.port) as client, pytest.raises(sk.OutcomeUnknownError):
        do_send(client)
    assert hang_up_server.connections == 1


def test_real_hang_up_on_a_read_is_retried(hang_up_server: HangUpServer) -> None:
    with real_client(hang_up_server.port) as client, pytest.raises(sk.APIConnectionError):
        client.webhooks.list()
    assert hang_up_server.connections == 3


def test_real_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port now.
    with real_client(port) as client, pytest.raises(sk.APIConnectionError, match="connect"):
        do_send(client)
