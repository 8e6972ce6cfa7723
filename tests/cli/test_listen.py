"""``surveykit listen`` has the listener's opt-out and connection options.

The command runs as a subprocess on a free loopback port; callbacks are posted over HTTP
and the opt-out list is read from its SQLite file. Usage errors go through typer's runner.
"""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from surveykit.callbacks import EventStore
from surveykit.cli import app
from surveykit.models import CallbackPayload
from surveykit.optouts import OptOutList
from tests.helpers.callbacks import OUR_NUMBER, inbound

runner = CliRunner()

EARLIER = "447911000001"
"""Sent a STOP to an earlier run: it is in the event store, not yet on the list."""
STOPPED = "447911000002"
IN_WORDS = "447911000003"
UNSURE = "447911000004"


def stop_from(number: str, message_id: str) -> dict[str, object]:
    return {
        "Type": "Stop",
        "Source": number,
        "Destination": OUR_NUMBER,
        "Message": "STOP",
        "Timestamp": "2026-03-02T10:00:00+00:00",
        "MessageID": message_id,
        "Inbound": True,
    }


@contextmanager
def listening(*args: str) -> Iterator[tuple[str, list[str]]]:
    """``surveykit listen ARGS`` on a free port: its URL and the lines it printed first."""
    process = subprocess.Popen(
        [sys.executable, "-m", "surveykit.cli", "listen", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline()]
        while not lines[-1].startswith("Press Ctrl-C") and lines[-1]:
            lines.append(process.stdout.readline())
        assert lines[0].startswith("Listening for callbacks at "), lines
        yield lines[0].strip().rpartition(" ")[2], lines
    finally:
        process.terminate()
        process.wait(timeout=15)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert process.returncode == 0


def on_list(path: Path) -> set[str]:
    with OptOutList(path) as optouts:
        return {n for n in (EARLIER, STOPPED, IN_WORDS) if n in optouts}


@pytest.mark.parametrize("words", [True, False], ids=["words", "no-words"])
def test_listen_keeps_the_opt_out_list_current(tmp_path: Path, words: bool) -> None:
    db, optouts = tmp_path / "events.sqlite", tmp_path / "optouts.sqlite"
    with EventStore(db) as store:
        store.record(CallbackPayload.model_validate(stop_from(EARLIER, "MS0")))
    flag = [] if words else ["--no-opt-out-words"]
    with (
        listening("--db", str(db), "--optouts", str(optouts), *flag) as (url, lines),
        httpx.Client(trust_env=False, timeout=30) as http,
    ):
        assert f"are kept in {optouts}" in "".join(lines)
        assert on_list(optouts) == {EARLIER}  # applied at start
        assert http.post(url, json=stop_from(STOPPED, "MS1")).status_code == 200
        reply = inbound("Message", "MS2", "please stop texting me", Source=IN_WORDS)
        assert http.post(url, json=reply).status_code == 200
        unsure = inbound("Message", "MS3", "Stop, who is this?", Source=UNSURE)
        assert http.post(url, json=unsure).status_code == 200
        # Each is on the list before it is answered; an unsure reply waits for a person.
        expected = {EARLIER, STOPPED} | ({IN_WORDS} if words else set())
        assert on_list(optouts) == expected
    review = runner.invoke(app, ["optouts", "review", "--db", str(optouts)])
    assert review.exit_code == 0, review.output
    if words:
        assert UNSURE in review.output and "Stop, who is this?" in review.output
        assert IN_WORDS not in review.output
    else:
        assert review.output.strip() == "no replies to review"


def test_listen_opt_out_wait_answers_a_stop_while_the_list_is_locked(tmp_path: Path) -> None:
    optouts = tmp_path / "optouts.sqlite"
    OptOutList(optouts).close()
    with (
        listening("--optouts", str(optouts), "--opt-out-wait", "0.2") as (url, _),
        httpx.Client(trust_env=False, timeout=30) as http,
    ):
        holder = sqlite3.connect(optouts, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process writing the list
        started = time.monotonic()
        assert http.post(url, json=stop_from(STOPPED, "MS1")).status_code == 200
        waited = time.monotonic() - started
        assert waited < 3, f"answered after {waited:.1f} s (the default waits 5 s)"
        assert on_list(optouts) == set()
        holder.execute("COMMIT")  # the lock is free: the stored STOP is applied
        holder.close()
        deadline = time.monotonic() + 10
        while on_list(optouts) != {STOPPED} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert on_list(optouts) == {STOPPED}


def test_listen_idle_timeout_closes_a_silent_connection() -> None:
    with listening("--idle-timeout", "0.5", "--max-connections", "4") as (url, _):
        address = httpx.URL(url)
        assert address.host is not None and address.port is not None
        with socket.create_connection((address.host, address.port), timeout=5) as sock:
            started = time.monotonic()
            assert sock.recv(1) == b""
            assert time.monotonic() - started < 4


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--no-opt-out-words"], 2, "--opt-out-words/--no-opt-out-words: needs --optouts"),
        (["--opt-out-wait", "1"], 2, "--opt-out-wait: needs --optouts"),
        (["--optouts", "o.sqlite", "--opt-out-wait", "30"], 2, "expected 0 to 20 seconds"),
        (["--idle-timeout", "0"], 2, "--idle-timeout: expected seconds > 0"),
        (["--max-connections", "0"], 2, "--max-connections"),
    ],
    ids=["words-alone", "wait-alone", "wait-too-long", "idle-zero", "connections-zero"],
)
def test_listen_refuses_bad_opt_out_and_connection_options(
    args: list[str], code: int, message: str
) -> None:
    result = runner.invoke(app, ["listen", *args])
    assert result.exit_code == code, result.output
    assert message in " ".join(result.output.split()), result.output


def test_listen_refuses_an_opt_out_list_that_is_not_one(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    for path, message in ((tmp_path, "is a folder"), (other, "not a surveykit opt-out list")):
        result = runner.invoke(app, ["listen", "--optouts", str(path)])
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output
