"""What a batch returns: every row's outcome (:class:`BatchResult`) or its preview."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

import pandas as pd

from surveykit.batch._plan import OUTCOMES
from surveykit.errors import BatchInterrupted

SEND_FIELDS = ("message_id", "status", "carrier", "reachable", "number_type", "error")
"""What a row's request (or its lookup) told: the middle columns of the outcome frame."""

COLUMNS = [
    "destination",
    "number_check",
    "text",
    "segments",
    "outcome",
    *SEND_FIELDS,
    "attempts",
    "time",
]

LOCAL_COLUMNS = ["timezone", "local_send_time", "when"]
"""Columns added when windows are local (``timezone=``): the row's zone(s), its send time
there, and the ``when`` its request carried."""


@dataclass
class BatchResult:
    """The outcome of every row of a batch.

    Attributes:
        frame: indexed like the input DataFrame; columns destination, number_check
            (``valid`` or ``unverified``; empty for email and refused numbers), text, segments,
            outcome, message_id, status, carrier, reachable, number_type, error, attempts,
            time; with ``timezone=`` also timezone, local_send_time and when.
        sent_now: how many rows this run got sent: the platform accepted them (outcome
            ``sent``). Rows resumed from a journal are not counted, nor a request the
            platform refused (``blocked``, ``landline``, ``rejected``, ``failed``) or whose
            outcome is ``unknown``.
        journal: the journal's path, if the batch kept one.
        requested_now: how many rows this run sent a request for, whatever the answer:
            ``sent_now`` plus the refused, failed, unknown and tested ones.
    """

    frame: pd.DataFrame
    sent_now: int = 0
    journal: str | None = None
    requested_now: int = 0

    @property
    def summary(self) -> pd.Series:
        """Rows per outcome, in the order of :data:`OUTCOMES`, zeros left out."""
        counts = self.frame["outcome"].value_counts()
        return pd.Series(
            {name: int(counts[name]) for name in OUTCOMES if counts.get(name, 0)},
            name="rows",
            dtype="int64",
        )

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}={count}" for name, count in self.summary.items())
        return (
            f"BatchResult(rows={len(self.frame)}, {parts}, sent_now={self.sent_now}, "
            f"requested_now={self.requested_now})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(str(k))}</td><td>{v}</td></tr>" for k, v in self.summary.items()
        )
        return (
            f"<div><b>Batch</b>: {len(self.frame)} rows, {self.sent_now} sent by this run "
            f"({self.requested_now} requests)"
            f"<table><tr><th>outcome</th><th>rows</th></tr>{rows}</table>"
            f"{self.frame.head(10).to_html()}</div>"
        )


@dataclass
class BatchPreview:
    """What a batch would send, without sending anything.

    Attributes:
        frame: indexed like the input: destination, number_check, text, segments, encoding,
            outcome
            (``ready`` or why not), error, send_at; with ``timezone=`` also timezone (the
            row's zone, or its zones) and local_send_time (send_at in that zone).
    """

    frame: pd.DataFrame
    totals: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return "BatchPreview(" + ", ".join(f"{k}={v!r}" for k, v in self.totals.items()) + ")"

    def _repr_html_(self) -> str:
        items = "".join(
            f"<li>{html.escape(str(k))}: {html.escape(str(v))}</li>" for k, v in self.totals.items()
        )
        return f"<div><b>Batch preview</b><ul>{items}</ul>{self.frame.head(10).to_html()}</div>"


def platform_now(client: Any) -> datetime | None:
    """The platform's time when it is known: an embedded sandbox's clock, else None (now)."""
    embedded = getattr(client, "embedded", None)
    now: datetime | None = embedded.now() if embedded is not None else None
    return now


def platform_clock(client: Any) -> Callable[[], datetime]:
    """The clock a batch records its rows' times on: an embedded sandbox's, else UTC now.

    Contact times in journals and outcome frames are then comparable with the platform's
    own times (results, callbacks), which ``campaign_status`` and ``plan_reminders`` need.
    """
    embedded = getattr(client, "embedded", None)
    if embedded is not None:
        now: Callable[[], datetime] = embedded.now
        return now
    return lambda: datetime.now(UTC)


def platform_zone(client: Any) -> tzinfo:
    """The zone in which the platform reads a Window: the client's ``window_timezone``, else UTC.

    The reference does not say which clock the platform applies to windows; surveykit
    assumes UTC unless the client is told otherwise (``Client(window_timezone=...)``).
    """
    tz: tzinfo | None = getattr(client, "window_timezone", None)
    return tz if tz is not None else UTC


def client_region(client: Any) -> str | None:
    """The client's ``default_region`` for national numbers, if it has one."""
    region: str | None = getattr(client, "default_region", None)
    return region


__all__ = [
    "COLUMNS",
    "LOCAL_COLUMNS",
    "BatchInterrupted",
    "BatchPreview",
    "BatchResult",
    "client_region",
    "platform_clock",
    "platform_now",
    "platform_zone",
]
