"""Planning a batch: every row rendered, validated and given a request or a reason, no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeAlias

import pandas as pd
from pydantic import ValidationError

from surveykit._validation import explain
from surveykit.batch._segments import count_segments
from surveykit.batch._template import Template
from surveykit.batch._windows import next_allowed, windows_from
from surveykit.models import (
    CallbackSettings,
    EmailRequest,
    MessageType,
    SendRequest,
    Window,
)
from surveykit.models.messages import E164_DIGITS

Channel = Literal["sms", "whatsapp", "facebook", "whatsapp_template", "email"]

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

LINK_FIELD = "link"
_SKIP_REASONS = {"landline", "unreachable", "voip", "mobile", "unknown"}


WindowLike: TypeAlias = str | Window | Mapping[str, Any]
"""One sending window: ``"Mon-Fri 09:00-18:00"``, a :class:`~surveykit.models.Window`, or
a dict of its fields."""
Windows: TypeAlias = WindowLike | Sequence[WindowLike]
"""The ``windows=`` of a batch: one window or a list of them."""
Skip: TypeAlias = "pd.Series[Any] | str | Collection[str]"
"""The ``skip=`` of a batch: a boolean Series aligned to the rows, or reasons checked
against lookups (``"landline"``, ``{"landline", "unreachable"}``)."""


@dataclass(frozen=True)
class BatchSpec:
    """The arguments of a batch, checked and normalised."""

    channel: Channel
    message: Template | None
    source: str
    destination: str
    reply: bool
    windows: list[Window] | None
    lookup: bool
    test: bool
    when: datetime | None
    timeout: int | None
    survey_id: int | None
    on_behalf: str | None
    to: Template | None = None
    subject: Template | None = None
    content: Template | None = None
    metadata: tuple[str, ...] | Mapping[str, Any] | None = None
    callback: CallbackSettings | None = None
    links: str | None = None
    reuse_links: bool | None = None

    @property
    def is_email(self) -> bool:
        """Whether the batch sends email."""
        return self.channel == "email"

    def templates(self) -> dict[str, Template]:
        """The templates of this batch by argument name."""
        named = {
            "message": self.message,
            "to": self.to,
            "subject": self.subject,
            "content": self.content,
        }
        return {name: tpl for name, tpl in named.items() if tpl is not None}

    def fingerprint(self) -> dict[str, Any]:
        """What must not change between runs that share a journal."""
        return {
            "channel": self.channel,
            "templates": {name: tpl.text for name, tpl in self.templates().items()},
            "source": self.source,
            "destination": self.destination,
            "reply": self.reply,
            "test": self.test,
            "windows": [w.to_wire() for w in self.windows] if self.windows is not None else None,
            "links": self.links,
        }


_CHANNEL_TYPES: dict[str, MessageType] = {
    "sms": MessageType.SMS,
    "whatsapp": MessageType.WHATSAPP,
    "facebook": MessageType.FACEBOOK,
    "whatsapp_template": MessageType.WHATSAPP_TEMPLATE,
}


def make_spec(
    df: pd.DataFrame,
    *,
    message: str | None,
    source: str,
    destination: str | None,
    channel: str,
    reply: bool,
    windows: Windows | None,
    lookup: bool,
    test: bool,
    when: datetime | None,
    timeout: int | None,
    survey_id: int | None,
    on_behalf: str | None,
    to: str | None,
    subject: str | None,
    content: str | None,
    metadata: Sequence[str] | Mapping[str, Any] | None,
    callback: CallbackSettings | Mapping[str, Any] | None,
    links: str | None,
    reuse_links: bool | None,
) -> BatchSpec:
    """Check the batch's arguments against ``df``; raise ValueError naming what is wrong."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if not df.index.is_unique:
        dupes = df.index[df.index.duplicated()].unique()[:5].tolist()
        raise ValueError(f"df: the index must be unique (repeated labels: {dupes})")
    key = channel.strip().lower().replace("-", "_").replace(" ", "_")
    if key not in (*_CHANNEL_TYPES, "email"):
        raise ValueError(
            f"channel: {channel!r} is not one of sms, whatsapp, facebook, whatsapp_template, email"
        )
    if not source or not str(source).strip():
        raise ValueError("source: the sender (number, short code, brand or email route) is needed")
    if when is not None and (when.tzinfo is None or when.utcoffset() is None):
        raise ValueError("when: a timezone-aware datetime is required")
    columns = [str(c) for c in df.columns]
    extra = (LINK_FIELD,) if links else ()
    if links is not None and links not in columns:
        raise ValueError(f"links: no column {links!r}; columns are {columns}")
    parsed_windows = windows_from(windows)
    callback_model = (
        CallbackSettings.model_validate(dict(callback))
        if isinstance(callback, Mapping)
        else callback
    )
    if key == "email":
        # The SendEmail request has none of these: refused by name, never silently dropped.
        refused = {
            "reply": reply or None,
            "timeout": timeout,
            "survey_id": survey_id,
            "on_behalf": on_behalf,
        }
        given = [name for name, value in refused.items() if value is not None]
        if given:
            raise ValueError(
                f"{', '.join(given)}: not for channel='email' (an email request has no "
                f"{'such field' if len(given) == 1 else 'such fields'})"
            )
        dest = destination or "emailAddress"
        to_tpl = Template.parse(to if to is not None else "{" + dest + "}", name="to")
        subject_tpl = Template.parse(subject or "", name="subject") if subject else None
        content_tpl = Template.parse(content or message or "", name="content")
        if subject_tpl is None:
            raise ValueError("subject: an email batch needs a subject template")
        if not content_tpl.text.strip():
            raise ValueError("content: an email batch needs a content (or message) template")
        for name, tpl in (("to", to_tpl), ("subject", subject_tpl), ("content", content_tpl)):
            tpl.check_columns(columns, name=name, extra=extra)
        meta: tuple[str, ...] | Mapping[str, Any] | None
        if metadata is None or isinstance(metadata, Mapping):
            meta = metadata
        else:
            meta = tuple(metadata)
            missing = [m for m in meta if m not in columns]
            if missing:
                raise ValueError(f"metadata: no column {missing}; columns are {columns}")
        return BatchSpec(
            channel="email",
            message=None,
            source=str(source),
            destination=dest,
            reply=False,
            windows=parsed_windows,  # applied through each row's When (_plan_rows)
            lookup=lookup,
            test=test,
            when=when,
            timeout=None,
            survey_id=None,
            on_behalf=None,
            to=to_tpl,
            subject=subject_tpl,
            content=content_tpl,
            metadata=meta,
            callback=callback_model,
            links=links,
            reuse_links=reuse_links,
        )
    if message is None:
        raise ValueError("message: a message template is needed")
    for name, value in (
        ("to", to),
        ("subject", subject),
        ("content", content),
        ("metadata", metadata),
        ("callback", callback),
    ):
        if value is not None:
            raise ValueError(f"{name}: only for channel='email'")
    dest = destination or "mobileNumber"
    if dest not in columns:
        raise ValueError(f"destination: no column {dest!r}; columns are {columns}")
    message_tpl = Template.parse(message, name="message")
    message_tpl.check_columns(columns, name="message", extra=extra)
    return BatchSpec(
        channel=key,  # type: ignore[arg-type]
        message=message_tpl,
        source=str(source),
        destination=dest,
        reply=reply,
        windows=parsed_windows,
        lookup=lookup,
        test=test,
        when=when,
        timeout=timeout,
        survey_id=survey_id,
        on_behalf=on_behalf,
        links=links,
        reuse_links=reuse_links,
    )


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
    start = spec.when or start or datetime.now(UTC)
    mask, reasons = skip if skip is not None else (None, None)
    # Plain lists: one pandas lookup per row would cost more than rendering the row.
    skipped = mask.to_numpy(dtype=bool).tolist() if mask is not None else None
    why = reasons.tolist() if reasons is not None else None
    records = df.to_dict("index")
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
            submit = start + timedelta(seconds=position / rate) if rate else start
            plan.send_at = next_allowed(spec.windows, submit)
            if plan.send_at is None:
                plan.outcome, plan.error = "rejected", "no sending window ever opens"
            elif spec.is_email and plan.send_at != submit and plan.request is not None:
                # An email request has no Window: the platform is told When instead.
                plan.request.when = plan.send_at
        if plan.outcome is not None:
            plan.request = None  # decided without sending: nothing may go out for it
        yield plan


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
        type=None if spec.channel == "sms" else _CHANNEL_TYPES[spec.channel],
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
