"""The listener does no work for strangers: unread bodies and ambiguous framing close.

Raw sockets against a real listener (uvicorn in a thread on 127.0.0.1): what the server
answers, whether it closes, and how much it lets a stranger push after its answer.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import suppress

import httpx
import pytest

from surveykit.callbacks import Listener, listen
from tests.helpers.callbacks import OUR_NUMBER, RESPONDENT, receipt

SECRET = "strangers-test-secret"
DECLARED = 100 * 1024 * 1024
"""The body a stranger declares: 100 MB."""
PUSHED = 64 * 1024 * 1024
"""What the stranger tries to push after the answer."""
READ_BOUND = 8 * 1024 * 1024
"""At most this much may go before the send fails: the kernel's buffers, never the body."""


def address(listener: Listener) -> tuple[str, int]:
    url = httpx.URL(listener.url)
    assert url.host is not None and url.port is not None
    return url.host, url.port


def head(listener: Listener, extra: str) -> bytes:
    path = httpx.URL(listener.url).path
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}\r\n"
    ).encode()


def read_until_closed(sock: socket.socket, within: float) -> tuple[bytes, bool]:
    """What the server sent, and whether it closed the connection within ``within`` s."""
    data = b""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return data, False
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def push(sock: socket.socket, total: int) -> int:
    """Send up to ``total`` bytes until the server stops taking them; how many went."""
    piece = b"x" * 65536
    sent = 0
    sock.settimeout(5)
    with suppress(OSError):  # EPIPE, ECONNRESET: the server is gone; a timeout: it stopped
        while sent < total:
            sent += sock.send(piece)
    return sent


@pytest.fixture
def unsigned() -> Iterator[Listener]:
    with listen() as listener:
        yield listener


@pytest.fixture
def signed() -> Iterator[Listener]:
    with listen(secret=SECRET) as listener:
        yield listener


@pytest.mark.parametrize(
    ("which", "status"),
    [("unsigned", 413), ("signed", 401)],
    ids=["413-body-too-large", "401-no-signature"],
)
def test_a_refused_body_is_not_read_and_the_connection_is_closed(
    which: str, status: int, request: pytest.FixtureRequest
) -> None:
    listener: Listener = request.getfixturevalue(which)
    with socket.create_connection(address(listener), timeout=5) as sock:
        sock.sendall(head(listener, f"Content-Length: {DECLARED}\r\n") + b'{"Type": "Stop"')
        answer, closed = read_until_closed(sock, within=5)
        assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:100]
        answer_head = answer.partition(b"\r\n\r\n")[0].lower()
        assert b"connection: close" in answer_head
        assert closed, "the server kept the connection open to read the rest of the body"
        pushed = push(sock, PUSHED)
    assert pushed < READ_BOUND, f"{pushed} bytes were taken after the answer"
    assert len(listener.events) == 0


def test_a_refused_body_sent_with_its_head_still_gets_its_answer(signed: Listener) -> None:
    # A client that sends head and (small, unsigned) body at once reads the 401.
    body = json.dumps(receipt("MSG-1")).encode()
    with socket.create_connection(address(signed), timeout=5) as sock:
        sock.sendall(head(signed, f"Content-Length: {len(body)}\r\n") + body)
        answer, closed = read_until_closed(sock, within=5)
    assert answer.startswith(b"HTTP/1.1 401 ") and closed
    # A well-formed client is served as before, on a kept-alive connection.
    with httpx.Client(timeout=5) as http:
        for _ in range(2):
            assert http.post(signed.url, json=receipt("MSG-2")).status_code == 401


def smuggling_request(listener: Listener, stop: bytes, *, chunked_first: bool) -> bytes:
    """A chunked request whose Content-Length also covers a second, smuggled request."""
    path = httpx.URL(listener.url).path
    smuggled = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(stop)}\r\n\r\n"
    ).encode() + stop
    body = b"0\r\n\r\n" + smuggled
    framing = [f"Content-Length: {len(body)}\r\n", "Transfer-Encoding: chunked\r\n"]
    if chunked_first:
        framing.reverse()
    return head(listener, "".join(framing)) + body


@pytest.mark.parametrize("chunked_first", [False, True], ids=["length-first", "chunked-first"])
def test_content_length_with_transfer_encoding_is_refused_and_nothing_is_stored(
    unsigned: Listener, chunked_first: bool
) -> None:
    stop = json.dumps(
        {
            "Type": "Stop",
            "Source": RESPONDENT,
            "Destination": OUR_NUMBER,
            "Message": "STOP",
            "Timestamp": "2026-03-02T10:00:00+00:00",
            "MessageID": "MSG-SMUGGLED",
        }
    ).encode()
    request = smuggling_request(unsigned, stop, chunked_first=chunked_first)
    with socket.create_connection(address(unsigned), timeout=5) as sock:
        sock.sendall(request)
        answer, closed = read_until_closed(sock, within=5)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # one answer: the smuggled one never ran
    assert b"connection: close" in answer.partition(b"\r\n\r\n")[0].lower()
    assert b"Content-Length and Transfer-Encoding" in answer
    assert closed
    time.sleep(0.2)
    assert len(unsigned.events) == 0
    # The listener still serves well-framed callbacks, chunked ones included.
    with httpx.Client(timeout=5) as http:
        answer2 = http.post(
            unsigned.url,
            content=iter([json.dumps(receipt("MSG-OK")).encode()]),
            headers={"Content-Type": "application/json"},
        )
    assert answer2.status_code == 200
    assert list(unsigned.wait_for(1, timeout=5)["message_id"]) == ["MSG-OK"]
