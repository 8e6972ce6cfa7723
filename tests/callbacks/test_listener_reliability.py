"""Idle, half-open and slow clients cannot keep valid callbacks out; replays are refused.

Real sockets against a real listener (uvicorn in a thread), with its limits lowered by
parameters so that a couple of hundred connections exceed them.
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

from surveykit.callbacks import Listener, Receiver, callback_signature, listen
from tests.helpers.callbacks import receipt

SECRET = "replay-test-secret"
MAX_CONNECTIONS = 48
IDLE_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0


@pytest.fixture
def guarded() -> Iterator[Listener]:
    receiver = Receiver(body_timeout=BODY_TIMEOUT)
    with listen(
        receiver=receiver, idle_timeout=IDLE_TIMEOUT, max_connections=MAX_CONNECTIONS
    ) as listener:
        yield listener


def address(listener: Listener) -> tuple[str, int]:
    url = httpx.URL(listener.url)
    assert url.host is not None and url.port is not None
    return url.host, url.port


def attackers(
    stack: ExitStack, listener: Listener, idle: int, heads: int, bodies: int
) -> list[socket.socket]:
    """Open idle connections, connections sending half a head, and ones sending half a body."""
    opened = []
    path = httpx.URL(listener.url).path
    for kind in ["idle"] * idle + ["head"] * heads + ["body"] * bodies:
        sock = stack.enter_context(socket.create_connection(address(listener), timeout=5))
        if kind == "head":
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: applic".encode())
        elif kind == "body":
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f'Content-Length: 5000\r\n\r\n{{"Type": '.encode()
            )
        opened.append(sock)
    return opened


def busy_connections(listener: Listener) -> int:
    """Server-side connections with a request in progress."""
    connections = list(listener._server.server_state.connections)
    return sum(c.cycle is not None and not c.cycle.response_complete for c in connections)


def closed_by_server(sockets: list[socket.socket], deadline: float) -> int:
    """Wait (until ``deadline``) for the server to close each socket; how many it closed."""
    pending = set(sockets)
    while pending and time.monotonic() < deadline:
        ready, _, _ = select.select(list(pending), [], [], 0.2)
        for sock in ready:
            try:
                while sock.recv(65536):  # a 408 answer first, for a slow body
                    pass
            except (ConnectionResetError, TimeoutError, BlockingIOError):
                pass
            pending.discard(sock)
    return len(sockets) - len(pending)


def test_valid_callbacks_are_stored_while_slow_clients_hold_connections(
    guarded: Listener,
) -> None:
    with ExitStack() as stack:
        # 200 connections, four times the limit: idle, half a head, and slow bodies.
        held = attackers(stack, guarded, idle=150, heads=30, bodies=20)
        with httpx.Client(timeout=10) as http:
            for i in range(5):
                answer = http.post(guarded.url, json=receipt(f"MSG-{i}"))
                assert answer.status_code == 200, answer.text
        events = guarded.wait_for(5, timeout=10)
        assert sorted(events["message_id"]) == [f"MSG-{i}" for i in range(5)]
        # Never more than the limit open at once, whatever the clients do.
        assert len(guarded._server.server_state.connections) <= MAX_CONNECTIONS
        # Every attacker is closed by the server: idle ones after IDLE_TIMEOUT (or evicted
        # earlier), slow bodies after a 408 at BODY_TIMEOUT.
        assert closed_by_server(held, time.monotonic() + 20) == len(held)


def test_a_slow_body_gets_408_and_the_connection_is_closed(guarded: Listener) -> None:
    with ExitStack() as stack:
        (sock,) = attackers(stack, guarded, idle=0, heads=0, bodies=1)
        sock.settimeout(10)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert "did not arrive within 1 s" in json.loads(body)["detail"]
    assert len(guarded.events) == 0


def test_an_idle_connection_is_closed_after_the_idle_timeout(guarded: Listener) -> None:
    with ExitStack() as stack:
        held = attackers(stack, guarded, idle=3, heads=2, bodies=0)
        assert closed_by_server(held, time.monotonic() + 10) == 5
        # A kept-alive connection is closed too once it idles after an answer.
        with httpx.Client(timeout=5) as http:
            assert http.post(guarded.url, json=receipt("MSG-K")).status_code == 200
        guarded.wait_for(1, timeout=5)


def test_connections_all_busy_refuse_the_next_until_one_frees(tmp_path: object) -> None:
    receiver = Receiver(body_timeout=BODY_TIMEOUT)
    with (
        listen(receiver=receiver, idle_timeout=5, max_connections=3) as listener,
        ExitStack() as stack,
    ):
        busy = attackers(stack, listener, idle=0, heads=0, bodies=3)
        # Until the server has read their heads they count as idle: wait for that.
        deadline = time.monotonic() + 10
        while busy_connections(listener) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert busy_connections(listener) == 3
        # The three slow bodies hold every slot: a fourth connection is closed at once...
        extra = stack.enter_context(socket.create_connection(address(listener), timeout=5))
        extra.settimeout(5)
        with suppress(ConnectionResetError):
            assert extra.recv(1) == b""
        # ...and once their bodies time out (408), callbacks are served again.
        assert closed_by_server(busy, time.monotonic() + 10) == 3
        with httpx.Client(timeout=5) as http:
            assert http.post(listener.url, json=receipt("MSG-X")).status_code == 200
        assert list(listener.wait_for(1, timeout=5)["message_id"]) == ["MSG-X"]


# Replays.


@pytest.fixture
def signed() -> Iterator[Listener]:
    with listen(secret=SECRET) as listener:
        yield listener


def post_signed(
    listener: Listener, payload: dict[str, object], **options: object
) -> httpx.Response:
    body = json.dumps(payload).encode()
    signature = callback_signature(body, SECRET, **options)  # type: ignore[arg-type]
    headers = {"Content-Type": "application/json", "X-Surveykit-Signature": signature}
    return httpx.post(listener.url, content=body, headers=headers)


def test_a_timestamped_signature_is_refused_outside_the_replay_window(signed: Listener) -> None:
    now = time.time()
    assert post_signed(signed, receipt("MSG-NOW"), timestamp=now).status_code == 200
    old = post_signed(signed, receipt("MSG-OLD"), timestamp=now - 301)
    assert old.status_code == 401
    assert "outside this receiver's replay window of 300 s" in old.json()["detail"]
    future = post_signed(signed, receipt("MSG-FUTURE"), timestamp=now + 400)
    assert future.status_code == 401 and "in the future" in future.json()["detail"]
    # Inside the window (and the plain scheme, which carries no time) are accepted.
    assert post_signed(signed, receipt("MSG-299"), timestamp=now - 290).status_code == 200
    assert post_signed(signed, receipt("MSG-PLAIN")).status_code == 200
    assert sorted(signed.events["message_id"]) == ["MSG-299", "MSG-NOW", "MSG-PLAIN"]


def test_the_timestamp_is_signed(signed: Listener) -> None:
    body = json.dumps(receipt("MSG-T")).encode()
    old = callback_signature(body, SECRET, timestamp=time.time() - 3600)
    # Moving t forward to fit the window breaks the signature.
    forged = f"t={int(time.time())}," + old.split(",", 1)[1]
    headers = {"Content-Type": "application/json", "X-Surveykit-Signature": forged}
    answer = httpx.post(signed.url, content=body, headers=headers)
    assert answer.status_code == 401 and "does not match" in answer.json()["detail"]


def test_replay_window_and_required_timestamps_are_settings() -> None:
    strict = Receiver(secret=SECRET, replay_window=30, require_timestamp=True)
    with listen(receiver=strict) as listener:
        plain = post_signed(listener, receipt("MSG-A"))
        assert plain.status_code == 401 and "requires one" in plain.json()["detail"]
        late = post_signed(listener, receipt("MSG-B"), timestamp=time.time() - 60)
        assert late.status_code == 401 and "window of 30 s" in late.json()["detail"]
    lax = Receiver(secret=SECRET, replay_window=None)
    with listen(receiver=lax) as listener:
        ancient = post_signed(listener, receipt("MSG-C"), timestamp=1_000_000_000)
        assert ancient.status_code == 200
    with pytest.raises(ValueError, match="replay_window"):
        Receiver(secret=SECRET, replay_window=0)
    with pytest.raises(ValueError, match="idle_timeout"):
        listen(idle_timeout=0)
