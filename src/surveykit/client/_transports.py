"""Transports that run an ASGI app (the sandbox) in-process, with no network."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio.from_thread
import httpx


class ASGIPortalTransport(httpx.BaseTransport):
    """A sync httpx transport that drives an ASGI app on an event loop in a helper thread.

    ``httpx.ASGITransport`` is async only; this runs it through an anyio blocking portal,
    as Starlette's TestClient does, so a plain ``httpx.Client`` (and code already inside a
    running event loop, such as a notebook cell) can call the app synchronously.
    """

    def __init__(self, app: Any) -> None:
        self._inner = httpx.ASGITransport(app=app)
        self._stack = contextlib.ExitStack()
        self._portal: anyio.from_thread.BlockingPortal | None = None

    def _get_portal(self) -> anyio.from_thread.BlockingPortal:
        if self._portal is None:
            self._portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        return self._portal

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request to the app and return its complete response."""
        body = request.read()

        async def call() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            inner = httpx.Request(
                request.method, request.url, headers=request.headers, content=body
            )
            response = await self._inner.handle_async_request(inner)
            content = await response.aread()
            return response.status_code, response.headers.raw, content

        status, headers, content = self._get_portal().call(call)
        return httpx.Response(status, headers=headers, content=content, request=request)

    def close(self) -> None:
        """Stop the helper thread's event loop."""
        self._portal = None
        self._stack.close()
