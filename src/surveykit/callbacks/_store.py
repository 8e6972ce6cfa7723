"""The event store: every accepted callback, durably, in one SQLite file.

One row per delivery identity (MessageID, Type, Timestamp, Status; the whole content when
the MessageID is ``Unknown`` or missing); a repeated delivery only bumps ``deliveries``.
Rows are never deleted. Writes go through one writer thread that commits in groups (WAL,
``synchronous=FULL``): a caller gets its result only after the commit that holds its
write, so "answered" always means "on disk", while a burst of callbacks shares fsyncs
instead of paying one each.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import pandas as pd

from surveykit.callbacks._rows import DATETIME_DTYPE as DATETIME_DTYPE
from surveykit.callbacks._rows import EVENT_COLUMNS as EVENT_COLUMNS
from surveykit.callbacks._rows import STRING_DTYPE as STRING_DTYPE
from surveykit.callbacks._rows import ReplyState as ReplyState
from surveykit.callbacks._rows import _dumps, _row
from surveykit.callbacks._rows import delivery_identity as delivery_identity
from surveykit.callbacks._rows import events_frame as events_frame
from surveykit.errors import StoreClosedError
from surveykit.models import RESPONSE_TYPES, CallbackPayload
from surveykit.models.callbacks import is_placeholder_id

T = TypeVar("T")

_SCHEMA_VERSION = 2
"""2: events without a real MessageID are keyed by their content (1 keyed them like the rest)."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    event_id         INTEGER PRIMARY KEY,
    identity         TEXT    NOT NULL UNIQUE,
    received_at      TEXT    NOT NULL,
    last_received_at TEXT    NOT NULL,
    deliveries       INTEGER NOT NULL DEFAULT 1,
    method           TEXT    NOT NULL,
    type             TEXT,
    message_id       TEXT,
    timestamp        TEXT,
    status           TEXT,
    source           TEXT,
    destination      TEXT,
    message          TEXT,
    inbound          INTEGER,
    lookup           INTEGER,
    test             INTEGER,
    segments         INTEGER,
    carrier          TEXT,
    reachable        INTEGER,
    number_type      TEXT,
    metadata         TEXT,
    extra            TEXT,
    payload          TEXT    NOT NULL,
    reply_state      TEXT    NOT NULL,
    reply            TEXT,
    error            TEXT
);
"""

_SELECT = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events ORDER BY event_id"
_UPSERT = """
INSERT INTO events (
    identity, received_at, last_received_at, method, type, message_id, timestamp, status,
    source, destination, message, inbound, lookup, test, segments, carrier, reachable,
    number_type, metadata, extra, payload, reply_state
) VALUES (
    :identity, :received_at, :received_at, :method, :type, :message_id, :timestamp, :status,
    :source, :destination, :message, :inbound, :lookup, :test, :segments, :carrier,
    :reachable, :number_type, :metadata, :extra, :payload, :reply_state
)
ON CONFLICT (identity) DO UPDATE SET
    deliveries = deliveries + 1,
    last_received_at = excluded.last_received_at
RETURNING event_id, deliveries, reply_state, reply, error
"""
_MAX_BATCH = 512
_STOP: Final = object()


def _rekey_placeholder_events(conn: sqlite3.Connection) -> None:
    """Give schema-1 events without a real MessageID the identity schema 2 gives them.

    Otherwise a platform retry arriving after the upgrade would be stored as a new event.
    """
    rows = conn.execute("SELECT event_id, message_id, payload FROM events").fetchall()
    for event_id, message_id, payload in rows:
        if is_placeholder_id(message_id):
            identity = delivery_identity(CallbackPayload.model_validate_json(payload))
            conn.execute(
                "UPDATE events SET identity = ? WHERE event_id = ?", (identity, event_id)
            )


@dataclass(frozen=True)
class Recorded:
    """What the store knows about an event right after a delivery was committed."""

    event_id: int
    deliveries: int
    reply_state: ReplyState
    reply: dict[str, Any] | None
    error: str | None

    @property
    def is_new(self) -> bool:
        """Whether this delivery created the event (the first delivery)."""
        return self.deliveries == 1


class EventStore:
    """Append-only SQLite store of callback events, safe to use from any thread.

    Args:
        path: the SQLite file (created if missing). An in-memory database is refused:
            the store needs WAL, and readers in other threads or processes must see it.
        synchronous: SQLite's ``synchronous`` setting; ``"FULL"`` (the default) fsyncs
            every commit, so an event survives a power cut as well as a killed process.

    Example:
        >>> store = EventStore(tmp_path / "events.sqlite")   # doctest: +SKIP
        >>> store.record(CallbackPayload(Type="Receipt", MessageID="MS1")).is_new
        True
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["FULL", "NORMAL", "EXTRA"] = "FULL",
    ) -> None:
        text = os.fspath(path)
        if not text or text == ":memory:" or text.startswith("file::memory:"):
            raise ValueError(
                "db: an in-memory database cannot be shared with readers; give a file path "
                "(listen(db=None) uses a temporary file)"
            )
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous: expected FULL, NORMAL or EXTRA, got {synchronous!r}")
        self._path = Path(text)
        self._writer_conn = self._connect()
        mode = self._writer_conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            self._writer_conn.close()
            raise ValueError(f"db: {text} cannot use write-ahead logging (journal mode {mode})")
        self._writer_conn.execute(f"PRAGMA synchronous={synchronous}")
        self._init_schema()
        self._reader = self._connect()
        self._read_lock = threading.Lock()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._changed = threading.Condition()
        self._version = 0
        self._closed = False
        self._close_lock = threading.Lock()
        self._writer = threading.Thread(
            target=self._write_loop, name=f"surveykit-events-{self._path.name}", daemon=True
        )
        self._writer.start()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        return conn

    def _init_schema(self) -> None:
        conn = self._writer_conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, 1, _SCHEMA_VERSION):
                raise ValueError(
                    f"db: {self._path} holds event store schema {version}; "
                    f"this surveykit reads schema {_SCHEMA_VERSION}"
                )
            conn.execute(_SCHEMA)
            if version == 1:
                _rekey_placeholder_events(conn)
            conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise

    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self._path

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<EventStore {str(self._path)!r} {state}>"

    # -- writing ------------------------------------------------------------------------

    def _submit(self, op: Callable[[sqlite3.Connection], T]) -> concurrent.futures.Future[T]:
        if self._closed:
            raise StoreClosedError(f"the event store {self._path} is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._queue.put((op, future))
        return future

    def _write_loop(self) -> None:
        conn = self._writer_conn
        stopping = False
        while not stopping:
            item = self._queue.get()
            if item is _STOP:
                break
            batch = [item]
            while len(batch) < _MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)
            self._run_batch(conn, batch)
        conn.close()

    def _run_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        try:
            conn.execute("BEGIN IMMEDIATE")
            results = [op(conn) for op, _ in batch]
            conn.execute("COMMIT")
        except Exception as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if len(batch) > 1:
                # One bad write must not sink the others: run them one by one.
                for single in batch:
                    self._run_batch(conn, [single])
                return
            _settle(batch[0][1], exc=exc)
        else:
            for (_, future), result in zip(batch, results, strict=True):
                _settle(future, result=result)
        with self._changed:
            self._version += 1
            self._changed.notify_all()

    def _record_op(
        self, payload: CallbackPayload, method: str, reply_state: ReplyState
    ) -> Callable[[sqlite3.Connection], Recorded]:
        row = _row(payload, method, reply_state)

        def op(conn: sqlite3.Connection) -> Recorded:
            event_id, deliveries, state, reply, error = conn.execute(_UPSERT, row).fetchone()
            return Recorded(
                event_id=int(event_id),
                deliveries=int(deliveries),
                reply_state=state,
                reply=None if reply is None else json.loads(reply),
                error=error,
            )

        return op

    @staticmethod
    def _initial_state(payload: CallbackPayload, reply_state: ReplyState | None) -> ReplyState:
        if reply_state is not None:
            return reply_state
        return "pending" if payload.type in RESPONSE_TYPES else "none"

    def record(
        self,
        payload: CallbackPayload,
        *,
        method: str = "POST",
        reply_state: ReplyState | None = None,
    ) -> Recorded:
        """Store one delivery of a callback; returns once it is committed.

        A new identity adds a row; a known one only counts the delivery. ``reply_state``
        is the state a *new* row starts in (default: ``pending`` for Message and Keyword,
        ``none`` for the rest).
        """
        state = self._initial_state(payload, reply_state)
        return self._submit(self._record_op(payload, method, state)).result()

    async def arecord(
        self,
        payload: CallbackPayload,
        *,
        method: str = "POST",
        reply_state: ReplyState | None = None,
    ) -> Recorded:
        """:meth:`record` for async code: awaits the commit without blocking the loop."""
        state = self._initial_state(payload, reply_state)
        future = self._submit(self._record_op(payload, method, state))
        # Shielded: a client hanging up must not cancel a write that is already queued.
        return await asyncio.shield(asyncio.wrap_future(future))

    @staticmethod
    def _outcome_op(
        event_id: int, reply: dict[str, Any] | None, error: str | None, finish: bool
    ) -> Callable[[sqlite3.Connection], None]:
        def op(conn: sqlite3.Connection) -> None:
            if finish:
                conn.execute(
                    "UPDATE events SET reply = ?, error = ?, reply_state = 'done' "
                    "WHERE event_id = ?",
                    (_dumps(reply), error, event_id),
                )
            else:
                conn.execute("UPDATE events SET error = ? WHERE event_id = ?", (error, event_id))

        return op

    def set_outcome(
        self,
        event_id: int,
        *,
        reply: dict[str, Any] | None = None,
        error: str | None = None,
        finish: bool = True,
    ) -> None:
        """Store the reply (wire form) and/or handler error of an event, committed.

        With ``finish`` the event's reply becomes final (``reply_state='done'``): later
        deliveries of it get this reply and no handler runs again. Without it, only
        ``error`` is written (for status-type events).
        """
        self._submit(self._outcome_op(event_id, reply, error, finish)).result()

    async def aset_outcome(
        self,
        event_id: int,
        *,
        reply: dict[str, Any] | None = None,
        error: str | None = None,
        finish: bool = True,
    ) -> None:
        """:meth:`set_outcome` for async code."""
        future = self._submit(self._outcome_op(event_id, reply, error, finish))
        await asyncio.shield(asyncio.wrap_future(future))

    # -- reading ------------------------------------------------------------------------

    def count(self) -> int:
        """How many events (distinct delivery identities) are stored."""
        with self._read_lock:
            self._check_open()
            return int(self._reader.execute("SELECT count(*) FROM events").fetchone()[0])

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the event store {self._path} is closed")

    def frame(self) -> pd.DataFrame:
        """All events as a DataFrame, in arrival order (see :data:`EVENT_COLUMNS`)."""
        with self._read_lock:
            self._check_open()
            rows = self._reader.execute(_SELECT).fetchall()
        return events_frame(rows)

    def wait_for(self, n: int, timeout: float) -> int:
        """Block until at least ``n`` events are stored or ``timeout`` seconds pass.

        Returns the count seen last (which is below ``n`` on a timeout). Writes by this
        store wake the wait at once; writes by another process are seen within 0.25 s.
        """
        deadline = time.monotonic() + timeout
        while True:
            with self._changed:
                seen = self._version
            count = self.count()
            remaining = deadline - time.monotonic()
            if count >= n or remaining <= 0:
                return count
            with self._changed:
                if self._version == seen:
                    self._changed.wait(min(remaining, 0.25))

    def close(self) -> None:
        """Finish the queued writes, then close the database. Safe to call twice."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._queue.put(_STOP)
        self._writer.join()
        with self._read_lock:
            self._reader.close()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _settle(
    future: concurrent.futures.Future[Any],
    *,
    result: Any = None,
    exc: BaseException | None = None,
) -> None:
    if future.cancelled():
        return
    try:
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    except concurrent.futures.InvalidStateError:  # cancelled meanwhile; the write stands
        pass
