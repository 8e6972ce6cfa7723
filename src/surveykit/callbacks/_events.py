"""The one reader of stored callback events: a frame, an EventStore, its file, or payloads.

Whoever needs the events a listener stored (the opt-out list, the campaign status) reads
them here, so the event store's SQLite schema is known only inside ``callbacks/``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias, runtime_checkable

import pandas as pd

from surveykit.callbacks._store import EventStore
from surveykit.models.callbacks import CallbackPayload

Events: TypeAlias = (
    pd.DataFrame | EventStore | str | os.PathLike[str] | CallbackPayload | Iterable[CallbackPayload]
)
"""Callback events: the listener's DataFrame, an EventStore, its SQLite path, or payloads."""


@runtime_checkable
class OptOutSink(Protocol):
    """What the receiver feeds STOP and UNSTOP callbacks to: an :class:`~surveykit.OptOutList`.

    The opt-out list sits above ``callbacks/`` (it reads the events stored here); the
    receiver knows it only by these two methods.
    """

    def apply(
        self, payload: CallbackPayload, event_id: int, *, timeout: float | None = None
    ) -> int:
        """Apply one stored callback; ``event_id`` is its order in the store.

        ``timeout``: seconds to wait while the list is locked; then raise
        ``sqlite3.OperationalError``, and the receiver retries later.
        """
        ...

    def update(self, events: Any) -> int:
        """Apply the STOP and UNSTOP events of ``events`` (here: the receiver's store)."""
        ...


def events_table(events: Any) -> pd.DataFrame:
    """Callback events as a DataFrame from a frame, an EventStore, its path or payloads."""
    if isinstance(events, pd.DataFrame):
        return events
    if isinstance(events, EventStore):
        return events.frame()
    if isinstance(events, str | os.PathLike):
        return read_event_file(Path(events))
    if isinstance(events, CallbackPayload):
        events = [events]
    if isinstance(events, Iterable):
        payloads = list(events)
        for position, payload in enumerate(payloads):
            if not isinstance(payload, CallbackPayload):
                raise TypeError(
                    f"events: item {position} is a {type(payload).__name__}, not a CallbackPayload"
                )
        return pd.DataFrame(
            {
                "type": [None if p.type is None else str(p.type) for p in payloads],
                "message_id": [p.message_id for p in payloads],
                "status": [p.status for p in payloads],
                "source": [p.source for p in payloads],
                "destination": [p.destination for p in payloads],
                "message": [p.message for p in payloads],
                "inbound": pd.array([p.inbound for p in payloads], dtype="boolean"),
                "timestamp": pd.to_datetime([p.timestamp for p in payloads], utc=True),
            }
        )
    raise TypeError(
        "events: expected the listener's DataFrame, an EventStore, its SQLite path or "
        f"callback payloads, got {type(events).__name__}"
    )


_EVENT_FIELDS: Final = (
    "event_id",
    "received_at",
    "type",
    "message_id",
    "timestamp",
    "status",
    "source",
    "destination",
    "message",
    "inbound",
)


def read_event_file(path: Path) -> pd.DataFrame:
    """The columns of an event store's file a campaign needs, read-only."""
    if not path.is_file():
        raise FileNotFoundError(f"events: no event store file {path}")
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        with sqlite3.connect(uri, uri=True) as db:
            rows = db.execute(
                f"SELECT {', '.join(_EVENT_FIELDS)} FROM events ORDER BY event_id"
            ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"events: {path} is not an event store ({exc})") from None
    frame = pd.DataFrame(rows, columns=list(_EVENT_FIELDS))
    for column in ("type", "message_id", "status", "source", "destination", "message"):
        frame[column] = frame[column].astype("string")
    frame["inbound"] = frame["inbound"].astype("boolean")
    for column in ("received_at", "timestamp"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


__all__ = ["Events", "OptOutSink", "events_table", "read_event_file"]
