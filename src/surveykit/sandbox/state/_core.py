"""The core of the sandbox's state: the records, the lock, the store, counters, journal, events.

Like a moto backend, the state is plain records and one method per platform operation;
the operations live in one class per endpoint group (:mod:`._messages`, :mod:`._inbound`,
:mod:`._surveys`, :mod:`._keywords`, :mod:`._links`), each a mixin over this core, and
:class:`~surveykit.sandbox.state.SandboxState` puts them together. The core holds what
they share: one re-entrant lock (so the state can be used from any thread and any event
loop: uvicorn, the client's portal thread, a notebook), transactions that write each
operation's changes to the store when it ends, the ID counters, the users, the journal and
the events, and saving and restoring all of it. HTTP lives in ``_routes``: operations
return domain values or raise a :class:`~surveykit.sandbox.state._errors.Rejection` or a
:class:`~surveykit.sandbox.state._errors.Problem`.
"""

from __future__ import annotations

import bisect
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from surveykit.models.callbacks import is_placeholder_id
from surveykit.sandbox.data._seed import SampleData, load_sample_data
from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._clock import DEFAULT_START, Clock, Faults
from surveykit.sandbox.state._records import (
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
from surveykit.sandbox.state._store import MemoryStore, SQLiteStore

REFUSED_KEPT: Final = 200
"""How many refused requests the journal keeps (the latest; ``seq`` counts them all)."""


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


CALLBACK_USER: Final = User("callback", "", frozenset())
"""Who sends the messages receivers answer callbacks with (the ``user`` of the journal)."""


class StateCore:
    """The records and what every endpoint group shares (see the module docstring)."""

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
        self.faults = Faults(seed, self.lock)
        self.account_callback: CallbackTarget | None = None
        self.event_sink: Callable[[Event], None] | None = None
        """Called (under the lock, in event order) with every event that has somewhere to go:
        the :class:`~surveykit.sandbox.runtime._delivery.CallbackDelivery` queue."""
        self.due_sink: Callable[[], None] | None = None
        """Called (under the lock) on a realtime clock when what falls due next may have
        changed (a send held, a reply window opened, the clock moved): the
        :class:`~surveykit.sandbox.runtime._ticker.RealtimeTicker`."""
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
        self.refused: deque[JournalEntry] = deque(maxlen=REFUSED_KEPT)
        """Requests refused before their body was read or kept (a ring, memory only)."""
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
            self.faults.reset()
            self.account_callback = None
            self.generation += 1
            self._init_empty()
            self._seed()

    # ----------------------------------------------------------------- store, counters

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
        """On a realtime clock, let what fell due happen.

        A hook: :class:`~surveykit.sandbox.state._schedule.Schedule` fills it in. The core
        alone has nothing that falls due.
        """

    def _due_changed(self) -> None:
        if self._realtime and self.due_sink is not None:
            self.due_sink()

    def _save(self, kind: str, key: str, value: dict[str, Any] | Record) -> None:
        if not self.store.persistent:
            return  # the memory store keeps nothing: don't build the JSON form at all
        self.store.put(kind, key, value.to_json() if isinstance(value, Record) else value)

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

    def _set_answers(
        self, survey: Survey, respondent: Respondent, answers: Mapping[str, str], now: datetime
    ) -> None:
        respondent.answers.update(answers)
        respondent.started = respondent.started or now
        if all(q.key in respondent.answers for q in survey.questions):
            respondent.completed = respondent.completed or now
        respondent.updated = now
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

    # ----------------------------------------------------------------- auth, account

    def user_for(self, authorization: str | None) -> User | None:
        """The user of an ``Authorization: Basic <token>`` header, or None."""
        if not authorization:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "basic":
            return None
        return self.users.get(token.strip())

    def webhook_list(self) -> list[dict[str, Any]]:
        """GET Webhook: the account's webhooks."""
        with self.lock:
            return [hook.wire() for hook in self.webhooks]

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

    # ----------------------------------------------------------------- journal, events

    def record(self, kind: str, **fields: Any) -> JournalEntry:
        """Add a journal entry (the caller holds the lock)."""
        entry = JournalEntry(seq=self._next("journal"), kind=kind, at=self.now(), **fields)
        self.journal.append(entry)
        self._save("journal", f"{entry.seq:012d}", entry)
        return entry

    def refuse(self, method: str, path: str, status: int, size: int | None, reason: str) -> None:
        """Note a refused request: a summary of fixed size, never its body, in a ring.

        ``size`` is the declared Content-Length (or the bytes read before the cap); the
        entry's ``seq`` counts every refused request since the last reset.
        """
        with self.lock:
            seq = self.refused[-1].seq + 1 if self.refused else 1
            self.refused.append(
                JournalEntry(
                    seq=seq,
                    kind="refused",
                    at=self.now(),
                    method=method[:16],
                    path=path[:256],
                    status=status,
                    body={"size": size},
                    text=reason,
                )
            )

    def save_entry(self, entry: JournalEntry) -> None:
        """Write a journal entry again after it changed (its status)."""
        with self.transaction():
            self._save("journal", f"{entry.seq:012d}", entry)

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


def _stamp_key(type: str, fields: Mapping[str, Any]) -> tuple[str | None, ...]:
    """What two events share when a receiver could take one for a retry of the other."""
    message_id = fields.get("message_id")
    status = fields.get("status")
    if is_placeholder_id(message_id):
        return (type, status, None, fields.get("source"), fields.get("destination"))
    return (type, status, message_id)


__all__ = ["CALLBACK_USER", "StateCore", "User"]
