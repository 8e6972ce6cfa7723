"""uvicorn settings that keep idle, half-open and slow clients from holding the listener.

uvicorn closes a kept-alive connection after ``timeout_keep_alive``, but a connection that
never completes its first request (opened and left idle, or sending its head a byte at a
time) is never timed out, and every one holds a file descriptor. With 1,024 descriptors,
1,100 idle connections stopped every callback. Here:

* a connection must complete each request head within ``idle_timeout`` of connecting (or
  of its previous answer), or it is closed;
* at most ``max_connections`` are open: a new one beyond that closes the connection idle
  the longest (no request in progress), or, when all are busy, is itself closed at once;
* a request head is at most ``MAX_HEAD_BYTES`` (uvicorn answers 400 above it);
* a body must arrive within the receiver's ``body_timeout`` (408; see ``Receiver``).

So a valid callback is served while slow clients hold the other connections.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # uvicorn is imported where a listener starts, not with surveykit
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_IDLE_TIMEOUT: Final = 10.0
"""Seconds a connection may stay open without a complete request head."""

DEFAULT_MAX_CONNECTIONS: Final = 256
"""Connections open at once, at most: lowered to fit the process's file descriptors."""

_SPARE_DESCRIPTORS: Final = 64
"""Descriptors left for everything else (SQLite, logs, the client side of a notebook)."""


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


MAX_HEAD_BYTES: Final = 16 * 1024
"""Largest request line and headers (uvicorn's ``h11_max_incomplete_event_size``)."""


def guarded_protocol(idle_timeout: float, max_connections: int) -> type[H11Protocol]:
    """An h11 protocol class with a head timeout and a connection bound (see the module)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Guarded(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _idle_since: float = 0.0
        _refused: bool = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= max_connections and not _evict_idlest(self.connections):
                self._refused = True  # every connection is busy with a request: not this one
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._idle_since = time.monotonic()
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

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._disarm()
            super().connection_lost(exc)

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


def server_config(
    app: Any,
    *,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
) -> uvicorn.Config:
    """The uvicorn configuration of a callback listener (None: :func:`default_max_connections`)."""
    import uvicorn

    if max_connections is None:
        max_connections = default_max_connections()
    if not idle_timeout > 0:
        raise ValueError(f"idle_timeout: expected seconds > 0, got {idle_timeout!r}")
    if isinstance(max_connections, bool) or max_connections < 1:
        raise ValueError(f"max_connections: expected at least 1, got {max_connections!r}")
    return uvicorn.Config(
        app,
        http=guarded_protocol(idle_timeout, max_connections),
        lifespan="off",
        log_config=None,  # leave the notebook's logging configuration alone
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
        timeout_keep_alive=max(1, int(idle_timeout)),
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        # Requests in progress at once (handlers, commits); more get 503. The connection
        # count never reaches it: the protocol above keeps it at most max_connections.
        limit_concurrency=max_connections + 1,
    )
