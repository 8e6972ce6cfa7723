"""``plan_reminders``: who gets the next wave, and why everyone else does not."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
import pandas as pd

from surveykit.campaign._status import COLUMNS

REASONS: Final = (
    "completed",
    "opted out",
    "undeliverable",
    "no address for the channel",
    "never contacted",
    "contact cap reached",
    "contacted too recently",
)
"""Why a respondent is not reminded, in the order they are checked (the first one holds)."""

_PHONE: Final = r"^[1-9][0-9]{1,14}$"


class Reminders(pd.DataFrame):
    """The rows to remind, ready for ``send_batch``; ``.excluded`` holds every other row.

    A DataFrame (so ``sk.send_batch(client, reminders, ...)`` takes it as it is) indexed
    by ``respondent`` like the status it came from, so a reminder wave's journal keys are
    the respondents: re-running the same reminder with the same journal sends nothing new.
    Columns: ``mobileNumber`` (SMS and chat channels) or ``emailAddress`` (email), then the
    status columns. ``excluded`` is a DataFrame of the other rows with a ``reason`` column
    (one of :data:`REASONS`). Operations that make a new frame keep ``excluded``.
    """

    _metadata = ["excluded"]  # noqa: RUF012 - pandas' own attribute, a list by design

    excluded: pd.DataFrame

    @property
    def _constructor(self) -> type[Reminders]:
        return Reminders

    @property
    def summary(self) -> pd.Series:
        """Rows to remind, and excluded rows per reason (in the order of :data:`REASONS`)."""
        counts = self.excluded["reason"].value_counts()
        values = {"remind": len(self)} | {r: int(counts.get(r, 0)) for r in REASONS}
        return pd.Series(values, name="rows", dtype="int64")


def _instant(now: Any) -> pd.Timestamp:
    if now is None:
        return pd.Timestamp(datetime.now(UTC))
    try:
        stamp = pd.Timestamp(now)
    except (TypeError, ValueError):
        raise ValueError(f"now: {now!r} is not a time") from None
    if stamp.tzinfo is None:
        raise ValueError(f"now: {now!r} has no time zone; give one (e.g. +00:00 or UTC)")
    return stamp.tz_convert(UTC)


def _gap(min_gap: Any) -> pd.Timedelta:
    try:
        gap = pd.Timedelta(min_gap)
    except (TypeError, ValueError):
        raise ValueError(f"min_gap: {min_gap!r} is not a duration such as '48h' or '2D'") from None
    if pd.isna(gap) or gap < pd.Timedelta(0):
        raise ValueError(f"min_gap: {min_gap!r} must be a duration of zero or more")
    return gap


def plan_reminders(
    status: pd.DataFrame,
    *,
    max_contacts: int = 3,
    min_gap: str | pd.Timedelta = "48h",
    now: datetime | pd.Timestamp | str | None = None,
    channel: str = "sms",
    results: pd.DataFrame | None = None,
) -> Reminders:
    """The respondents to remind, shaped for ``send_batch``; ``.excluded`` says why not.

    A respondent is reminded unless, checked in this order (:data:`REASONS`): they
    completed, opted out, are undeliverable, have no address for ``channel`` (a phone
    number for SMS and chat, an email address for email), were never contacted (a
    reminder is not an invitation: resend the first wave's failures with
    ``send_batch(..., only="failed")``), already had ``max_contacts`` messages, or had
    the last one less than ``min_gap`` before ``now``.

    Args:
        status: what :func:`campaign_status` returned.
        max_contacts: the most messages anyone gets, the reminder included.
        min_gap: the least time between two messages to one respondent (``"48h"``).
        now: the time the reminder goes out (timezone-aware); default now. Contact times
            are when each batch recorded its row (the machine's clock), as ``now`` is.
        channel: the channel of the reminder (``sms``, ``whatsapp``, ... or ``email``).
        results: the survey results, for the template's columns (``{firstName}``): their
            columns are joined on ``respondentId`` (those the status has are left out).

    Returns:
        :class:`Reminders`: indexed like ``status``, with ``mobileNumber`` (or
        ``emailAddress`` for email) and the status columns; ``.excluded`` has the other
        rows and a ``reason`` column. Every row of ``status`` is in exactly one of them.
    """
    missing = [c for c in COLUMNS if c not in status.columns]
    if missing:
        raise ValueError(f"status: missing column(s) {missing}; pass sk.campaign_status(...)")
    if isinstance(max_contacts, bool) or not isinstance(max_contacts, int) or max_contacts < 1:
        raise ValueError(
            f"max_contacts: expected a whole number of at least 1, got {max_contacts!r}"
        )
    gap = _gap(min_gap)
    instant = _instant(now)
    email = channel.strip().lower() == "email"
    destination = status["destination"].astype("string")
    address_ok = (
        destination.str.contains("@", regex=False) if email else destination.str.fullmatch(_PHONE)
    ).fillna(False)
    last = pd.to_datetime(status["last_contact"], utc=True)
    recent = (last > instant - gap).fillna(False)
    kind = status["status"].astype("string")
    checks = [
        (kind == "completed").fillna(False),
        (kind == "opted_out").fillna(False) | status["opted_out"].fillna(False).astype(bool),
        (kind == "undeliverable").fillna(False),
        ~address_ok,
        status["contacts"].fillna(0) <= 0,
        status["contacts"].fillna(0) >= max_contacts,
        recent,
    ]
    reason = np.select([c.to_numpy(dtype=bool) for c in checks], list(REASONS), default="")
    remind = reason == ""
    column = "emailAddress" if email else "mobileNumber"
    out = status.loc[remind].copy()
    out.insert(0, column, destination[remind].to_numpy())
    excluded = status.loc[~remind].copy()
    excluded.insert(0, "reason", pd.Categorical(reason[~remind], categories=list(REASONS)))
    if results is not None:
        out = out.join(_template_columns(results, out), how="left")
    reminders = Reminders(out)
    reminders.excluded = excluded
    return reminders


def _template_columns(results: pd.DataFrame, out: pd.DataFrame) -> pd.DataFrame:
    if "respondentId" not in results.columns:
        raise ValueError("results: needs a respondentId column to join on")
    keep = [c for c in results.columns if c not in out.columns and c != "respondentId"]
    table = results.assign(respondentId=results["respondentId"].astype("string"))
    table = table.drop_duplicates("respondentId").set_index("respondentId")[keep]
    table.index.name = out.index.name
    return table
