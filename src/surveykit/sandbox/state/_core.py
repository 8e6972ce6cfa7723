"""The core the endpoint groups share: lock, store, clock, counters, journal and events.

Every group of the state (:mod:`._account`, :mod:`._surveys`, :mod:`._keywords`,
:mod:`._messages`, :mod:`._inbound`, :mod:`._links`, :mod:`._respondents`,
:mod:`._schedule`) holds a reference to one :class:`StateCore`, which owns what they all
need: one re-entrant lock (so the state can be used from any thread and any event loop:
uvicorn, the client's portal thread, a notebook), transactions that write each
operation's changes to the store when it ends, the ID counters, the journal and the
events. :class:`~surveykit.sandbox.state.SandboxState` builds the groups and wires them.
HTTP lives in ``_routes``: operations return domain values or raise a
:class:`~surveykit.sandbox.state._errors.Rejection` or a
:class:`~surveykit.sandbox.state._errors.Problem`.
"""

from __future__ import annotations

import bisect
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Final

from surveykit.models.callbacks import is_placeholder_id
from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._account import CALLBACK_USER, Account, User
from surveykit.sandbox.state._clock import DEFAULT_START, Clock, Faults
from surveykit.sandbox.state._records import (
    Event,
    JournalEntry,
    Record,
    iso,
    parse_iso,
)
from surveykit.sandbox.state._store import MemoryStore, SQLiteStore

REFUSED_KEPT: Final = 200
"""How many refused requests the journal keeps (the latest; ``seq`` counts them all)."""


def _nothing() -> None:
    pass


class StateCore:
    """What every endpoint group shares (see the module docstring)."""

    def __init__(
        self,
        *,
        seed: int = 0,
        store: MemoryStore | SQLiteStore | None = None,
        start: datetime = DEFAULT_START,
        realtime: bool = False,
    ) -> None:
        self.seed = seed
        self.lock = threading.RLock()
        self.store: MemoryStore | SQLiteStore = store or MemoryStore()
        self._start = start
        self._realtime = realtime
        self.faults = Faults(seed, self.lock)
        self.account = Account(seed, self.lock)
        self.event_sink: Callable[[Event], None] | None = None
        """Called (under the lock, in event order) with every event that has somewhere to go:
        the :class:`~surveykit.sandbox.runtime._delivery.CallbackDelivery` queue."""
        self.due_sink: Callable[[], None] | None = None
        """Called (under the lock) on a realtime clock when what falls due next may have
        changed (a send held, a reply window opened, the clock moved): the
        :class:`~surveykit.sandbox.runtime._ticker.RealtimeTicker`."""
        self.catch_up: Callable[[], None] = _nothing
        """Run first by every transaction: on a realtime clock, what fell due happens
        (:meth:`~surveykit.sandbox.state._schedule.Schedule.catch_up`)."""
        self.generation = 0
        """Bumped by a reset, so deliveries queued before it are dropped."""
        self.clear()

    def clear(self) -> None:
        """Back to the start time, no journal, no events, the counters at zero."""
        self.clock = Clock(self._start, realtime=self._realtime)
        self.events: list[Event] = []
        self._last_stamps: dict[tuple[str | None, ...], datetime] = {}
        self.journal: list[JournalEntry] = []
        self.refused: deque[JournalEntry] = deque(maxlen=REFUSED_KEPT)
        """Requests refused before their body was read or kept (a ring, memory only)."""
        self.counters: dict[str, int] = {
            "message": 0,
            "link": 0,
            "event": 0,
            "journal": 0,
            "respondent": 0,
        }
        self._ms_prefix = _rules.message_id_prefix(self.seed)

    def save_meta(self) -> None:
        """Write the clock, the counters and the account's settings."""
        if not self.store.persistent:
            return
        self.save(
            "meta",
            "state",
            {"clock": iso(self.clock.now()), "counters": self.counters, **self.account.meta()},
        )

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the clock, counters, account, events and journal from the store."""
        meta = saved.get("meta", {}).get("state", {})
        when = parse_iso(meta.get("clock"))
        if when is not None:
            self.clock.set(when)
        self.counters.update(meta.get("counters", {}))
        self.account.restore(meta, saved.get("webhook", {}))
        self.events = sorted(
            (Event.from_json(v) for v in saved.get("event", {}).values()), key=lambda e: e.seq
        )
        for event in self.events:
            key = _stamp_key(event.type, vars(event))
            last = self._last_stamps.get(key)
            self._last_stamps[key] = event.timestamp if last is None else max(last, event.timestamp)
        self.journal = sorted(
            (JournalEntry.from_json(v) for v in saved.get("journal", {}).values()),
            key=lambda j: j.seq,
        )

    # ----------------------------------------------------------------- store, counters

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the lock for one operation and write its changes when it ends.

        On a realtime clock, what fell due since the last operation happens first (see
        :meth:`catch_up`), so every operation, and every read that goes through here,
        sees the state as of now.
        """
        with self.lock:
            try:
                self.catch_up()
                yield
            finally:
                self.store.commit()

    @property
    def realtime(self) -> bool:
        """Whether the clock also moves with real time."""
        return self._realtime

    def due_changed(self) -> None:
        """Tell the realtime ticker that what falls due next may have changed."""
        if self._realtime and self.due_sink is not None:
            self.due_sink()

    def save(self, kind: str, key: str, value: dict[str, Any] | Record) -> None:
        """Write one record to the store (nothing for the memory store)."""
        if not self.store.persistent:
            return  # the memory store keeps nothing: don't build the JSON form at all
        self.store.put(kind, key, value.to_json() if isinstance(value, Record) else value)

    def next(self, counter: str) -> int:
        """Count one more of ``counter`` (a message, link, event...); the new count."""
        self.counters[counter] += 1
        return self.counters[counter]

    def next_message_id(self) -> str:
        """A new MessageID: ``MS``, four digits from the seed, eight from a counter."""
        return f"MS{self._ms_prefix}{self.next('message'):08d}"

    def now(self) -> datetime:
        """The sandbox time."""
        return self.clock.now()

    # ----------------------------------------------------------------- journal, events

    def record(self, kind: str, **fields: Any) -> JournalEntry:
        """Add a journal entry (the caller holds the lock)."""
        entry = JournalEntry(seq=self.next("journal"), kind=kind, at=self.now(), **fields)
        self.journal.append(entry)
        self.save("journal", f"{entry.seq:012d}", entry)
        return entry

    def refuse(self, method: str, path: str, status: int, size: int | None, reason: str) -> None:
        """Note a refused request: a summary of fixed size, never its body, in a ring.

        ``size`` is the declared Content-Length (or the bytes read before the cap); the
        entry's ``seq`` counts every refused request since the last reset.
        """
        with self.lock:
            seq = self.refused[-1].seq + 1 if self.refused else 1
            self.refused.append(
                JournalEntry(
                    seq=seq,
                    kind="refused",
                    at=self.now(),
                    method=method[:16],
                    path=path[:256],
                    status=status,
                    body={"size": size},
                    text=reason,
                )
            )

    def save_entry(self, entry: JournalEntry) -> None:
        """Write a journal entry again after it changed (its status)."""
        with self.transaction():
            self.save("journal", f"{entry.seq:012d}", entry)

    def emit(
        self,
        type: str,
        at: datetime | None = None,
        *,
        callback: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Event:
        """Record a messaging event with the callback payload's fields, and queue it.

        ``callback`` is the message's own Callback settings; without them the account's
        settings at this moment apply (the account's signing secret applies to both). An
        event with settings goes to :attr:`event_sink`.
        """
        account = self.account.account_callback
        if callback is None and account is not None:
            callback = account.to_json()
        elif callback is not None and account is not None and account.secret:
            # The signing secret is the account's: an email's own Callback is signed too.
            callback = {**callback, "secret": account.secret}
        urls = list(callback["urls"]) if callback else []
        event = Event(
            seq=self.next("event"),
            type=type,
            timestamp=self._distinct_stamp(type, at or self.now(), fields),
            callback_urls=urls,
            callback=callback,
            **fields,
        )
        self.events.append(event)
        self.save("event", f"{event.seq:012d}", event)
        if callback and self.event_sink is not None:
            self.event_sink(event)
        return event

    def _distinct_stamp(self, type: str, stamp: datetime, fields: Mapping[str, Any]) -> datetime:
        """``stamp``, or a microsecond after the last event of the same kind if not later.

        Receivers de-duplicate by (MessageID, Type, Timestamp, Status), and the sandbox clock
        stands still between calls: without this, an answer's receipts (which keep the
        original MessageID) would look like retries of the original's. Events with no real
        MessageID are told apart by Source and Destination too, as receivers do.
        """
        key = _stamp_key(type, fields)
        last = self._last_stamps.get(key)
        if last is not None and stamp <= last:
            stamp = last + timedelta(microseconds=1)
        self._last_stamps[key] = stamp
        return stamp

    def event(self, seq: int) -> Event | None:
        """The event with this sequence number (events are kept in seq order)."""
        with self.lock:
            position = bisect.bisect_left(self.events, seq, key=lambda e: e.seq)
            if position < len(self.events) and self.events[position].seq == seq:
                return self.events[position]
            return None

    def mark_delivered(self, seq: int, generation: int) -> None:
        """Note that a receiver accepted the event (unless the state was reset since)."""
        with self.transaction():
            event = self.event(seq) if generation == self.generation else None
            if event is not None:
                event.delivered = True
                self.save("event", f"{event.seq:012d}", event)


def _stamp_key(type: str, fields: Mapping[str, Any]) -> tuple[str | None, ...]:
    """What two events share when a receiver could take one for a retry of the other."""
    message_id = fields.get("message_id")
    status = fields.get("status")
    if is_placeholder_id(message_id):
        return (type, status, None, fields.get("source"), fields.get("destination"))
    return (type, status, message_id)


__all__ = ["CALLBACK_USER", "REFUSED_KEPT", "StateCore", "User"]
