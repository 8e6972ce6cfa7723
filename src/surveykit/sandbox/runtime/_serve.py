"""Serving the sandbox with uvicorn, and stopping within seconds of SIGTERM.

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

if TYPE_CHECKING:
    from surveykit.sandbox._sandbox import Sandbox

SHUTDOWN_GRACE: Final = 3
"""Seconds open connections get after SIGTERM before they are cut."""


def serve(sandbox: Sandbox, sock: socket.socket, *, log_level: str = "warning") -> None:
    """Serve ``sandbox.app`` on a bound socket until SIGINT or SIGTERM (then return)."""
    import uvicorn

    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            sandbox.app.stopping.set()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        sandbox.app,
        log_level=log_level,
        lifespan="off",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    _Server(config).run(sockets=[sock])


__all__ = ["SHUTDOWN_GRACE", "serve"]
