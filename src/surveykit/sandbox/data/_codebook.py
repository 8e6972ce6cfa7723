"""The codebook of a sandbox survey, derived from its questions.

Ratings (1..5) get the five labels their wording names (``1 (very unhappy) to 5 (very
happy)``: Very unhappy .. Very happy; ``1 = poor, 5 = excellent``: Poor .. Excellent), NPS
questions their end points, choice questions their choices in order ("Prefer not to say" is
a missing code). Free-text answers typed as "N/A", "NA", "null" or "None" are missing codes
(no answer). A generated survey (:mod:`surveykit.sandbox.generator`) gets the wording,
options and missing codes its results are drawn from.
"""

from __future__ import annotations

import re
from typing import Final

from surveykit.report import Codebook, Question
from surveykit.sandbox import generator
from surveykit.sandbox.state._records import Question as SurveyQuestion
from surveykit.sandbox.state._records import Survey

FIVE_POINT: Final[dict[str, tuple[str, ...]]] = {
    "happy": ("Very unhappy", "Unhappy", "Neither happy nor unhappy", "Happy", "Very happy"),
    "satisf": (
        "Very dissatisfied",
        "Dissatisfied",
        "Neither satisfied nor dissatisfied",
        "Satisfied",
        "Very satisfied",
    ),
    "poor": ("Poor", "Fair", "Good", "Very good", "Excellent"),
    "excellent": ("Poor", "Fair", "Good", "Very good", "Excellent"),
}
"""Five-point scales by a word of their end points."""
NPS_ENDS: Final = ("Not at all likely", "Extremely likely")
DECLINED: Final = "Prefer not to say"
TEXT_NON_ANSWERS: Final = generator.NA_ANSWERS
_ENDS: Final = re.compile(
    r"1\s*(?:\(([^)]+)\)|=\s*([^,;)]+))\D+5\s*(?:\(([^)]+)\)|=\s*([^,;)]+))", re.IGNORECASE
)
_NPS_ENDS: Final = re.compile(r"0\s*\(([^)]+)\)\s*to\s*10\s*\(([^)]+)\)", re.IGNORECASE)
_GENERATED_TEXTS: Final = (
    "How likely are you to recommend us to a friend or colleague? (0-10)",
    "Would you use our service again?",
    "What matters most to you? Choose all that apply.",
    "Anything else you would like to tell us?",
)


def _rating_labels(text: str) -> dict[str, str]:
    match = _ENDS.search(text)
    if match is None:
        return {}
    low = (match.group(1) or match.group(2)).strip()
    high = (match.group(3) or match.group(4)).strip()
    for word, labels in FIVE_POINT.items():
        if word in low.lower() or word in high.lower():
            return {str(i): label for i, label in enumerate(labels, start=1)}
    return {"1": low[:1].upper() + low[1:], "5": high[:1].upper() + high[1:]}


def _nps_labels(text: str) -> dict[str, str]:
    match = _NPS_ENDS.search(text)
    low, high = (match.group(1), match.group(2)) if match else NPS_ENDS
    return {"0": low[:1].upper() + low[1:], "10": high[:1].upper() + high[1:]}


def _text_missing() -> dict[str, str]:
    return {value: f"No answer (typed {value!r})" for value in TEXT_NON_ANSWERS}


def _question(question: SurveyQuestion) -> Question:
    if question.kind == "rating":
        return Question(
            question.key,
            question.text,
            "rating",
            labels=_rating_labels(question.text),
            min=1,
            max=5,
        )
    if question.kind == "nps":
        return Question(question.key, question.text, "nps", labels=_nps_labels(question.text))
    if question.kind == "choice":
        labels = {c: c for c in question.choices if c != DECLINED}
        missing = {DECLINED: DECLINED} if DECLINED in question.choices else {}
        return Question(question.key, question.text, "choice", labels=labels, missing=missing)
    return Question(question.key, question.text, "text", missing=_text_missing())


def _generated(survey: Survey) -> Codebook:
    """The codebook of :func:`surveykit.sandbox.generator.generate_results`' questions."""
    questions = []
    typed = {value: f"No answer (typed {value!r})" for value in generator.NA_ANSWERS}
    nasty = typed if survey.generated_nasty else {}
    for number, question in enumerate(survey.questions, start=1):
        key, kind = question.key, (number - 1) % 4
        text = question.text
        if text in ("", f"Question {number}"):  # the generator's placeholder
            text = _GENERATED_TEXTS[kind]
        if kind == 0:
            labels = {"0": NPS_ENDS[0], "10": NPS_ENDS[1]}
            questions.append(Question(key, text, "nps", labels=labels))
        elif kind == 1:
            labels = {c: c for c in generator.CHOICES if c != DECLINED}
            missing = {DECLINED: DECLINED} | nasty
            questions.append(Question(key, text, "choice", labels=labels, missing=missing))
        elif kind == 2:
            labels = {option: option for option in generator.MULTI}
            questions.append(Question(key, text, "multi", labels=labels))
        else:
            questions.append(Question(key, text, "text", missing=nasty))
    return Codebook(questions)


def is_generated(survey: Survey) -> bool:
    """Whether ``survey`` is drawn from the generator (``add_generated_survey``)."""
    return survey.generated_rows > 0 or survey.name == f"Generated survey {survey.reference}"


def survey_codebook(survey: Survey) -> Codebook:
    """The codebook of a sandbox survey: texts, labels and missing codes of its questions."""
    if is_generated(survey):
        return _generated(survey)
    return Codebook([_question(q) for q in survey.questions])
