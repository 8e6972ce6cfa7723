"""The inputs of a campaign status as plain tables: sends per wave, events, results."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeAlias

import pandas as pd

from surveykit.batch import BatchResult
from surveykit.callbacks._events import events_table
from surveykit.respondents._numbers import address_keys

SEND_COLUMNS: Final = ("destination", "outcome", "message_id", "time")
"""What a send frame must hold (a ``BatchResult.frame`` has them)."""


def _journal_rows(path: Path) -> tuple[pd.DataFrame, str | None]:
    """A batch journal's rows and channel, read-only (no run lock, nothing written).

    A row still ``in_flight`` was interrupted at an unknown point: its outcome is
    ``unknown``, as ``send_batch`` reports it when resuming.
    """
    if not path.is_file():
        raise FileNotFoundError(f"sends: no journal file {path}")
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        with sqlite3.connect(uri, uri=True) as db:
            rows = db.execute(
                "SELECT destination, state, outcome, message_id, updated_at FROM rows"
            ).fetchall()
            meta = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"sends: {path} is not a batch journal ({exc})") from None
    frame = pd.DataFrame(rows, columns=["destination", "state", "outcome", "message_id", "time"])
    # A row with only a registered short link (state pending) never had a request.
    frame = frame[frame["state"] != "pending"]
    frame["outcome"] = frame["outcome"].where(frame["state"] == "done", "unknown")
    channel = json.loads(meta[0]).get("channel") if meta else None
    return frame.drop(columns="state"), channel


def _one_wave(source: Any, label: str) -> tuple[pd.DataFrame, str | None]:
    channel: str | None = None
    if isinstance(source, BatchResult):
        frame = source.frame
    elif isinstance(source, pd.DataFrame):
        frame = source
    elif isinstance(source, str | os.PathLike):
        frame, channel = _journal_rows(Path(source))
    else:
        raise TypeError(
            f"sends[{label!r}]: expected a BatchResult, its frame or a journal path, "
            f"got {type(source).__name__}"
        )
    missing = [c for c in SEND_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"sends[{label!r}]: missing column(s) {missing}; pass BatchResult.frame")
    plain = frame.reset_index(drop=True)
    destination = plain["destination"].astype("string")
    table = pd.DataFrame(
        {
            # An address with no key (``abc``) is kept as written: it still names the row.
            "destination": address_keys(destination).fillna(destination.str.strip()),
            "outcome": plain["outcome"].astype("string"),
            "message_id": plain["message_id"].astype("string"),
            "time": pd.to_datetime(plain["time"], utc=True, format="ISO8601"),
        }
    )
    return table, channel


SendSource: TypeAlias = BatchResult | pd.DataFrame | str | os.PathLike[str]
"""One wave's sends: a ``BatchResult``, its ``frame``, or a journal path."""
Sends: TypeAlias = SendSource | Sequence[SendSource] | Mapping[str, SendSource]
"""Every wave's sends: one source, a list of them (``wave1``, ``wave2``...) or a dict."""


def send_table(sends: Any) -> tuple[pd.DataFrame, dict[str, str | None]]:
    """Every send row of every wave, and each wave's channel when a journal says it.

    ``sends`` is one source, a list of them (waves ``wave1``, ``wave2``... in order) or a
    mapping of wave label to source.
    """
    if sends is None:
        items: list[tuple[str, Any]] = []
    elif isinstance(sends, Mapping):
        items = [(str(label), source) for label, source in sends.items()]
    elif isinstance(sends, list | tuple):
        items = [(f"wave{n}", source) for n, source in enumerate(sends, start=1)]
    else:
        items = [("wave1", sends)]
    tables, channels = [], {}
    for label, source in items:
        table, channels[label] = _one_wave(source, label)
        table.insert(0, "wave", label)
        tables.append(table)
    if not tables:
        empty = pd.DataFrame(
            {
                "wave": pd.Series(dtype="string"),
                "destination": pd.Series(dtype="string"),
                "outcome": pd.Series(dtype="string"),
                "message_id": pd.Series(dtype="string"),
                "time": pd.Series(dtype="datetime64[us, UTC]"),
            }
        )
        return empty, channels
    table = pd.concat(tables, ignore_index=True)
    table["wave"] = table["wave"].astype("string")
    return table, channels


EVENT_FIELDS: Final = (
    "type",
    "message_id",
    "status",
    "source",
    "destination",
    "inbound",
    "timestamp",
)


def event_table(events: Any) -> pd.DataFrame:
    """The events' fields a campaign status needs, from any events source."""
    if events is None:
        frame = pd.DataFrame({name: pd.Series(dtype="string") for name in EVENT_FIELDS})
        frame["inbound"] = frame["inbound"].astype("boolean")
        frame["timestamp"] = frame["timestamp"].astype("datetime64[us, UTC]")
        return frame
    frame = events_table(events)
    missing = [
        c for c in ("type", "message_id", "status", "source", "destination") if c not in frame
    ]
    if missing:
        raise ValueError(f"events: missing column(s) {missing}; pass listener.events")
    return frame
