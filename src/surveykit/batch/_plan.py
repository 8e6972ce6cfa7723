"""Planning a batch: every row rendered, validated and given a request or a reason, no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import pandas as pd
from pydantic import ValidationError

from surveykit.batch._local import (
    SEVERAL_ZONES,
    UNKNOWN_ZONE,
    LocalHours,
    number_zones,
    zone,
    zone_name,
)
from surveykit.batch._spec import AUTO, CHANNEL_TYPES, LINK_FIELD, BatchSpec, Skip
from surveykit.models import EmailRequest, SendRequest
from surveykit.models._validation import explain
from surveykit.models.messages import E164_DIGITS
from surveykit.respondents._numbers import normalize_phone_numbers
from surveykit.rules.sms import count_segments
from surveykit.rules.windows import next_allowed

OUTCOMES = (
    "sent",
    "tested",
    "blocked",
    "opted_out",
    "landline",
    "invalid",
    "rejected",
    "failed",
    "unknown",
    "skipped",
)
"""Every row of a batch ends with exactly one of these outcomes."""

DEFINITE_FAILURES = frozenset({"failed"})
"""Outcomes that ``only="failed"`` sends again: the platform provably did not send them and
did not refuse them by its rules (a 502/503, a connection that never opened, an account
problem such as 401/403, a send the platform tried and failed)."""

_SKIP_REASONS = {"landline", "unreachable", "voip", "mobile", "unknown"}


@dataclass
class RowPlan:
    """One row: what would be sent, or why it is not."""

    label: Any
    key: str
    destination: str | None
    text: str | None = None
    segments: int | None = None
    encoding: str | None = None
    request: SendRequest | EmailRequest | None = None
    outcome: str | None = None  # decided without sending (rejected, invalid, skipped)
    error: str | None = None
    send_at: datetime | None = None
    check: str | None = None  # number_check: "valid" or "unverified" (not for email)
    zone: str | None = None  # the row's local zone(s), when windows are local
    local_time: datetime | None = None  # send_at in the row's (first) zone
    extra: dict[str, Any] = field(default_factory=dict)


def _clean(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, str) and pd.isna(value):
        return None
    return value


def _destination_text(value: Any) -> str | None:
    value = _clean(value)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _validation_reason(exc: ValidationError) -> str:
    # The same sentences the client's own argument checks give: field, problem, form.
    return str(explain(exc))


def skip_mask(
    df: pd.DataFrame, skip: Skip | None, lookups: pd.DataFrame | None
) -> tuple[pd.Series, pd.Series]:
    """Rows to leave out, and why: a boolean mask, or reasons checked against lookups.

    ``skip`` may be a boolean Series aligned to ``df``, or names among ``landline``,
    ``unreachable``, ``voip``, ``mobile`` and ``unknown`` checked against ``lookups`` (the
    frame :func:`surveykit.lookup_frame` returns) or against ``number_type``/``reachable``
    columns of ``df``.
    """
    reasons = pd.Series(pd.NA, index=df.index, dtype="object")
    if skip is None:
        return pd.Series(False, index=df.index), reasons
    if isinstance(skip, pd.Series):
        mask = skip.reindex(df.index).fillna(False).astype(bool)
        reasons[mask] = "skipped by mask"
        return mask, reasons
    names = {skip} if isinstance(skip, str) else set(skip)
    unknown = names - _SKIP_REASONS
    if unknown:
        raise ValueError(f"skip: {sorted(unknown)} not among {sorted(_SKIP_REASONS)}")
    source = lookups if lookups is not None else df
    if "number_type" not in source.columns or "reachable" not in source.columns:
        raise ValueError(
            "skip: needs lookups=sk.lookup_frame(...) or number_type/reachable columns"
        )
    frame = source.reindex(df.index)
    number_type = frame["number_type"].astype("string").str.lower()
    reachable = frame["reachable"]
    mask = pd.Series(False, index=df.index)
    for name in sorted(names):
        if name == "unreachable":
            hit = reachable.eq(False).fillna(False).astype(bool)
        else:
            hit = number_type.eq(name).fillna(False).astype(bool)
        reasons[hit & ~mask] = name
        mask |= hit
    return mask, reasons


def plan_rows(
    df: pd.DataFrame,
    spec: BatchSpec,
    *,
    links: Mapping[str, str] | None = None,
    skip: tuple[pd.Series, pd.Series] | None = None,
    start: datetime | None = None,
    rate: float | None = None,
    keys: Callable[[Any], str],
) -> Iterable[RowPlan]:
    """Render and validate every row; yield one :class:`RowPlan` per row, in order."""
    now = start or datetime.now(UTC)
    base = spec.when or now
    local = (
        LocalHours(spec.windows, spec.platform)
        if spec.zones is not None and spec.windows is not None
        else None
    )
    mask, reasons = skip if skip is not None else (None, None)
    # Plain lists: one pandas lookup per row would cost more than rendering the row.
    skipped = mask.to_numpy(dtype=bool).tolist() if mask is not None else None
    why = reasons.tolist() if reasons is not None else None
    records = df.to_dict("index")
    phones = _phones(df, spec)
    for position, (label, row) in enumerate(records.items()):
        values = {str(k): v for k, v in row.items()}
        key = keys(label)
        link = (links or {}).get(key)
        if spec.links:
            values[LINK_FIELD] = link
        plan = RowPlan(label=label, key=key, destination=None)
        try:
            if spec.is_email:
                assert spec.to is not None
                plan.destination = spec.to.render(values).strip()
            else:
                plan.destination = _destination_text(values.get(spec.destination))
                if plan.destination is not None and phones is not None:
                    _normalised(plan, spec, phones, position)
        except KeyError as missing:
            plan.outcome, plan.error = "rejected", f"missing value for {{{missing.args[0]}}}"
            yield plan
            continue
        if skipped is not None and why is not None and skipped[position]:
            plan.outcome, plan.error = "skipped", f"skip: {why[position]}"
            yield plan
            continue
        if spec.links and link is None:
            url = _clean(row.get(spec.links))
            plan.outcome = "rejected"
            plan.error = (
                f"no short link: {spec.links} is empty"
                if url is None
                else ("no short link registered")
            )
            yield plan
            continue
        if plan.outcome is not None:  # a number refused as written
            yield plan
            continue
        try:
            if spec.is_email:
                _plan_email(plan, spec, values)
            else:
                _plan_message(plan, spec, values)
        except KeyError as missing:
            plan.outcome, plan.error = "rejected", f"missing value for {{{missing.args[0]}}}"
        except ValidationError as exc:
            reason = _validation_reason(exc)
            plan.outcome = "invalid" if reason.startswith("destination") else "rejected"
            plan.error = reason
        if plan.outcome is None:
            offset = timedelta(seconds=position / rate) if rate else timedelta(0)
            row_when = spec.row_when[position] if spec.row_when is not None else None
            submit = base + offset if row_when is None else max(row_when, now + offset)
            if local is not None:
                # A local send's `when` is worked out here: never before now (the platform
                # would send a past `when` at once, whatever the respondent's hour).
                submit = max(submit, now + offset)
            _schedule(plan, spec, submit, row_when, values, local)
        if plan.outcome is not None:
            plan.request = None  # decided without sending: nothing may go out for it
        yield plan


NO_WINDOW = "no sending window ever opens"
UNVERIFIED = "unverified"


def _phones(df: pd.DataFrame, spec: BatchSpec) -> tuple[list[Any], list[Any], list[Any]] | None:
    """The destination column normalised once, as the import does: digits, reasons, checks."""
    if spec.is_email:
        return None

    found = normalize_phone_numbers(df[spec.destination], spec.region)
    return found.digits.tolist(), found.reason.tolist(), found.check.tolist()


def _normalised(
    plan: RowPlan, spec: BatchSpec, phones: tuple[list[Any], list[Any], list[Any]], row: int
) -> None:
    """Give the row its E.164 digits and number_check, or refuse the number as written."""
    digits, reasons, checks = phones
    written = plan.destination
    if reasons[row] is not None or not isinstance(digits[row], str):
        plan.outcome = "invalid"
        plan.error = f"{spec.destination}: {written!r}: {reasons[row] or 'not a phone number'}"
        return
    plan.destination, plan.check = digits[row], checks[row]
    if spec.strict and plan.check == UNVERIFIED:
        plan.outcome = "rejected"
        plan.error = (
            f"{spec.destination}: {written!r} is unverified (possible, but not a valid "
            "number for phonenumbers); strict=True refuses it"
        )


def _schedule(
    plan: RowPlan,
    spec: BatchSpec,
    submit: datetime,
    row_when: datetime | None,
    values: Mapping[str, Any],
    local: LocalHours | None,
) -> None:
    """Give a planned row its send time, its request's When (and local Windows), or a reason."""
    request = plan.request
    assert request is not None
    if row_when is not None:
        request.when = row_when
    if local is None:
        # The platform reads windows on its own clock.
        due = next_allowed(spec.windows, submit.astimezone(spec.platform))
        if due is None:
            plan.outcome, plan.error = "rejected", NO_WINDOW
            return
        plan.send_at = due.astimezone(UTC)
        if spec.is_email and plan.send_at != submit:
            # An email request has no Window: the platform is told When instead.
            request.when = plan.send_at
        return
    zones = _row_zones(spec, plan, values)
    if not zones:
        plan.outcome, plan.error = "rejected", UNKNOWN_ZONE
        return
    plan.zone = ", ".join(zones)
    sent = local.plan(zones, submit)
    if sent is None:
        plan.outcome = "rejected"
        plan.error = SEVERAL_ZONES if len(zones) > 1 else NO_WINDOW
        return
    plan.send_at = sent.when
    plan.local_time = sent.when.astimezone(zone(zones[0]))
    request.when = sent.when
    if isinstance(request, SendRequest):
        request.window = sent.windows


@lru_cache(maxsize=1024)
def _zone_key(name: str) -> str:
    return zone_name(zone(name))


def _row_zones(spec: BatchSpec, plan: RowPlan, values: Mapping[str, Any]) -> tuple[str, ...]:
    assert spec.zones is not None
    kind = spec.zones[0]
    if kind == AUTO:
        return number_zones(plan.destination or "")
    if kind == "column":
        cell = str(values[spec.zones[1]]).strip()
        if cell.lower() == AUTO:  # this row's zone comes from its number
            return number_zones(plan.destination or "")
        return (_zone_key(cell),)
    return (spec.zones[1],)


def _plan_message(plan: RowPlan, spec: BatchSpec, values: dict[str, Any]) -> None:
    assert spec.message is not None
    if plan.destination is None:
        plan.outcome, plan.error = "invalid", f"{spec.destination} is empty"
        return
    if not E164_DIGITS.fullmatch(plan.destination):
        plan.outcome = "invalid"
        plan.error = (
            f"{spec.destination}: {plan.destination!r} is not E.164 digits "
            "(country code and number, no '+' or leading zeros)"
        )
        return
    plan.text = spec.message.render(values)
    if spec.channel == "sms":
        segments = count_segments(plan.text)
        plan.segments, plan.encoding = segments.count, segments.encoding
    plan.request = SendRequest(
        source=spec.source,
        destination=plan.destination,
        message=plan.text,
        reply=spec.reply,
        when=spec.when,
        window=spec.windows,
        lookup=spec.lookup or None,
        test=spec.test or None,
        timeout=spec.timeout,
        type=None if spec.channel == "sms" else CHANNEL_TYPES[spec.channel],
        on_behalf=spec.on_behalf,
        survey_id=spec.survey_id,
    )


_EMAIL_SHAPE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _plan_email(plan: RowPlan, spec: BatchSpec, values: dict[str, Any]) -> None:
    assert spec.subject is not None and spec.content is not None
    if not plan.destination:
        plan.outcome, plan.error = "invalid", "no email address"
        return
    if not _EMAIL_SHAPE.fullmatch(plan.destination):
        plan.outcome, plan.error = "invalid", f"{plan.destination!r} is not an email address"
        return
    subject = spec.subject.render(values)
    plan.text = spec.content.render(values)
    metadata: dict[str, Any] | None = None
    if isinstance(spec.metadata, Mapping):
        metadata = dict(spec.metadata)
    elif spec.metadata:
        metadata = {name: _clean(values.get(name)) for name in spec.metadata}
        metadata = {
            k: (str(v) if not isinstance(v, str | int | float | bool) else v)
            for k, v in metadata.items()
            if v is not None
        }
    plan.extra["subject"] = subject
    plan.request = EmailRequest(
        to=plan.destination,
        from_=spec.source,
        subject=subject,
        content=plan.text,
        when=spec.when,
        test=spec.test or None,
        lookup=spec.lookup or None,
        metadata=metadata or None,
        callback=spec.callback,
    )
