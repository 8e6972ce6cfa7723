"""Start ``surveykit sandbox serve`` as a subprocess on a free loopback port, and stop it."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

STARTUP_TIMEOUT = 30.0


@dataclass
class ServedSandbox:
    base_url: str
    token: str
    restricted_token: str
    process: subprocess.Popen[str]


def _reader(stream: object, lines: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.put(line)


@contextmanager
def serve_sandbox(*args: str | Path) -> Iterator[ServedSandbox]:
    """Run the CLI with ``--port 0``; read base_url and tokens from its stdout."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "surveykit.cli", "sandbox", "serve", "--port", "0",
               *map(str, args)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
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
        yield ServedSandbox(values["base_url"], values["token"], values["restricted_token"],
                            process)
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
