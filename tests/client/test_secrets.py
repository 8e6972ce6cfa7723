"""The token appears in no error: not in str, repr, traceback text or pickle bytes.

A real uvicorn server plays a proxy whose error pages echo the request's headers (some
proxies' 502 pages do), in every error path a client can raise.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
import traceback
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import surveykit as sk
from tests.helpers.echoing_proxy import EchoingProxy
from tests.helpers.http_servers import serve_asgi
from tests.helpers.secrets import assert_no_secret, leaks

TOKEN = "tok-7Hq2ZpX9-s3cr3t"


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[str, EchoingProxy]]:
    app = EchoingProxy()
    with serve_asgi(app) as url:
        yield url, app


def assert_no_token(error: BaseException) -> None:
    assert_no_secret(error, [TOKEN])
    request = getattr(error, "request", None)
    if request is not None:
        assert "authorization" not in request.headers


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


# Every credential a client can be given: the token, a password in the base URL, and
# headers whose names say they carry one (a cookie, an API key, a name with "token").
PASSWORD = "pw-Lk83jQz1-hunter2"
COOKIE = "sess-Zx81QpL0vB4"
API_KEY = "key-Mn42RtY7wQe9"
UPSTREAM = "up-Vb37XcN5pLk2"
SECRETS = [TOKEN, PASSWORD, COOKIE, API_KEY, UPSTREAM]
HEADERS = {"Cookie": f"theme=dark; session={COOKIE}", "X-Api-Key": API_KEY,
           "X-Upstream-Token": UPSTREAM}
CREDENTIAL_HEADERS = ["authorization", "cookie", "x-api-key", "x-upstream-token"]


def with_password(url: str) -> str:
    return url.replace("http://", f"http://apiuser:{PASSWORD}@")


@pytest.mark.parametrize("token", [TOKEN, None], ids=["token", "url-password-only"])
@pytest.mark.parametrize("mode", ["502", "encoded", "header", "problem"])
def test_no_credential_in_any_form_leaves_with_an_error(
    proxy: tuple[str, EchoingProxy], mode: str, token: str | None
) -> None:
    url, app = proxy
    app.mode = mode
    with sk.Client(with_password(url), token, headers=HEADERS, max_retries=0) as client:
        assert not leaks(repr(client), SECRETS), "a credential is in the client's repr"
        assert not leaks(str(client.base_url), SECRETS)
        with pytest.raises(sk.APIStatusError) as caught:
            send(client)
    error = caught.value
    assert_no_secret(error, SECRETS)
    assert not [name for name in CREDENTIAL_HEADERS if name in error.request.headers]
    assert "***" in str(error) + error.response.text + str(error.response.headers)
    assert "user-agent" in str(error) + error.response.text + str(error.response.headers)


def test_the_url_password_still_authenticates_without_a_token(
    proxy: tuple[str, EchoingProxy],
) -> None:
    # As httpx does with userinfo when given no auth: Basic base64(user:password).
    url, app = proxy
    app.mode = "not-json"
    seen: list[str] = []

    def keep(request: httpx.Request) -> None:
        seen.append(request.headers["authorization"])

    with sk.Client(with_password(url)) as client:
        client._http.event_hooks["request"].append(keep)
        with pytest.raises(sk.UnexpectedResponseError):
            client.webhooks.list()
    expected = base64.b64encode(f"apiuser:{PASSWORD}".encode()).decode()
    assert seen == [f"Basic {expected}"]


@pytest.mark.parametrize("mode", ["header", "encoded", "502"])
def test_no_credential_reaches_the_http_libraries_debug_logs(
    proxy: tuple[str, EchoingProxy], mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    url, app = proxy
    app.mode = mode
    caplog.set_level(logging.DEBUG)
    with sk.Client(with_password(url), TOKEN, headers=HEADERS, max_retries=0) as client:
        with pytest.raises(sk.APIStatusError):
            client.webhooks.list()
        with pytest.raises(sk.APIStatusError):
            send(client)
    loggers = {record.name for record in caplog.records}
    assert {"httpx", "httpcore.http11"} <= loggers, "the libraries logged at DEBUG"
    assert "receive_response_headers" in caplog.text
    assert not leaks(caplog.text, SECRETS)
    for record in caplog.records:
        assert not leaks(record.getMessage(), SECRETS), record.name


async def test_no_credential_leaves_the_async_client(
    proxy: tuple[str, EchoingProxy], caplog: pytest.LogCaptureFixture
) -> None:
    url, app = proxy
    app.mode = "encoded"
    caplog.set_level(logging.DEBUG)
    async with sk.AsyncClient(with_password(url), TOKEN, headers=HEADERS) as client:
        assert not leaks(repr(client), SECRETS)
        with pytest.raises(sk.ServerOutcomeUnknownError) as caught:
            await client.messages.send(
                destination="447911123456", source="447700900999", message="Hi", reply=False
            )
    assert_no_secret(caught.value, SECRETS)
    assert not leaks(caplog.text, SECRETS)


def test_httpcore_does_not_log_an_echoed_token_in_response_headers(
    proxy: tuple[str, EchoingProxy], caplog: pytest.LogCaptureFixture
) -> None:
    url, app = proxy
    app.mode = "header"
    caplog.set_level(logging.DEBUG, logger="httpcore")
    with sk.Client(url, TOKEN, max_retries=0) as client, pytest.raises(sk.ServerError):
        client.webhooks.list()
    assert "x-echo" in caplog.text, "httpcore logged the response headers"
    assert not leaks(caplog.text, [TOKEN])


def test_the_log_filter_is_there_while_a_client_is_open() -> None:
    logger = logging.getLogger("httpcore.http11")
    before = list(logger.filters)
    with sk.Client("https://api.example.test", TOKEN, transport=httpx.MockTransport(print)):
        assert len(logger.filters) == 1
        assert not leaks(repr(logger.filters), [TOKEN])
    assert logger.filters == before


def answering(status: int, body: bytes) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send_: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/html")]
        await send_({"type": "http.response.start", "status": status, "headers": headers})
        await send_({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize("status", [200, 400, 502])
@pytest.mark.parametrize("offset", [4, 9])
def test_a_token_across_the_cut_of_a_quoted_body_leaves_no_characters(
    status: int, offset: int
) -> None:
    # A message quotes the first 300 characters of a body that is not what was expected;
    # cut before redacting, the head of a token across the cut would stay.
    body = b"x" * (300 - offset) + TOKEN.encode() + b" " + b"y" * 500
    with (
        serve_asgi(answering(status, body)) as url,
        sk.Client(url, TOKEN, max_retries=0) as client,
        pytest.raises(sk.APIStatusError) as caught,
    ):
        client.webhooks.list()
    assert "xxxx" in str(caught.value), "the body is quoted"
    assert TOKEN[:offset] not in str(caught.value)
    assert TOKEN[:offset] not in "".join(traceback.format_exception(caught.value))
    chained, link = [], caught.value.__context__
    while link is not None:
        chained.append(repr(link))
        link = link.__context__
    assert TOKEN[:offset] not in " ".join(chained), "an error chained to it quotes the cut body"
    assert_no_token(caught.value)


def test_a_refused_base_url_is_not_quoted_with_its_password() -> None:
    with pytest.raises(sk.ConfigurationError) as caught:
        sk.Client(f"ftp://apiuser:{PASSWORD}@files.example.test/v3.2", TOKEN)
    assert "ftp://files.example.test" in str(caught.value)
    assert_no_secret(caught.value, [PASSWORD, TOKEN])
    # A password in the URL is a credential: not sent over plain http to another machine.
    with pytest.raises(sk.ConfigurationError, match="plain http") as insecure:
        sk.Client(f"http://apiuser:{PASSWORD}@api.example.test")
    assert_no_secret(insecure.value, [PASSWORD])


def test_a_token_across_the_cut_of_an_unexpected_json_body_leaves_no_characters() -> None:
    # A JSON object where a list was expected: the error quotes its first 300 characters.
    body = json.dumps({"note": "x" * 280 + TOKEN, "more": "y" * 300}).encode()
    answer = httpx.Response(200, content=body, headers={"content-type": "application/json"})
    transport = httpx.MockTransport(lambda request: answer)
    with (
        sk.Client("https://api.example.test", TOKEN, transport=transport) as client,
        pytest.raises(ValueError, match="expected a JSON array") as caught,
    ):
        client.webhooks.list()
    assert "xxxx" in str(caught.value)
    assert TOKEN[:8] not in "".join(traceback.format_exception(caught.value))
