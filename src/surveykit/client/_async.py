"""The asynchronous client: the same resources, awaitable."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from surveykit.client._base import APIRequest, Async
from surveykit.client._flow import drive_async
from surveykit.client._groups import ResourceGroups
from surveykit.client._retry import RetryPolicy

T = TypeVar("T")


class AsyncClient(ResourceGroups[Async]):
    """An asynchronous client of the v3.2 platform; arguments as :class:`Client`.

    Example:
        >>> async with sk.AsyncClient.sandbox() as client:
        ...     hooks = await client.webhooks.list()
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
        transport: httpx.AsyncBaseTransport | None = None,
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
            # aiohttp is imported here, not with surveykit: a notebook may never use it.
            from surveykit.client._aiohttp import AiohttpTransport

            transport = AiohttpTransport(self._limits)
        self._http = self._lighten(httpx.AsyncClient(transport=transport, **self._client_options()))

    @staticmethod
    def _in_process(app: Any) -> httpx.AsyncBaseTransport:
        return httpx.ASGITransport(app=app)

    async def _execute(self, spec: APIRequest[T]) -> T:
        return await drive_async(self, self._flow(self._http, spec))

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()
        self._closed()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
