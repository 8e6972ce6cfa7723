"""The synchronous client."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from surveykit.client._base import APIRequest, Sync
from surveykit.client._flow import drive_sync
from surveykit.client._groups import ResourceGroups
from surveykit.client._pool import ShardedTransport
from surveykit.client._retry import RetryPolicy
from surveykit.client._transports import ASGIPortalTransport

T = TypeVar("T")


class Client(ResourceGroups[Sync]):
    """A synchronous client of the v3.2 platform.

    Settings come from the arguments, then from ``SURVEYKIT_BASE_URL`` and
    ``SURVEYKIT_TOKEN``; with neither, the client runs on the embedded sandbox (no network)
    and says so once in the log.

    Args:
        base_url: the platform's address, for example ``https://api.example.com``. A user
            name and password in it (``https://user:pass@host``) are taken out of the URL,
            so no message, log line or repr shows them; without a token or ``auth`` they
            are sent as Basic authentication, as httpx does.
        token: the access token, sent as ``Authorization: Basic <token>``.
        auth: any :class:`httpx.Auth` instead of the token (for example an HMAC signer).
        timeout: seconds, or an :class:`httpx.Timeout`; default 30 s read, 10 s connect.
        max_retries: retries of a failed request that may be retried (default 2).
        retry: a full :class:`RetryPolicy` instead of ``max_retries``.
        allow_insecure_http: allow a token over plain http to a non-loopback host.
        headers: extra headers on every request. The values of those whose names say
            they carry a credential (``Cookie``, ``X-Api-Key``, a name with ``token``,
            ``secret``, ``key``, ``auth``...) are hidden like the token: from errors, the
            requests errors keep, and the logs of httpx and httpcore while the client is open.
        limits: connection pool limits; by default 100 connections, idle ones reused for
            at most 4 s (see ``DEFAULT_LIMITS``). They are shared out between small pools
            of 4 connections (:class:`~surveykit.client._pool.ShardedTransport`), so that
            the cost of a request does not grow with the number of connections.
        window_timezone: the IANA zone in which the platform reads a send Window (for
            example ``"Europe/London"``). The reference does not say; surveykit assumes
            UTC unless told here. Batches use it to show send times and to move local
            windows (``send_batch(..., timezone=...)``) to the platform's clock.
        default_region: how national numbers given to ``messages.send`` and
            ``messages.lookup`` (and the batch functions) are read when a call gives no
            ``region=``: an ISO 3166 alpha-2 code such as ``"GB"``. Default: the
            ``SURVEYKIT_DEFAULT_REGION`` environment variable, else None (only
            international numbers and E.164 digits are accepted).
        transport: an httpx transport (tests, proxies, the in-process sandbox).

    Example:
        >>> with sk.Client("https://api.example.com", token="...") as client:
        ...     client.webhooks.list()
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        auth: httpx.Auth | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = 2,
        retry: RetryPolicy | None = None,
        allow_insecure_http: bool = False,
        headers: Mapping[str, str] | None = None,
        limits: httpx.Limits | None = None,
        window_timezone: str | None = None,
        default_region: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url,
            token,
            auth=auth,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            allow_insecure_http=allow_insecure_http,
            headers=headers,
            has_transport=transport is not None,
            limits=limits,
            window_timezone=window_timezone,
            default_region=default_region,
        )
        if transport is None and self.embedded is not None:
            transport = self._in_process(self.embedded.app)
        elif transport is None:
            transport = ShardedTransport(self._limits)
        self._http = self._lighten(httpx.Client(transport=transport, **self._client_options()))
        # A client dropped unclosed (a script, a notebook cell, a command) closes its pooled
        # connections when collected, rather than leaving open sockets that warn at exit.
        weakref.finalize(self, self._http.close)

    @staticmethod
    def _in_process(app: Any) -> httpx.BaseTransport:
        return ASGIPortalTransport(app)

    def _execute(self, spec: APIRequest[T]) -> T:
        return drive_sync(self, self._flow(self._http, spec))

    def close(self) -> None:
        """Close the connections."""
        self._http.close()
        self._closed()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
