"""Transports that run an ASGI app (the sandbox) in-process, with no network."""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import httpx


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)


class ASGIPortalTransport(httpx.BaseTransport):
    """A sync httpx transport that drives an ASGI app on an event loop in a helper thread.

    ``httpx.ASGITransport`` is async only; this runs it on a private event loop in a daemon
    thread, as Starlette's TestClient does with a portal, so a plain ``httpx.Client`` (and
    code already inside a running event loop, such as a notebook cell) can call the app
    synchronously. The thread is a daemon and is stopped when the transport is closed or
    collected, so a client that is never closed does not keep the interpreter alive.
    """

    def __init__(self, app: Any) -> None:
        self._inner = httpx.ASGITransport(app=app)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="surveykit-asgi", daemon=True
                )
                thread.start()
                self._loop = loop
                self._finalizer = weakref.finalize(self, _stop, loop, thread)
            return self._loop

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

        future = asyncio.run_coroutine_threadsafe(call(), self._get_loop())
        status, headers, content = future.result()
        return httpx.Response(status, headers=headers, content=content, request=request)

    def close(self) -> None:
        """Stop the helper thread's event loop."""
        with self._lock:
            if self._loop is not None:
                self._finalizer()
                self._loop = None
