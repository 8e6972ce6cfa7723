"""The background listener: notebooks and scripts, stopping, and durability across a SIGKILL."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from surveykit.callbacks import EventStore, Listener, Receiver, listen
from surveykit.models import CallbackPayload
from tests.helpers.callbacks import async_client, client, inbound, receipt


@pytest.fixture
def listener() -> Iterator[Listener]:
    running = listen()
    try:
        yield running
    finally:
        running.stop()


async def test_listen_works_inside_a_running_event_loop() -> None:
    # As in a Jupyter cell: the caller's loop is running; listen() must not need it.
    with listen() as running:
        async with async_client(4) as http:
            answer = await http.post(running.url, json=receipt("MS1"))
        assert answer.status_code == 200
        assert list(running.wait_for(1, timeout=10)["message_id"]) == ["MS1"]


def test_url_is_loopback_with_the_bound_port(listener: Listener) -> None:
    parts = urlsplit(listener.url)
    assert parts.scheme == "http"
    assert parts.hostname == "127.0.0.1"
    assert parts.port is not None
    assert parts.port > 0
    assert parts.path == "/callbacks"


def test_wait_for_times_out_with_a_clear_message(listener: Listener) -> None:
    with client() as http:
        http.post(listener.url, json=receipt("MS1"))
    with pytest.raises(TimeoutError, match=r"only 1 of 2 callback events arrived at http://"):
        listener.wait_for(2, timeout=0.2)


def test_wait_for_returns_the_events_once_enough_arrived(listener: Listener) -> None:
    def deliver() -> None:
        with client() as http:
            for n in range(3):
                http.post(listener.url, json=receipt(f"MS{n}"))

    sender = threading.Thread(target=deliver)
    sender.start()
    try:
        events = listener.wait_for(3, timeout=30)
    finally:
        sender.join(30)
    assert len(events) >= 3


def test_stop_keeps_a_snapshot_frees_the_port_and_deletes_a_temporary_db() -> None:
    running = listen()
    with client() as http:
        http.post(running.url, json=receipt("MS1"))
    db = Path(running.db)
    assert db.exists()
    running.stop()
    running.stop()
    assert not running.running
    assert list(running.events["message_id"]) == ["MS1"]
    assert not db.exists()
    assert "stopped, 1 event" in repr(running)
    parts = urlsplit(running.url)
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection((parts.hostname, parts.port), 2),
    ):
        pass
    with pytest.raises(RuntimeError, match="stopped"):
        running.wait_for(1, timeout=1)


def test_a_given_db_is_kept_after_stop(tmp_path: Path) -> None:
    db = tmp_path / "campaign.sqlite"
    with listen(db=db) as running, client() as http:
        http.post(running.url, json=receipt("MS1"))
    with EventStore(db) as store:
        assert list(store.frame()["message_id"]) == ["MS1"]


def test_repr_and_html(listener: Listener) -> None:
    with client() as http:
        http.post(listener.url, json=receipt("MS1", Type="<b>Click</b>"))
    listener.wait_for(1, timeout=10)
    assert repr(listener).startswith(f"<Listener {listener.url} running, 1 event")
    html = listener._repr_html_()
    assert listener.url in html
    assert "&lt;b&gt;Click&lt;/b&gt;: 1" in html
    assert "<b>Click" not in html


def test_on_passes_through_to_the_receiver(listener: Listener) -> None:
    @listener.on("Keyword")
    def answer(payload: object) -> str:
        return "ok"

    assert listener.receiver.handler_for("keyword") is answer


def test_receiver_settings_go_on_the_receiver(tmp_path: Path) -> None:
    receiver = Receiver(tmp_path / "a.sqlite")
    try:
        with pytest.raises(ValueError, match="on the Receiver"):
            listen(db=tmp_path / "b.sqlite", receiver=receiver)
        with pytest.raises(ValueError, match="on the Receiver"):
            listen(secret="x", receiver=receiver)
    finally:
        receiver.close()


def test_secrets_stay_out_of_reprs() -> None:
    with listen(secret="hunter2-secret") as running:
        assert "hunter2" not in repr(running)
        assert "hunter2" not in repr(running.receiver)
        assert "hunter2" not in running._repr_html_()


# -- subprocesses --------------------------------------------------------------------------

CLI_SCRIPT = """
import sys
from surveykit.callbacks import run_listener_cli
run_listener_cli("127.0.0.1", 0, sys.argv[1], None)
"""

HANDLER_SCRIPT = """
import sys, threading
from surveykit.callbacks import listen
listener = listen(db=sys.argv[1])

@listener.on("Keyword")
def answer(payload):
    return f"{sys.argv[2]} {payload.message}"

print(listener.url, flush=True)
threading.Event().wait()
"""


Spawn = Callable[..., tuple["subprocess.Popen[str]", str]]


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    processes: list[subprocess.Popen[str]] = []

    def start(source: str, *args: str) -> tuple[subprocess.Popen[str], str]:
        script = tmp_path / f"script{len(processes)}.py"
        script.write_text(textwrap.dedent(source))
        proc = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        processes.append(proc)
        lines: list[str] = []
        stdout = proc.stdout
        assert stdout is not None
        reader = threading.Thread(target=lambda: lines.append(stdout.readline()))
        reader.start()
        reader.join(60)  # a guard against a hung child, not a timing assertion
        if not lines or "http://" not in lines[0]:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"the listener did not start: {lines} {err}")
        return proc, next(word for word in lines[0].split() if word.startswith("http://"))

    try:
        yield start
    finally:
        for proc in processes:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=10)


def kill_now(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def test_answered_events_survive_a_sigkill(spawn: Spawn, tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite"
    proc, url = spawn(CLI_SCRIPT, str(db))
    with client() as http:
        for n in range(25):
            assert http.post(url, json=receipt(f"MS{n}", campaign="spring")).status_code == 200
    kill_now(proc)  # right after the last answer: no clean shutdown, no checkpoint
    with sqlite3.connect(db) as conn:
        ids = {row[0] for row in conn.execute("SELECT message_id FROM events")}
    assert ids == {f"MS{n}" for n in range(25)}


def test_a_reply_survives_a_sigkill_and_is_repeated_by_the_next_process(
    spawn: Spawn, tmp_path: Path
) -> None:
    db = tmp_path / "events.sqlite"
    body = inbound("Keyword", "MS1", "JOIN")
    first, url = spawn(HANDLER_SCRIPT, str(db), "first")
    with client() as http:
        assert http.post(url, json=body).json()["message"] == "first JOIN"
    kill_now(first)

    second, url = spawn(HANDLER_SCRIPT, str(db), "second")
    with client() as http:
        retried = http.post(url, json=body)
        fresh = http.post(
            url, json=inbound("Keyword", "MS1", "STOP", timestamp="2026-03-03T00:00Z")
        )
    kill_now(second)
    assert retried.json()["message"] == "first JOIN", "a retry never gets a second reply"
    assert fresh.json()["message"] == "second STOP"
    with EventStore(db) as store:
        events = store.frame()
    assert list(events["deliveries"]) == [2, 1]
    assert [reply["message"] for reply in events["reply"]] == ["first JOIN", "second STOP"]


def test_cli_prints_the_url_first_and_stops_cleanly_on_ctrl_c(spawn: Spawn, tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite"
    proc, url = spawn(CLI_SCRIPT, str(db))
    with client() as http:
        assert http.post(url, json=receipt("MS1")).status_code == 200
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    assert proc.stdout is not None
    assert proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()  # the first line was read by spawn
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert str(db) in out
    with EventStore(db) as store:
        assert store.count() == 1


def test_cli_with_a_temporary_db_cleans_up_on_sigterm(spawn: Spawn) -> None:
    proc, url = spawn(CLI_SCRIPT.replace("sys.argv[1]", "None"))
    with client() as http:
        assert http.post(url, json=receipt("MS1")).status_code == 200
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.stdout is not None
    out = proc.stdout.read()
    stored = next(line for line in out.splitlines() if line.startswith("Events are stored in"))
    path = Path(stored.split()[4])
    assert path.name == "events.sqlite"
    assert proc.returncode == 0
    assert not path.parent.exists()


def _left_pending(db: Path, body: dict[str, object]) -> None:
    # What a process killed while its handler ran leaves behind: the event, no answer yet.
    with EventStore(db) as store:
        assert store.record(CallbackPayload.model_validate(body)).reply_state == "pending"


def test_an_event_left_pending_gets_its_handler_run_on_the_retry(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite"
    body = inbound("Keyword", "MS1", "JOIN")
    _left_pending(db, body)
    calls: list[str | None] = []
    with listen(db=db) as running:

        @running.on("Keyword")
        def answer(payload: CallbackPayload) -> str:
            calls.append(payload.message)
            return "welcome"

        with client() as http:
            replies = [http.post(running.url, json=body).json()["message"] for _ in range(2)]
        events = running.events
    assert replies == ["welcome", "welcome"]
    assert calls == ["JOIN"]
    assert list(events["deliveries"]) == [3]


def test_an_event_left_pending_without_handler_is_finished_without_reply(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite"
    body = inbound("Keyword", "MS1", "JOIN")
    _left_pending(db, body)
    with listen(db=db) as running, client() as http:
        first = http.post(running.url, json=body)
        running.on("Keyword")(lambda payload: "too late")
        again = http.post(running.url, json=body)
    assert (first.status_code, first.content) == (200, b"")
    assert (again.status_code, again.content) == (200, b""), "no second, different answer"
