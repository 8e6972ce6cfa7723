"""The sandbox's state as one object, composed of one object per endpoint group.

:class:`SandboxState` builds the groups over one :class:`~._core.StateCore` and hands each
the others it talks to, explicitly (no group reaches another's attributes through
``self``):

* ``core`` (:class:`~._core.StateCore`): lock, store, clock, counters, journal, events,
  faults; ``core.account`` (:class:`~._account.Account`): users and tokens, email routes,
  webhooks, the account callback;
* ``stops`` (:class:`~._stoplist.StopList`): the stop list; talks to the core;
* ``survey_group`` (:class:`~._surveys.Surveys`): surveys, respondents (indexed by
  address), import, answers, what GetResults covers; talks to the core;
* ``keyword_group`` (:class:`~._keywords.Keywords`): keywords; talks to the core;
* ``message_group`` (:class:`~._messages.Messages`): messages, held sends, open reply
  windows; talks to the core, the stop list, the surveys and the ``contact`` hook;
* ``inbound`` (:class:`~._inbound.Inbound`): owns nothing; replies, STOP/UNSTOP, carrier
  status; talks to the core, messages, stop list, keywords and surveys;
* ``link_group`` (:class:`~._links.Links`): short links; talks to the core and messages;
* ``simulation`` (:class:`~._respondents.Respondents`): the respondent model, contacts,
  planned actions; talks to the core, surveys and inbound;
* ``schedule`` (:class:`~._schedule.Schedule`): owns nothing; what falls due, in time
  order; talks to the core, the messages and the simulation's ``Actions``.

The two ways back up the chain are small interfaces set here: the messages call
``simulation.contact`` as each message goes out (:data:`~._messages.Contact`), and the
schedule runs the simulation's planned actions (:class:`~._schedule.Actions`); every
transaction first runs ``schedule.catch_up``. Callers (the routes, the control API, the
``Sandbox``) keep seeing one object: the methods below hand each call to its group, and
``messages``, ``surveys``, ``respondents``, ``keywords``, ``links`` and ``stop_list`` are
the groups' records as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from surveykit.models import SendRequest, UrlRequest
from surveykit.sandbox.data._behaviour import RespondentModel
from surveykit.sandbox.data._seed import SampleData, load_sample_data
from surveykit.sandbox.state._account import User
from surveykit.sandbox.state._clock import DEFAULT_START, Faults
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._inbound import Inbound
from surveykit.sandbox.state._keywords import Keywords
from surveykit.sandbox.state._links import Links
from surveykit.sandbox.state._messages import Messages
from surveykit.sandbox.state._records import (
    CallbackTarget,
    Event,
    JournalEntry,
    KeywordRecord,
    MessageRecord,
    Respondent,
    ShortLink,
    Survey,
)
from surveykit.sandbox.state._respondents import RespondentAction, Respondents
from surveykit.sandbox.state._schedule import Schedule
from surveykit.sandbox.state._stoplist import StopList
from surveykit.sandbox.state._store import MemoryStore, SQLiteStore
from surveykit.sandbox.state._surveys import Surveys


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
        respondents: RespondentModel | None = None,
    ) -> None:
        self.sample_data = sample_data
        self.core = core = StateCore(seed=seed, store=store, start=start, realtime=realtime)
        self.stops = StopList(core)
        self.survey_group = Surveys(core)
        self.keyword_group = Keywords(core)
        self.message_group = Messages(core, self.stops, self.survey_group)
        self.inbound = Inbound(
            core, self.message_group, self.stops, self.keyword_group, self.survey_group
        )
        self.link_group = Links(core, self.message_group)
        self.simulation = Respondents(core, self.survey_group, self.inbound, respondents)
        self.schedule = Schedule(core, self.message_group)
        self.message_group.contact = self.simulation.contact
        self.schedule.actions = self.simulation
        core.catch_up = self.schedule.catch_up
        saved = core.store.load()
        with core.transaction():
            if saved is None:
                self._seed()
            else:
                self._restore(saved)

    # ----------------------------------------------------------------- set-up

    def _groups(self) -> tuple[StopList | Surveys | Keywords | Messages | Links | Respondents, ...]:
        """The groups that own records (cleared and restored in this order)."""
        return (
            self.stops,
            self.survey_group,
            self.keyword_group,
            self.message_group,
            self.link_group,
            self.simulation,
        )

    def _seed(self) -> None:
        core = self.core
        data = load_sample_data() if self.sample_data else SampleData.empty()
        core.account.seed_from(data)
        self.survey_group.seed_from(data)
        self.keyword_group.seed_from(data)
        for hook in core.account.webhooks:
            core.save("webhook", hook.key, hook)
        self.stops.seed_from(data)
        core.save_meta()

    def _restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.core.restore(saved)
        for group in self._groups():
            group.restore(saved)

    def reset(self) -> None:
        """Forget everything: back to the sample data, the start time and no faults."""
        core = self.core
        with core.transaction():
            core.store.clear()
            core.faults.reset()
            core.account.account_callback = None
            core.generation += 1
            core.clear()
            core.account.clear()
            for group in self._groups():
                group.clear()
            self._seed()

    # ----------------------------------------------------------------- the core

    @property
    def seed(self) -> int:
        """The seed everything is drawn from."""
        return self.core.seed

    @property
    def lock(self) -> Any:
        """The one re-entrant lock of the state."""
        return self.core.lock

    @property
    def store(self) -> MemoryStore | SQLiteStore:
        """Where the state is kept (memory, or SQLite with ``--db``)."""
        return self.core.store

    @property
    def faults(self) -> Faults:
        """The injected faults."""
        return self.core.faults

    @property
    def realtime(self) -> bool:
        """Whether the clock also moves with real time."""
        return self.core.realtime

    @property
    def generation(self) -> int:
        """Bumped by :meth:`reset`, so deliveries queued before it are dropped."""
        return self.core.generation

    @property
    def journal(self) -> list[JournalEntry]:
        """The journal, oldest first."""
        return self.core.journal

    @property
    def refused(self) -> Sequence[JournalEntry]:
        """The latest refused requests (a ring, memory only)."""
        return self.core.refused

    @property
    def events(self) -> list[Event]:
        """The messaging events, in seq order."""
        return self.core.events

    @property
    def event_sink(self) -> Callable[[Event], None] | None:
        """Called with every event that has somewhere to go (the delivery queue)."""
        return self.core.event_sink

    @event_sink.setter
    def event_sink(self, sink: Callable[[Event], None] | None) -> None:
        self.core.event_sink = sink

    @property
    def due_sink(self) -> Callable[[], None] | None:
        """Called on a realtime clock when what falls due next may have changed."""
        return self.core.due_sink

    @due_sink.setter
    def due_sink(self, sink: Callable[[], None] | None) -> None:
        self.core.due_sink = sink

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the lock for one operation and write its changes when it ends."""
        with self.core.transaction():
            yield

    def now(self) -> datetime:
        """The sandbox time."""
        return self.core.now()

    def record(self, kind: str, **fields: Any) -> JournalEntry:
        """Add a journal entry (the caller holds the lock)."""
        return self.core.record(kind, **fields)

    def refuse(self, method: str, path: str, status: int, size: int | None, reason: str) -> None:
        """Note a refused request: a summary of fixed size, never its body, in a ring."""
        self.core.refuse(method, path, status, size, reason)

    def save_entry(self, entry: JournalEntry) -> None:
        """Write a journal entry again after it changed (its status)."""
        self.core.save_entry(entry)

    def event(self, seq: int) -> Event | None:
        """The event with this sequence number."""
        return self.core.event(seq)

    def mark_delivered(self, seq: int, generation: int) -> None:
        """Note that a receiver accepted the event (unless the state was reset since)."""
        self.core.mark_delivered(seq, generation)

    # ----------------------------------------------------------------- the account

    @property
    def users(self) -> dict[str, User]:
        """The users by token."""
        return self.core.account.users

    @property
    def account_callback(self) -> CallbackTarget | None:
        """The account-level callback settings (None: none set)."""
        return self.core.account.account_callback

    @property
    def callback_url(self) -> str | None:
        """The account callback's first URL (None when no account callback is set)."""
        return self.core.account.callback_url

    def set_account_callback(self, target: CallbackTarget | None) -> None:
        """Configure (or remove) the account-level callback settings."""
        with self.core.transaction():
            self.core.account.account_callback = target
            self.core.save_meta()

    def user_for(self, authorization: str | None) -> User | None:
        """The user of an ``Authorization: Basic <token>`` header, or None."""
        return self.core.account.user_for(authorization)

    def webhook_list(self) -> list[dict[str, Any]]:
        """GET Webhook: the account's webhooks."""
        return self.core.account.webhook_list()

    # ----------------------------------------------------------------- the clock

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock forward: scheduled messages go out, reply windows close."""
        return self.schedule.advance(delta)

    def next_due(self) -> datetime | None:
        """When the next held send goes out or reply window closes (None: nothing pending)."""
        return self.schedule.next_due()

    def catch_up(self) -> None:
        """On a realtime clock, let what fell due happen."""
        self.schedule.catch_up()

    # ----------------------------------------------------------------- messages, inbound

    def lookup(self, number: str) -> dict[str, Any]:
        """GET Message/Lookup (see :meth:`Messages.lookup`)."""
        return self.message_group.lookup(number)

    def send_message(self, request: SendRequest, user: User) -> dict[str, Any]:
        """POST Message (see :meth:`Messages.send_message`)."""
        return self.message_group.send_message(request, user)

    def send_callback_reply(
        self, event_seq: int, generation: int, request: SendRequest
    ) -> dict[str, Any] | None:
        """Send the message a receiver answered a Message/Keyword callback with."""
        return self.message_group.send_callback_reply(event_seq, generation, request)

    def send_email(self, body: Mapping[str, Any], user: User) -> dict[str, Any]:
        """POST Message/SendEmail (see :meth:`Messages.send_email`)."""
        return self.message_group.send_email(body, user)

    @property
    def messages(self) -> dict[str, MessageRecord]:
        """The accepted messages by key."""
        return self.message_group.messages

    def reply(self, from_number: str, text: str, to: str | None = None) -> Event:
        """A respondent's inbound message (see :meth:`Inbound.reply`)."""
        return self.inbound.reply(from_number, text, to)

    def carrier_status(self, message_id: str, status: str) -> Event:
        """A carrier progress update: a Receipt with ``status`` for a message sent."""
        return self.inbound.carrier_status(message_id, status)

    @property
    def stop_list(self) -> dict[str, datetime]:
        """The stop list: addresses (lower case) and when they joined it."""
        return self.stops.stop_list

    def add_stop(self, address: str) -> None:
        """Put a number or email address on the stop list."""
        self.stops.add_stop(address)

    def remove_stop(self, address: str) -> bool:
        """Take a number or email address off the stop list; whether it was on it."""
        return self.stops.remove_stop(address)

    # ----------------------------------------------------------------- surveys

    @property
    def surveys(self) -> dict[str, Survey]:
        """The surveys by reference (lower case)."""
        return self.survey_group.surveys

    @property
    def respondents(self) -> dict[str, Respondent]:
        """The stored respondents by id."""
        return self.survey_group.respondents

    def find_survey(self, reference: str) -> Survey | None:
        """A survey by reference (letter case ignored)."""
        return self.survey_group.find_survey(reference)

    def put_survey(self, survey: Survey) -> None:
        """Add (or replace) a survey and its import definition."""
        self.survey_group.put_survey(survey)

    def import_records(self, reference: str, records: Sequence[Any]) -> list[dict[str, Any]]:
        """POST Data/Import: one ImportResponse per record, in order."""
        return self.survey_group.import_records(reference, records)

    def answers(
        self, reference: str, respondent: str | None, answers: Mapping[str, Any] | None
    ) -> str:
        """Record survey answers; returns the respondent id."""
        return self.survey_group.answers(reference, respondent, answers)

    def result_ids(self, reference: str) -> tuple[list[Survey], list[str]]:
        """The surveys and respondent ids GetResults covers (``*`` is every survey)."""
        return self.survey_group.result_ids(reference)

    # ----------------------------------------------------------------- keywords, links

    @property
    def keywords(self) -> dict[str, KeywordRecord]:
        """The keywords by name (upper case)."""
        return self.keyword_group.keywords

    @property
    def links(self) -> dict[str, ShortLink]:
        """The short links by key (domain and code)."""
        return self.link_group.links

    def create_keyword(self, keyword: KeywordRecord) -> dict[str, Any]:
        """POST Keyword."""
        return self.keyword_group.create_keyword(keyword)

    def update_keyword(self, name: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH Keyword."""
        return self.keyword_group.update_keyword(name, changes)

    def delete_keyword(self, name: str) -> dict[str, Any]:
        """DELETE Keyword."""
        return self.keyword_group.delete_keyword(name)

    def list_keywords(self) -> list[dict[str, Any]]:
        """GET Keyword."""
        return self.keyword_group.list_keywords()

    def register_link(self, request: UrlRequest) -> ShortLink:
        """Make (or reuse) a short link."""
        return self.link_group.register_link(request)

    def find_link(self, host: str | None, code: str) -> ShortLink | None:
        """The link a short URL names."""
        return self.link_group.find_link(host, code)

    def click(self, link: ShortLink, short_url: str, by: str | None = None) -> str:
        """Count a click on a short link and record a Click event; return the full URL."""
        return self.link_group.click(link, short_url, by)

    # ----------------------------------------------------------------- simulated respondents

    @property
    def respondent_model(self) -> RespondentModel | None:
        """How simulated respondents behave (None: not simulated)."""
        return self.simulation.respondent_model

    def set_respondent_model(self, model: RespondentModel | None) -> None:
        """Simulate respondents with ``model`` from now on (None: stop simulating)."""
        self.simulation.set_respondent_model(model)

    def behaviour_of(self, address: str) -> str:
        """What ``address`` does under the current model."""
        return self.simulation.behaviour_of(address)

    def contacts_of(self, address: str) -> int:
        """How many messages reached ``address`` while respondents were simulated."""
        return self.simulation.contacts_of(address)

    def pending_actions(self) -> list[RespondentAction]:
        """The simulated respondents' actions still to come, in time order."""
        return self.simulation.pending_actions()

    def add_campaign_survey(
        self,
        reference: str,
        rows: int,
        *,
        countries: Sequence[str],
        seed: int,
        survey_id: int,
        channel: str = "SMS",
        source: str | None = None,
    ) -> Survey:
        """Add a survey of ``rows`` stored respondents nobody has invited yet."""
        return self.simulation.add_campaign_survey(
            reference,
            rows,
            countries=countries,
            seed=seed,
            survey_id=survey_id,
            channel=channel,
            source=source,
        )


__all__ = ["SandboxState"]
