"""Client settings: arguments first, then environment variables."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from surveykit.errors import ConfigurationError, ValidationError

ENV_BASE_URL = "SURVEYKIT_BASE_URL"
ENV_TOKEN = "SURVEYKIT_TOKEN"
ENV_DEFAULT_REGION = "SURVEYKIT_DEFAULT_REGION"

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
"""30 s to read a response (results can be large), 10 s to connect."""

DEFAULT_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=100, keepalive_expiry=4.0
)
"""Enough idle connections for a batch at concurrency 64 to reuse them, and none reused after
4 s of idleness: a little under common servers' keep-alive timeouts (uvicorn closes at 5 s),
so a send is not written into a connection the server is closing (an ambiguous failure)."""


@dataclass(frozen=True)
class Settings:
    """Where the client talks to and with which credentials (never shown in a repr).

    ``base_url`` never holds a user name or password: they are taken out of it into
    ``username`` and ``password``, so the URL can be shown in messages and logs.
    """

    base_url: str | None
    token: str | None
    username: str | None = None
    password: str | None = None

    def __repr__(self) -> str:
        token = "'***'" if self.token else "None"
        password = "'***'" if self.password else "None"
        return (
            f"Settings(base_url={self.base_url!r}, token={token}, "
            f"username={self.username!r}, password={password})"
        )


def resolve(base_url: str | None, token: str | None) -> Settings:
    """Take arguments first, then ``SURVEYKIT_BASE_URL`` and ``SURVEYKIT_TOKEN``."""
    base_url = base_url or os.environ.get(ENV_BASE_URL) or None
    token = token or os.environ.get(ENV_TOKEN) or None
    if not base_url:
        return Settings(None, token)
    url, username, password = split_userinfo(base_url)
    return Settings(normalise_base_url(url), token, username, password)


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without ``user:password@``, and the user name and password (decoded).

    Raises:
        ConfigurationError: a URL that cannot be read (the message does not quote it).
    """
    try:
        parts = urlsplit(url.strip())
        username, password = parts.username, parts.password
    except ValueError:
        raise ConfigurationError("base_url: expected an http(s) URL (not shown)") from None
    if "@" not in parts.netloc:
        return url, None, None
    host = parts.netloc.rpartition("@")[2]
    return (
        urlunsplit(parts._replace(netloc=host)),
        None if username is None else unquote(username),
        None if password is None else unquote(password),
    )


def normalise_base_url(url: str) -> str:
    """Strip a trailing slash and a trailing ``/v3.2``: routes add the version themselves."""
    url = url.strip().rstrip("/")
    if url.lower().endswith("/v3.2"):
        url = url[: -len("/v3.2")]
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigurationError(f"base_url: expected an http(s) URL, got {url!r}")
    return url


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (localhost or a loopback address)."""
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(
        ".localhost"
    ):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_transport_security(base_url: str, *, has_credentials: bool, allow: bool) -> None:
    """Refuse to send credentials over plain http to another machine unless allowed."""
    url = httpx.URL(base_url)
    if url.scheme == "http" and has_credentials and not allow and not is_loopback(url.host):
        raise ConfigurationError(
            f"base_url: refusing to send credentials over plain http to {url.host}; "
            "use https, or pass allow_insecure_http=True if you really mean it"
        )


def resolve_default_region(default_region: str | None) -> str | None:
    """The argument, else ``SURVEYKIT_DEFAULT_REGION``, upper-cased and checked; or None.

    Raises:
        ConfigurationError: a region phonenumbers does not know, naming where it came from.
    """
    where = "default_region"
    if default_region is None:
        default_region = os.environ.get(ENV_DEFAULT_REGION) or None
        where = ENV_DEFAULT_REGION
    from surveykit.rules.numbers import check_region  # phonenumbers: on first use

    try:
        return check_region(default_region, where)
    except ValidationError as exc:
        raise ConfigurationError(str(exc)) from None
