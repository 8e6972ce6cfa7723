"""Surveys: POST Data/Import, simulated answers, and what POST Survey/GetResults covers.

:class:`Surveys` owns the surveys and their respondents (with an index by address), and
answers for them: the other groups ask it whose answer a reply is
(:meth:`Surveys.answer_from_reply`), whom a message invited (:meth:`Surveys.mark_invited`)
and whom it reached (:meth:`Surveys.respondents_for`). The results themselves are encoded
and streamed by :mod:`surveykit.sandbox.http._results`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from surveykit.models.imports import RESPONDENT_FIELDS
from surveykit.sandbox.data._behaviour import address_key
from surveykit.sandbox.data._seed import SampleData
from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._errors import Problem, validation
from surveykit.sandbox.state._records import MessageRecord, Respondent, Survey, iso

MAX_IMPORT_RECORDS: Final = 10_000
"""The largest Data/Import list the sandbox takes in one request (the reference: not shown)."""

_ATTRIBUTES: Final = {
    "title": "title",
    "firstName": "first_name",
    "lastName": "last_name",
    "mobileNumber": "mobile_number",
    "emailAddress": "email_address",
    "website": "website",
    "dateOfBirth": "date_of_birth",
}


class Surveys:
    """Surveys, their respondents and answers."""

    def __init__(self, core: StateCore) -> None:
        self.core = core
        self.clear()

    def clear(self) -> None:
        """No surveys, no respondents."""
        self.surveys: dict[str, Survey] = {}
        self.respondents: dict[str, Respondent] = {}
        self.by_survey: dict[str, list[str]] = {}
        self._by_address: dict[str, set[str]] = {}

    def seed_from(self, data: SampleData) -> None:
        """Take the sample data's surveys and respondents."""
        for survey in data.surveys:
            self.put(survey)
        for respondent in data.respondents:
            self.put_respondent(respondent)
            self.core.counters["respondent"] += 1

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the surveys and respondents from the store."""
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
        for respondent in self.respondents.values():
            self._index(respondent)

    def find_survey(self, reference: str) -> Survey | None:
        """A survey by reference (letter case ignored)."""
        return self.surveys.get(reference.strip().lower())

    def _references(self) -> list[str]:
        """Every survey reference, for a 404's ``references`` (the client suggests from it)."""
        return sorted(survey.reference for survey in self.surveys.values())

    def put_survey(self, survey: Survey) -> None:
        """Add (or replace) a survey and its import definition."""
        with self.core.transaction():
            self.put(survey)

    def put(self, survey: Survey) -> None:
        """Add (or replace) a survey, the lock held."""
        self.surveys[survey.reference.lower()] = survey
        self.by_survey.setdefault(survey.reference.lower(), [])
        self.core.save("survey", survey.reference.lower(), survey)

    def put_respondent(self, respondent: Respondent) -> None:
        """Add (or replace) a respondent, the lock held."""
        if respondent.respondent_id not in self.respondents:
            self.by_survey.setdefault(respondent.survey_reference.lower(), []).append(
                respondent.respondent_id
            )
        self.respondents[respondent.respondent_id] = respondent
        self.core.save("respondent", respondent.respondent_id, respondent)
        self._index(respondent)

    def _index(self, respondent: Respondent) -> None:
        for address in (respondent.mobile_number, respondent.email_address):
            if address:
                self._by_address.setdefault(address_key(address), set()).add(
                    respondent.respondent_id
                )

    def set_answers(
        self, survey: Survey, respondent: Respondent, answers: Mapping[str, str], now: datetime
    ) -> None:
        """Record answers of a respondent (started, and completed when nothing is left)."""
        respondent.answers.update(answers)
        respondent.started = respondent.started or now
        if all(q.key in respondent.answers for q in survey.questions):
            respondent.completed = respondent.completed or now
        respondent.updated = now
        self.core.save("respondent", respondent.respondent_id, respondent)

    # ----------------------------------------------------------------- import

    def import_records(self, reference: str, records: Sequence[Any]) -> list[dict[str, Any]]:
        """POST Data/Import: one ImportResponse per record, in order."""
        if len(records) > MAX_IMPORT_RECORDS:
            raise validation(
                {"list": [f"At most {MAX_IMPORT_RECORDS} records per request, got {len(records)}"]}
            )
        with self.core.transaction():
            survey = self.find_survey(reference)
            if survey is None:
                raise Problem(
                    404,
                    f"No survey or import definition has the reference {reference!r}.",
                    extensions={"references": self._references()},
                )
            now = self.core.now()
            out = []
            for record in records:
                fields = survey.import_fields
                values, problems, unknown = _rules.validate_record(fields, record)
                item = {name: values.get(name) for name in RESPONDENT_FIELDS}
                item["when"] = iso(now)
                notes = [_rules.unknown_note(fields, unknown)] if unknown else []
                if problems:
                    item.update(status="Error", message="; ".join([*problems, *notes]))
                else:
                    added = self._upsert(survey, values, now)
                    outcome = "Added" if added else "Updated"
                    item.update(status="Success", message="; ".join([outcome, *notes]))
                out.append(item)
            self.core.save_meta()
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
            respondent_id=f"{survey.survey_id}{self.core.next('respondent'):06d}",
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
        self.put_respondent(respondent)
        return existing is None

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
        with self.core.transaction():
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
                answers = self.generated_answers(survey, target)
            unknown = [key for key in answers if key not in {q.key for q in survey.questions}]
            if unknown:
                keys = ", ".join(q.key for q in survey.questions)
                raise KeyError(f"unknown question keys {unknown} (the survey has {keys})")
            answers = {k: str(v) for k, v in answers.items()}
            self.set_answers(survey, target, answers, self.core.now())
            return target.respondent_id

    def generated_answers(self, survey: Survey, respondent: Respondent) -> dict[str, str]:
        """Answers to the questions still open, drawn from the seed and the respondent."""
        rng = random.Random(f"{self.core.seed}:{respondent.respondent_id}")
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

    # ----------------------------------------------------------------- results

    def result_ids(self, reference: str) -> tuple[list[Survey], list[str]]:
        """The surveys and respondent ids GetResults covers (``*`` is every survey)."""
        with self.core.transaction():
            if reference.strip() == "*":
                surveys = sorted(self.surveys.values(), key=lambda s: s.survey_id)
            else:
                survey = self.find_survey(reference)
                if survey is None:
                    raise Problem(
                        404,
                        f"No survey has the reference {reference!r}.",
                        extensions={"references": self._references()},
                    )
                surveys = [survey]
            ids: list[str] = []
            for survey in surveys:
                ids.extend(self.by_survey.get(survey.reference.lower(), []))
            return surveys, ids

    # ----------------------------------------------------------------- what messages do

    def mark_invited(self, message: MessageRecord, at: datetime) -> None:
        """Set ``invited`` of the respondents of the message's survey it went to."""
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
                    self.core.save("respondent", respondent.respondent_id, respondent)

    def answer_from_reply(
        self, original: MessageRecord, number: str, text: str, now: datetime
    ) -> None:
        """A reply to a survey message: the respondent's answer to their next open question."""
        for survey in self.surveys.values():
            if survey.survey_id != original.survey_id:
                continue
            for respondent_id in self.by_survey.get(survey.reference.lower(), []):
                respondent = self.respondents[respondent_id]
                if respondent.mobile_number == number:
                    pending = [q.key for q in survey.questions if q.key not in respondent.answers]
                    if pending:
                        self.set_answers(survey, respondent, {pending[0]: text.strip()}, now)
                    return

    def respondents_for(self, message: MessageRecord) -> list[Respondent]:
        """The stored respondents ``message`` reached (of its survey, when it names one)."""
        key = address_key(message.destination)
        ids = sorted(self._by_address.get(key, ()))
        surveys = {
            s.reference.lower()
            for s in self.surveys.values()
            if message.survey_id is None or s.survey_id == message.survey_id
        }
        out = []
        for respondent_id in ids:
            respondent = self.respondents.get(respondent_id)
            if respondent is None or respondent.survey_reference.lower() not in surveys:
                continue
            addresses = (respondent.mobile_number, respondent.email_address)
            if any(a is not None and address_key(a) == key for a in addresses):
                out.append(respondent)
        return out


__all__ = ["MAX_IMPORT_RECORDS", "Surveys"]
