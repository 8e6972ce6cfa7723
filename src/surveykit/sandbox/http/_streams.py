"""Streamed answers and the server's shutdown: a stream stops at its next chunk.

:class:`~surveykit.sandbox.http._app.SandboxApp` sets its ``stopping`` event when the
server shuts down; the routes that stream (GetResults) wrap their body in
:func:`stop_on_shutdown`, and on :class:`StreamAborted` the app drops the connection and
journals the fault (``shutdown``).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any


class StreamAborted(Exception):
    """A streamed answer stopped because the server is shutting down (its socket is cut)."""


async def stop_on_shutdown(
    chunks: AsyncIterable[Any], stopping: threading.Event
) -> AsyncIterator[Any]:
    """Pass a streamed body on, and stop at the first chunk after ``stopping`` is set.

    Cancellation (the client disconnected, or uvicorn cut the connection) ends it too; the
    chunk being computed in a worker thread is the last one.
    """
    try:
        async for chunk in chunks:
            if stopping.is_set():
                raise StreamAborted("the sandbox is shutting down")
            yield chunk
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
