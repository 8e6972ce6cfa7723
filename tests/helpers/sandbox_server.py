"""Start ``surveykit sandbox serve`` as a subprocess on a free loopback port, and stop it."""

from __future__ import annotations

import os
import queue
import resource
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

STARTUP_TIMEOUT = 30.0


@dataclass
class ServedSandbox:
    base_url: str
    token: str
    restricted_token: str
    process: subprocess.Popen[str]
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=200))
    """The server's last lines on stderr (read all along, so a full pipe never blocks it)."""


def _reader(stream: object, lines: queue.Queue[str] | deque[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.append(line) if isinstance(lines, deque) else lines.put(line)


def _open_files(limit: int | None) -> Callable[[], None] | None:
    """What sets the server's file descriptor limit (RLIMIT_NOFILE) before it starts."""
    if limit is None:
        return None

    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return set_limit


@contextmanager
def serve_sandbox(*args: str | Path, open_files: int | None = None) -> Iterator[ServedSandbox]:
    """Run the CLI with ``--port 0``; read base_url and tokens from its stdout.

    ``open_files`` limits the server's file descriptors (as ``ulimit -n`` would).
    """
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "surveykit.cli", "sandbox", "serve", "--port", "0",
               *map(str, args)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, preexec_fn=_open_files(open_files))
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_reader, args=(process.stdout, lines), daemon=True).start()
        values: dict[str, str] = {}
        while len(values) < 3:
            try:
                line = lines.get(timeout=STARTUP_TIMEOUT)
            except queue.Empty:
                raise RuntimeError("the sandbox server printed no URL in time") from None
            key, _, value = line.strip().partition("=")
            values[key] = value
        served = ServedSandbox(values["base_url"], values["token"], values["restricted_token"],
                               process)
        # uvicorn logs to stderr; a pipe nobody reads would block the server when full.
        threading.Thread(target=_reader, args=(process.stderr, served.stderr), daemon=True).start()
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
