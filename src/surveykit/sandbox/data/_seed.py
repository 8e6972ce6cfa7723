"""Loads the seed data in ``sample_data/``: the account, surveys, keywords and webhooks.

Every name, number and address in it is fictional: numbers come from ranges reserved for
drama (UK 07700 900xxx, 020 7946 0xxx; France 06 39 98 xx xx; North America 555-01xx;
Australia 0491 570 xxx) and addresses from example.org, example.com and example.net.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from surveykit.sandbox.state._records import (
    ImportField,
    KeywordRecord,
    Question,
    Respondent,
    Survey,
    WebhookRecord,
    parse_iso,
)

SURVEY_FILES = ("csat-sms.json", "nps-whatsapp.json", "event-email.json")
"""The sample surveys, in the order their respondents are numbered."""
GENERATED_SURVEY_ID: Final = 9001
"""The survey id of a generated survey unless told."""

_GENERATED_KINDS: Final = ("nps", "choice", "choice", "text")


@dataclass
class SampleData:
    """Everything the sandbox starts with."""

    account_name: str = "Sandbox account"
    email_routes: dict[str, dict[str, str]] = field(default_factory=dict)
    token_metadata: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    stop_list: list[str] = field(default_factory=list)
    surveys: list[Survey] = field(default_factory=list)
    respondents: list[Respondent] = field(default_factory=list)
    keywords: list[KeywordRecord] = field(default_factory=list)
    webhooks: list[WebhookRecord] = field(default_factory=list)

    @classmethod
    def empty(cls) -> SampleData:
        """An account with its email routes and nothing else (``sample_data=False``)."""
        account = _read("account.json")
        return cls(
            account_name=account["name"],
            email_routes=account["emailRoutes"],
            token_metadata=account["tokenMetadata"],
        )


def _read(name: str) -> Any:
    path = resources.files("surveykit.sandbox").joinpath("sample_data", name)
    return json.loads(path.read_text(encoding="utf-8"))


def survey_from(data: dict[str, Any]) -> Survey:
    """A survey and its import definition from the sample-data JSON form."""
    return Survey(
        reference=data["reference"],
        survey_id=int(data["surveyId"]),
        name=data["name"],
        channel=data["channel"],
        source=data.get("source", ""),
        questions=[
            Question(
                key=q["key"],
                text=q["text"],
                kind=q.get("kind", "text"),
                choices=list(q.get("choices", [])),
            )
            for q in data["questions"]
        ],
        import_fields=[
            ImportField(
                name=f["name"],
                kind=f.get("kind", "text"),
                required=bool(f.get("required", False)),
                max_length=f.get("maxLength"),
                choices=list(f.get("choices", [])),
            )
            for f in data["importDefinition"]["fields"]
        ],
    )


def respondent_from(survey: Survey, number: int, data: dict[str, Any]) -> Respondent:
    """A respondent from the sample-data JSON form; ``number`` makes its id."""
    added = parse_iso(data["added"])
    assert added is not None
    invited, started, completed = (
        parse_iso(data.get(name)) for name in ("invited", "started", "completed")
    )
    latest = max([added, *(t for t in (invited, started, completed) if t is not None)])
    return Respondent(
        respondent_id=f"{survey.survey_id}{number:06d}",
        survey_reference=survey.reference,
        added=added,
        updated=latest,
        title=data.get("title"),
        first_name=data.get("firstName"),
        last_name=data.get("lastName"),
        mobile_number=data.get("mobileNumber"),
        email_address=data.get("emailAddress"),
        website=data.get("website"),
        date_of_birth=data.get("dateOfBirth"),
        channel=survey.channel,
        answers={key: str(value) for key, value in data.get("answers", {}).items()},
        invited=invited,
        started=started,
        completed=completed,
    )


def load_sample_data() -> SampleData:
    """Read ``sample_data/``."""
    data = SampleData.empty()
    account = _read("account.json")
    data.stop_list = list(account.get("stopList", []))
    number = 0
    for name in SURVEY_FILES:
        raw = _read(f"surveys/{name}")
        survey = survey_from(raw)
        data.surveys.append(survey)
        for item in raw["respondents"]:
            number += 1
            data.respondents.append(respondent_from(survey, number, item))
    for item in _read("keywords.json"):
        created = parse_iso(item["created"])
        assert created is not None
        data.keywords.append(
            KeywordRecord(
                keyword=item["keyword"],
                type=item.get("type"),
                response=item.get("response"),
                finish_date=parse_iso(item.get("finishDate")),
                created=created,
                updated=created,
            )
        )
    for item in _read("webhooks.json"):
        data.webhooks.append(
            WebhookRecord(
                name=item["name"],
                key=item["key"],
                secret=item["secret"],
                payload=item["payload"],
                content_type=item.get("contentType", "application/json"),
                is_active=item.get("isActive", True),
                events=list(item.get("events", ["All"])),
                method=item.get("method", "POST"),
                timeout=item.get("timeout", 30000),
                total_timeout=item.get("totalTimeout", 90000),
                retries=item.get("retries", 3),
                status=item.get("status", 1),
            )
        )
    return data


MAX_GENERATED_QUESTIONS = 500
"""A generated survey's question limit: each question is a column of every row."""


def _whole(name: str, value: object, minimum: int | None) -> int:
    # bool is an int in Python, never a count or an id here.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected a number >= {minimum}, got {value}")
    return value


def generated_survey(
    reference: str,
    rows: int,
    *,
    questions: int = 10,
    seed: int = 0,
    nasty: bool = False,
    survey_id: int = GENERATED_SURVEY_ID,
    wave: int = 0,
    design: bool = False,
) -> Survey:
    """A benchmark survey of ``rows`` respondents drawn from the generator when asked for.

    Only the definition is kept; :mod:`surveykit.sandbox.generator` makes its results chunk
    by chunk at GetResults time, from ``seed``.

    Raises:
        ValueError: naming the field (``rows: expected a number >= 0, got -1``).
    """
    if not isinstance(reference, str) or not reference.strip():
        raise ValueError(f"reference: expected a survey reference, got {reference!r}")
    rows = _whole("rows", rows, 0)
    questions = _whole("questions", questions, 1)
    if questions > MAX_GENERATED_QUESTIONS:
        raise ValueError(
            f"questions: expected at most {MAX_GENERATED_QUESTIONS}, got {questions}"
        )
    seed = _whole("seed", seed, None)
    survey_id = _whole("survey_id", survey_id, 1)
    wave = _whole("wave", wave, 0)
    if not isinstance(nasty, bool):
        raise ValueError(f"nasty: expected true or false, got {nasty!r}")
    if not isinstance(design, bool):
        raise ValueError(f"design: expected true or false, got {design!r}")
    return Survey(
        reference=reference.strip(),
        survey_id=survey_id,
        name=f"Generated survey {reference.strip()}",
        channel="SMS",
        questions=[
            Question(key=f"Q{i}", text=f"Question {i}", kind=_GENERATED_KINDS[(i - 1) % 4])
            for i in range(1, questions + 1)
        ],
        import_fields=[
            ImportField("firstName", required=True),
            ImportField("lastName"),
            ImportField("mobileNumber", kind="phone", required=True),
        ],
        generated_rows=rows,
        generated_seed=seed,
        generated_nasty=nasty,
        generated_wave=wave,
        generated_design=design,
    )
