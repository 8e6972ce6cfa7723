"""The batch journal: every row's state in SQLite, written before its request and after.

A row is marked ``in_flight`` (committed) before its request is sent and given its outcome
(committed) after the answer. A row still ``in_flight`` when a later run opens the journal
was interrupted at an unknown point: it may or may not have reached the platform, so it is
reported as ``unknown`` and sent again only when the caller asks explicitly.

WAL with ``synchronous=NORMAL`` survives a crash of the process (SIGKILL, a kernel restart);
pass ``durable=True`` for ``synchronous=FULL`` if it must survive a power cut too.

A journal is held by one run at a time, across processes: opening it takes an OS lock on
``<journal>.lock`` (see :mod:`surveykit.batch._lock`) that closing it, or the process
ending in any way, gives up.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from os import PathLike
from typing import Any

from surveykit.batch._lock import JournalLock
from surveykit.errors import JournalMismatchError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
    row_key TEXT PRIMARY KEY,
    destination TEXT,
    text TEXT,
    link TEXT,
    state TEXT NOT NULL,
    outcome TEXT,
    message_id TEXT,
    status TEXT,
    carrier TEXT,
    reachable INTEGER,
    number_type TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
"""

IN_FLIGHT = "in_flight"
DONE = "done"
PENDING = "pending"


@dataclass
class JournalRow:
    """What the journal knows of one row."""

    row_key: str
    destination: str | None
    text: str | None
    link: str | None
    state: str
    outcome: str | None
    message_id: str | None
    status: str | None
    carrier: str | None
    reachable: bool | None
    number_type: str | None
    error: str | None
    attempts: int
    updated_at: str


def row_key(label: Any) -> str:
    """A stable text key for a DataFrame index label (tuples for MultiIndex work too)."""
    try:
        return json.dumps(label, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(label)


def _canonical(value: Any) -> str:
    # Stored and fresh values must compare equal whatever the key order of nested dicts.
    return json.dumps(value, sort_keys=True, default=str)


def _machine_now() -> datetime:
    return datetime.now(UTC)


class Journal:
    """A batch's row states in one SQLite file; safe to use from several threads.

    Args:
        path: the SQLite file (created if missing).
        durable: ``synchronous=FULL`` (survives a power cut), not ``NORMAL``.
        timeout: seconds to wait while another run holds the journal; 0 refuses at once,
            None waits as long as it takes.
        clock: what ``updated_at`` is read from (a batch passes the platform's clock, so
            an embedded sandbox's virtual time is recorded); this machine's UTC time by
            default.

    Raises:
        JournalLockedError: another run (in this process or another) holds the journal.
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        durable: bool = False,
        timeout: float | None = 0.0,
        clock: Callable[[], datetime] = _machine_now,
    ) -> None:
        self.path = str(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._held = JournalLock(self.path, timeout=timeout)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._db.executescript(_SCHEMA)
        except BaseException:
            self._held.release()
            raise

    def _now(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="milliseconds")

    def check_fingerprint(self, fingerprint: dict[str, Any]) -> None:
        """Bind the journal to one batch; refuse a journal written by a different one."""
        text = _canonical(fingerprint)
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (text,))
                return
        stored = json.loads(row[0])
        differs = sorted(
            key
            for key in set(stored) | set(fingerprint)
            if _canonical(stored.get(key)) != _canonical(fingerprint.get(key))
        )
        if differs:
            raise JournalMismatchError(
                f"journal {self.path} belongs to another batch: {', '.join(differs)} "
                "differ from this call. Use the same arguments to resume, or a new journal file."
            )

    def load(self) -> dict[str, JournalRow]:
        """Every row the journal knows, by key."""
        with self._lock:
            cursor = self._db.execute(
                "SELECT row_key, destination, text, link, state, outcome, message_id, status,"
                " carrier, reachable, number_type, error, attempts, updated_at FROM rows"
            )
            rows = cursor.fetchall()
        names = [f.name for f in fields(JournalRow)]
        loaded = {}
        for row in rows:
            values = dict(zip(names, row, strict=True))
            if values["reachable"] is not None:
                values["reachable"] = bool(values["reachable"])
            loaded[row[0]] = JournalRow(**values)
        return loaded

    def save_link(self, key: str, destination: str | None, link: str) -> None:
        """Remember a row's short link, so a resumed batch renders the same text."""
        with self._lock:
            self._db.execute(
                "INSERT INTO rows (row_key, destination, link, state, updated_at)"
                " VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(row_key) DO UPDATE SET link=excluded.link",
                (key, destination, link, PENDING, self._now()),
            )

    def mark_in_flight(self, key: str, destination: str, text: str, attempts: int) -> None:
        """Record, durably, that this row's request is about to be sent."""
        with self._lock:
            self._db.execute(
                "INSERT INTO rows (row_key, destination, text, state, attempts, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(row_key) DO UPDATE SET destination=excluded.destination,"
                " text=excluded.text, state=excluded.state, outcome=NULL,"
                " attempts=excluded.attempts, updated_at=excluded.updated_at",
                (key, destination, text, IN_FLIGHT, attempts, self._now()),
            )

    def mark_pending(self, key: str) -> None:
        """The platform refused the request without acting on it (429): not in flight."""
        with self._lock:
            self._db.execute(
                "UPDATE rows SET state=?, updated_at=? WHERE row_key=?", (PENDING, self._now(), key)
            )

    def record(self, key: str, outcome: str, fields: dict[str, Any], attempts: int) -> None:
        """Record a row's outcome after its answer (or its definite failure)."""
        reachable = fields.get("reachable")
        with self._lock:
            self._db.execute(
                "UPDATE rows SET state=?, outcome=?, message_id=?, status=?, carrier=?,"
                " reachable=?, number_type=?, error=?, attempts=?, updated_at=?"
                " WHERE row_key=?",
                (
                    DONE,
                    outcome,
                    fields.get("message_id"),
                    fields.get("status"),
                    fields.get("carrier"),
                    None if reachable is None else int(bool(reachable)),
                    fields.get("number_type"),
                    fields.get("error"),
                    attempts,
                    self._now(),
                    key,
                ),
            )

    def close(self) -> None:
        """Close the file and give the journal up to the next run."""
        with self._lock:
            try:
                self._db.close()
            finally:
                self._held.release()
