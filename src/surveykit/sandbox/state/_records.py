"""Plain records of the sandbox's state, and their JSON form (for the SQLite store).

Every record is a mutable dataclass with ``to_json()`` / ``from_json()``; datetimes are
kept aware (UTC) in memory and written as ISO 8601 strings.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Final, Self


def iso(value: datetime | None) -> str | None:
    """An aware datetime as ISO 8601 (``None`` stays ``None``)."""
    return None if value is None else value.isoformat()


def parse_iso(value: str | None) -> datetime | None:
    """The reverse of :func:`iso`."""
    return None if value is None else datetime.fromisoformat(value)


class Record:
    """Mixin of the records: a JSON form for the store."""

    DATETIMES: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready values."""
        data = dataclasses.asdict(self)  # type: ignore[call-overload]
        for name in self.DATETIMES:
            data[name] = iso(data[name])
        return dict(data)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Rebuild a record written by :meth:`to_json`."""
        values = dict(data)
        for name in cls.DATETIMES:
            values[name] = parse_iso(values.get(name))
        return cls(**values)


@dataclass
class Question(Record):
    """A survey question: the results have one column per question, named by ``key``."""

    key: str
    text: str
    kind: str = "text"
    """``rating`` (1..5), ``nps`` (0..10), ``choice`` (one of ``choices``) or ``text``."""
    choices: list[str] = field(default_factory=list)


@dataclass
class ImportField(Record):
    """One property an import definition accepts in a record."""

    name: str
    kind: str = "text"
    """``text``, ``phone`` (E.164), ``email``, ``date`` (YYYY-MM-DD), ``url`` or ``choice``."""
    required: bool = False
    max_length: int | None = None
    choices: list[str] = field(default_factory=list)


@dataclass
class Survey(Record):
    """A survey with its import definition (both named by ``reference``)."""

    reference: str
    survey_id: int
    name: str
    channel: str
    """``SMS``, ``WhatsApp`` or ``Email``: how respondents are invited."""
    questions: list[Question] = field(default_factory=list)
    import_fields: list[ImportField] = field(default_factory=list)
    source: str = ""
    """The number, short code or email route invitations are sent from."""
    generated_rows: int = 0
    """Respondents drawn by :mod:`surveykit.sandbox.generator` (benchmarks), not stored."""
    generated_seed: int = 0
    generated_nasty: bool = False
    generated_wave: int = 0
    """The generator's wave (0: uniform ratings; 1, 2, ...: a tracking survey's waves)."""
    generated_design: bool = False
    """Whether the generator draws a panel's design columns (region, household, baseWeight)."""

    def to_json(self) -> dict[str, Any]:
        """The survey as JSON-ready values."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Rebuild a survey written by :meth:`to_json`."""
        values = dict(data)
        values["questions"] = [Question(**q) for q in values.get("questions", [])]
        values["import_fields"] = [ImportField(**f) for f in values.get("import_fields", [])]
        return cls(**values)


@dataclass
class Respondent(Record):
    """A respondent of one survey, with the answers given so far."""

    DATETIMES: ClassVar[tuple[str, ...]] = ("added", "invited", "started", "completed", "updated")

    respondent_id: str
    survey_reference: str
    added: datetime
    updated: datetime
    title: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    mobile_number: str | None = None
    email_address: str | None = None
    website: str | None = None
    date_of_birth: str | None = None
    channel: str | None = None
    invited: datetime | None = None
    started: datetime | None = None
    completed: datetime | None = None
    answers: dict[str, str] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)
    """Imported properties the results layout has no column for (kept, not shown)."""


@dataclass
class KeywordRecord(Record):
    """A keyword registered on the account."""

    DATETIMES: ClassVar[tuple[str, ...]] = ("finish_date", "created", "updated")

    keyword: str
    created: datetime
    updated: datetime
    type: str | None = None
    response: str | None = None
    finish_date: datetime | None = None

    def active(self, now: datetime) -> bool:
        """Whether inbound messages can still match it."""
        return self.finish_date is None or now < self.finish_date

    def wire(self) -> dict[str, Any]:
        """The KeywordModel body."""
        return {
            "keyword": self.keyword,
            "type": self.type,
            "response": self.response,
            "finishDate": iso(self.finish_date),
        }


@dataclass
class MessageRecord(Record):
    """A message or email the sandbox accepted (a transaction with an MS MessageID)."""

    DATETIMES: ClassVar[tuple[str, ...]] = ("created", "scheduled_for", "sent_at", "expires_at")

    message_id: str
    channel: str
    """``SMS``, ``WhatsApp``, ``Facebook``, ``WhatsAppTemplate`` or ``Email``."""
    source: str
    destination: str
    text: str
    created: datetime
    status: str
    """``Scheduled`` until it goes out, then ``Sent``, then ``Delivered`` or ``Failed``."""
    subject: str | None = None
    reply: bool = False
    lookup: bool = False
    scheduled_for: datetime | None = None
    sent_at: datetime | None = None
    expires_at: datetime | None = None
    """When the reply window closes (reply messages only)."""
    timeout_minutes: int | None = None
    windows: list[dict[str, str]] = field(default_factory=list)
    segments: int = 1
    carrier: str = "Unknown"
    reachable: bool = True
    number_type: str = "Unknown"
    survey_id: int | None = None
    on_behalf: str | None = None
    metadata: list[dict[str, Any]] = field(default_factory=list)
    callback_urls: list[str] = field(default_factory=list)
    user: str | None = None
    open_for_reply: bool = False
    callback: dict[str, Any] | None = None
    """The email's valid per-request Callback settings (:meth:`CallbackTarget.to_json`)."""
    key: str = ""
    """Where the state keeps the record: the MessageID, or for a message sent in answer to
    a callback (which keeps the original's MessageID) ``<MessageID>/reply-<n>``."""
    reply_to_event: int | None = None
    """For a message sent in answer to a callback: the event (seq) it answered."""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.message_id


@dataclass
class ShortLink(Record):
    """A short link. ``domain`` is None for links on the sandbox's own host."""

    DATETIMES: ClassVar[tuple[str, ...]] = ("created", "last_click")

    code: str
    full_url: str
    created: datetime
    domain: str | None = None
    slashtag: str | None = None
    clicks: int = 0
    last_click: datetime | None = None

    @property
    def key(self) -> str:
        """The store key: domain and code."""
        return f"{self.domain or ''}/{self.code}"


@dataclass
class Event(Record):
    """A messaging event, with the fields of the reference's callback payload.

    Events are recorded as they happen; a background worker of the :class:`Sandbox`
    delivers them to ``callback_urls`` with the settings in ``callback`` (never a request
    handler). ``delivered`` turns true once a receiver answered with a success status.
    ``Message`` is cut to 2,000 characters in the payload, as the reference says.
    """

    DATETIMES: ClassVar[tuple[str, ...]] = ("timestamp",)

    seq: int
    type: str
    timestamp: datetime
    source: str | None = None
    destination: str | None = None
    message: str | None = None
    inbound: bool = False
    lookup: bool = False
    test: bool = False
    status: str | None = None
    segments: int = 0
    """The message's segments; 0 when nothing was sent (a refused destination, a click
    on a link in no known message): the payload's Segments is always an integer."""
    metadata: list[dict[str, Any]] = field(default_factory=list)
    message_id: str | None = None
    carrier: str | None = None
    reachable: bool | None = None
    number_type: str | None = None
    callback_urls: list[str] = field(default_factory=list)
    delivered: bool = False
    callback: dict[str, Any] | None = None
    """The delivery settings in force when the event was recorded
    (:meth:`CallbackTarget.to_json`), or None when there is nowhere to deliver it."""

    def payload(self) -> dict[str, Any]:
        """The callback payload as the platform would send it (PascalCase wire names)."""
        return {
            "Source": self.source,
            "Destination": self.destination,
            "Message": (self.message or "")[:2000],
            "Type": self.type,
            "Timestamp": iso(self.timestamp),
            "Inbound": self.inbound,
            "Lookup": self.lookup,
            "Test": self.test,
            "Status": self.status,
            "Segments": self.segments or 0,  # an event stored before it was an int
            "MetaData": self.metadata,
            "MessageID": self.message_id,
            "Carrier": self.carrier,
            "Reachable": self.reachable,
            "NumberType": self.number_type,
        }


SECRET_MASK: Final = "********"
"""How the control API shows a callback signing secret that is set."""

CALLBACK_ACTIONS: tuple[str, ...] = ("Email", "Sms")
"""The failure actions the sandbox knows (journaled as ``alert`` entries)."""


@dataclass
class CallbackTarget(Record):
    """Where and how events are delivered: the account's callback or an email's Callback.

    ``urls`` are tried in order (fallbacks); each gets ``retries`` attempts (at least one),
    each attempt at most ``timeout_ms``, all attempts of one event at most
    ``total_timeout_ms``. ``method`` is POST (JSON body) or GET (query string). ``actions``
    are the failure alerts (``Email``, ``Sms``) journaled when every attempt failed.
    ``secret``, when set, signs every request (``X-Surveykit-Signature``, the scheme
    ``surveykit.callbacks`` verifies); it is kept out of the repr and the control API.
    """

    urls: list[str]
    method: str = "POST"
    retries: int = 3
    timeout_ms: int = 30_000
    total_timeout_ms: int = 90_000
    actions: list[str] = field(default_factory=list)
    secret: str | None = field(default=None, repr=False)

    def wire(self) -> dict[str, Any]:
        """The settings as the control API shows them (the reference's parameter names).

        ``Secret`` (not a parameter of the reference) is masked: ``"********"`` when set.
        """
        return {
            "Url": list(self.urls),
            "Method": self.method,
            "Retries": self.retries,
            "Timeout": self.timeout_ms,
            "TotalTimeout": self.total_timeout_ms,
            "Action": ",".join(self.actions) or None,
            "ContentType": "application/json",
            "Secret": SECRET_MASK if self.secret else None,
        }


@dataclass
class JournalEntry(Record):
    """One line of the journal: a request received, or a message, email or inbound reply.

    ``kind`` is ``request``, ``message``, ``email``, ``inbound``, ``callback`` (one
    delivery attempt of an event: ``path`` the URL, ``method``, ``status`` the answer's
    status or None, ``body`` ``{"event", "type", "attempt", "error", ...}``) or ``alert``
    (a failure action: ``text`` the action, ``body`` what failed). For requests, ``body``
    is the parsed body (or its text, cut at 64 KiB), ``status`` the response status and
    ``fault`` the injected fault, if any. The access token is never recorded; ``user`` says
    which sandbox user made the request (``admin``, ``restricted`` or None).
    """

    DATETIMES: ClassVar[tuple[str, ...]] = ("at",)

    seq: int
    kind: str
    at: datetime
    method: str | None = None
    path: str | None = None
    query: str | None = None
    user: str | None = None
    body: Any = None
    status: int | None = None
    fault: str | None = None
    message_id: str | None = None
    destination: str | None = None
    source: str | None = None
    text: str | None = None


@dataclass
class WebhookRecord(Record):
    """A webhook of the account, as GET /v3.2/Webhook lists it."""

    name: str
    key: str
    secret: str
    payload: str
    content_type: str = "application/json"
    is_active: bool = True
    events: list[str] = field(default_factory=lambda: ["All"])
    method: str = "POST"
    timeout: int = 30000
    total_timeout: int = 90000
    retries: int = 3
    status: int = 1

    def wire(self) -> dict[str, Any]:
        """The WebHookModel body."""
        return {
            "name": self.name,
            "key": self.key,
            "secret": self.secret,
            "payload": self.payload,
            "contentType": self.content_type,
            "isActive": self.is_active,
            "events": list(self.events),
            "method": self.method,
            "timeout": self.timeout,
            "totalTimeout": self.total_timeout,
            "retries": self.retries,
            "status": self.status,
        }
