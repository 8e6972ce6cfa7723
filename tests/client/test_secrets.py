"""The token appears in no error: not in str, repr, traceback text or pickle bytes.

A real uvicorn server plays a proxy whose error pages echo the request's headers (some
proxies' 502 pages do), in every error path a client can raise.
"""

from __future__ import annotations

import asyncio
import html
import json
import pickle
import socket
import traceback
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import surveykit as sk
from tests.helpers.http_servers import serve_asgi

TOKEN = "tok-7Hq2ZpX9-s3cr3t"


def _echo(scope: dict[str, Any]) -> str:
    return "\n".join(f"{k.decode()}: {v.decode()}" for k, v in scope["headers"])


class EchoingProxy:
    """Answers as ``mode`` says, every body quoting the request's headers."""

    def __init__(self) -> None:
        self.mode = "502"

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        echo = _echo(scope)
        status, kind, extra = 200, b"text/html", []
        if self.mode in ("502", "400", "401", "404", "429", "500"):
            status = int(self.mode)
            body = f"<html><h1>{status} Bad Gateway</h1><pre>{html.escape(echo)}</pre></html>"
        elif self.mode == "problem":
            status, kind = 400, b"application/problem+json"
            body = json.dumps(
                {
                    "type": "about:blank",
                    "title": "Bad",
                    "status": 400,
                    "detail": echo,
                    "errors": {"Authorization": [echo]},
                }
            )
        elif self.mode == "rejected":  # a send rejection whose fields echo the headers
            status, kind = 400, b"application/json"
            body = json.dumps(
                {
                    "messageID": "Unknown",
                    "status": f"Blocked {echo}",
                    "carrier": echo,
                    "reachable": False,
                    "numberType": "Mobile",
                }
            )
        elif self.mode == "not-json":
            body = f"<html>{echo}</html>"
        elif self.mode == "header":  # the token echoed in a response header
            status, body = 502, "bad gateway"
            extra = [(b"x-echo", echo.replace("\n", " | ").encode())]
        else:  # "cut": a promised body broken off after the echo
            start = {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/csv"), (b"content-length", b"100000")],
            }
            await send(start)
            chunk = f"respondentId,q1\n1,{echo!r}\n".encode()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            raise ConnectionResetError("cut")
        headers = [(b"content-type", kind), *extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[str, EchoingProxy]]:
    app = EchoingProxy()
    with serve_asgi(app) as url:
        yield url, app


def assert_no_token(error: BaseException) -> None:
    texts = {
        "str": str(error),
        "repr": repr(error),
        "traceback": "".join(traceback.format_exception(error)),
    }
    for name, text in texts.items():
        assert TOKEN not in text, f"the token is in the error's {name}"
    assert TOKEN.encode() not in pickle.dumps(error), "the token is in the pickled error"
    request = getattr(error, "request", None)
    if request is not None:
        assert "authorization" not in request.headers
    response = getattr(error, "response", None)
    if response is not None:
        assert TOKEN.encode() not in response.content
        assert TOKEN not in str(response.headers)


def send(client: sk.Client) -> Any:
    return client.messages.send(
        destination="447911123456", source="447700900999", message="Hi", reply=False
    )


CASES = [
    # mode, call, expected error, a text of the body kept in the message
    ("502", lambda c: c.webhooks.list(), sk.ServerError, "Bad Gateway"),
    ("500", lambda c: c.keywords.list(), sk.ServerError, "Bad Gateway"),
    ("502", send, sk.ServerOutcomeUnknownError, "Bad Gateway"),
    ("400", send, sk.BadRequestError, "user-agent"),
    ("401", lambda c: c.webhooks.list(), sk.AuthenticationError, "user-agent"),
    ("404", lambda c: c.webhooks.list(), sk.NotFoundError, "user-agent"),
    ("429", send, sk.RateLimitError, "user-agent"),
    ("problem", send, sk.BadRequestError, "user-agent"),
    ("rejected", send, sk.SendRejectedError, "Blocked"),
    ("not-json", lambda c: c.webhooks.list(), sk.UnexpectedResponseError, "user-agent"),
    ("header", lambda c: c.webhooks.list(), sk.ServerError, "bad gateway"),
    ("cut", lambda c: c.surveys.results(), sk.APIConnectionError, "broke off"),
]


@pytest.mark.parametrize(("mode", "call", "expected", "kept"), CASES)
def test_no_status_error_carries_the_token(
    proxy: tuple[str, EchoingProxy], mode: str, call: Any, expected: type[Exception], kept: str
) -> None:
    url, app = proxy
    app.mode = mode
    with sk.Client(url, TOKEN, max_retries=0) as client, pytest.raises(expected) as caught:
        call(client)
    error = caught.value
    assert kept in str(error), "the body is still quoted, only the token is hidden"
    if mode not in ("cut", "header"):
        assert "***" in str(error) or "***" in json.dumps(getattr(error, "body", None))
    assert_no_token(error)


def test_the_echoed_body_is_kept_redacted(proxy: tuple[str, EchoingProxy]) -> None:
    url, app = proxy
    app.mode = "rejected"
    with (
        sk.Client(url, TOKEN, max_retries=0) as client,
        pytest.raises(sk.SendRejectedError) as caught,
    ):
        send(client)
    error = caught.value
    assert "authorization: ***" in error.body["carrier"]
    assert error.send_response.carrier == error.body["carrier"]
    assert "authorization: ***" in error.response.text


async def test_async_client_errors_carry_no_token(proxy: tuple[str, EchoingProxy]) -> None:
    url, app = proxy
    app.mode = "502"
    async with sk.AsyncClient(url, TOKEN, max_retries=0) as client:
        with pytest.raises(sk.ServerOutcomeUnknownError) as caught:
            await client.messages.send(
                destination="447911123456", source="447700900999", message="Hi", reply=False
            )
    assert_no_token(caught.value)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_errors_carry_no_token() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with sk.Client(url, TOKEN, max_retries=0) as client:
        with pytest.raises(sk.APIConnectionError) as refused:
            client.webhooks.list()
        assert_no_token(refused.value)
        with pytest.raises(sk.APIConnectionError) as refused_send:
            send(client)
        assert_no_token(refused_send.value)


def test_an_unknown_outcome_keeps_no_token_in_its_cause() -> None:
    # A read timeout after the send went out: the cause (an httpx error) holds the request.

    async def slow(scope: dict[str, Any], receive: Any, send_: Any) -> None:
        await asyncio.sleep(5)

    with (
        serve_asgi(slow) as slow_url,
        sk.Client(slow_url, TOKEN, max_retries=0, timeout=httpx.Timeout(5, read=0.2)) as client,
    ):
        with pytest.raises(sk.OutcomeUnknownError) as caught:
            send(client)
        with pytest.raises(sk.APITimeoutError) as timed_out:
            client.webhooks.list()
    assert caught.value.cause is not None
    assert_no_token(caught.value)
    assert_no_token(timed_out.value)
    assert "authorization" not in caught.value.cause.request.headers
