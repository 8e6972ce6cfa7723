"""Serving the sandbox with uvicorn, with the listener's limits, and stopping within seconds.

The served sandbox keeps the limits of :mod:`surveykit._util.serving` (its parser stays
httptools, the faster one): a connection that sends no complete request head within
``idle_timeout`` is closed, at most ``max_connections`` are open (a new one closes the one
idle the longest), a head is at most 16 KiB, a connection whose body was not read is
closed after its answer, and ``Content-Length`` with ``Transfer-Encoding`` is refused. So
strangers holding connections cannot keep a client out.

A GetResults download of a large survey can stream for many minutes. On SIGINT or SIGTERM
the server sets :attr:`SandboxApp.stopping` (every stream aborts at its next chunk: the
connection is cut, so the client sees an incomplete body, never a short complete one),
then gives the connections :data:`SHUTDOWN_GRACE` seconds before uvicorn cancels them (a
client that stopped reading holds its stream in a blocked send, where no chunk comes).
"""

from __future__ import annotations

import socket
from types import FrameType
from typing import TYPE_CHECKING, Final

from surveykit._util.serving import DEFAULT_IDLE_TIMEOUT, StrangerGuard, server_limits

if TYPE_CHECKING:
    from surveykit.sandbox._sandbox import Sandbox

SHUTDOWN_GRACE: Final = 3
"""Seconds open connections get after SIGTERM before they are cut."""


def serve(
    sandbox: Sandbox,
    sock: socket.socket,
    *,
    log_level: str = "warning",
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
) -> None:
    """Serve ``sandbox.app`` on a bound socket until SIGINT or SIGTERM (then return).

    ``idle_timeout`` and ``max_connections`` are the listener's limits (see
    :func:`surveykit.listen`); ``None`` fits the connections to the file descriptors.
    """
    import uvicorn

    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            sandbox.app.stopping.set()
            super().handle_exit(sig, frame)

    limits = server_limits(
        idle_timeout=idle_timeout, max_connections=max_connections, parser="httptools"
    )
    config = uvicorn.Config(
        StrangerGuard(sandbox.app),
        log_level=log_level,
        lifespan="off",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        **limits,
    )
    _Server(config).run(sockets=[sock])


__all__ = ["SHUTDOWN_GRACE", "serve"]
