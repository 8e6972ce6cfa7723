"""The core that :class:`Client` and :class:`AsyncClient` share.

A resource method builds an :class:`APIRequest` (what to send, how to read the answer,
whether it is idempotent). :meth:`BaseClient._flow` builds its HTTP request and hands it to
the request flow of :mod:`surveykit.client._flow` (steps: send this request, sleep this
long), which decides retries and maps errors; the sync and async clients only drive that
flow, each with the driver of its kind. No endpoint is written twice.
"""

from __future__ import annotations

import inspect
import logging
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import tzinfo
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    TypeVar,
    overload,
)

import httpx

from surveykit.client._auth import BasicTokenAuth
from surveykit.client._config import (
    DEFAULT_LIMITS,
    DEFAULT_TIMEOUT,
    check_transport_security,
    resolve,
    resolve_default_region,
)
from surveykit.client._flow import Flow, request_flow
from surveykit.client._redact import (
    Secrets,
    guard_logs,
    header_secrets,
    release_logs,
)
from surveykit.client._responses import ModelT as ModelT
from surveykit.client._responses import model_from as model_from
from surveykit.client._responses import parse_model as parse_model
from surveykit.client._responses import parse_model_list as parse_model_list
from surveykit.client._responses import read_json as read_json
from surveykit.client._responses import unwrap_list as unwrap_list
from surveykit.client._retry import RetryPolicy
from surveykit.rules.windows import zone

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from surveykit.sandbox import Sandbox

logger = logging.getLogger("surveykit")

T = TypeVar("T")
P = ParamSpec("P")

USER_AGENT = "surveykit/0.1"

#: How many joined request URLs a client keeps (lookups put a number in the path).
URL_CACHE_SIZE = 256

H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class ResponseCookies(httpx.Cookies):
    """httpx's cookie jar, which skips its per-response work when no cookie is set."""

    def extract_cookies(self, response: httpx.Response) -> None:
        """Keep the cookies ``response`` sets, if it sets any."""
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


#: The request extension set on downloads that the caller reads in chunks (survey results);
#: a transport may read any other answer whole before returning it.
STREAM_EXTENSION = "surveykit.stream"


@dataclass(frozen=True)
class APIRequest(Generic[T]):
    """A request to the platform, described without any I/O.

    Attributes:
        method: the HTTP method.
        path: the route below the base URL, starting with ``/v3.2/``.
        parse: reads a successful response into the value the caller gets.
        json: the JSON body, already in wire form, or None.
        params: query parameters.
        idempotent: whether sending it twice is harmless; decides the retry policy.
        send_response_errors: whether a 400 may carry a Send response (landline, blocked).
        lookup_response_errors: whether a 400 may carry a LookupResponse (a failed lookup).
        accept: the Accept header.
        stream: hand ``parse`` a response whose body has not been read, so it can consume
            ``response.iter_bytes()`` as it arrives (large results); the client closes it.
        not_found: what a 404 means, as (kind, reference), e.g. ``("survey", "CSAT-2026")``:
            its error names the reference and suggests the closest known ones.
    """

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: Any = None
    params: Mapping[str, str] | None = None
    idempotent: bool = False
    send_response_errors: bool = False
    lookup_response_errors: bool = False
    accept: str = "application/json"
    stream: bool = False
    not_found: tuple[str, str] | None = None


class Mode:
    """Type-level marker of how a client runs requests."""


class Sync(Mode):
    """Requests return their value."""


class Async(Mode):
    """Requests return an awaitable of their value."""


M = TypeVar("M", bound=Mode)


class Resource(Generic[M]):
    """A group of endpoints (``client.messages``, ``client.surveys``, ...)."""

    def __init__(self, client: BaseClient) -> None:
        self._client = client


class endpoint(Generic[P, T]):
    """Turn a method that builds an :class:`APIRequest` into a method that runs it.

    On a sync client's resource the method returns the value, on an async client's an
    awaitable of it; type checkers and IDEs see both, from the one definition.
    """

    def __init__(self, build: Callable[Concatenate[Any, P], APIRequest[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__
        self.__name__ = build.__name__
        # What help() and Jupyter's Shift-Tab show: the parameters, without ``self``.
        signature = inspect.signature(build)
        self._signature = signature.replace(
            parameters=list(signature.parameters.values())[1:],
            return_annotation=inspect.Signature.empty,
        )

    @overload
    def __get__(self, obj: None, owner: Any) -> endpoint[P, T]: ...
    @overload
    def __get__(self, obj: Resource[Sync], owner: Any) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: Resource[Async], owner: Any) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        if obj is None:
            return self
        build = self._build
        execute = obj._client._execute

        def call(*args: Any, **kwargs: Any) -> Any:
            return execute(build(obj, *args, **kwargs))

        call.__doc__ = build.__doc__
        call.__name__ = build.__name__
        call.__qualname__ = f"{type(obj).__name__}.{build.__name__}"
        call.__signature__ = self._signature  # type: ignore[attr-defined]
        return call

    def build(self, resource: Resource[Any], *args: Any, **kwargs: Any) -> APIRequest[T]:
        """Build the request without running it (for tests and batch drivers)."""
        return self._build(resource, *args, **kwargs)


class BaseClient:
    """Configuration, request building and the retry/error flow, with no I/O."""

    embedded: Sandbox | None = None
    """The in-process sandbox this client talks to, or None for a server."""

    def __init__(
        self,
        base_url: str | None,
        token: str | None,
        *,
        auth: httpx.Auth | None,
        timeout: float | httpx.Timeout | None,
        max_retries: int,
        retry: RetryPolicy | None,
        allow_insecure_http: bool,
        headers: Mapping[str, str] | None,
        has_transport: bool,
        limits: httpx.Limits | None = None,
        window_timezone: str | None = None,
        default_region: str | None = None,
    ) -> None:
        self._default_region = resolve_default_region(default_region)
        settings = resolve(base_url, token)
        self.window_timezone: tzinfo | None = None
        """The zone in which the platform reads a send Window (None: surveykit assumes UTC)."""
        if window_timezone is not None:
            self.window_timezone = zone(window_timezone, field="window_timezone")
        if settings.base_url is None and not has_transport:
            from surveykit.sandbox import Sandbox

            self.embedded = Sandbox()
            logger.warning(
                "surveykit: no SURVEYKIT_BASE_URL configured; using the embedded sandbox "
                "(simulated platform, no network)"
            )
            settings = resolve(self.embedded.base_url, self.embedded.admin_token)
        if auth is None and settings.token:
            auth = BasicTokenAuth(settings.token)
        elif auth is None and (settings.username or settings.password):
            # What httpx does with a URL's user and password when given no auth; the URL
            # itself keeps neither, so no message, log line or repr shows them.
            auth = httpx.BasicAuth(settings.username or "", settings.password or "")
        if settings.base_url is not None:
            check_transport_security(
                settings.base_url, has_credentials=auth is not None, allow=allow_insecure_http
            )
        self._settings = settings
        self._auth = auth
        self._timeout = DEFAULT_TIMEOUT if timeout is None else httpx.Timeout(timeout)
        self._retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)
        self._headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self._limits = limits or DEFAULT_LIMITS
        self._urls: dict[str, httpx.URL] = {}
        self._secrets = Secrets(
            [settings.token, settings.password, *header_secrets(self._headers.items())],
            [settings.username],
        )
        """Every credential this client was given, hidden from its errors and logs."""
        # The HTTP libraries' log records are scrubbed while the client is open: until it
        # is closed, or collected unclosed.
        guard_logs(id(self), self._secrets)
        weakref.finalize(self, release_logs, id(self))

    @property
    def base_url(self) -> str | None:
        """The platform's address (without ``/v3.2``)."""
        return self._settings.base_url

    @property
    def default_region(self) -> str | None:
        """How national numbers are read when a call gives no ``region=`` (``"GB"``), or None.

        From ``Client(default_region=...)``, else ``SURVEYKIT_DEFAULT_REGION``; None means
        only international numbers (``+44 7911 123456``) and E.164 digits are accepted.
        """
        return self._default_region

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry policy requests follow."""
        return self._retry

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, auth={self._auth!r})"

    def _closed(self) -> None:
        """Called by ``close``: the client's secrets no longer need guarding in the logs."""
        release_logs(id(self))

    def _client_options(self) -> dict[str, Any]:
        return {
            "base_url": self._settings.base_url or "http://sandbox.invalid",
            "auth": self._auth,
            "timeout": self._timeout,
            "headers": self._headers,
            "follow_redirects": False,
            "limits": self._limits,
        }

    @staticmethod
    def _lighten(http: H) -> H:
        # httpx wraps every response in urllib adapters to look for cookies. The platform
        # sets none, so they are looked for only when a response has a Set-Cookie header.
        http._cookies = ResponseCookies(http.cookies)
        return http

    def _url(self, http: httpx.Client | httpx.AsyncClient, path: str) -> httpx.URL:
        # Joining a path to the base URL parses both; the few paths of a run are joined once.
        url = self._urls.get(path)
        if url is None:
            url = http.build_request("GET", path).url
            if len(self._urls) < URL_CACHE_SIZE:
                self._urls[path] = url
        return url

    def _flow(self, http: httpx.Client | httpx.AsyncClient, spec: APIRequest[T]) -> Flow[T]:
        """The request flow of ``spec`` (see :mod:`surveykit.client._flow`), for a driver."""
        request = http.build_request(
            spec.method,
            self._url(http, spec.path),
            json=spec.json,
            params=spec.params,
            headers={"Accept": spec.accept},
            extensions={STREAM_EXTENSION: True} if spec.stream else None,
        )
        return request_flow(spec, request, retry=self._retry, secrets=self._secrets)
