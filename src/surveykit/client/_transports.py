"""Transports that run an ASGI app (the sandbox) in-process, with no network."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any, Final

import httpx

MAX_QUEUED_CHUNKS: Final = 8
"""Body chunks queued between the app and the reader; the app waits while it is full.

The reader takes what is queued in one trip to the loop, so the app runs at most about
twice this many chunks ahead of what the caller has consumed."""

READ_RECHECK_SECONDS: Final = 1.0
"""How often a reader waiting for the next chunk checks that the loop still runs."""

_END: Final = object()
"""Queued after the app returned: the body is complete."""


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        # A stopped loop left unclosed warns when collected ("unclosed event loop") and
        # keeps its self-pipe sockets open: close it once its thread has ended.
        if not thread.is_alive():
            loop.close()


Headers = list[tuple[bytes, bytes]]


class _PortalStream(httpx.SyncByteStream):
    """A response body pulled chunk by chunk from the app's task on the portal's loop."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        chunks: asyncio.Queue[object],
        call: concurrent.futures.Future[None],
    ) -> None:
        self._loop = loop
        self._chunks = chunks
        self._call = call

    async def _next(self) -> list[object]:
        # One trip to the loop fetches what is queued, at least one item.
        items = [await self._chunks.get()]
        while not self._chunks.empty():
            items.append(self._chunks.get_nowait())
        return items

    def _fetch(self) -> list[object]:
        if not self._loop.is_running():  # the transport was closed: nothing would answer
            raise httpx.ReadError("the in-process transport was closed mid-response")
        pending = asyncio.run_coroutine_threadsafe(self._next(), self._loop)
        while True:
            try:
                return pending.result(timeout=READ_RECHECK_SECONDS)
            except concurrent.futures.TimeoutError:
                # A slow app is fine; a loop stopped after the check above would never answer.
                if not self._loop.is_running():
                    pending.cancel()
                    raise httpx.ReadError(
                        "the in-process transport was closed mid-response"
                    ) from None

    def __iter__(self) -> Iterator[bytes]:
        """Yield the body as the app sends it; raise what the app raised after starting."""
        while True:
            for item in self._fetch():
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, bytes)
                yield item

    def close(self) -> None:
        """Stop the app if it is still sending (the reader gave up before the end)."""
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            self._call.cancel()

    def __del__(self) -> None:
        # A response dropped unread must not leave the app waiting on a full queue forever.
        self.close()


class ASGIPortalTransport(httpx.BaseTransport):
    """A sync httpx transport that drives an ASGI app on an event loop in a helper thread.

    ``httpx.ASGITransport`` is async only; this runs the app on a private event loop in a
    daemon thread, as Starlette's TestClient does with a portal, so a plain ``httpx.Client``
    (and code already inside a running event loop, such as a notebook cell) can call the
    app synchronously. The thread is a daemon and is stopped when the transport is closed
    or collected, so a client that is never closed does not keep the interpreter alive.

    The response body is streamed: the caller pulls the chunks from the app's task as the
    app sends them, and the app waits while :data:`MAX_QUEUED_CHUNKS` are queued, so a
    large GetResults is never held whole; closing the response early stops the app.
    """

    def __init__(self, app: Any) -> None:
        self._app = app
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        # The app calls still running: held here so that a response dropped unread is
        # collected alone, and its stream's __del__ can cancel a call that is still alive.
        self._calls: set[concurrent.futures.Future[None]] = set()

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
        """Send the request to the app; return once the app starts its response.

        An exception the app raises before it starts the response is raised here (the
        sandbox's dropped connections are ``httpx`` errors); one raised later is raised
        while the body is read.
        """
        body = request.read()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port),
            "client": ("127.0.0.1", 123),
            "root_path": "",
        }
        started: concurrent.futures.Future[tuple[int, Headers]] = concurrent.futures.Future()
        chunks: asyncio.Queue[object] = asyncio.Queue(MAX_QUEUED_CHUNKS)
        loop = self._get_loop()
        call = asyncio.run_coroutine_threadsafe(
            self._run(scope, body, started, chunks), loop
        )
        self._calls.add(call)
        call.add_done_callback(self._calls.discard)
        try:
            status, headers = started.result()
        except concurrent.futures.CancelledError:
            raise httpx.ReadError("the in-process app was stopped before it answered") from None
        stream = _PortalStream(loop, chunks, call)
        return httpx.Response(status, headers=headers, stream=stream, request=request)

    async def _run(
        self,
        scope: dict[str, Any],
        body: bytes,
        started: concurrent.futures.Future[tuple[int, Headers]],
        chunks: asyncio.Queue[object],
    ) -> None:
        head = scope["method"] == "HEAD"
        received = False
        finished = asyncio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal received
            if not received:
                received = True
                return {"type": "http.request", "body": body, "more_body": False}
            await finished.wait()  # no disconnect while the response is being sent
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                started.set_result((message["status"], list(message.get("headers", []))))
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk and not head:
                    await chunks.put(bytes(chunk))

        try:
            await self._app(scope, receive, send)
        except asyncio.CancelledError:
            started.cancel()  # no-op once the response started
            raise
        except Exception as exc:
            if not started.done():
                started.set_exception(exc)
            else:
                await chunks.put(exc)
        else:
            if not started.done():
                started.set_exception(
                    RuntimeError("the ASGI app returned without starting a response")
                )
            else:
                await chunks.put(_END)
        finally:
            finished.set()

    def close(self) -> None:
        """Stop the helper thread's event loop."""
        with self._lock:
            if self._loop is not None:
                self._finalizer()
                self._loop = None
