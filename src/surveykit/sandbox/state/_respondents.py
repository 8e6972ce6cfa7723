"""Simulated respondents: who answers, who needs a reminder, who stops, who cannot be reached.

Off unless a :class:`~surveykit.sandbox.data._behaviour.RespondentModel` is set. Then every
message or email that goes out (its ``Sent`` receipt) is a *contact* of its destination,
counted per address, and the address's behaviour (drawn from the seed and the address
alone, :func:`~surveykit.sandbox.data._behaviour.behaviour`) decides what follows, on the
sandbox clock:

* ``answer_first``: a delay after the first contact, the respondent *starts* (answers the
  first question), and a few minutes later *completes* (answers the rest);
* ``answer_after_reminder``: the same, after the second contact;
* ``never``: nothing;
* ``stop``: a delay after the first contact, an inbound ``STOP`` from the address (the
  Stop event, the stop list), as :meth:`~._inbound.Inbound.reply` makes it; rarely an
  opt-out in other words instead (:func:`~surveykit.sandbox.data._behaviour.stop_reply`),
  an inbound Message that leaves the stop list alone;
* ``undeliverable``: every message to the address gets a ``Failed`` receipt, not
  ``Delivered``.

Answers go to the stored respondents with that address (of the message's survey when it
has a ``surveyId``, else of any survey) who have not completed; a contact also sets their
``invited`` time. Pending actions happen in time order with held sends and reply windows
(:class:`~._schedule.Schedule`), so GetResults shows an answer only once the clock has
passed its time. Contacts and pending actions are kept in the store (``--db``).

:class:`Respondents` owns the model, the contacts per address and the planned actions. The
messages call :meth:`Respondents.contact` as each message goes out; the schedule runs the
planned actions through :class:`~._schedule.Actions`; a planned STOP is an inbound reply
(:meth:`~._inbound.Inbound.receive`) and answers go to the surveys.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from surveykit.sandbox.data import _behaviour
from surveykit.sandbox.data._behaviour import RespondentModel, address_key
from surveykit.sandbox.data._campaign import campaign_people, campaign_survey
from surveykit.sandbox.state._core import CALLBACK_USER, StateCore
from surveykit.sandbox.state._inbound import Inbound
from surveykit.sandbox.state._records import MessageRecord, Record, Respondent, Survey
from surveykit.sandbox.state._surveys import Surveys

_ACTION: str = "respondent-action"
_CONTACTS: str = "respondent-contacts"
_NOT_CONTACTS = frozenset({CALLBACK_USER.name, "keyword"})
"""Messages that are answers to the respondent (a callback's reply, a keyword's), not contacts."""


@dataclass
class RespondentAction(Record):
    """Something a simulated respondent will do at ``due``: ``start``, ``complete``, ``stop``."""

    DATETIMES: ClassVar[tuple[str, ...]] = ("due",)

    seq: int
    due: datetime
    kind: str
    address: str
    source: str
    """The number that wrote to them (a STOP goes back to it)."""
    respondents: list[str] = field(default_factory=list)


class Respondents:
    """The simulation of respondents over the clock (see the module docstring)."""

    def __init__(
        self,
        core: StateCore,
        surveys: Surveys,
        inbound: Inbound,
        model: RespondentModel | None = None,
    ) -> None:
        self.core = core
        self.surveys = surveys
        self.inbound = inbound
        self._default = model
        self.clear()

    def clear(self) -> None:
        """Back to the model given at the start, no contacts, nothing planned."""
        self.respondent_model: RespondentModel | None = self._default
        self.sim_contacts: dict[str, int] = {}
        self.sim_queue: list[tuple[datetime, int]] = []
        self.sim_actions: dict[int, RespondentAction] = {}
        self.core.counters["action"] = 0

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the contacts and planned actions from the store."""
        for key, value in saved.get(_CONTACTS, {}).items():
            self.sim_contacts[key] = int(value["contacts"])
        for value in saved.get(_ACTION, {}).values():
            action = RespondentAction.from_json(value)
            self.sim_actions[action.seq] = action
            bisect.insort(self.sim_queue, (action.due, action.seq))

    # ----------------------------------------------------------------- settings

    def set_respondent_model(self, model: RespondentModel | None) -> None:
        """Simulate respondents with ``model`` from now on (None: stop simulating).

        Actions already planned still happen.
        """
        with self.core.transaction():
            self.respondent_model = model

    def _seed_of(self, model: RespondentModel) -> int:
        return self.core.seed if model.seed is None else model.seed

    def behaviour_of(self, address: str) -> str:
        """What ``address`` does under the current model (one of ``BEHAVIOURS``).

        Raises:
            ValueError: when no model is set.
        """
        with self.core.lock:
            model = self.respondent_model
        if model is None:
            raise ValueError("respondents: the sandbox does not simulate respondents")
        return _behaviour.behaviour(model, self._seed_of(model), address)

    def contacts_of(self, address: str) -> int:
        """How many messages reached ``address`` while respondents were simulated."""
        with self.core.lock:
            return self.sim_contacts.get(address_key(address), 0)

    def pending_actions(self) -> list[RespondentAction]:
        """The simulated respondents' actions still to come, in time order."""
        with self.core.transaction():
            return [self.sim_actions[seq] for _, seq in self.sim_queue]

    # ----------------------------------------------------------------- a campaign survey

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
        """Add a survey of ``rows`` stored respondents nobody has invited yet.

        Raises:
            ValueError: naming the field: a reference or survey id another survey has, an
                unknown country, more rows than a country's numbers.
        """
        survey = campaign_survey(reference, survey_id=survey_id, channel=channel)
        if source is not None:
            survey.source = source
        people = campaign_people(rows, countries, seed)
        surveys, core = self.surveys, self.core
        with core.transaction():
            existing = surveys.find_survey(survey.reference)
            if existing is not None:
                raise ValueError(f"reference: a survey {existing.reference!r} exists already")
            for other in surveys.surveys.values():
                if other.survey_id == survey.survey_id:
                    raise ValueError(
                        f"survey_id: {survey.survey_id} is the id of survey {other.reference!r}"
                    )
            surveys.put(survey)
            now = core.now()
            for person in people:
                surveys.put_respondent(
                    Respondent(
                        respondent_id=f"{survey.survey_id}{core.next('respondent'):06d}",
                        survey_reference=survey.reference,
                        added=now,
                        updated=now,
                        first_name=person["firstName"],
                        last_name=person["lastName"],
                        mobile_number=person["mobileNumber"],
                        channel=survey.channel,
                    )
                )
            core.save_meta()
        return survey

    # ----------------------------------------------------------------- the hooks

    def contact(self, message: MessageRecord, at: datetime) -> bool:
        """Note that ``message`` reached its destination at ``at``; whether it fails there.

        The messages' :data:`~._messages.Contact` hook: plans what the address does next.
        """
        model = self.respondent_model
        if model is None or message.user in _NOT_CONTACTS:
            return False
        seed = self._seed_of(model)
        key = address_key(message.destination)
        contact = self.sim_contacts.get(key, 0) + 1
        self.sim_contacts[key] = contact
        self.core.save(_CONTACTS, key, {"contacts": contact})
        matched = self.surveys.respondents_for(message)
        for respondent in matched:
            if respondent.invited is None:
                respondent.invited = at
                respondent.updated = at
                self.core.save("respondent", respondent.respondent_id, respondent)
        kind = _behaviour.behaviour(model, seed, message.destination)
        if kind == "undeliverable":
            return True
        answers = (kind == "answer_first" and contact == 1) or (
            kind == "answer_after_reminder" and contact == 2
        )
        open_ids = [r.respondent_id for r in matched if r.completed is None]
        if answers and open_ids:
            due = at + _behaviour.delay(model, seed, message.destination, contact)
            self._plan("start", due, message.destination, message.source, open_ids)
        elif kind == "stop" and contact == 1 and message.channel != "Email":
            due = at + _behaviour.delay(model, seed, message.destination, contact)
            self._plan("stop", due, message.destination, message.source, [])
        return False

    def _plan(self, kind: str, due: datetime, address: str, source: str, ids: list[str]) -> None:
        action = RespondentAction(
            seq=self.core.next("action"),
            due=due,
            kind=kind,
            address=address,
            source=source,
            respondents=ids,
        )
        self.sim_actions[action.seq] = action
        bisect.insort(self.sim_queue, (action.due, action.seq))
        self.core.save(_ACTION, f"{action.seq:012d}", action)
        self.core.due_changed()

    def next_action_time(self) -> datetime | None:
        """When the next planned action falls due (None: none pending)."""
        return self.sim_queue[0][0] if self.sim_queue else None

    def run_next_action(self) -> None:
        """Let the next planned action happen (the schedule's :class:`~._schedule.Actions`)."""
        core, surveys = self.core, self.surveys
        due, seq = self.sim_queue.pop(0)
        action = self.sim_actions.pop(seq)
        if core.store.persistent:
            core.store.delete(_ACTION, f"{seq:012d}")
        if not core.realtime and due > core.clock.now():
            # On a fixed clock ``advance`` moves it once at the end; what the respondent
            # does (journal entries, events) happens at its own time.
            core.clock.set(due)
        model = self.respondent_model
        seed = core.seed if model is None else self._seed_of(model)
        if action.kind == "stop":
            text = _behaviour.stop_reply(seed, action.address)
            self.inbound.receive(action.address, text, action.source)
            return
        for respondent_id in action.respondents:
            respondent = surveys.respondents.get(respondent_id)
            survey = surveys.find_survey(respondent.survey_reference) if respondent else None
            if respondent is None or survey is None or respondent.completed is not None:
                continue
            answers = surveys.generated_answers(survey, respondent)
            if action.kind == "start":
                answers = dict(list(answers.items())[:1])
            surveys.set_answers(survey, respondent, answers, due)
        if action.kind == "start":
            finish = due + _behaviour.duration(seed, action.address)
            self._plan("complete", finish, action.address, action.source, action.respondents)


__all__ = ["RespondentAction", "Respondents"]
