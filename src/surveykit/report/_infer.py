"""A draft codebook from the answers: kind and scale, value labels, likely missing codes.

It gives the questions; :meth:`Codebook.infer <surveykit.report.Codebook.infer>` makes them
a codebook.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Final

import pandas as pd

from surveykit.report._question import Question, code_text
from surveykit.results import split_columns

MAX_CHOICES: Final = 20
"""At most this many distinct answers make a choice question (options of a multi one)."""
MAX_OPTION_LENGTH: Final = 40
NUMERIC_MISSING: Final = frozenset({-99, -9, -1, 97, 98, 99, 999})
"""Whole numbers that usually code a non-answer beside a rating scale."""
TEXT_MISSING: Final = {
    "prefer not to say": "Prefer not to say",
    "don't know": "Don't know",
    "dont know": "Don't know",
    "refused": "Refused",
    "no answer": "No answer",
    "n/a": "Not applicable",
}
"""Choice answers that are usually non-answers (lower case -> reason)."""
_DATE_TEXT: Final = r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?"


def infer_questions(df: pd.DataFrame, *, respondent_columns: Iterable[str] = ()) -> list[Question]:
    """Draft the questions of the columns of ``df`` (respondent fields are left out).

    Rules, for each column (missing answers ignored):

    - datetimes, or text that is all ISO 8601 dates: ``date``;
    - whole numbers within 1..5 or 1..7: ``rating`` on that scale; within 0..10 with an
      answer above 7 (or a 0 and an answer above 5): ``nps``; 0..5: ``rating`` 0..5;
      a usual missing code beside such a scale (97, 98, 99, 999, -1, -9, -99) is a
      missing code;
    - other numbers: ``number``;
    - text whose answers join at most 20 short options with ``;`` that recur: ``multi``;
    - at most 20 distinct short answers (each given twice on average, or a categorical
      column): ``choice``, answers like "Prefer not to say" or "Don't know" as missing
      codes;
    - anything else: ``text``.

    Value labels of ratings are the scale points themselves; edit them, and the texts.
    """
    _, questions = split_columns(
        [str(c) for c in df.columns], respondent_columns=list(respondent_columns)
    )
    return [_infer(str(name), df[name]) for name in questions]


def _infer(key: str, series: pd.Series) -> Question:
    values = series.dropna()
    if values.empty:
        return Question(key)
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return Question(key, kind="date")
    if pd.api.types.is_bool_dtype(values.dtype):
        return Question(key, kind="choice", labels={"true": "Yes", "false": "No"})
    if pd.api.types.is_numeric_dtype(values.dtype):
        return _numeric(key, values)
    distinct = pd.Series(values.unique()).astype(str)
    numbers = pd.to_numeric(distinct, errors="coerce")
    if numbers.notna().all() and not distinct.str.match(r"0\d").any():
        return _numeric(key, numbers)
    if distinct.str.fullmatch(_DATE_TEXT).all():
        return Question(key, kind="date")
    multi = _multi(key, values.astype(str))
    if multi is not None:
        return multi
    categorical = isinstance(series.dtype, pd.CategoricalDtype)
    if (
        len(distinct) <= MAX_CHOICES
        and distinct.str.len().max() <= MAX_OPTION_LENGTH
        and (categorical or len(distinct) <= max(2, len(values) // 2))
    ):
        return _choice(key, sorted(distinct))
    return Question(key)


def _numeric(key: str, values: pd.Series) -> Question:
    numbers = pd.to_numeric(values, errors="coerce").dropna().astype("float64")
    whole = bool((numbers % 1 == 0).all())
    if not whole:
        return Question(key, kind="number")
    distinct = {int(v) for v in numbers.unique()}
    missing = {v for v in distinct if v in NUMERIC_MISSING}
    scale = distinct - missing
    found = _scale(scale)
    if found is None and missing:
        found, missing = _scale(distinct), set()
    if found is None:
        return Question(key, kind="number")
    kind, low, high = found
    labels: dict[str, Any] = {} if kind == "nps" else {str(i): str(i) for i in range(low, high + 1)}
    return Question(
        key,
        kind=kind,
        labels=labels,
        missing={str(v): f"Missing ({v})" for v in sorted(missing)},
        min=low,
        max=high,
    )


def _scale(values: set[int]) -> tuple[Any, int, int] | None:
    if not values:
        return None
    low, high = min(values), max(values)
    if low < 0 or high > 10:
        return None
    if low >= 1 and high <= 5:
        return "rating", 1, 5
    if low >= 1 and high <= 7:
        return "rating", 1, 7
    if high > 7 or (low == 0 and high > 5):
        return "nps", 0, 10
    return "rating", 0, 5


def _multi(key: str, answers: pd.Series) -> Question | None:
    separator = ";"
    joined = answers.str.contains(separator, regex=False)
    if joined.mean() <= 0.2:
        return None
    distinct = pd.Series(answers.unique())
    options = distinct.str.split(separator).explode()
    options = options[options != ""]
    if (
        options.empty
        or options.nunique() > MAX_CHOICES
        or options.str.len().max() > MAX_OPTION_LENGTH
        or not options.duplicated().any()
    ):
        return None
    order = _option_order(distinct, separator)
    return _choice(key, order, kind="multi")


def _option_order(distinct: pd.Series, separator: str) -> list[str]:
    """Options in the order answers list them (answers usually keep the form's order)."""
    before: dict[tuple[str, str], int] = {}
    first_seen: dict[str, int] = {}
    for answer in distinct:
        options = [o for o in answer.split(separator) if o]
        for i, a in enumerate(options):
            first_seen.setdefault(a, len(first_seen))
            for b in options[i + 1 :]:
                before[a, b] = before.get((a, b), 0) + 1

    def compare(a: str, b: str) -> int:
        return before.get((b, a), 0) - before.get((a, b), 0) or first_seen[a] - first_seen[b]

    return sorted(first_seen, key=functools.cmp_to_key(compare))


def _choice(key: str, answers: list[str], *, kind: Any = "choice") -> Question:
    labels: dict[str, str] = {}
    missing: dict[str, str] = {}
    for answer in answers:
        text = code_text(answer)
        reason = TEXT_MISSING.get(text.strip().lower())
        if reason is not None and kind == "choice":
            missing[text] = reason
        else:
            labels[text] = text
    return Question(key, kind=kind, labels=labels, missing=missing)
