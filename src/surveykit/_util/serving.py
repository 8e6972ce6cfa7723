"""Servers that do no work for strangers: uvicorn settings and an ASGI wrapper.

Both servers surveykit starts (the callback listener and ``surveykit sandbox serve``) are
served with these limits, whatever their HTTP parser (h11 for the listener, httptools for
the sandbox):

* a connection must complete each request head within ``idle_timeout`` of connecting (or
  of its previous answer), or it is closed. uvicorn only times out kept-alive connections:
  one that never completes its first request (opened and left idle, or sending its head a
  byte at a time) would hold a file descriptor for ever. With 1,024 descriptors, 1,100
  idle connections stopped every callback;
* at most ``max_connections`` are open: a new one beyond that closes the connection idle
  the longest (no request in progress), or, when all are busy, is itself closed at once;
* a request head is at most :data:`MAX_HEAD_BYTES` (400 above it, and the connection is
  closed; httptools sets no limit of its own: 200 MB of headers took 223 MiB);
* a request answered before its body was read to the end (413, 401, 404...) is answered
  with ``Connection: close`` and the connection closed, so the rest of the body is never
  read (before: 10 strangers declaring 100 MB bodies had 17 GB read in 10 s);
* a request with both ``Content-Length`` and ``Transfer-Encoding`` is refused with 400
  and the connection closed (RFC 9112, 6.3): behind a proxy that frames by
  ``Content-Length``, the bytes after the chunked body would be a second, smuggled
  request. h11 frames such a request by ``Transfer-Encoding`` and passes both headers on,
  so the check is in the ASGI wrapper; httptools refuses it itself.

The app's own limits (the receiver's ``body_timeout`` and ``max_body``, the sandbox's body
cap) bound the body. So a valid request is served while strangers hold the other
connections.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:  # uvicorn (and asyncio) are imported where a server starts
    import asyncio

    import uvicorn
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_IDLE_TIMEOUT: Final = 10.0
"""Seconds a connection may stay open without a complete request head."""

DEFAULT_MAX_CONNECTIONS: Final = 256
"""Connections open at once, at most: lowered to fit the process's file descriptors."""

_SPARE_DESCRIPTORS: Final = 64
"""Descriptors left for everything else (SQLite, logs, the client side of a notebook)."""

MAX_HEAD_BYTES: Final = 16 * 1024
"""Largest request line and headers (also h11's ``h11_max_incomplete_event_size``)."""

Parser = Literal["h11", "httptools"]
"""uvicorn's HTTP/1.1 implementations the limits apply to."""


def default_max_connections() -> int:
    """:data:`DEFAULT_MAX_CONNECTIONS`, or half the free descriptors if that is less.

    With connections bounded below the descriptor limit, the server can always accept (and
    then close) one more connection; at the limit it could not even do that.
    """
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # pragma: no cover - Windows
        return DEFAULT_MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return DEFAULT_MAX_CONNECTIONS
    return max(8, min(DEFAULT_MAX_CONNECTIONS, (soft - _SPARE_DESCRIPTORS) // 2))


def guarded_protocol(idle_timeout: float, max_connections: int, parser: Parser = "h11") -> type:
    """The uvicorn protocol class with a head timeout, a head size and a connection bound."""
    base: Any
    if parser == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol as base
    else:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base

    class Guarded(base):  # type: ignore[misc]  # uvicorn is untyped here
        _head_timer: asyncio.TimerHandle | None = None
        _idle_since: float = 0.0
        _head_bytes: int = 0
        _refused: bool = False

        def connection_made(self, transport: asyncio.Transport) -> None:
            if len(self.connections) >= max_connections and not _evict_idlest(self.connections):
                self._refused = True  # every connection is busy with a request: not this one
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._idle_since = time.monotonic()
            self._head_bytes = 0
            self._head_timer = self.loop.call_later(idle_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if not _busy(self):
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            if _busy(self):
                self._disarm()  # a request head arrived; the app bounds the body
                return
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                # h11 refuses a long head itself; httptools would keep every byte of it.
                self.send_400_response(f"Request head larger than {MAX_HEAD_BYTES} bytes.")

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._disarm()
            super().connection_lost(exc)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded


def _evict_idlest(connections: set[Any]) -> bool:
    idle = [c for c in connections if hasattr(c, "_idle_since") and not _busy(c)]
    if not idle:
        return False
    idlest = min(idle, key=lambda c: getattr(c, "_idle_since", 0.0))
    idlest.transport.close()
    connections.discard(idlest)  # closed now; connection_lost comes later
    return True


def _busy(protocol: Any) -> bool:
    return protocol.cycle is not None and not protocol.cycle.response_complete


_AMBIGUOUS: Final = (
    b'{"type":"about:blank","title":"Bad request","status":400,"detail":'
    b'"Content-Length and Transfer-Encoding are both given, so the length of the body is '
    b'ambiguous (RFC 9112, 6.3); send one of them"}'
)


class StrangerGuard:
    """ASGI wrapper: close a connection whose request body was not read; refuse ambiguous framing.

    * A request with both ``Content-Length`` and ``Transfer-Encoding`` is answered 400
      (``application/problem+json``) with ``Connection: close``, before the app sees it.
    * A response that starts before the app received the end of the request's body gets
      ``Connection: close``: the server then closes the connection after the answer instead
      of reading (and discarding) the rest of a body nobody wants.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        lengths = transfers = 0
        empty = False
        for name, value in scope["headers"]:
            low = name.lower()
            if low == b"content-length":
                lengths += 1
                empty = value.strip() == b"0"
            elif low == b"transfer-encoding":
                transfers += 1
        if lengths and transfers:
            await _refuse_ambiguous(send)
            return
        # A body is still to come unless none was framed (or it was framed as empty).
        unread = bool(transfers) or (bool(lengths) and not empty)

        async def receiving() -> Message:
            nonlocal unread
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                unread = False  # the whole body, or a disconnect: nothing left to read
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and unread:
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receiving, sending)


async def _refuse_ambiguous(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/problem+json"),
                (b"content-length", str(len(_AMBIGUOUS)).encode("ascii")),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _AMBIGUOUS})


def server_limits(
    *,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
    parser: Parser = "h11",
) -> dict[str, Any]:
    """The ``uvicorn.Config`` settings of these limits (None: :func:`default_max_connections`).

    Raises:
        ValueError: for an ``idle_timeout`` not above 0 or ``max_connections`` below 1.
    """
    if max_connections is None:
        max_connections = default_max_connections()
    if isinstance(idle_timeout, bool) or not idle_timeout > 0:
        raise ValueError(f"idle_timeout: expected seconds > 0, got {idle_timeout!r}")
    if isinstance(max_connections, bool) or max_connections < 1:
        raise ValueError(f"max_connections: expected at least 1, got {max_connections!r}")
    return {
        "http": guarded_protocol(idle_timeout, max_connections, parser),
        "timeout_keep_alive": max(1, int(idle_timeout)),
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
        # Requests in progress at once (handlers, commits); more get 503. The connection
        # count never reaches it: the protocol above keeps it at most max_connections.
        "limit_concurrency": max_connections + 1,
        # Connections accepted in one turn of the event loop (and the kernel's queue):
        # the bound is kept in connection_made, a turn later, so a burst must fit in the
        # descriptors left above it (half of them; see default_max_connections).
        "backlog": max(16, max_connections // 2),
    }


def server_config(
    app: Any,
    *,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
) -> uvicorn.Config:
    """The uvicorn configuration of a callback listener: h11, quiet, these limits."""
    import uvicorn

    return uvicorn.Config(
        StrangerGuard(app),
        lifespan="off",
        log_config=None,  # leave the notebook's logging configuration alone
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
        **server_limits(idle_timeout=idle_timeout, max_connections=max_connections),
    )
