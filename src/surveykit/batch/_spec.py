"""A batch's options checked once against its DataFrame: :func:`make_spec` -> BatchSpec."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any, TypeAlias

import pandas as pd

from surveykit.batch._options import Channel
from surveykit.batch._template import Template
from surveykit.errors import ValidationError
from surveykit.models import CallbackSettings, MessageType, Window
from surveykit.rules.windows import preset, windows_from, zone, zone_name

WindowLike: TypeAlias = str | Window | Mapping[str, Any]
"""One sending window: ``"Mon-Fri 09:00-18:00"``, a :class:`~surveykit.models.Window`, or
a dict of its fields."""
Windows: TypeAlias = WindowLike | Sequence[WindowLike]
"""The ``windows=`` of a batch: one window or a list of them."""
Skip: TypeAlias = "pd.Series[Any] | str | Collection[str]"
"""The ``skip=`` of a batch: a boolean Series aligned to the rows, or reasons checked
against lookups (``"landline"``, ``{"landline", "unreachable"}``)."""

LINK_FIELD = "link"
AUTO = "auto"

CHANNEL_TYPES: dict[str, MessageType] = {
    "sms": MessageType.SMS,
    "whatsapp": MessageType.WHATSAPP,
    "facebook": MessageType.FACEBOOK,
    "whatsapp_template": MessageType.WHATSAPP_TEMPLATE,
}
EMAIL_REFUSED = ("reply", "timeout", "survey_id", "on_behalf", "region", "strict")
"""Options a SendEmail request has no field for (``region`` and ``strict`` read numbers)."""
EMAIL_ONLY = ("to", "subject", "content", "metadata", "callback")
"""Options only an email request has."""


@dataclass(frozen=True)
class BatchSpec:
    """The arguments of a batch, checked and normalised.

    ``zones`` is how a row's local zones are found when windows are local: None (windows
    are the platform's), ``("auto",)`` from the number, ``("column", name)`` or
    ``("zone", name)``. ``row_when`` holds a ``when`` column's times, one per row in order.
    """

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
    zones: tuple[str, ...] | None = None
    row_when: tuple[datetime | None, ...] | None = None
    platform: tzinfo = UTC
    region: str | None = None
    strict: bool = False

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


def _aware(value: Any, where: str) -> datetime:
    """A timezone-aware datetime from a datetime, Timestamp or ISO 8601 string."""
    if isinstance(value, str):
        try:
            value = pd.Timestamp(value.strip())
        except ValueError:
            raise ValidationError(
                f"when: {where}{value!r} is not an ISO 8601 time (like "
                "'2026-03-02T09:00:00+00:00') nor a column"
            ) from None
    if not isinstance(value, datetime):
        raise ValidationError(
            f"when: {where}{value!r} is not a time; expected a timezone-aware datetime, a "
            "pandas Timestamp, an ISO 8601 string or a column name"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(
            f"when: a timezone-aware datetime is required; {where}{str(value)!r} has no time "
            "zone (give an offset such as +00:00, or localize it)"
        )
    moment: datetime = value.to_pydatetime() if isinstance(value, pd.Timestamp) else value
    return moment


def _when(
    value: Any, df: pd.DataFrame
) -> tuple[datetime | None, tuple[datetime | None, ...] | None]:
    """``when=``: one time for every row, or a column of per-row times."""
    if value is None:
        return None, None
    if isinstance(value, str) and value in df.columns:
        times: list[datetime | None] = []
        for label, cell in df[value].items():
            if cell is None or (not isinstance(cell, str) and pd.isna(cell)):
                times.append(None)
            else:
                times.append(_aware(cell, f"column {value!r}, row {label!r}: "))
        return None, tuple(times)
    return _aware(value, ""), None


def _zones(value: Any, df: pd.DataFrame, is_email: bool) -> tuple[str, ...] | None:
    """``timezone=``: how each row's zones are found (see :class:`BatchSpec`)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"timezone: {value!r} is not 'auto', a column or a time zone name")
    if value in df.columns:
        for label, cell in df[value].items():
            if cell is None or (not isinstance(cell, str) and pd.isna(cell)):
                raise ValidationError(
                    f"timezone: column {value!r}, row {label!r} is empty; give every row a "
                    "time zone name (or 'auto')"
                )
            if str(cell).strip().lower() == AUTO:
                if is_email:
                    raise ValidationError(
                        f"timezone: column {value!r}, row {label!r}: 'auto' reads the zone "
                        "from a phone number; an email row needs a time zone name"
                    )
                continue
            zone(str(cell), field=f"timezone: column {value!r}, row {label!r}")
        return ("column", value)
    if value.strip().lower() == AUTO:
        if is_email:
            raise ValidationError(
                "timezone: 'auto' reads the zone from a phone number; an email batch needs "
                "a column of zone names or one zone name"
            )
        return (AUTO,)
    try:
        return ("zone", zone_name(zone(value)))
    except ValidationError:
        raise ValidationError(
            f"timezone: {value!r} is neither 'auto', a column (columns are "
            f"{[str(c) for c in df.columns]}) nor a known time zone such as 'Europe/London'"
        ) from None


def _region(value: Any) -> str | None:
    from surveykit.rules.numbers import check_region

    return check_region(None if value is None else str(value), "region")


def make_spec(
    df: pd.DataFrame,
    options: Mapping[str, Any],
    *,
    platform: tzinfo = UTC,
    default_region: str | None = None,
) -> BatchSpec:
    """Check a batch's options against ``df``; raise ValueError naming what is wrong.

    ``platform`` is the zone in which the platform reads a Window (UTC unless the client
    says otherwise); ``default_region`` the client's, for national numbers.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if not df.index.is_unique:
        dupes = df.index[df.index.duplicated()].unique()[:5].tolist()
        raise ValueError(f"df: the index must be unique (repeated labels: {dupes})")
    channel, source = options["channel"], options["source"]
    key = str(channel).strip().lower().replace("-", "_").replace(" ", "_")
    if key not in (*CHANNEL_TYPES, "email"):
        raise ValueError(
            f"channel: {channel!r} is not one of sms, whatsapp, facebook, whatsapp_template, email"
        )
    if not source or not str(source).strip():
        raise ValueError("source: the sender (number, short code, brand or email route) is needed")
    when, row_when = _when(options["when"], df)
    timezone = options["timezone"]
    if timezone is None and (name := preset(options["windows"])) is not None:
        # A preset is about the respondent's local time (see rules/windows.py PRESETS).
        if key == "email":
            raise ValidationError(
                f"windows: {name!r} is read in each respondent's local time; an email batch "
                "needs timezone= (a column of zone names or one zone name)"
            )
        timezone = AUTO
    zones = _zones(timezone, df, key == "email")
    columns = [str(c) for c in df.columns]
    links = options["links"]
    extra = (LINK_FIELD,) if links else ()
    if links is not None and links not in columns:
        raise ValueError(f"links: no column {links!r}; columns are {columns}")
    parsed_windows = windows_from(options["windows"])
    if zones is not None and parsed_windows is None:
        raise ValidationError("timezone: local hours need windows= (none were given)")
    callback = options["callback"]
    callback_model = (
        CallbackSettings.model_validate(dict(callback))
        if isinstance(callback, Mapping)
        else callback
    )
    common = {
        "source": str(source),
        "windows": parsed_windows,
        "lookup": options["lookup"],
        "test": options["test"],
        "when": when,
        "links": links,
        "reuse_links": options["reuse_links"],
        "zones": zones,
        "row_when": row_when,
        "platform": platform,
        "region": None if key == "email" else _region(options["region"] or default_region),
        "strict": bool(options["strict"]),
    }
    if key == "email":
        return _email_spec(options, columns, extra, callback_model, common)
    message = options["message"]
    if message is None:
        raise ValueError("message: a message template is needed")
    for name in EMAIL_ONLY:
        if options[name] is not None:
            raise ValueError(f"{name}: only for channel='email'")
    dest = options["destination"] or "mobileNumber"
    if dest not in columns:
        raise ValueError(f"destination: no column {dest!r}; columns are {columns}")
    message_tpl = Template.parse(message, name="message")
    message_tpl.check_columns(columns, name="message", extra=extra)
    return BatchSpec(
        channel=key,  # type: ignore[arg-type]
        message=message_tpl,
        destination=dest,
        reply=options["reply"],
        timeout=options["timeout"],
        survey_id=options["survey_id"],
        on_behalf=options["on_behalf"],
        **common,
    )


def _email_spec(
    options: Mapping[str, Any],
    columns: list[str],
    extra: tuple[str, ...],
    callback: CallbackSettings | None,
    common: dict[str, Any],
) -> BatchSpec:
    # The SendEmail request has none of these: refused by name, never silently dropped.
    refused = {name: options[name] for name in EMAIL_REFUSED}
    refused["reply"] = refused["reply"] or None
    refused["strict"] = refused["strict"] or None
    given = [name for name, value in refused.items() if value is not None]
    if given:
        raise ValueError(
            f"{', '.join(given)}: not for channel='email' (an email request has no "
            f"{'such field' if len(given) == 1 else 'such fields'})"
        )
    to, subject = options["to"], options["subject"]
    dest = options["destination"] or "emailAddress"
    to_tpl = Template.parse(to if to is not None else "{" + dest + "}", name="to")
    subject_tpl = Template.parse(subject or "", name="subject") if subject else None
    content_tpl = Template.parse(options["content"] or options["message"] or "", name="content")
    if subject_tpl is None:
        raise ValueError("subject: an email batch needs a subject template")
    if not content_tpl.text.strip():
        raise ValueError("content: an email batch needs a content (or message) template")
    for name, tpl in (("to", to_tpl), ("subject", subject_tpl), ("content", content_tpl)):
        tpl.check_columns(columns, name=name, extra=extra)
    metadata = options["metadata"]
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
        destination=dest,
        reply=False,
        timeout=None,
        survey_id=None,
        on_behalf=None,
        to=to_tpl,
        subject=subject_tpl,
        content=content_tpl,
        metadata=meta,
        callback=callback,
        **common,  # windows are applied through each row's When (plan_rows)
    )


__all__ = [
    "AUTO",
    "CHANNEL_TYPES",
    "EMAIL_ONLY",
    "EMAIL_REFUSED",
    "LINK_FIELD",
    "BatchSpec",
    "Skip",
    "WindowLike",
    "Windows",
    "make_spec",
]
