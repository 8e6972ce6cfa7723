"""Configuration order, transport security, and the token kept out of reprs, logs and errors."""

from __future__ import annotations

import logging

import httpx
import pytest

import surveykit as sk
from surveykit.client._config import is_loopback

SECRET = "s3cr3t-token-value"


def test_arguments_win_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SURVEYKIT_BASE_URL", "https://env.example.test")
    monkeypatch.setenv("SURVEYKIT_TOKEN", "env-token")
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=[])

    sk.Client(transport=httpx.MockTransport(handler)).webhooks.list()
    assert seen[-1].url.host == "env.example.test"
    assert seen[-1].headers["Authorization"] == "Basic env-token"
    client = sk.Client(
        "https://arg.example.test", "arg-token", transport=httpx.MockTransport(handler)
    )
    client.webhooks.list()
    assert seen[-1].url.host == "arg.example.test"
    assert seen[-1].headers["Authorization"] == "Basic arg-token"


@pytest.mark.parametrize(
    "url",
    ["http://api.example.test", "http://10.0.0.5:8080", "http://192.168.1.10"],
)
def test_plain_http_with_a_token_to_another_host_is_refused(url: str) -> None:
    with pytest.raises(sk.ConfigurationError, match="plain http") as caught:
        sk.Client(url, SECRET)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8765",
        "http://localhost:8765",
        "http://[::1]:8765",
        "http://sandbox.localhost",
        "https://api.example.test",
    ],
)
def test_loopback_http_and_https_are_allowed(url: str) -> None:
    assert sk.Client(url, SECRET).base_url == url


def test_plain_http_opt_in() -> None:
    client = sk.Client("http://api.example.test", SECRET, allow_insecure_http=True)
    assert client.base_url == "http://api.example.test"


def test_plain_http_without_credentials_is_allowed() -> None:
    assert sk.Client("http://api.example.test", transport=httpx.MockTransport(lambda r: None))


@pytest.mark.parametrize("url", ["ftp://x.example", "not a url", "https://"])
def test_bad_base_url(url: str) -> None:
    with pytest.raises(sk.ConfigurationError, match="base_url"):
        sk.Client(url, SECRET)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("localhost", True),
        ("x.localhost", True),
        ("10.0.0.1", False),
        ("example.org", False),
        ("localhost.example.org", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_empty_token_is_refused() -> None:
    with pytest.raises(ValueError, match="token"):
        sk.BasicTokenAuth(" ")


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        pytest.param(SECRET + "\nX-Injected: 1", "a control character", id="newline"),
        pytest.param(SECRET + "\x00tail", "a control character", id="nul"),
        pytest.param(SECRET + "\rX", "a control character", id="carriage-return"),
        pytest.param(SECRET + "\x7f", "a control character", id="delete"),
        pytest.param(SECRET + "\u00e9t\u00e9", "a non-ASCII character", id="non-ascii"),
        pytest.param(SECRET + " " + SECRET, "a space", id="inner-space"),
    ],
)
def test_a_token_that_is_not_visible_ascii_is_refused_without_showing_it(
    token: str, kind: str
) -> None:
    for make in (
        lambda: sk.BasicTokenAuth(token),
        lambda: sk.Client("https://api.example.test", token),
        lambda: sk.AsyncClient("https://api.example.test", token),
    ):
        with pytest.raises(ValueError, match="token") as caught:
            make()
        assert isinstance(caught.value, sk.ConfigurationError)
        assert kind in str(caught.value)
        assert SECRET not in str(caught.value) and SECRET not in repr(caught.value)


def test_a_token_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SURVEYKIT_BASE_URL", "https://api.example.test")
    monkeypatch.setenv("SURVEYKIT_TOKEN", SECRET + "\x01")
    with pytest.raises(sk.ConfigurationError, match="control character") as caught:
        sk.Client()
    assert SECRET not in str(caught.value)


def test_surrounding_whitespace_of_a_token_is_not_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=[])

    client = sk.Client(
        "https://api.example.test", f" {SECRET}\n", transport=httpx.MockTransport(handler)
    )
    client.webhooks.list()
    assert seen[0].headers["Authorization"] == f"Basic {SECRET}"


def test_token_is_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text="Unauthorized")

    client = sk.Client(
        "https://api.example.test",
        SECRET,
        transport=httpx.MockTransport(handler),
        retry=sk.RetryPolicy(max_retries=0),
    )
    assert SECRET not in repr(client)
    assert SECRET not in repr(client._auth)
    assert SECRET not in repr(client._settings)
    with caplog.at_level(logging.DEBUG, logger="surveykit"):
        with pytest.raises(sk.AuthenticationError) as caught:
            client.webhooks.list()
        client.close()
    assert caplog.records, "requests are logged"
    assert any("/v3.2/Webhook -> 401" in record.getMessage() for record in caplog.records)
    for record in caplog.records:
        assert SECRET not in record.getMessage()
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value)
    assert SECRET not in repr(caught.value.request)


def test_timeouts_are_configurable() -> None:
    client = sk.Client("https://api.example.test", "t", timeout=httpx.Timeout(3.0, connect=1.0))
    assert client._http.timeout.read == 3.0 and client._http.timeout.connect == 1.0
    default = sk.Client("https://api.example.test", "t")
    assert default._http.timeout.read == 30.0 and default._http.timeout.connect == 10.0


async def test_nothing_configured_means_the_embedded_sandbox(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("SURVEYKIT_BASE_URL", raising=False)
    monkeypatch.delenv("SURVEYKIT_TOKEN", raising=False)
    with caplog.at_level(logging.WARNING, logger="surveykit"):
        client = sk.Client()
    notices = [r.getMessage() for r in caplog.records if "embedded sandbox" in r.getMessage()]
    assert len(notices) == 1
    assert client.embedded is not None
    assert client.base_url == client.embedded.base_url
    assert [hook.name for hook in client.webhooks.list()]
    async with sk.AsyncClient() as aclient:
        assert aclient.embedded is not None
        assert await aclient.webhooks.list()
    explicit = sk.Client.sandbox()
    assert explicit.embedded is not None and explicit.embedded is not client.embedded


def test_connection_pool_defaults_and_override() -> None:
    transport = sk.Client("https://api.example.test", "t")._http._transport  # type: ignore[attr-defined]
    pools = [shard._pool for shard in transport._shards.pools]
    # Idle connections are dropped before common servers' keep-alive timeouts (uvicorn: 5 s),
    # so a send is never written into a connection the server is closing.
    assert {pool._keepalive_expiry for pool in pools} == {4.0}
    assert sum(pool._max_keepalive_connections for pool in pools) == 100
    assert sum(pool._max_connections for pool in pools) == 100
    custom = sk.Client(
        "https://api.example.test", "t", limits=httpx.Limits(max_connections=7)
    )._http._transport  # type: ignore[attr-defined]
    assert sum(shard._pool._max_connections for shard in custom._shards.pools) == 7
    # The async client's transport (aiohttp) takes the same limits.
    default = sk.AsyncClient("https://api.example.test", "t")._http._transport  # type: ignore[attr-defined]
    assert (default._limits.max_connections, default._limits.keepalive_expiry) == (100, 4.0)
    custom = sk.AsyncClient(
        "https://api.example.test", "t", limits=httpx.Limits(max_connections=7)
    )._http._transport  # type: ignore[attr-defined]
    assert custom._limits.max_connections == 7
