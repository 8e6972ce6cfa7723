"""Callback events as rows: the identity of a delivery, the SQLite row, the DataFrame.

How one payload is keyed (:func:`delivery_identity`), flattened into the ``events`` table's
columns, and read back into a typed DataFrame (:func:`events_frame`). The store
(``_store.py``) only moves these rows in and out of SQLite.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, Final, Literal

import pandas as pd

from surveykit.models import CallbackPayload
from surveykit.models.callbacks import is_placeholder_id

ReplyState = Literal["none", "pending", "done"]
"""Where an event is with its reply: ``none`` (status-type, no reply expected),
``pending`` (a handler is due or running), ``done`` (the reply, if any, is stored)."""

STRING_DTYPE: Final = pd.StringDtype("pyarrow")
DATETIME_DTYPE: Final = pd.DatetimeTZDtype("us", "UTC")


_PAYLOAD_COLUMNS = (
    "type",
    "message_id",
    "timestamp",
    "status",
    "source",
    "destination",
    "message",
    "inbound",
    "lookup",
    "test",
    "segments",
    "carrier",
    "reachable",
    "number_type",
)
_BOOL_COLUMNS = ("inbound", "lookup", "test", "reachable")
_STRING_COLUMNS = (
    "method",
    "type",
    "message_id",
    "status",
    "source",
    "destination",
    "message",
    "carrier",
    "number_type",
    "error",
)
_JSON_COLUMNS = ("metadata", "extra", "reply")

EVENT_COLUMNS: Final = (
    "event_id",
    "received_at",
    *_PAYLOAD_COLUMNS,
    "metadata",
    "extra",
    "method",
    "deliveries",
    "last_received_at",
    "reply",
    "error",
)
"""The columns of an events DataFrame, in order."""


def _utc(value: datetime) -> datetime:
    # The reference promises an offset; a naive time is read as UTC rather than refused.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime) -> str:
    return _utc(value).isoformat(timespec="microseconds")


def _type_name(payload: CallbackPayload) -> str | None:
    return None if payload.type is None else str(payload.type)


def delivery_identity(payload: CallbackPayload) -> str:
    """The key that tells a repeated delivery from a new event.

    With a real MessageID it is (MessageID, Type, Timestamp, Status), with Type in its
    canonical spelling and Timestamp as the UTC instant, so ``...+01:00`` and the same
    moment in ``Z`` match. A payload whose MessageID names no message (missing, empty or
    ``Unknown``, as on failed lookups and replies to no open message) is keyed by a hash
    of its whole content (Source, Destination, Message, Type, Timestamp, Status and every
    other field, with the same canonical Type and Timestamp), so events about different
    numbers are never merged while a redelivery of the same callback still matches.
    """
    stamp = None if payload.timestamp is None else _iso(payload.timestamp)
    if is_placeholder_id(payload.message_id):
        wire = payload.model_dump(mode="json", by_alias=True)
        # Retries are byte-identical, but be as lenient as the MessageID case: canonical
        # Type, UTC Timestamp and one spelling of "no MessageID".
        wire.update(Type=_type_name(payload), Timestamp=stamp, MessageID=None)
        body = json.dumps(wire, sort_keys=True, ensure_ascii=True, default=str)
        return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()
    return json.dumps([payload.message_id, _type_name(payload), stamp, payload.status])


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _row(payload: CallbackPayload, method: str, reply_state: ReplyState) -> dict[str, Any]:
    wire = payload.model_dump(mode="json", by_alias=True)

    def flag(value: bool | None) -> int | None:
        return None if value is None else int(value)

    return {
        "identity": delivery_identity(payload),
        "received_at": _iso(datetime.now(UTC)),
        "method": method,
        "type": _type_name(payload),
        "message_id": payload.message_id,
        "timestamp": None if payload.timestamp is None else _iso(payload.timestamp),
        "status": payload.status,
        "source": payload.source,
        "destination": payload.destination,
        "message": payload.message,
        "inbound": flag(payload.inbound),
        "lookup": flag(payload.lookup),
        "test": flag(payload.test),
        "segments": payload.segments,
        "carrier": payload.carrier,
        "reachable": flag(payload.reachable),
        "number_type": payload.number_type,
        "metadata": _dumps(payload.metadata_dict) if payload.metadata is not None else None,
        "extra": _dumps(payload.extra_fields) if payload.extra_fields else None,
        "payload": _dumps(wire),
        "reply_state": reply_state,
    }


def events_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """Build the events DataFrame from rows selected in :data:`EVENT_COLUMNS` order."""
    columns: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    for row in rows:
        for name, value in zip(EVENT_COLUMNS, row, strict=True):
            columns[name].append(value)
    data: dict[str, Any] = {}
    for name, values in columns.items():
        if name in ("event_id", "deliveries"):
            data[name] = pd.Series(values, dtype="int64")
        elif name in ("received_at", "last_received_at", "timestamp"):
            parsed = pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601")
            data[name] = parsed.astype(DATETIME_DTYPE)
        elif name in _BOOL_COLUMNS:
            data[name] = pd.Series(values, dtype="boolean")
        elif name == "segments":
            data[name] = pd.Series(values, dtype="Int64")
        elif name in _JSON_COLUMNS:
            data[name] = pd.Series(
                [None if v is None else json.loads(v) for v in values], dtype="object"
            )
        else:
            data[name] = pd.Series(values, dtype=STRING_DTYPE)
    return pd.DataFrame(data, columns=list(EVENT_COLUMNS))
