"""The served sandbox keeps the listener's limits: strangers cannot keep a client out.

``surveykit sandbox serve`` runs as a subprocess (uvicorn with httptools, real sockets);
strangers open connections and send nothing, half a head, or an endless head, while a
client's requests must still be served within seconds.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress

import httpx
import pytest

from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

OPEN_FILES = 256
"""The server's file descriptors in the flood test (``ulimit -n``)."""
STRANGERS = 300
"""Connections that send nothing: more than the server has descriptors."""
IDLE_TIMEOUT = 1.0
READ_BOUND = 8 * 1024 * 1024
"""At most this much may go before the send fails: the kernel's buffers."""


def address(served: ServedSandbox) -> tuple[str, int]:
    url = httpx.URL(served.base_url)
    assert url.host is not None and url.port is not None
    return url.host, url.port


def admin(served: ServedSandbox, timeout: float = 5) -> httpx.Client:
    return httpx.Client(
        base_url=served.base_url,
        headers={"Authorization": f"Basic {served.token}"},
        timeout=timeout,
    )


def closed_by_server(sockets: list[socket.socket], deadline: float) -> int:
    """Wait (until ``deadline``) for the server to close each socket; how many it closed."""
    pending = set(sockets)
    while pending and time.monotonic() < deadline:
        ready, _, _ = select.select(list(pending), [], [], 0.2)
        for sock in ready:
            with suppress(ConnectionResetError, TimeoutError, BlockingIOError):
                while sock.recv(65536):  # an answer first (400 for a long head)
                    pass
            pending.discard(sock)
    return len(sockets) - len(pending)


def strangers(
    stack: ExitStack, served: ServedSandbox, idle: int, heads: int = 0
) -> list[socket.socket]:
    """Connections that send nothing, and ones that send half a request head."""
    opened = []
    for number in range(idle + heads):
        sock = stack.enter_context(socket.create_connection(address(served), timeout=5))
        if number >= idle:
            sock.sendall(b"GET /v3.2/Webhook HTTP/1.1\r\nHost: x\r\nAuthori")
        opened.append(sock)
    return opened


def test_idle_strangers_beyond_the_descriptors_do_not_keep_a_client_out() -> None:
    # Before the limits: accept() failed with EMFILE and 0 of 8 requests were served.
    with serve_sandbox("--seed", "3", open_files=OPEN_FILES) as served, ExitStack() as stack:
        held = strangers(stack, served, idle=STRANGERS)
        with admin(served) as client:
            for number in range(8):
                started = time.monotonic()
                assert client.get("/v3.2/Webhook").status_code == 200, number
                assert time.monotonic() - started < 5
        # The server made room by closing the strangers idle the longest.
        assert closed_by_server(held, time.monotonic() + 2) >= STRANGERS - OPEN_FILES // 2


@pytest.fixture(scope="module")
def guarded() -> Iterator[ServedSandbox]:
    with serve_sandbox("--seed", "3", "--idle-timeout", str(IDLE_TIMEOUT)) as served:
        yield served


def test_connections_that_send_no_head_are_closed_after_the_idle_timeout(
    guarded: ServedSandbox,
) -> None:
    with ExitStack() as stack:
        held = strangers(stack, guarded, idle=150, heads=30)
        started = time.monotonic()
        assert closed_by_server(held, started + 10) == len(held)
        # A kept-alive connection is closed too once it idles after its answer.
        sock = stack.enter_context(socket.create_connection(address(guarded), timeout=5))
        sock.sendall(
            f"GET /v3.2/Webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {guarded.token}"
            "\r\n\r\n".encode()
        )
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        assert closed_by_server([sock], time.monotonic() + 5) == 1
    with admin(guarded) as client:
        assert client.get("/v3.2/Webhook").status_code == 200


def test_an_endless_request_head_is_refused_and_not_kept(guarded: ServedSandbox) -> None:
    # httptools sets no limit of its own: 200 MB of headers took 223 MiB before.
    line = b"X-Stranger: " + b"a" * 1000 + b"\r\n"
    with socket.create_connection(address(guarded), timeout=5) as sock:
        sock.sendall(b"GET /v3.2/Webhook HTTP/1.1\r\nHost: x\r\n")
        sent = 0
        with suppress(OSError):
            while sent < 64 * 1024 * 1024:
                sent += sock.send(line * 64)
        assert sent < READ_BOUND, f"{sent} bytes of head were taken"
        sock.settimeout(5)
        answer = b""
        with suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ") or answer == b""  # cut by the RST, if any


def test_content_length_with_transfer_encoding_is_refused_and_not_run(
    guarded: ServedSandbox,
) -> None:
    message = json.dumps(
        {"destination": "447700900123", "source": "447700900100", "message": "Hi", "reply": False}
    ).encode()
    auth = f"Authorization: Basic {guarded.token}\r\n"
    smuggled = (
        f"POST /v3.2/Message HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {len(message)}\r\n\r\n"
    ).encode() + message
    body = b"0\r\n\r\n" + smuggled
    request = (
        f"POST /v3.2/Webhook HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode() + body
    with admin(guarded) as client:
        before = len(client.get("/_sandbox/journal", params={"kind": "request"}).json())
        with socket.create_connection(address(guarded), timeout=5) as sock:
            sock.sendall(request)
            sock.settimeout(5)
            answer = b""
            with suppress(OSError):
                while chunk := sock.recv(65536):
                    answer += chunk
        assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1") == 1
        after = client.get("/_sandbox/journal", params={"kind": "request"}).json()
    assert len(after) == before  # neither request ran
