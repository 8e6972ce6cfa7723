"""The batch journal: every row's state in SQLite, written before its request and after.

A row is marked ``in_flight`` (committed) before its request is sent and given its outcome
(committed) after the answer. A row still ``in_flight`` when a later run opens the journal
was interrupted at an unknown point: it may or may not have reached the platform, so it is
reported as ``unknown`` and sent again only when the caller asks explicitly.

The journal is one file. It keeps no write-ahead log: every commit is in the main file
when it returns (SQLite's rollback journal, ``<journal>-journal``, exists only during a
commit), so copying the one file after a crash copies everything it knew. With a WAL,
commits lived in ``<journal>-wal`` until a checkpoint, and a journal copied without it, or
whose log was damaged (SQLite drops log frames that fail their checksum, silently), looked
like a journal that had sent less, and its rows were sent again. ``synchronous=OFF``
survives a crash of the process (SIGKILL, a kernel restart: every write reached the
operating system); pass ``durable=True`` for ``synchronous=FULL`` if it must survive a
power cut too.

A journal proves it is whole before anything is sent, or :class:`JournalError` says what
was found: an existing file that is empty or not a complete surveykit journal, a file
SQLite finds damaged (``PRAGMA integrity_check``), a row in a state no run writes, or rows
missing (the number of rows is also kept in ``meta``, by a trigger in the same commit, so
an older copy of the rows' pages is seen). A new journal is built at a temporary name and
linked into place whole, so a crash never leaves a half-made one. Writes that fail (a full
disk) are a :class:`JournalError` too, never a raw ``sqlite3`` error, and stop the batch.

A journal is held by one run at a time, across processes and across the file's names:
opening it takes an OS lock on the file itself (see :mod:`surveykit.batch._lock`) that
closing it, or the process ending in any way, gives up.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any, Final

from surveykit._util.atomic import atomic_path
from surveykit.batch._lock import JournalLock
from surveykit.errors import JournalError, JournalMismatchError

FORMAT: Final = "surveykit batch journal"
"""``meta.format`` of every journal this version writes."""

VERSION: Final = 2
"""``meta.version``: 2 adds the format, the row count and the holder (1 had none)."""

OPEN_WAIT: Final = 1.0
"""Seconds opening waits for another program holding the file (SQLite's lock)."""

WRITE_WAIT: Final = 30.0
"""Seconds a write waits for a reader of the file before the batch stops."""

_BUSY: Final = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

_SQLITE_HEADER: Final = b"SQLite format 3\x00"

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

# The row count kept apart from the rows, in the same commit as each row added.
_COUNTED = """
INSERT OR IGNORE INTO meta VALUES ('row_count', (SELECT COUNT(*) FROM rows));
CREATE TRIGGER IF NOT EXISTS rows_added AFTER INSERT ON rows BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'row_count';
END;
CREATE TRIGGER IF NOT EXISTS rows_removed AFTER DELETE ON rows BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) - 1 WHERE key = 'row_count';
END;
"""

_FORMAT = f"""
INSERT OR IGNORE INTO meta VALUES ('format', '{FORMAT}');
INSERT OR REPLACE INTO meta VALUES ('version', '{VERSION}');
"""

_COLUMNS: Final = frozenset(
    ("row_key", "destination", "text", "link", "state", "outcome", "message_id", "status",
     "carrier", "reachable", "number_type", "error", "attempts", "updated_at")
)

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


_HOW_TO_GO_ON: Final = (
    "restore the journal from a copy made after the run that wrote it, or keep this file "
    "aside and pass a new journal file (a new journal knows no rows: every row would be "
    "sent again)"
)


def _new_journal(path: str) -> None:
    """Create a complete empty journal at ``path`` unless a file is there already.

    The journal is built at a temporary name and linked into place (never over an existing
    file), so a crash leaves no half-made journal, and two runs creating it at once end
    with one file, which the lock then gives to one of them.
    """
    if os.path.exists(path):
        return
    real = Path(os.path.realpath(path))  # a symlink to a journal not made yet: make its target
    try:
        with (
            atomic_path(real, exclusive=True) as temporary,
            contextlib.closing(sqlite3.connect(temporary, isolation_level=None)) as db,
        ):
            db.executescript("BEGIN;" + _SCHEMA + _COUNTED + _FORMAT + "COMMIT;")
    except FileExistsError:
        return  # another run made it first: open that one
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise JournalError(path, f"cannot create it: {reason}") from None


def _refuse_unreadable(path: str) -> None:
    """Refuse an existing file that cannot be a journal before SQLite treats it as a new one."""
    try:
        with open(path, "rb") as file:
            head = file.read(100)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(path, f"cannot read it: {exc.strerror or exc}") from None
    if not head:
        # SQLite would take an empty file for a new database, and every row as unsent.
        raise JournalError(
            path,
            "the file is empty (0 bytes), so it cannot say which rows were sent; a journal "
            f"is never empty. If a batch ran with it, {_HOW_TO_GO_ON}",
        )
    if len(head) < 100 or not head.startswith(_SQLITE_HEADER):
        raise JournalError(
            path,
            f"not a surveykit journal (not an SQLite database: {len(head)}+ bytes of something "
            "else); give the journal a batch wrote, or a new file name",
        )


def _holder(path: str) -> dict[str, object] | None:
    """Who holds the journal, as recorded in it; None if it cannot be read now."""
    try:
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=1.0)) as db:
            row = db.execute("SELECT value FROM meta WHERE key='holder'").fetchone()
        value = json.loads(row[0]) if row else None
    except (sqlite3.Error, OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _me() -> str:
    return json.dumps(
        {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )


class Journal:
    """A batch's row states in one SQLite file; safe to use from several threads.

    Args:
        path: the SQLite file (created if missing; an existing file must be a whole
            surveykit journal).
        durable: ``synchronous=FULL`` (survives a power cut), not ``OFF`` (survives the
            process being killed).
        timeout: seconds to wait while another run holds the journal; 0 refuses at once,
            None waits as long as it takes.
        clock: what ``updated_at`` is read from (a batch passes the platform's clock, so
            an embedded sandbox's virtual time is recorded); this machine's UTC time by
            default.

    Raises:
        JournalLockedError: another run (in this process or another, by any of the file's
            names) holds the journal.
        JournalError: the file is empty, not a surveykit journal, or damaged (nothing is
            changed in it), or it cannot be created.
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
        _refuse_unreadable(self.path)
        _new_journal(self.path)
        self._held = JournalLock(self.path, timeout=timeout, holder=lambda: _holder(self.path))
        try:
            _refuse_unreadable(self.path)  # again: it may have changed while we waited
            self._db = self._open(durable)
        except BaseException:
            self._held.release()
            raise

    def _open(self, durable: bool) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=OPEN_WAIT
            )
        except sqlite3.Error as exc:
            raise JournalError(self.path, f"cannot open it: {exc}") from None
        try:
            self._verify(db)
            # A journal of an earlier version may be in WAL mode: this folds its log in.
            db.execute("PRAGMA journal_mode=DELETE")
            db.execute(f"PRAGMA synchronous={'FULL' if durable else 'OFF'}")
            db.executescript("BEGIN;" + _COUNTED + _FORMAT + "COMMIT;")  # an earlier version's
            db.execute(
                "INSERT INTO meta VALUES ('holder', ?)"
                " ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (_me(),),
            )
            # From here a reader of the file (a notebook, campaign_status) may delay a
            # commit; it is waited for rather than stopping the batch.
            db.execute(f"PRAGMA busy_timeout={int(WRITE_WAIT * 1000)}")
        except sqlite3.Error as exc:
            db.close()
            if getattr(exc, "sqlite_errorcode", None) in _BUSY:
                raise JournalError(
                    self.path,
                    "in use by another program (an SQLite reader, or a run of an earlier "
                    "surveykit); close it, or wait for that run to end, and try again",
                ) from None
            raise JournalError(self.path, f"damaged ({exc}); {_HOW_TO_GO_ON}") from None
        except BaseException:
            db.close()
            raise
        return db

    def _verify(self, db: sqlite3.Connection) -> None:
        """Refuse a file that is not a whole surveykit journal, before anything is written."""
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"meta", "rows"} <= tables:
            found = ", ".join(sorted(tables)) or "none"
            raise JournalError(
                self.path,
                f"not a surveykit journal (its tables: {found}); give the journal a batch "
                "wrote, or a new file name",
            )
        columns = {r[1] for r in db.execute("PRAGMA table_info(rows)")}
        if not columns >= _COLUMNS:
            missing = ", ".join(sorted(_COLUMNS - columns))
            raise JournalError(
                self.path, f"not a complete surveykit journal (rows lack {missing})"
            )
        problems = [r[0] for r in db.execute("PRAGMA integrity_check(3)")]
        if problems != ["ok"]:
            raise JournalError(
                self.path, f"damaged ({'; '.join(problems)}); {_HOW_TO_GO_ON}"
            )
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN"
                               " ('format', 'version', 'row_count')").fetchall())
        if "format" in meta and (meta["format"] != FORMAT or not meta.get("version", "").isdigit()):
            raise JournalError(
                self.path, f"not a surveykit journal (format {meta['format']!r})"
            )
        if int(meta.get("version", VERSION)) > VERSION:
            raise JournalError(
                self.path,
                f"written by a newer surveykit (journal version {meta['version']}, this one "
                f"reads {VERSION}); upgrade surveykit to resume it",
            )
        stored = int(db.execute("SELECT COUNT(*) FROM rows").fetchone()[0])
        if "row_count" in meta and str(stored) != meta["row_count"]:
            raise JournalError(
                self.path,
                f"damaged: it recorded {meta['row_count']} rows but holds {stored}, so rows "
                f"it knew are lost; {_HOW_TO_GO_ON}",
            )
        strange = db.execute(
            "SELECT row_key, state FROM rows WHERE state NOT IN (?, ?, ?) LIMIT 1",
            (IN_FLIGHT, DONE, PENDING),
        ).fetchone()
        if strange is not None:
            raise JournalError(
                self.path,
                f"damaged: row {strange[0]} has the state {strange[1]!r}, which no run "
                f"writes; {_HOW_TO_GO_ON}",
            )

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        """Run one statement (its own commit) under the lock; a failure names the journal."""
        with self._lock:
            try:
                return self._db.execute(sql, parameters).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(
                    self.path,
                    f"cannot write or read it ({exc}); the batch stopped. Rows it recorded "
                    "as sent are not sent again: fix the cause (free disk space) and run the "
                    "same batch with this journal",
                ) from None

    def _now(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="milliseconds")

    def check_fingerprint(self, fingerprint: dict[str, Any]) -> None:
        """Bind the journal to one batch; refuse a journal written by a different one."""
        text = _canonical(fingerprint)
        rows = self._execute("SELECT value FROM meta WHERE key='fingerprint'")
        if not rows:
            self._execute("INSERT INTO meta VALUES ('fingerprint', ?)", (text,))
            return
        stored = json.loads(rows[0][0])
        differs = sorted(
            key
            for key in set(stored) | set(fingerprint)
            if _canonical(stored.get(key)) != _canonical(fingerprint.get(key))
        )
        if differs:
            raise JournalMismatchError(
                self.path,
                f"belongs to another batch: {', '.join(differs)} differ from this call. Use "
                "the same arguments to resume, or a new journal file.",
            )

    def load(self) -> dict[str, JournalRow]:
        """Every row the journal knows, by key."""
        rows = self._execute(
            "SELECT row_key, destination, text, link, state, outcome, message_id, status,"
            " carrier, reachable, number_type, error, attempts, updated_at FROM rows"
        )
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
        self._execute(
            "INSERT INTO rows (row_key, destination, link, state, updated_at)"
            " VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(row_key) DO UPDATE SET link=excluded.link",
            (key, destination, link, PENDING, self._now()),
        )

    def mark_in_flight(self, key: str, destination: str, text: str, attempts: int) -> None:
        """Record, durably, that this row's request is about to be sent.

        Raises:
            JournalError: it could not be recorded; the row must not be sent.
        """
        self._execute(
            "INSERT INTO rows (row_key, destination, text, state, attempts, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(row_key) DO UPDATE SET destination=excluded.destination,"
            " text=excluded.text, state=excluded.state, outcome=NULL,"
            " attempts=excluded.attempts, updated_at=excluded.updated_at",
            (key, destination, text, IN_FLIGHT, attempts, self._now()),
        )

    def mark_pending(self, key: str) -> None:
        """The platform refused the request without acting on it (429): not in flight."""
        self._execute(
            "UPDATE rows SET state=?, updated_at=? WHERE row_key=?", (PENDING, self._now(), key)
        )

    def record(self, key: str, outcome: str, fields: dict[str, Any], attempts: int) -> None:
        """Record a row's outcome after its answer (or its definite failure)."""
        reachable = fields.get("reachable")
        self._execute(
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
