"""The sandbox's state: plain records, the platform's rules applied to them, and a clock.

Like a moto backend: every operation is a method that takes validated values and returns
the answer's body, or raises a :class:`~surveykit.sandbox._errors.SandboxHTTPError`.
HTTP lives in ``_routes``. One re-entrant lock guards everything, so the state can be used
from any thread and any event loop (uvicorn, the client's portal thread, a notebook).
"""

from __future__ import annotations

import bisect
import fnmatch
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from surveykit._signing import signing_key
from surveykit.models import CallbackSettings, EmailRequest, SendRequest, UrlRequest
from surveykit.models.callbacks import is_placeholder_id, metadata_list
from surveykit.models.imports import RESPONDENT_FIELDS
from surveykit.sandbox import _rules
from surveykit.sandbox._data import SampleData, load_sample_data
from surveykit.sandbox._errors import Problem, TextError, validation
from surveykit.sandbox._records import (
    CALLBACK_ACTIONS,
    CallbackTarget,
    Event,
    JournalEntry,
    KeywordRecord,
    MessageRecord,
    Record,
    Respondent,
    ShortLink,
    Survey,
    WebhookRecord,
    iso,
    parse_iso,
)
from surveykit.sandbox._store import MemoryStore, SQLiteStore

DEFAULT_START: Final = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
"""Where the sandbox clock starts: Monday 2 March 2026, 09:00 UTC."""

MAX_IMPORT_RECORDS: Final = 10_000
"""The largest Data/Import list the sandbox takes in one request (the reference: not shown)."""
MAX_LINKS: Final = 1_000
"""The largest RegisterList the sandbox takes in one request (the reference: not shown)."""
DEFAULT_REPLY_TIMEOUT: Final = 4320
"""Minutes a reply message stays open (the reference's default: 3 days)."""

_CHANNELS: Final = {0: "SMS", 1: "WhatsApp", 2: "Facebook", 3: "WhatsAppTemplate"}


@dataclass(frozen=True)
class User:
    """A sandbox user: an access token and the roles of its account."""

    name: str
    token: str
    roles: frozenset[str]
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def can_email(self) -> bool:
        """Whether the account holds one of the roles SendEmail needs."""
        return bool(self.roles & {"sa", "Admin", "Organization"})


@dataclass
class Fault:
    """A fault injected on matching requests.

    ``route`` is a glob on the path (``/v3.2/Message``, ``/v3.2/Message/*``, ``*``) and
    ``method`` an HTTP method or None for any. On a match (with probability ``rate``): wait
    ``latency`` seconds, then either answer ``status`` (with a ProblemDetails body and,
    for 429/503, ``Retry-After``), or drop the connection ``before`` or ``after``
    processing the request. ``times`` limits how many requests it hits.
    """

    id: int
    route: str = "*"
    method: str | None = None
    status: int | None = None
    rate: float = 1.0
    latency: float = 0.0
    drop: str | None = None
    times: int | None = None
    retry_after: float | None = None
    hits: int = 0

    def matches(self, method: str, path: str) -> bool:
        """Whether the fault applies to this request."""
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return fnmatch.fnmatchcase(path, self.route)

    def wire(self) -> dict[str, Any]:
        """The fault as the control API shows it."""
        return {
            "id": self.id,
            "route": self.route,
            "method": self.method,
            "status": self.status,
            "rate": self.rate,
            "latency": self.latency,
            "drop": self.drop,
            "times": self.times,
            "retryAfter": self.retry_after,
            "hits": self.hits,
        }


class Clock:
    """The sandbox clock: fixed until advanced (or, if ``realtime``, also moving with time).

    The clock only tells the time; :meth:`SandboxState.catch_up` and the realtime ticker
    make what falls due happen.
    """

    def __init__(self, start: datetime = DEFAULT_START, *, realtime: bool = False) -> None:
        self._start = start
        self._realtime = realtime
        self._t0 = time.monotonic()

    def now(self) -> datetime:
        """The current sandbox time (UTC)."""
        if self._realtime:
            return self._start + timedelta(seconds=time.monotonic() - self._t0)
        return self._start

    def set(self, when: datetime) -> None:
        """Move the clock to ``when``."""
        self._start = when
        self._t0 = time.monotonic()


def _send_body(
    message_id: str, status: str, carrier: str, reachable: bool, number_type: str
) -> dict[str, Any]:
    return {
        "MessageID": message_id,
        "Status": status,
        "Carrier": carrier,
        "Reachable": reachable,
        "NumberType": number_type,
    }


class SandboxState:
    """Everything the simulated platform knows, and the operations of its routes."""

    def __init__(
        self,
        *,
        seed: int = 0,
        store: MemoryStore | SQLiteStore | None = None,
        sample_data: bool = True,
        start: datetime = DEFAULT_START,
        realtime: bool = False,
    ) -> None:
        self.seed = seed
        self.lock = threading.RLock()
        self.store: MemoryStore | SQLiteStore = store or MemoryStore()
        self.sample_data = sample_data
        self._start = start
        self._realtime = realtime
        self.users: dict[str, User] = {}
        self.faults: list[Fault] = []
        self._fault_ids = 0
        self._rng = random.Random(seed)
        self.account_callback: CallbackTarget | None = None
        self.event_sink: Callable[[Event], None] | None = None
        """Called (under the lock, in event order) with every event that has somewhere to go:
        the :class:`~surveykit.sandbox._delivery.CallbackDelivery` queue."""
        self.due_sink: Callable[[], None] | None = None
        """Called (under the lock) on a realtime clock when what falls due next may have
        changed (a send held, a reply window opened, the clock moved): the
        :class:`~surveykit.sandbox._ticker.RealtimeTicker`."""
        self.generation = 0
        """Bumped by :meth:`reset`, so deliveries queued before it are dropped."""
        self._init_empty()
        saved = self.store.load()
        with self.transaction():
            if saved is None:
                self._seed()
            else:
                self._restore(saved)

    # ----------------------------------------------------------------- set-up

    def _init_empty(self) -> None:
        self.clock = Clock(self._start, realtime=self._realtime)
        self.account_name = "Sandbox account"
        self.email_routes: dict[str, dict[str, str]] = {}
        self.surveys: dict[str, Survey] = {}
        self.respondents: dict[str, Respondent] = {}
        self.by_survey: dict[str, list[str]] = {}
        self.keywords: dict[str, KeywordRecord] = {}
        self.messages: dict[str, MessageRecord] = {}
        self.scheduled: list[tuple[datetime, str]] = []
        self.open_replies: dict[str, list[str]] = {}
        self.links: dict[str, ShortLink] = {}
        self.stop_list: dict[str, datetime] = {}
        self.webhooks: list[WebhookRecord] = []
        self.events: list[Event] = []
        self._last_stamps: dict[tuple[str | None, ...], datetime] = {}
        self.journal: list[JournalEntry] = []
        self.counters: dict[str, int] = {
            "message": 0,
            "link": 0,
            "event": 0,
            "journal": 0,
            "respondent": 0,
        }
        self.token_metadata: dict[str, list[dict[str, str]]] = {}
        self._ms_prefix = _rules.message_id_prefix(self.seed)
        self._make_users()

    def _make_users(self) -> None:
        admin_meta = tuple(
            self.token_metadata.get("admin", [{"tokenName": "sandbox-admin"}])[0].items()
        )
        user_meta = tuple(
            self.token_metadata.get("restricted", [{"tokenName": "sandbox-analyst"}])[0].items()
        )
        admin = User(
            "admin", _rules.token_for(self.seed, "admin"), frozenset({"Admin"}), admin_meta
        )
        restricted = User(
            "restricted", _rules.token_for(self.seed, "analyst"), frozenset({"Analyst"}), user_meta
        )
        self.users = {admin.token: admin, restricted.token: restricted}

    def _seed(self) -> None:
        data = load_sample_data() if self.sample_data else SampleData.empty()
        self.account_name = data.account_name
        self.email_routes = {name.lower(): route for name, route in data.email_routes.items()}
        self.token_metadata = data.token_metadata
        self._make_users()
        for survey in data.surveys:
            self._put_survey(survey)
        for respondent in data.respondents:
            self._put_respondent(respondent)
            self.counters["respondent"] += 1
        for keyword in data.keywords:
            self.keywords[keyword.keyword.upper()] = keyword
            self._save("keyword", keyword.keyword.upper(), keyword)
        for hook in data.webhooks:
            self.webhooks.append(hook)
            self._save("webhook", hook.key, hook)
        for address in data.stop_list:
            self.stop_list[address.lower()] = self.clock.now()
            self._save("stop", address.lower(), {"at": iso(self.clock.now())})
        self._save_meta()

    def _save_meta(self) -> None:
        if not self.store.persistent:
            return
        self._save(
            "meta",
            "state",
            {
                "clock": iso(self.clock.now()),
                "counters": self.counters,
                "account": self.account_name,
                "emailRoutes": self.email_routes,
                "tokenMetadata": self.token_metadata,
                "callbackUrl": self.callback_url,
                "callback": self.account_callback.to_json() if self.account_callback else None,
            },
        )

    def _restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        meta = saved.get("meta", {}).get("state", {})
        when = parse_iso(meta.get("clock"))
        if when is not None:
            self.clock.set(when)
        self.counters.update(meta.get("counters", {}))
        self.account_name = meta.get("account", self.account_name)
        self.email_routes = meta.get("emailRoutes", {})
        self.token_metadata = meta.get("tokenMetadata", {})
        if meta.get("callback"):
            self.account_callback = CallbackTarget.from_json(meta["callback"])
        elif meta.get("callbackUrl"):
            self.account_callback = CallbackTarget(urls=[meta["callbackUrl"]])
        self._make_users()
        for value in saved.get("survey", {}).values():
            survey = Survey.from_json(value)
            self.surveys[survey.reference.lower()] = survey
            self.by_survey.setdefault(survey.reference.lower(), [])
        respondents = [Respondent.from_json(v) for v in saved.get("respondent", {}).values()]
        respondents.sort(key=lambda r: (r.survey_reference.lower(), r.respondent_id))
        for respondent in respondents:
            self.respondents[respondent.respondent_id] = respondent
            self.by_survey.setdefault(respondent.survey_reference.lower(), []).append(
                respondent.respondent_id
            )
        for value in saved.get("keyword", {}).values():
            keyword = KeywordRecord.from_json(value)
            self.keywords[keyword.keyword.upper()] = keyword
        messages = sorted(
            (MessageRecord.from_json(v) for v in saved.get("message", {}).values()),
            key=lambda m: m.message_id,
        )
        messages.sort(key=lambda m: (m.created, m.key))
        for message in messages:
            self.messages[message.key] = message
            if message.status == "Scheduled" and message.scheduled_for is not None:
                bisect.insort(self.scheduled, (message.scheduled_for, message.key))
            if message.open_for_reply:
                self.open_replies.setdefault(message.destination, []).append(message.key)
        for value in saved.get("link", {}).values():
            link = ShortLink.from_json(value)
            self.links[link.key] = link
        for address, value in saved.get("stop", {}).items():
            self.stop_list[address] = parse_iso(value["at"]) or self.clock.now()
        self.webhooks = [WebhookRecord.from_json(v) for v in saved.get("webhook", {}).values()]
        self.webhooks.sort(key=lambda w: w.key)
        self.events = sorted(
            (Event.from_json(v) for v in saved.get("event", {}).values()), key=lambda e: e.seq
        )
        for event in self.events:
            key = _stamp_key(event.type, vars(event))
            last = self._last_stamps.get(key)
            self._last_stamps[key] = event.timestamp if last is None else max(last, event.timestamp)
        self.journal = sorted(
            (JournalEntry.from_json(v) for v in saved.get("journal", {}).values()),
            key=lambda j: j.seq,
        )

    def reset(self) -> None:
        """Forget everything: back to the sample data, the start time and no faults."""
        with self.transaction():
            self.store.clear()
            self.faults.clear()
            self._rng = random.Random(self.seed)
            self.account_callback = None
            self.generation += 1
            self._init_empty()
            self._seed()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the lock for one operation and write its changes when it ends.

        On a realtime clock, what fell due since the last operation happens first (see
        :meth:`catch_up`), so every operation, and every read that goes through here,
        sees the state as of now.
        """
        with self.lock:
            try:
                self.catch_up()
                yield
            finally:
                self.store.commit()

    @property
    def realtime(self) -> bool:
        """Whether the clock also moves with real time."""
        return self._realtime

    def catch_up(self) -> None:
        """On a realtime clock, let what fell due happen: held sends go out, windows close.

        A fixed clock only moves with :meth:`advance`, which does this itself.
        """
        if not self._realtime:
            return
        with self.lock:
            if self._run_until(self.now()):
                self._save_meta()
                self.store.commit()

    def next_due(self) -> datetime | None:
        """When the next held send goes out or reply window closes (None: nothing pending)."""
        with self.lock:
            times = [self.scheduled[0][0]] if self.scheduled else []
            expiry = self._first_expiry(None)
            if expiry is not None:
                times.append(expiry[0])
            return min(times, default=None)

    def _due_changed(self) -> None:
        if self._realtime and self.due_sink is not None:
            self.due_sink()

    def _save(self, kind: str, key: str, value: dict[str, Any] | Record) -> None:
        if not self.store.persistent:
            return  # the memory store keeps nothing: don't build the JSON form at all
        self.store.put(kind, key, value.to_json() if isinstance(value, Record) else value)

    def put_survey(self, survey: Survey) -> None:
        """Add (or replace) a survey and its import definition."""
        with self.transaction():
            self._put_survey(survey)

    def _put_survey(self, survey: Survey) -> None:
        self.surveys[survey.reference.lower()] = survey
        self.by_survey.setdefault(survey.reference.lower(), [])
        self._save("survey", survey.reference.lower(), survey)

    def _put_respondent(self, respondent: Respondent) -> None:
        if respondent.respondent_id not in self.respondents:
            self.by_survey.setdefault(respondent.survey_reference.lower(), []).append(
                respondent.respondent_id
            )
        self.respondents[respondent.respondent_id] = respondent
        self._save("respondent", respondent.respondent_id, respondent)

    def _next(self, counter: str) -> int:
        self.counters[counter] += 1
        return self.counters[counter]

    def next_message_id(self) -> str:
        """A new MessageID: ``MS``, four digits from the seed, eight from a counter."""
        return f"MS{self._ms_prefix}{self._next('message'):08d}"

    def now(self) -> datetime:
        """The sandbox time."""
        return self.clock.now()

    # ----------------------------------------------------------------- auth

    def user_for(self, authorization: str | None) -> User | None:
        """The user of an ``Authorization: Basic <token>`` header, or None."""
        if not authorization:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "basic":
            return None
        return self.users.get(token.strip())

    # ----------------------------------------------------------------- journal, events

    def record(self, kind: str, **fields: Any) -> JournalEntry:
        """Add a journal entry (the caller holds the lock)."""
        entry = JournalEntry(seq=self._next("journal"), kind=kind, at=self.now(), **fields)
        self.journal.append(entry)
        self._save("journal", f"{entry.seq:012d}", entry)
        return entry

    def save_entry(self, entry: JournalEntry) -> None:
        """Write a journal entry again after it changed (its status)."""
        with self.transaction():
            self._save("journal", f"{entry.seq:012d}", entry)

    @property
    def callback_url(self) -> str | None:
        """The account callback's first URL (None when no account callback is set)."""
        return self.account_callback.urls[0] if self.account_callback else None

    @callback_url.setter
    def callback_url(self, url: str | None) -> None:
        self.account_callback = CallbackTarget(urls=[url]) if url else None

    def set_account_callback(self, target: CallbackTarget | None) -> None:
        """Configure (or remove) the account-level callback settings."""
        with self.transaction():
            self.account_callback = target
            self._save_meta()

    def emit(
        self,
        type: str,
        at: datetime | None = None,
        *,
        callback: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Event:
        """Record a messaging event with the callback payload's fields, and queue it.

        ``callback`` is the message's own Callback settings; without them the account's
        settings at this moment apply (the account's signing secret applies to both). An
        event with settings goes to :attr:`event_sink`.
        """
        account = self.account_callback
        if callback is None and account is not None:
            callback = account.to_json()
        elif callback is not None and account is not None and account.secret:
            # The signing secret is the account's: an email's own Callback is signed too.
            callback = {**callback, "secret": account.secret}
        urls = list(callback["urls"]) if callback else []
        event = Event(
            seq=self._next("event"),
            type=type,
            timestamp=self._distinct_stamp(type, at or self.now(), fields),
            callback_urls=urls,
            callback=callback,
            **fields,
        )
        self.events.append(event)
        self._save("event", f"{event.seq:012d}", event)
        if callback and self.event_sink is not None:
            self.event_sink(event)
        return event

    def _distinct_stamp(self, type: str, stamp: datetime, fields: Mapping[str, Any]) -> datetime:
        """``stamp``, or a microsecond after the last event of the same kind if not later.

        Receivers de-duplicate by (MessageID, Type, Timestamp, Status), and the sandbox clock
        stands still between calls: without this, an answer's receipts (which keep the
        original MessageID) would look like retries of the original's. Events with no real
        MessageID are told apart by Source and Destination too, as receivers do.
        """
        key = _stamp_key(type, fields)
        last = self._last_stamps.get(key)
        if last is not None and stamp <= last:
            stamp = last + timedelta(microseconds=1)
        self._last_stamps[key] = stamp
        return stamp

    def event(self, seq: int) -> Event | None:
        """The event with this sequence number (events are kept in seq order)."""
        with self.lock:
            position = bisect.bisect_left(self.events, seq, key=lambda e: e.seq)
            if position < len(self.events) and self.events[position].seq == seq:
                return self.events[position]
            return None

    def mark_delivered(self, seq: int, generation: int) -> None:
        """Note that a receiver accepted the event (unless the state was reset since)."""
        with self.transaction():
            event = self.event(seq) if generation == self.generation else None
            if event is not None:
                event.delivered = True
                self._save("event", f"{event.seq:012d}", event)

    # ----------------------------------------------------------------- faults

    def add_fault(self, **settings: Any) -> Fault:
        """Add a fault (see :class:`Fault`)."""
        drop = settings.get("drop")
        if drop not in (None, "before", "after"):
            raise ValueError(f"drop: expected 'before', 'after' or None, got {drop!r}")
        status = settings.get("status")
        if status is not None and not 400 <= int(status) <= 599:
            raise ValueError(f"status: expected an error status 400-599, got {status!r}")
        rate = float(settings.get("rate", 1.0))
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate: expected 0.0 to 1.0, got {rate}")
        if status is None and drop is None and not settings.get("latency"):
            raise ValueError("a fault needs a status, a drop mode or a latency")
        with self.lock:
            self._fault_ids += 1
            fault = Fault(id=self._fault_ids, **settings)
            fault.rate = rate
            self.faults.append(fault)
            return fault

    def clear_faults(self) -> None:
        """Remove every fault."""
        with self.lock:
            self.faults.clear()

    def pick_fault(self, method: str, path: str) -> Fault | None:
        """The fault that hits this request, if any (seeded: the same run, the same hits)."""
        with self.lock:
            for fault in self.faults:
                if not fault.matches(method, path):
                    continue
                if fault.rate < 1.0 and self._rng.random() >= fault.rate:
                    continue
                fault.hits += 1
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                return fault
            return None

    # ----------------------------------------------------------------- clock

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock forward: scheduled messages go out, reply windows close."""
        if delta < timedelta(0):
            raise ValueError("the sandbox clock only moves forward")
        with self.transaction():
            target = self.now() + delta
            self._run_until(target)
            self.clock.set(target)
            self._save_meta()
            self._due_changed()
            return target

    def _run_until(self, target: datetime) -> bool:
        """Send what is held and close reply windows up to ``target``; whether any did."""
        # Things happen in time order: a message sent at 09:00 with a 1-minute timeout
        # expires at 09:01 even if the clock jumps a day.
        happened = False
        while True:
            due_send = (
                self.scheduled[0] if self.scheduled and self.scheduled[0][0] <= target else None
            )
            due_expiry = self._first_expiry(target)
            if due_send is None and due_expiry is None:
                return happened
            happened = True
            if due_send is not None and (due_expiry is None or due_send[0] <= due_expiry[0]):
                self.scheduled.pop(0)
                message = self.messages[due_send[1]]
                self._dispatch(message, due_send[0])
            elif due_expiry is not None:
                self._expire(self.messages[due_expiry[1]])

    def _first_expiry(self, target: datetime | None) -> tuple[datetime, str] | None:
        """The first reply window to close (by ``target``; None: at any time)."""
        best: tuple[datetime, str] | None = None
        for ids in self.open_replies.values():
            for message_id in ids:
                expires = self.messages[message_id].expires_at
                if (
                    expires is not None
                    and (target is None or expires <= target)
                    and (best is None or expires < best[0])
                ):
                    best = (expires, message_id)
        return best

    def _expire(self, message: MessageRecord) -> None:
        message.open_for_reply = False
        ids = self.open_replies.get(message.destination, [])
        if message.key in ids:
            ids.remove(message.key)
        if not ids:
            self.open_replies.pop(message.destination, None)
        self._save("message", message.key, message)
        self.emit(
            "Receipt",
            at=message.expires_at,
            source=message.source,
            destination=message.destination,
            message=message.text,
            status="Expired",
            message_id=message.message_id,
            segments=message.segments,
            metadata=message.metadata,
            callback=message.callback,
            lookup=message.lookup,
            carrier=message.carrier,
            reachable=message.reachable,
            number_type=message.number_type,
        )

    # ----------------------------------------------------------------- lookup

    def lookup(self, number: str) -> tuple[int, dict[str, Any]]:
        """GET Message/Lookup: the status and LookupResponse body."""
        if not _rules.is_possible_number(number):
            raise validation(
                {
                    "number": [
                        f"{number!r} is not a telephone number: country code and number, digits "
                        "only, no leading zeros (pattern ^[1-9]\\d{1,14}$)"
                    ]
                }
            )
        info = _rules.lookup_number(number)
        with self.transaction():
            if info.outcome == "lookup-error":
                return 400, {
                    "messageID": "Unknown",
                    "status": "Error",
                    "carrier": "Unknown",
                    "reachable": False,
                    "numberType": "Unknown",
                }
            message_id = self.next_message_id()
            self._save_meta()
        status = "Blocked" if info.outcome == "blocked" else "Success"
        return 200, {
            "messageID": message_id,
            "status": status,
            "carrier": info.carrier,
            "reachable": info.reachable,
            "numberType": info.number_type,
        }

    # ----------------------------------------------------------------- messages

    def send_message(
        self,
        request: SendRequest,
        user: User,
        *,
        keep_id: str | None = None,
        reply_to_event: int | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """POST Message: apply every rule of the reference, then accept or refuse.

        ``keep_id`` (a message sent in answer to a callback) makes the message keep that
        MessageID instead of taking a new one; ``reply_to_event`` is the event answered.
        """
        destination, source = request.destination, request.source
        channel = _CHANNELS[int(request.type or 0)]
        if not _rules.is_possible_number(destination):
            raise validation(
                {
                    "destination": [
                        f"The destination number {destination!r} is invalid: no such country code "
                        "or the wrong length for it"
                    ]
                }
            )
        if source.lstrip("+") == destination:
            raise validation({"destination": ["The destination and source are the same."]})
        if channel != "SMS" and _rules.is_branded(source):
            raise validation(
                {
                    "source": [
                        f"A branded source ({source!r}) is not supported on the {channel} route; "
                        "use the account's number"
                    ]
                }
            )
        if channel == "SMS" and _rules.segments(request.message) > _rules.SMS_MAX_SEGMENTS:
            raise validation(
                {
                    "message": [
                        f"The message takes {_rules.segments(request.message)} SMS segments; "
                        f"at most {_rules.SMS_MAX_SEGMENTS} are sent"
                    ]
                }
            )
        if channel != "SMS" and len(request.message) > _rules.CHAT_MAX_CHARS:
            raise validation(
                {
                    "message": [
                        f"The message has {len(request.message)} characters; at most "
                        f"{_rules.CHAT_MAX_CHARS} on the {channel} route"
                    ]
                }
            )
        info = _rules.lookup_number(destination)
        looked = bool(request.lookup)
        carrier = info.carrier if looked else "Unknown"
        number_type = info.number_type if looked else "Unknown"
        with self.transaction():
            now = self.now()
            if destination in self.stop_list or info.outcome == "blocked":
                return self._refuse(
                    request, _send_body("Unknown", "Blocked", carrier, False, number_type)
                )
            if looked and info.outcome == "lookup-error":
                return self._refuse(
                    request, _send_body("Unknown", "Failed", "Unknown", False, "Unknown")
                )
            if looked and info.number_type == "Landline":
                return self._refuse(
                    request, _send_body("Unknown", "Reachable", info.carrier, True, "Landline")
                )
            if info.outcome == "send-error":
                return 400, _send_body("Unknown", "Failed", carrier, info.reachable, number_type)
            reachable = info.reachable if looked else True
            if request.test:
                return 200, _send_body("Unknown", "Sent", carrier, reachable, number_type)
            if keep_id is not None:
                message_id = keep_id
                replies = sum(1 for m in self.messages.values() if m.message_id == keep_id)
                key = f"{keep_id}/reply-{replies}"
            else:
                message_id = key = self.next_message_id()
            message = MessageRecord(
                message_id=message_id,
                key=key,
                reply_to_event=reply_to_event,
                channel=channel,
                source=source,
                destination=destination,
                text=request.message,
                created=now,
                status="Scheduled",
                reply=request.reply,
                lookup=looked,
                timeout_minutes=request.timeout or DEFAULT_REPLY_TIMEOUT,
                windows=[w.to_wire() for w in request.window or []],
                segments=_rules.segments(request.message) if channel == "SMS" else 1,
                carrier=info.carrier,
                reachable=info.reachable,
                number_type=info.number_type,
                survey_id=request.survey_id,
                on_behalf=request.on_behalf,
                user=user.name,
            )
            self._accept(message, request.when, request.window or [])
            return 200, _send_body(message.message_id, "Sent", carrier, reachable, number_type)

    def _refuse(self, request: SendRequest, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        # Without an account callback the refusal is a 400; with one, the platform answers
        # 200 and reports the failed destination check as a Lookup callback.
        if self.account_callback is None:
            return 400, body
        self.emit(
            "Lookup",
            source=request.source,
            destination=request.destination,
            message=request.message,
            status=body["Status"],
            lookup=bool(request.lookup),
            message_id="Unknown",
            carrier=body["Carrier"],
            reachable=body["Reachable"],
            number_type=body["NumberType"],
        )
        return 200, body

    def _accept(
        self, message: MessageRecord, when: datetime | None, windows: Sequence[Any]
    ) -> None:
        now = self.now()
        start = max(now, when) if when is not None else now
        # An empty Window list in a request reads as no windows (as if absent).
        due = _rules.next_allowed(windows or None, start)
        assert due is not None  # every Window has at least one day
        message.scheduled_for = due
        self.messages[message.key] = message
        kind = "email" if message.channel == "Email" else "message"
        body: dict[str, Any] = {
            "scheduledFor": iso(due),
            "channel": message.channel,
            "subject": message.subject,
        }
        if message.reply_to_event is not None:
            body["replyToEvent"] = message.reply_to_event
        self.record(
            kind,
            message_id=message.message_id,
            destination=message.destination,
            source=message.source,
            text=message.text,
            user=message.user,
            body=body,
        )
        if due <= now:
            self._dispatch(message, now)
        else:
            bisect.insort(self.scheduled, (due, message.key))
            self._save("message", message.key, message)
            self._due_changed()
        self._save_meta()

    def _dispatch(self, message: MessageRecord, at: datetime) -> None:
        message.status = "Sent"
        message.sent_at = at
        common: dict[str, Any] = {
            "source": message.source,
            "destination": message.destination,
            "message": message.text,
            "message_id": message.message_id,
            "segments": message.segments,
            "metadata": message.metadata,
            "lookup": message.lookup,
            "callback": message.callback,
        }
        lookup_fields: dict[str, Any] = {
            "carrier": message.carrier,
            "reachable": message.reachable,
            "number_type": message.number_type,
        }
        self.emit("Receipt", at=at, status="Sent", **common, **lookup_fields)
        # Email is not a mailbox check; a text to a landline or an unreachable number fails.
        delivered = message.channel == "Email" or (
            message.reachable and message.number_type != "Landline"
        )
        message.status = "Delivered" if delivered else "Failed"
        self.emit("Receipt", at=at, status=message.status, **common, **lookup_fields)
        if message.reply and message.channel != "Email":
            message.open_for_reply = True
            message.expires_at = at + timedelta(
                minutes=message.timeout_minutes or DEFAULT_REPLY_TIMEOUT
            )
            self.open_replies.setdefault(message.destination, []).append(message.key)
            self._due_changed()
        self._mark_invited(message, at)
        self._save("message", message.key, message)

    def _mark_invited(self, message: MessageRecord, at: datetime) -> None:
        if message.survey_id is None:
            return
        for survey in self.surveys.values():
            if survey.survey_id != message.survey_id:
                continue
            for respondent_id in self.by_survey.get(survey.reference.lower(), []):
                respondent = self.respondents[respondent_id]
                if (
                    message.destination in (respondent.mobile_number, respondent.email_address)
                    and respondent.invited is None
                ):
                    respondent.invited = at
                    respondent.updated = at
                    self._save("respondent", respondent.respondent_id, respondent)

    # ----------------------------------------------------------------- email

    def send_email(self, body: Mapping[str, Any], user: User) -> tuple[int, dict[str, Any]]:
        """POST Message/SendEmail with the body as sent (MetaData and Callback exact-case)."""
        raw = dict(body)
        metadata_raw = raw.pop("MetaData", None)
        callback_raw = raw.pop("Callback", None)
        try:
            request = EmailRequest.model_validate(raw)
        except ValueError as exc:
            raise validation(_errors_of(exc)) from None
        try:
            metadata = metadata_list(metadata_raw) or []
        except ValueError:
            raise TextError("There was a problem with the MetaData value") from None
        names = {next(iter(pair)) for pair in metadata}
        token_pairs = [{name: value} for name, value in user.metadata]
        if any(name in names for name, _ in user.metadata):
            raise TextError("There was a problem with the MetaData value")
        target: CallbackTarget | None = None
        if callback_raw is not None:
            try:
                settings = CallbackSettings.model_validate(callback_raw)
            except ValueError:
                settings = None  # the reference: an invalid Callback block is ignored
            if settings is not None:
                target = callback_target(settings, strict=False)
        route = self._email_route(request.from_)
        if route is None:
            raise TextError("unable to route email")
        if request.test:
            return 200, _send_body("Unknown", "Sent", "Unknown", True, "Unknown")
        with self.transaction():
            if request.to.lower() in self.stop_list:
                return 400, _send_body("Unknown", "Blocked", "Unknown", False, "Unknown")
            message = MessageRecord(
                message_id=self.next_message_id(),
                channel="Email",
                source=route["address"],
                destination=request.to,
                text=request.content,
                subject=request.subject,
                created=self.now(),
                status="Scheduled",
                metadata=[*token_pairs, *metadata],
                callback_urls=list(target.urls) if target else [],
                callback=target.to_json() if target else None,
                user=user.name,
            )
            self._accept(message, request.when, [])
            return 200, _send_body(message.message_id, "Sent", "Unknown", True, "Unknown")

    def _email_route(self, value: str) -> dict[str, str] | None:
        key = value.strip().lower()
        if key in self.email_routes:
            return self.email_routes[key]
        for route in self.email_routes.values():
            if route.get("address", "").lower() == key:
                return route
        return None

    # ----------------------------------------------------------------- import

    def find_survey(self, reference: str) -> Survey | None:
        """A survey by reference (letter case ignored)."""
        return self.surveys.get(reference.strip().lower())

    def import_records(self, reference: str, records: Sequence[Any]) -> list[dict[str, Any]]:
        """POST Data/Import: one ImportResponse per record, in order."""
        if len(records) > MAX_IMPORT_RECORDS:
            raise validation(
                {"list": [f"At most {MAX_IMPORT_RECORDS} records per request, got {len(records)}"]}
            )
        with self.transaction():
            survey = self.find_survey(reference)
            if survey is None:
                raise Problem(
                    404, f"No survey or import definition has the reference {reference!r}."
                )
            now = self.now()
            out = []
            for record in records:
                values, problems = _rules.validate_record(survey.import_fields, record)
                item = {name: values.get(name) for name in RESPONDENT_FIELDS}
                item["when"] = iso(now)
                if problems:
                    item.update(status="Error", message="; ".join(problems))
                else:
                    added = self._upsert(survey, values, now)
                    item.update(status="Success", message="Added" if added else "Updated")
                out.append(item)
            self._save_meta()
            return out

    def _upsert(self, survey: Survey, values: dict[str, str], now: datetime) -> bool:
        key_field = "emailAddress" if survey.channel == "Email" else "mobileNumber"
        key = values.get(key_field)
        existing = None
        if key is not None:
            for respondent_id in self.by_survey.get(survey.reference.lower(), []):
                candidate = self.respondents[respondent_id]
                found = (
                    candidate.email_address
                    if key_field == "emailAddress"
                    else candidate.mobile_number
                )
                if found is not None and found.lower() == key.lower():
                    existing = candidate
                    break
        respondent = existing or Respondent(
            respondent_id=f"{survey.survey_id}{self._next('respondent'):06d}",
            survey_reference=survey.reference,
            added=now,
            updated=now,
            channel=survey.channel,
        )
        for name, value in values.items():
            attribute = _ATTRIBUTES.get(name)
            if attribute is not None:
                setattr(respondent, attribute, value)
            else:
                respondent.extra[name] = value
        respondent.updated = now
        self._put_respondent(respondent)
        return existing is None

    # ----------------------------------------------------------------- keywords

    def create_keyword(self, keyword: KeywordRecord) -> dict[str, Any]:
        """POST Keyword: register a new keyword (a duplicate is refused with 409)."""
        self._check_keyword(keyword.keyword)
        with self.transaction():
            key = keyword.keyword.upper()
            if key in self.keywords:
                raise Problem(
                    409,
                    f"The keyword {keyword.keyword!r} is already registered; "
                    "use PATCH to change it.",
                )
            self.keywords[key] = keyword
            self._save("keyword", key, keyword)
            return keyword.wire()

    def update_keyword(self, name: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH Keyword: change the given fields of a registered keyword."""
        with self.transaction():
            keyword = self.keywords.get(name.strip().upper())
            if keyword is None:
                raise Problem(404, f"No keyword {name!r} is registered on the account.")
            for attribute, value in changes.items():
                setattr(keyword, attribute, value)
            keyword.updated = self.now()
            self._save("keyword", keyword.keyword.upper(), keyword)
            return keyword.wire()

    def delete_keyword(self, name: str) -> dict[str, Any]:
        """DELETE Keyword?keyword=...: remove a keyword."""
        with self.transaction():
            keyword = self.keywords.pop(name.strip().upper(), None)
            if keyword is None:
                raise Problem(404, f"No keyword {name!r} is registered on the account.")
            self.store.delete("keyword", keyword.keyword.upper())
            return keyword.wire()

    def list_keywords(self) -> list[dict[str, Any]]:
        """GET Keyword: every keyword of the account, in alphabetical order."""
        with self.lock:
            return [self.keywords[key].wire() for key in sorted(self.keywords)]

    @staticmethod
    def _check_keyword(name: str) -> None:
        if not _rules.KEYWORD_RE.fullmatch(name):
            raise validation(
                {"keyword": [f"{name!r}: a keyword is 1 to 20 letters or digits, with no spaces"]}
            )
        if name.upper() in _rules.RESERVED_KEYWORDS:
            raise validation(
                {"keyword": [f"{name!r} is reserved for the stop list and help messages"]}
            )

    # ----------------------------------------------------------------- links

    def register_link(self, request: UrlRequest) -> ShortLink:
        """Make (or reuse) a short link; see ``docs/sandbox.md`` for the rules."""
        domain = request.tiny_domain.strip().lower() if request.tiny_domain else None
        if domain is not None and not _rules.HOSTNAME_RE.fullmatch(domain):
            raise validation({"tinyDomain": [f"{request.tiny_domain!r} is not a domain name"]})
        tag = request.slashtag.strip() if request.slashtag else None
        if tag is not None and (
            not _rules.SLASHTAG_RE.fullmatch(tag) or tag.lower() in _rules.RESERVED_PATHS
        ):
            raise validation(
                {
                    "slashtag": [
                        f"{request.slashtag!r}: 1 to 50 letters, digits, '-' or '_', starting "
                        "with a letter or digit"
                    ]
                }
            )
        with self.transaction():
            if tag is not None:
                existing = self.links.get(f"{domain or ''}/{tag}")
                if existing is not None:
                    if existing.full_url == request.full_url:
                        return existing
                    raise Problem(409, f"The slashtag {tag!r} already links to another URL.")
                link = ShortLink(
                    code=tag,
                    full_url=request.full_url,
                    created=self.now(),
                    domain=domain,
                    slashtag=tag,
                )
            else:
                if request.reuse:
                    for existing in self.links.values():
                        if existing.domain == domain and existing.full_url == request.full_url:
                            return existing
                while True:
                    code = _rules.short_code(self.seed, self._next("link"))
                    if f"{domain or ''}/{code}" not in self.links:
                        break
                link = ShortLink(
                    code=code, full_url=request.full_url, created=self.now(), domain=domain
                )
            self.links[link.key] = link
            self._save("link", link.key, link)
            self._save_meta()
            return link

    def find_link(self, host: str | None, code: str) -> ShortLink | None:
        """The link a short URL names: on its custom domain, else on the sandbox's host."""
        with self.lock:
            if host:
                link = self.links.get(f"{host.lower()}/{code}")
                if link is not None:
                    return link
            return self.links.get(f"/{code}")

    def click(self, link: ShortLink, short_url: str, by: str | None = None) -> str:
        """Count a click on a short link and record a Click event; return the full URL.

        The event carries the message the link was sent in (its MessageID, respondent as
        Destination, MetaData and Callback settings): the latest message to ``by`` whose
        text holds the link, or, without ``by``, the only message that holds it.
        """
        with self.transaction():
            link.clicks += 1
            link.last_click = self.now()
            self._save("link", link.key, link)
            carrier = self._message_with_link(link, by)
            fields: dict[str, Any] = {"destination": by}
            if carrier is not None:
                fields = {
                    "destination": carrier.destination,
                    "metadata": carrier.metadata,
                    "segments": carrier.segments,
                    "callback": carrier.callback,
                }
            self.emit(
                "Click",
                source=short_url,
                message=link.full_url,
                status="Clicked",
                message_id=carrier.message_id if carrier else "Unknown",
                **fields,
            )
            return link.full_url

    def _message_with_link(self, link: ShortLink, by: str | None) -> MessageRecord | None:
        pattern = re.compile(re.escape(f"/{link.code}") + r"(?![A-Za-z0-9_-])")
        found = [
            m
            for m in self.messages.values()
            if pattern.search(m.text)
            and (by is None or m.destination.lower() == by.strip().lower())
        ]
        if by is not None:
            return found[-1] if found else None
        return found[0] if len({m.message_id for m in found}) == 1 else None

    def carrier_status(self, message_id: str, status: str) -> Event:
        """A carrier progress update: a Receipt with ``status`` for a message sent."""
        if not status.strip():
            raise ValueError("status: a carrier status is needed (Enroute, Read, Rejected...)")
        with self.transaction():
            message = self.messages.get(message_id)
            if message is None or message.sent_at is None:
                raise KeyError(f"no message {message_id!r} has been sent")
            message.status = status.strip()
            self._save("message", message.key, message)
            return self.emit(
                "Receipt",
                status=message.status,
                source=message.source,
                destination=message.destination,
                message=message.text,
                message_id=message.message_id,
                segments=message.segments,
                metadata=message.metadata,
                lookup=message.lookup,
                carrier=message.carrier,
                reachable=message.reachable,
                number_type=message.number_type,
                callback=message.callback,
            )

    def send_callback_reply(
        self, event_seq: int, generation: int, request: SendRequest
    ) -> tuple[int, dict[str, Any]] | None:
        """Send the message a receiver answered a Message/Keyword callback with.

        It keeps the MessageID of the event's original message (a new one when the event
        had none) and goes through every rule of POST /v3.2/Message. None when the state
        was reset since the event.
        """
        with self.transaction():
            event = self.event(event_seq) if generation == self.generation else None
            if event is None:
                return None
            original = event.message_id if event.message_id in self.messages else None
            return self.send_message(
                request, CALLBACK_USER, keep_id=original, reply_to_event=event_seq
            )

    # ----------------------------------------------------------------- inbound

    def add_stop(self, address: str) -> None:
        """Put a number or email address on the stop list."""
        with self.transaction():
            key = address.strip().lower()
            self.stop_list[key] = self.now()
            self._save("stop", key, {"at": iso(self.now())})

    def remove_stop(self, address: str) -> bool:
        """Take a number or email address off the stop list; whether it was on it."""
        with self.transaction():
            key = address.strip().lower()
            if self.stop_list.pop(key, None) is None:
                return False
            self.store.delete("stop", key)
            return True

    def reply(self, from_number: str, text: str, to: str | None = None) -> Event:
        """A respondent's inbound message: classify it, update the state, record the event."""
        if not _rules.is_possible_number(from_number):
            raise ValueError(f"from_number: {from_number!r} is not E.164 digits")
        with self.transaction():
            now = self.now()
            original = self._open_message(from_number, to)
            our_number = to or (original.source if original else None)
            self.record(
                "inbound",
                source=from_number,
                destination=our_number,
                text=text,
                message_id=original.message_id if original else None,
            )
            kind, keyword = _rules.classify(text, list(self.keywords.values()), now)
            common: dict[str, Any] = {
                "source": from_number,
                "destination": our_number,
                "message": text,
                "inbound": True,
                "segments": _rules.segments(text),
                "message_id": original.message_id if original else "Unknown",
                "callback": original.callback if original else None,
            }
            if kind == "Stop":
                self.stop_list[from_number] = now
                self._save("stop", from_number, {"at": iso(now)})
                return self.emit("Stop", status="Stopped", **common)
            if kind == "Unstop":
                if self.stop_list.pop(from_number, None) is not None:
                    self.store.delete("stop", from_number)
                return self.emit("Unstop", status="Unstopped", **common)
            if kind in ("Help", "Info"):
                return self.emit(kind, status="Received", **common)
            if kind == "Keyword" and keyword is not None:
                event = self.emit("Keyword", status="Received", **common)
                record = self.keywords[keyword.upper()]
                if record.response and our_number and not _rules.is_branded(our_number):
                    self._auto_reply(our_number, from_number, record.response)
                return event
            event = self.emit("Message", status="Received", **common)
            if original is not None and original.survey_id is not None:
                self._answer_from_reply(original, from_number, text, now)
            return event

    def _open_message(self, number: str, to: str | None) -> MessageRecord | None:
        for message_id in reversed(self.open_replies.get(number, [])):
            message = self.messages[message_id]
            if to is None or message.source.lstrip("+") == to.lstrip("+"):
                return message
        return None

    def _auto_reply(self, source: str, destination: str, text: str) -> None:
        info = _rules.lookup_number(destination)
        message = MessageRecord(
            message_id=self.next_message_id(),
            channel="SMS",
            source=source,
            destination=destination,
            text=text,
            created=self.now(),
            status="Scheduled",
            segments=_rules.segments(text),
            carrier=info.carrier,
            reachable=info.reachable,
            number_type=info.number_type,
            user="keyword",
        )
        self._accept(message, None, [])

    def _answer_from_reply(
        self, original: MessageRecord, number: str, text: str, now: datetime
    ) -> None:
        for survey in self.surveys.values():
            if survey.survey_id != original.survey_id:
                continue
            for respondent_id in self.by_survey.get(survey.reference.lower(), []):
                respondent = self.respondents[respondent_id]
                if respondent.mobile_number == number:
                    pending = [q.key for q in survey.questions if q.key not in respondent.answers]
                    if pending:
                        self._set_answers(survey, respondent, {pending[0]: text.strip()}, now)
                    return

    # ----------------------------------------------------------------- answers

    def answers(
        self,
        reference: str,
        respondent: str | None,
        answers: Mapping[str, Any] | None,
    ) -> str:
        """Record survey answers; returns the respondent id.

        ``respondent`` is an id, a mobile number or an email address; None picks the first
        respondent who has not completed. ``answers`` maps question keys to answers; None
        answers every open question with values drawn from the seed.
        """
        with self.transaction():
            survey = self.find_survey(reference)
            if survey is None:
                raise KeyError(f"no survey with the reference {reference!r}")
            ids = self.by_survey.get(survey.reference.lower(), [])
            target: Respondent | None = None
            for respondent_id in ids:
                candidate = self.respondents[respondent_id]
                if respondent is None:
                    if candidate.completed is None:
                        target = candidate
                        break
                elif respondent in (
                    candidate.respondent_id,
                    candidate.mobile_number,
                    candidate.email_address,
                ):
                    target = candidate
                    break
            if target is None:
                raise KeyError(
                    f"no respondent {respondent!r} in {survey.reference}"
                    if respondent
                    else f"every respondent of {survey.reference} has completed"
                )
            if answers is None:
                answers = self._generated_answers(survey, target)
            unknown = [key for key in answers if key not in {q.key for q in survey.questions}]
            if unknown:
                keys = ", ".join(q.key for q in survey.questions)
                raise KeyError(f"unknown question keys {unknown} (the survey has {keys})")
            self._set_answers(survey, target, {k: str(v) for k, v in answers.items()}, self.now())
            return target.respondent_id

    def _generated_answers(self, survey: Survey, respondent: Respondent) -> dict[str, str]:
        rng = random.Random(f"{self.seed}:{respondent.respondent_id}")
        out: dict[str, str] = {}
        for question in survey.questions:
            if question.key in respondent.answers:
                continue
            if question.kind == "nps":
                out[question.key] = str(rng.choice([10, 10, 9, 9, 8, 7, 6, 5, 3, 0]))
            elif question.kind == "rating":
                out[question.key] = str(rng.choice([5, 5, 4, 4, 4, 3, 2, 1]))
            elif question.kind == "choice" and question.choices:
                out[question.key] = rng.choice(question.choices)
            else:
                out[question.key] = rng.choice(
                    [
                        "Quick and friendly, thank you.",
                        "The wait was a bit long, but the staff were great.",
                        "N/A",
                        "Très bien, merci !",
                        "Loved it 👍",
                    ]
                )
        return out

    def _set_answers(
        self, survey: Survey, respondent: Respondent, answers: Mapping[str, str], now: datetime
    ) -> None:
        respondent.answers.update(answers)
        respondent.started = respondent.started or now
        if all(q.key in respondent.answers for q in survey.questions):
            respondent.completed = respondent.completed or now
        respondent.updated = now
        self._save("respondent", respondent.respondent_id, respondent)

    # ----------------------------------------------------------------- results

    def result_ids(self, reference: str) -> tuple[list[Survey], list[str]]:
        """The surveys and respondent ids GetResults covers (``*`` is every survey)."""
        with self.transaction():
            if reference.strip() == "*":
                surveys = sorted(self.surveys.values(), key=lambda s: s.survey_id)
            else:
                survey = self.find_survey(reference)
                if survey is None:
                    raise Problem(404, f"No survey has the reference {reference!r}.")
                surveys = [survey]
            ids: list[str] = []
            for survey in surveys:
                ids.extend(self.by_survey.get(survey.reference.lower(), []))
            return surveys, ids

    def webhook_list(self) -> list[dict[str, Any]]:
        """GET Webhook: the account's webhooks."""
        with self.lock:
            return [hook.wire() for hook in self.webhooks]


CALLBACK_USER: Final = User("callback", "", frozenset())
"""Who sends the messages receivers answer callbacks with (the ``user`` of the journal)."""


def _stamp_key(type: str, fields: Mapping[str, Any]) -> tuple[str | None, ...]:
    """What two events share when a receiver could take one for a retry of the other."""
    message_id = fields.get("message_id")
    status = fields.get("status")
    if is_placeholder_id(message_id):
        return (type, status, None, fields.get("source"), fields.get("destination"))
    return (type, status, message_id)


def callback_target(
    settings: CallbackSettings, *, strict: bool = True, secret: str | None = None
) -> CallbackTarget:
    """Delivery settings from the reference's Callback parameters, defaults filled in.

    Action keywords are matched in any letter case; an unknown one is a ``ValueError``
    when ``strict`` (account settings) and ignored otherwise (an email's Callback block).
    ``secret`` (account settings only) signs the requests; it must be a non-empty string.
    """
    if secret is not None:
        if not isinstance(secret, str):
            raise ValueError(f"Secret: expected a string, got {type(secret).__name__}")
        signing_key(secret)  # the receiver's own check: an empty secret is refused
    urls = [settings.url] if isinstance(settings.url, str) else list(settings.url)
    actions: list[str] = []
    known = {name.lower(): name for name in CALLBACK_ACTIONS}
    for word in (settings.action or "").split(","):
        if not word.strip():
            continue
        name = known.get(word.strip().lower())
        if name is None:
            if strict:
                raise ValueError(
                    f"Action: {word.strip()!r} is not one of {', '.join(CALLBACK_ACTIONS)}"
                )
            continue
        if name not in actions:
            actions.append(name)
    defaults = CallbackTarget(urls=urls)
    return CallbackTarget(
        urls=urls,
        method=str(settings.method.value) if settings.method else "POST",
        retries=settings.retries if settings.retries is not None else defaults.retries,
        timeout_ms=settings.timeout or defaults.timeout_ms,
        total_timeout_ms=settings.total_timeout or defaults.total_timeout_ms,
        actions=actions,
        secret=secret,
    )


_ATTRIBUTES: Final = {
    "title": "title",
    "firstName": "first_name",
    "lastName": "last_name",
    "mobileNumber": "mobile_number",
    "emailAddress": "email_address",
    "website": "website",
    "dateOfBirth": "date_of_birth",
}


def _errors_of(exc: ValueError) -> dict[str, list[str]]:
    """Pydantic errors as ASP.NET-style ``{field: [messages]}`` (wire field names)."""
    errors: dict[str, list[str]] = {}
    raw = getattr(exc, "errors", None)
    if not callable(raw):
        return {"": [str(exc)]}
    for error in raw():
        loc = [str(part) for part in error.get("loc", ())]
        message = str(error.get("msg", "invalid"))
        message = message.removeprefix("Value error, ")
        if loc:
            name = ".".join(loc)
        else:
            head, sep, _ = message.partition(":")
            name = head if sep and " " not in head else ""
        errors.setdefault(name, []).append(message)
    return errors


def errors_of(exc: ValueError) -> dict[str, list[str]]:
    """Public name of :func:`_errors_of` for the routes."""
    return _errors_of(exc)


__all__ = [
    "CALLBACK_USER",
    "DEFAULT_START",
    "Clock",
    "Fault",
    "SandboxState",
    "User",
    "callback_target",
    "errors_of",
]
