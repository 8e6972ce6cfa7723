"""The opt-out list: numbers (and email addresses) never to message, kept in SQLite.

Every number has one row holding its latest change: ``opted_out`` 1 or 0 and ``changed_at``,
the time of the event or call that set it. A change applies only when it is later than the
stored one, so STOP and UNSTOP events may be applied in any order, any number of times,
and the list ends the same (the latest of them wins); a manual :meth:`OptOutList.add` or
:meth:`OptOutList.remove` is stamped with the current time. WAL and ``BEGIN IMMEDIATE``
make it safe for several processes at once (a listener writing, a batch reading).

Which time an event counts at (see ``docs/reliability.md``):

* the platform's ``Timestamp``, unless it is more than :data:`FUTURE_SLACK` after the time
  surveykit received the event, or before :data:`TIMESTAMP_FLOOR`: then the time of
  receipt (an UNSTOP dated 2099 on an unsigned listener must not outrank every later STOP);
* at equal times a STOP wins over an UNSTOP (the platform's clock is coarse, and event ids
  of two listeners' stores cannot be compared); ``seq``, the event's order in its store,
  breaks the remaining ties, between events of the same kind.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.callbacks._events import events_table
from surveykit.errors import OptOutError
from surveykit.respondents._numbers import address_keys
from surveykit.rules.optout_words import read_optout

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS optouts (
    number     TEXT PRIMARY KEY,
    opted_out  INTEGER NOT NULL,
    reason     TEXT,
    changed_at TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    source     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS review (
    number   TEXT NOT NULL,
    message  TEXT NOT NULL,
    words    TEXT NOT NULL,
    language TEXT NOT NULL,
    at       TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    stamp    TEXT NOT NULL,
    PRIMARY KEY (number, stamp, message)
);
"""
_UPSERT: Final = """
INSERT INTO optouts (number, opted_out, reason, changed_at, seq, source, message)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (number) DO UPDATE SET
    opted_out = excluded.opted_out, reason = excluded.reason,
    changed_at = excluded.changed_at, seq = excluded.seq, source = excluded.source,
    message = excluded.message
WHERE (excluded.changed_at, excluded.opted_out, excluded.seq)
    > (optouts.changed_at, optouts.opted_out, optouts.seq)
"""
_REVIEW_INSERT: Final = """
INSERT OR IGNORE INTO review (number, message, words, language, at, seq, stamp)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""
_OPT_TYPES: Final = {"stop": 1, "unstop": 0}
_WORDS_TYPE: Final = "message"
"""The callback type whose text may be an opt-out in words (an inbound Message)."""
FRAME_COLUMNS: Final = ("number", "reason", "since", "source", "message")
REVIEW_COLUMNS: Final = ("number", "message", "words", "language", "at", "opted_out")

FUTURE_SLACK: Final = pd.Timedelta(minutes=5)
"""How far after its receipt an event's ``Timestamp`` may lie and still count (clock skew)."""

TIMESTAMP_FLOOR: Final = pd.Timestamp("2000-01-01T00:00:00Z")
"""Timestamps before this are not real (``0001-01-01`` is .NET's empty date): receipt counts."""

_EVENT_COLUMNS: Final = (
    "type",
    "source",
    "timestamp",
    "destination",
    "inbound",
    "received_at",
    "event_id",
    "message",
)
_REQUIRED: Final = ("type", "source", "timestamp")


def _stamp(value: datetime | pd.Timestamp) -> str:
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize(UTC) if stamp.tzinfo is None else stamp.tz_convert(UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _now() -> str:
    return _stamp(datetime.now(UTC))


class OptOutList:
    """A suppression list in one SQLite file, fed by STOP and UNSTOP callbacks.

    ``send_batch(..., opt_outs=...)`` and ``preview_batch`` give the numbers on it the
    outcome ``opted_out`` without a request; ``listen(..., opt_outs=...)`` keeps it current.
    Numbers are compared as E.164 digits, so ``+44 7700 900123`` and ``447700900123`` are
    one entry; email addresses in lower case.

    Args:
        path: the SQLite file (created if missing).
        region: how national numbers given to :meth:`add` or ``in`` are read (``GB``).
        timeout: seconds a write waits while another connection holds the file's write
            lock (then ``sqlite3.OperationalError``); reads never wait (WAL).
        words: also read inbound Message callbacks for opt-outs in other words ("please
            stop texting me", "remove me"; see :mod:`surveykit.rules.optout_words`): clear
            ones are opted out (reason and text kept), unsure ones are listed by
            :meth:`review`. False turns the rule off; STOP and UNSTOP apply either way.

    Example:
        >>> optouts = OptOutList("optouts.sqlite")          # doctest: +SKIP
        >>> optouts.add(["+44 7700 900123"], reason="asked by phone")
        >>> "447700900123" in optouts
        True
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        region: str | None = None,
        timeout: float = 30.0,
        words: bool = True,
    ) -> None:
        self.path = Path(path)
        if str(path) in ("", ":memory:"):
            raise ValueError("path: an opt-out list needs a file (other processes read it)")
        if not timeout >= 0:
            raise ValueError(f"timeout: expected seconds >= 0, got {timeout!r}")
        self.region = region
        self.timeout = timeout
        self.words = words
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=timeout
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(optouts)")}
        if "message" not in columns:  # a file from before opt-outs in words
            self._db.execute("ALTER TABLE optouts ADD COLUMN message TEXT")
        self._cache: tuple[tuple[int, int], pa.Array] | None = None

    def __repr__(self) -> str:
        return f"<OptOutList {str(self.path)!r}: {len(self)} opted out>"

    def close(self) -> None:
        """Close the file (safe to call twice)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> OptOutList:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------

    def _keys(self, numbers: Any, what: str) -> list[str]:
        values = pd.Series(
            [numbers]
            if isinstance(numbers, str) or not isinstance(numbers, Iterable)
            else list(numbers),
            dtype=object,
        )
        keys = address_keys(values, self.region)
        bad = keys.isna()
        if bad.any():
            position = int(np.flatnonzero(bad.to_numpy())[0])
            raise OptOutError(
                f"{what}: value {position} ({values.iloc[position]!r}) is not a phone number "
                "or an email address"
                + ("" if self.region else " (national numbers need region=...)")
                + (f"; {int(bad.sum())} such values" if bad.sum() > 1 else "")
            )
        return keys.astype(str).tolist()

    def _write(
        self,
        rows: list[tuple[Any, ...]],
        timeout: float | None = None,
        review: list[tuple[Any, ...]] | None = None,
    ) -> int:
        with self._lock:
            if timeout is not None:
                self._db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            try:
                before = self._db.total_changes
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.executemany(_UPSERT, rows)
                    changed = self._db.total_changes - before
                    if review:
                        self._db.executemany(_REVIEW_INSERT, review)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                return int(changed)
            finally:
                if timeout is not None:
                    self._db.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")

    def add(self, numbers: str | Iterable[Any], *, reason: str | None = None) -> int:
        """Put numbers (or email addresses) on the list; return how many changed.

        Raises:
            OptOutError: a value is neither a possible phone number nor an email address
                (nothing is written then).
        """
        stamp = _now()
        keys = self._keys(numbers, "add")
        return self._write([(k, 1, reason or "added", stamp, 0, "manual", None) for k in keys])

    def remove(self, numbers: str | Iterable[Any], *, reason: str | None = None) -> int:
        """Take numbers off the list (an UNSTOP by hand); return how many changed."""
        stamp = _now()
        keys = self._keys(numbers, "remove")
        return self._write([(k, 0, reason or "removed", stamp, 0, "manual", None) for k in keys])

    def update(self, events: Any, *, timeout: float | None = None) -> int:
        """Apply STOP and UNSTOP callbacks in time order; return how many numbers changed.

        Applying the same events again changes nothing; so does an event older than the
        number's latest change. With ``words`` on (the default), an inbound Message that
        clearly asks to stop in other words counts as a STOP (reason ``opt-out in words``
        and its text kept), and an unsure one is kept for :meth:`review`. Other event
        types are ignored.

        Args:
            events: the listener's events DataFrame, an :class:`~surveykit.callbacks.EventStore`,
                the path of its SQLite file, a ``CallbackPayload`` or a list of them. A
                DataFrame's columns may be snake_case (``type``, ``source``, ...) or the
                payload's own names (``Type``, ``Source``, ``Destination``, ``Timestamp``),
                in either letter case; ``type``, ``source`` and ``timestamp`` are needed,
                ``destination`` where ``inbound`` is false. At equal times a STOP wins.
            timeout: seconds to wait while another connection holds the write lock
                (default: the list's ``timeout``).

        Raises:
            OptOutError: a needed column is missing, or a timestamp cannot be read (the
                column and the value are named; nothing is written then).
            sqlite3.OperationalError: another connection held the file's write lock for
                longer than ``timeout`` seconds (default: the list's ``timeout``).
        """
        frame, review = _opt_events(events, words=self.words)
        if frame.empty and review.empty:
            return 0
        rows = [
            (number, opted, reason, _stamp(at), seq, "callback", message)
            for number, opted, reason, at, seq, message in zip(
                frame["number"].tolist(),
                frame["opted"].tolist(),
                frame["reason"].tolist(),
                frame["at"].tolist(),
                frame["order"].tolist(),
                frame["message"].tolist(),
                strict=True,
            )
        ]
        flagged = [
            (number, message, words, language, _stamp(at), seq, stamp)
            for number, message, words, language, at, seq, stamp in zip(
                review["number"].tolist(),
                review["message"].tolist(),
                review["words"].tolist(),
                review["language"].tolist(),
                review["at"].tolist(),
                review["order"].tolist(),
                review["stamp"].tolist(),
                strict=True,
            )
        ]
        return self._write(rows, timeout, flagged)

    # -- reading ----------------------------------------------------------------------

    def apply(self, payload: Any, event_id: int, *, timeout: float | None = None) -> int:
        """Apply one stored callback (the receiver's hook); ``event_id`` is its store order.

        ``timeout``: seconds to wait for another connection's write lock (default: the
        list's own); the receiver waits briefly, then retries in the background.
        """
        frame = events_table([payload]).assign(event_id=[event_id])
        return self.update(frame, timeout=timeout)

    def __contains__(self, number: object) -> bool:
        keys = address_keys(pd.Series([number], dtype=object), self.region)
        key = keys.iloc[0]
        if pd.isna(key):
            return False
        return self.contains_key(str(key))

    def contains_key(self, key: str) -> bool:
        """Whether this exact key (E.164 digits, or a lower-case address) is opted out.

        The cheap check ``send_batch`` runs for each row just before its request.
        """
        with self._lock:
            row = self._db.execute(
                "SELECT opted_out FROM optouts WHERE number = ?", (key,)
            ).fetchone()
        return bool(row and row[0])

    def check(self, destination: str) -> bool:
        """Whether a batch's destination (E.164 digits or an address) is opted out."""
        if destination.isdigit():
            return self.contains_key(destination)
        return destination in self

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute(
                "SELECT count(*) FROM optouts WHERE opted_out = 1"
            ).fetchone()
        return int(count)

    def _opted_out(self) -> pa.Array:
        """The opted-out keys, re-read only when the file changed since the last read."""
        with self._lock:
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
            stamp = (int(version), int(self._db.total_changes))
            if self._cache is not None and self._cache[0] == stamp:
                return self._cache[1]
            numbers = [
                row[0] for row in self._db.execute("SELECT number FROM optouts WHERE opted_out = 1")
            ]
        array = pa.array(numbers, type=pa.string())
        self._cache = (stamp, array)
        return array

    def contains(self, numbers: pd.Series) -> pd.Series:
        """Which of ``numbers`` are on the list: a boolean Series indexed like it."""
        keys = address_keys(numbers, self.region)
        arrow = pa.array(keys.array, type=pa.string(), from_pandas=True)
        hit = pc.fill_null(pc.is_in(arrow, value_set=self._opted_out()), False)
        return pd.Series(hit.to_numpy(zero_copy_only=False), index=numbers.index, dtype=bool)

    @property
    def frame(self) -> pd.DataFrame:
        """The numbers opted out now: number, reason, since (UTC), source, message.

        ``source`` is ``manual`` or ``callback``; ``message`` the respondent's text when
        the opt-out came from a callback that carried one.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT number, reason, changed_at, source, message FROM optouts"
                " WHERE opted_out = 1 ORDER BY number"
            ).fetchall()
        frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
        for column in ("number", "reason", "source", "message"):
            frame[column] = frame[column].astype("string")
        frame["since"] = pd.to_datetime(frame["since"], utc=True, format="ISO8601")
        return frame

    def review(self) -> pd.DataFrame:
        """Replies that may be opt-outs in other words, for a person to decide; oldest first.

        Columns: ``number``, ``message`` (the reply), ``words`` (what flagged it),
        ``language``, ``at`` (UTC) and ``opted_out`` (whether the number is on the list
        now). Nothing here is opted out by the rule: call :meth:`add` for those that are.

        Example:
            >>> unsure = optouts.review()                    # doctest: +SKIP
            >>> optouts.add(unsure.loc[[0, 3], "number"], reason="reviewed: opt-out")
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT r.number, r.message, r.words, r.language, r.at,"
                " coalesce(o.opted_out, 0) FROM review AS r"
                " LEFT JOIN optouts AS o ON o.number = r.number ORDER BY r.at, r.seq"
            ).fetchall()
        frame = pd.DataFrame(rows, columns=list(REVIEW_COLUMNS))
        for column in ("number", "message", "words", "language"):
            frame[column] = frame[column].astype("string")
        frame["at"] = pd.to_datetime(frame["at"], utc=True, format="ISO8601")
        frame["opted_out"] = frame["opted_out"].astype(bool)
        return frame


def _columns(frame: pd.DataFrame) -> dict[str, Any]:
    """The frame's column for each event field, matched in either letter case.

    ``Type`` or ``type``, ``ReceivedAt`` or ``received_at``: an exact snake_case name wins
    over a differently written one.
    """
    wanted = {name.replace("_", ""): name for name in _EVENT_COLUMNS}
    found: dict[str, Any] = {}
    for column in frame.columns:
        name = wanted.get(str(column).lower().replace("_", ""))
        if name is not None and (name not in found or column == name):
            found[name] = column
    for name in _REQUIRED:
        if name not in found:
            raise OptOutError(
                f"update: the events have no {name!r} column (the payload's "
                f"{name.capitalize()!r}); columns given: {', '.join(map(str, frame.columns))}"
            )
    return found


def _times(frame: pd.DataFrame, column: Any) -> pd.Series:
    """A column of times as UTC datetimes; an unreadable value is an error naming it."""
    values = frame[column]
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return pd.Series(values.dt.tz_convert(UTC))
    parsed: pd.Series = pd.to_datetime(values, utc=True, errors="coerce", format="ISO8601")
    bad = parsed.isna() & values.notna()
    if bad.any():
        position = int(np.flatnonzero(bad.to_numpy())[0])
        raise OptOutError(
            f"update: column {column!r}, row {position}: {values.iloc[position]!r} is not a "
            "date-time (ISO 8601, e.g. 2026-03-01T09:00:00Z)"
        )
    return parsed


def effective_times(timestamp: pd.Series, received: pd.Series) -> pd.Series:
    """When each event counts: its timestamp, or its receipt when the timestamp is not sane.

    Not sane: more than :data:`FUTURE_SLACK` after the receipt, before
    :data:`TIMESTAMP_FLOOR`, or missing.
    """
    sane = (timestamp >= TIMESTAMP_FLOOR) & (timestamp <= received + FUTURE_SLACK)
    return pd.Series(timestamp.where(sane.fillna(False).astype(bool), received))


_CHANGE_COLUMNS = ("number", "opted", "reason", "at", "order", "message")
_REVIEW_COLUMNS = ("number", "message", "words", "language", "at", "order", "stamp")


def _opt_events(events: Any, *, words: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The opt-out changes of ``events``, the latest per number, and the replies to review.

    Changes: number, opted (1 or 0), reason, at, order, message. Review: number, message,
    words, language, at, order, stamp.
    """
    changes = pd.DataFrame({name: [] for name in _CHANGE_COLUMNS})
    review = pd.DataFrame({name: [] for name in _REVIEW_COLUMNS})
    selected = _opt_rows(events_table(events), words=words)
    if selected is None:
        return changes, review
    frame, columns = selected
    table = _opt_table(frame, columns)
    table = table.dropna(subset=["number", "at"])
    table["order"] = table["order"].astype("int64")
    review = table.loc[table["verdict"] == "review", list(_REVIEW_COLUMNS)]
    table = table[table["opted"] >= 0]
    # At equal times a STOP wins, whatever the order of arrival (a stable sort).
    table = table.sort_values(["at", "opted", "order"], kind="stable")
    return table.drop_duplicates("number", keep="last")[list(_CHANGE_COLUMNS)], review


def _opt_rows(frame: pd.DataFrame, *, words: bool) -> tuple[pd.DataFrame, dict[str, Any]] | None:
    """The events that may change the list (STOP, UNSTOP, and replies when ``words``)."""
    if frame.empty and not len(frame.columns):
        return None
    columns = _columns(frame)
    kind = frame[columns["type"]].astype("string").str.lower()
    wanted = kind.isin(list(_OPT_TYPES))
    if words and "message" in columns:
        wanted |= kind == _WORDS_TYPE
    frame = frame[wanted.fillna(False).to_numpy(dtype=bool)]
    return None if frame.empty else (frame, columns)


def _opt_numbers(frame: pd.DataFrame, columns: dict[str, Any]) -> tuple[pd.Series, pd.Series]:
    """Whether each event is inbound, and the respondent's number (its sender if so)."""
    inbound = (
        frame[columns["inbound"]].astype("boolean").fillna(True).astype(bool)
        if "inbound" in columns
        else pd.Series(True, index=frame.index)
    )
    if "destination" in columns:
        return inbound, frame[columns["source"]].where(inbound, frame[columns["destination"]])
    if inbound.all():
        return inbound, frame[columns["source"]]
    raise OptOutError(
        "update: the events have no 'destination' column (the payload's 'Destination'), "
        "needed where 'inbound' is false"
    )


def _opt_table(frame: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    """One row per event: number, opted (1, 0 or -1 for none), reason, times and words."""
    kind = frame[columns["type"]].astype("string").str.lower()
    inbound, number = _opt_numbers(frame, columns)
    now = pd.Timestamp.now(tz=UTC)
    received = (
        _times(frame, columns["received_at"]).fillna(now)
        if "received_at" in columns
        else pd.Series(now, index=frame.index)
    )
    sent_at = _times(frame, columns["timestamp"])
    # Without a store's event ids, ties keep what is stored (so a replay changes nothing).
    order = frame[columns["event_id"]] if "event_id" in columns else pd.Series(0, index=frame.index)
    text = (
        frame[columns["message"]].astype("string")
        if "message" in columns
        else pd.Series(pd.NA, index=frame.index, dtype="string")
    )
    readings = [
        read_optout(None if pd.isna(t) else str(t)) if k == _WORDS_TYPE and sent else None
        for k, t, sent in zip(kind.tolist(), text.tolist(), inbound.tolist(), strict=True)
    ]
    verdict = [None if r is None else r.verdict for r in readings]
    return pd.DataFrame(
        {
            "number": address_keys(number.reset_index(drop=True)),
            "opted": [
                _OPT_TYPES.get(k, 1 if v == "opt_out" else -1)
                for k, v in zip(kind.tolist(), verdict, strict=True)
            ],
            "reason": [
                f"{k.upper()} callback"
                if r is None
                else f"opt-out in words ({r.language}): {r.words}"
                for k, r in zip(kind.tolist(), readings, strict=True)
            ],
            "at": effective_times(sent_at, received).to_numpy(),
            "order": order.to_numpy(),
            "message": [None if pd.isna(t) else str(t) for t in text.tolist()],
            "verdict": verdict,
            "words": [None if r is None else r.words for r in readings],
            "language": [None if r is None else r.language for r in readings],
            # The platform's own time: the same event read again (at receipt, then from the
            # store at the next start) has the same one, whatever time it counts at.
            "stamp": ["" if pd.isna(t) else _stamp(t) for t in sent_at.tolist()],
        }
    )


def as_opt_outs(value: Any) -> OptOutList:
    """An :class:`OptOutList` from itself or its path."""
    if isinstance(value, OptOutList):
        return value
    if isinstance(value, str | os.PathLike):
        return OptOutList(value)
    raise TypeError(f"opt_outs: expected an OptOutList or its path, got {type(value).__name__}")
