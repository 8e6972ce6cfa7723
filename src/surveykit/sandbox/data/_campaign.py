"""A campaign survey: stored respondents in several countries, invited by nobody yet.

Unlike a generated benchmark survey (drawn at request time), its respondents are records
of the state, so they can be invited, answer, and be seen answering in GetResults as the
clock moves (see :mod:`surveykit.sandbox.state._respondents`). Their numbers are valid
for libphonenumber, in ranges that put them in known time zones:

* ``GB``: UK mobiles ``+44 7400 000000`` to ``+44 7400 999999`` (Europe/London; most
  of 07700 is not valid for libphonenumber, and its drama range 07700 900xxx only
  possible);
* ``AU``: Australia's fictional mobiles ``+61 491 570 006``-``159``, ``571 266``-``491``,
  ``572 549``-``665`` (ACMA's ranges for drama: 497 numbers; a mobile names no state, so
  libphonenumber gives every Australian zone);
* ``US``: ``555-0100`` to ``555-0199`` (the fictional lines) in twelve area codes across
  the US time zones: New York, Boston, Miami, Atlanta, Chicago, Austin, Houston, Denver,
  Phoenix, San Francisco, Seattle, Honolulu.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Final

from surveykit.sandbox.state._records import ImportField, Question, Survey

CAMPAIGN_SURVEY_ID: Final = 9101
"""The survey id of a campaign survey unless told."""
CAMPAIGN_SOURCE: Final = "447700900300"
"""The number a campaign survey's messages are sent from unless told."""

_US_AREAS: Final = (
    *("212", "617", "305", "404"),  # Eastern
    *("312", "512", "713"),  # Central
    *("303", "602"),  # Mountain (Phoenix: no daylight saving)
    *("415", "206"),  # Pacific
    "808",  # Hawaii
)
_AU_RANGES: Final = ((570006, 570159), (571266, 571491), (572549, 572665))


def _pool(country: str) -> tuple[int, Callable[[int], str]]:
    """How many numbers a country's range holds, and its ``i``-th number."""
    if country == "GB":
        return 1_000_000, lambda i: f"447400{i:06d}"
    if country == "AU":
        numbers = [f"61491{n}" for low, high in _AU_RANGES for n in range(low, high + 1)]
        return len(numbers), numbers.__getitem__
    lines = [f"1{area}5550{n}" for area in _US_AREAS for n in range(100, 200)]
    return len(lines), lines.__getitem__


COUNTRIES: Final = ("GB", "AU", "US")
"""The countries a campaign survey's numbers may come from (ISO 3166 codes)."""

_FIRST: Final = (
    "Olivia", "Noah", "Amelia", "Oliver", "Isla", "Jack", "Zoë", "José", "Siobhán", "Priya",
    "Kwame", "Chloé", "Aoife", "Mia", "Liam", "Charlotte", "Ngọc Anh", "Ahmed", "Harper",
    "Mason", "Ava", "Lucas", "Ella", "William", "Grace", "Ethan", "Matilda", "Jayden",
)  # fmt: skip
_LAST: Final = (
    "Smith", "Jones", "Williams", "Brown", "Taylor", "Wilson", "Nguyen", "O'Brien", "García",
    "Patel", "Kim", "Müller", "Walsh", "Johnson", "Martin", "Lee", "Thompson", "White",
    "Singh", "Davies", "Evans", "Roberts", "Anderson", "Clarke",
)  # fmt: skip

QUESTIONS: Final = (
    Question(
        key="Q1",
        kind="rating",
        text="How satisfied were you with our service? Reply 1 (very unhappy) to 5 (very happy).",
    ),
    Question(
        key="Q2",
        kind="nps",
        text="How likely are you to recommend us to a friend or colleague? Reply 0 (not at "
        "all likely) to 10 (extremely likely).",
    ),
    Question(
        key="Q3",
        kind="choice",
        text="May we contact you about your answers? Reply Yes or No.",
        choices=["Yes", "No"],
    ),
    Question(key="Q4", kind="text", text="What one thing could we do better?"),
)


def campaign_numbers(rows: int, countries: Sequence[str], seed: int) -> list[str]:
    """``rows`` distinct numbers, the countries taken in turn, drawn from ``seed``.

    Raises:
        ValueError: naming the field, for an unknown country or more rows than a
            country's range holds.
    """
    chosen = [str(c).strip().upper() for c in countries]
    if not chosen:
        raise ValueError("countries: give at least one of " + ", ".join(COUNTRIES))
    for country in chosen:
        if country not in COUNTRIES:
            known = ", ".join(COUNTRIES)
            raise ValueError(f"countries: unknown country {country!r} (known: {known})")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"countries: a country is given twice in {chosen}")
    wanted = {c: len(range(i, rows, len(chosen))) for i, c in enumerate(chosen)}
    drawn: dict[str, list[str]] = {}
    for country in chosen:
        size, number = _pool(country)
        if wanted[country] > size:
            raise ValueError(
                f"rows: {rows} respondents need {wanted[country]} numbers in {country}, whose "
                f"range holds {size}"
            )
        rng = random.Random(f"{seed}:campaign:{country}")
        drawn[country] = [number(i) for i in rng.sample(range(size), wanted[country])]
    return [drawn[chosen[i % len(chosen)]][i // len(chosen)] for i in range(rows)]


def campaign_survey(
    reference: str,
    *,
    survey_id: int = CAMPAIGN_SURVEY_ID,
    channel: str = "SMS",
    source: str = CAMPAIGN_SOURCE,
) -> Survey:
    """The definition of a campaign survey (four questions; first name and mobile required)."""
    if not isinstance(reference, str) or not reference.strip():
        raise ValueError(f"reference: expected a survey reference, got {reference!r}")
    if isinstance(survey_id, bool) or not isinstance(survey_id, int) or survey_id < 1:
        raise ValueError(f"survey_id: expected a whole number >= 1, got {survey_id!r}")
    if channel not in ("SMS", "WhatsApp"):
        raise ValueError(f"channel: expected SMS or WhatsApp, got {channel!r}")
    return Survey(
        reference=reference.strip(),
        survey_id=survey_id,
        name=f"Campaign survey {reference.strip()}",
        channel=channel,
        source=source,
        questions=[Question(q.key, q.text, q.kind, list(q.choices)) for q in QUESTIONS],
        import_fields=[
            ImportField("title", max_length=20),
            ImportField("firstName", required=True, max_length=50),
            ImportField("lastName", max_length=50),
            ImportField("mobileNumber", kind="phone", required=True),
        ],
    )


def campaign_people(rows: int, countries: Sequence[str], seed: int) -> list[dict[str, str]]:
    """``rows`` respondents' import fields: first and last name, mobile number."""
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ValueError(f"rows: expected a whole number >= 0, got {rows!r}")
    numbers = campaign_numbers(rows, countries, seed)
    rng = random.Random(f"{seed}:campaign:names")
    return [
        {"firstName": rng.choice(_FIRST), "lastName": rng.choice(_LAST), "mobileNumber": number}
        for number in numbers
    ]


__all__ = [
    "CAMPAIGN_SOURCE",
    "CAMPAIGN_SURVEY_ID",
    "COUNTRIES",
    "QUESTIONS",
    "campaign_numbers",
    "campaign_people",
    "campaign_survey",
]
