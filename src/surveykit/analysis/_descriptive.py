"""Analysis of survey results, batch outcomes and callback events, as DataFrames.

Results are the wide table :func:`surveykit.read_results` gives (respondent columns, then
one column per question; see ``docs/results-format.md``). Question kinds are inferred from
the answers (see :func:`question_kinds`) and can always be given explicitly.

Example:
    >>> df = client.surveys.results("CSAT-2026")                 # doctest: +SKIP
    >>> sk.analysis.response_funnel(df)                           # doctest: +SKIP
    >>> sk.analysis.answer_distribution(df, "Q2")                 # doctest: +SKIP

The estimates with intervals (``nps``, ``crosstab``, ``proportions``, ...) live in the
sibling modules; :mod:`surveykit.analysis` re-exports all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from surveykit.results import split_columns

QuestionKind = Literal["rating", "single", "multi", "text"]

MULTI_SEPARATOR = ";"
"""How multi-choice answers are joined in results."""

__all__ = [
    "MULTI_SEPARATOR",
    "answer_distribution",
    "batch_summary",
    "event_summary",
    "is_nps_scale",
    "question_columns",
    "question_kinds",
    "response_funnel",
    "response_rate",
]


def question_columns(df: pd.DataFrame, *, respondent_columns: Iterable[str] = ()) -> list[str]:
    """The question columns of a results table: every column that is not a respondent field.

    Respondent fields are :data:`surveykit.results.RESPONDENT_COLUMNS`, the design fields
    :data:`surveykit.results.DESIGN_COLUMNS` and ``respondent_columns`` (the same rule as
    :func:`surveykit.results.split_columns`).
    """
    _, questions = split_columns(
        [str(c) for c in df.columns], respondent_columns=list(respondent_columns)
    )
    return questions


def _answers(series: pd.Series) -> pd.Series:
    """Answers as text, missing values dropped (an empty answer is kept)."""
    values = series.dropna()
    return values.astype("string") if not pd.api.types.is_string_dtype(values) else values


def _kind(series: pd.Series, *, max_choices: int = 12, max_option: int = 40) -> QuestionKind:
    values = series.dropna()
    if values.empty:
        return "text"
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all() and (numbers % 1 == 0).all() and numbers.between(0, 10).all():
        return "rating"
    text = _answers(series)
    if text.str.contains(MULTI_SEPARATOR, regex=False).mean() > 0.2:
        options = text.str.split(MULTI_SEPARATOR).explode().str.strip()
        options = options[options != ""]
        # Options are short labels that recur; sentences that happen to hold a ";" are not.
        if len(options) and options.str.len().max() <= max_option and options.duplicated().any():
            return "multi"
    distinct = text.nunique()
    if (
        distinct <= max_choices
        and distinct <= max(2, len(text) // 2)
        and text.str.len().max() <= max_option
    ):
        return "single"
    return "text"


def question_kinds(
    df: pd.DataFrame, *, respondent_columns: Iterable[str] = ()
) -> dict[str, QuestionKind]:
    """Infer each question's kind from its answers.

    ``rating``: whole numbers from 0 to 10; ``multi``: more than a fifth of the answers list
    several options joined by ``;``, and the options are short labels that recur;
    ``single``: at most 12 distinct short answers, each given twice on average; else
    ``text``. Small samples can fool any rule: pass ``kind=`` where you know better.
    """
    return {q: _kind(df[q]) for q in question_columns(df, respondent_columns=respondent_columns)}


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    for column in df.columns:
        if str(column).lower() == name.lower():
            return df[column]
    raise KeyError(f"no column {name!r}; columns are {[str(c) for c in df.columns]}")


def response_funnel(
    df: pd.DataFrame,
    *,
    delivered: int | None = None,
    questions: Sequence[str] | None = None,
    by: str | None = None,
) -> pd.DataFrame:
    """Count the respondents who reached each stage, from invitation to completion.

    The stages are invited, delivered, started, each question, completed. Stages come from
    the ``invited``/``started``/``completed`` times and ``sortOrder`` (the number of
    questions answered): "answered Qk" counts respondents whose sortOrder is at
    least k. ``delivered`` comes from elsewhere (callback receipts, see
    :func:`event_summary`), so it is a row only when given.

    Surveys differ in their questions: with ``by="surveyReference"`` each survey gets its own
    funnel (over the questions it has answers for), stacked with a ``surveyReference`` column.

    Returns columns ``stage``, ``respondents``, ``percent_of_invited``, ``percent_of_previous``.
    """
    if by is not None:
        parts = []
        for group, part in df.groupby(by, observed=True, sort=True):
            asked = [q for q in (questions or question_columns(part)) if part[q].notna().any()]
            funnel = response_funnel(part, questions=asked)
            funnel.insert(0, by, group)
            parts.append(funnel)
        return pd.concat(parts, ignore_index=True)
    invited = int(_column(df, "invited").notna().sum()) if _has(df, "invited") else len(df)
    stages: list[tuple[str, int]] = [("invited", invited)]
    if delivered is not None:
        stages.append(("delivered", int(delivered)))
    if _has(df, "started"):
        stages.append(("started", int(_column(df, "started").notna().sum())))
    names = list(questions) if questions is not None else question_columns(df)
    if _has(df, "sortOrder"):
        answered = pd.to_numeric(_column(df, "sortOrder"), errors="coerce").fillna(0)
        for position, name in enumerate(names, start=1):
            stages.append((f"answered {name}", int((answered >= position).sum())))
    if _has(df, "completed"):
        stages.append(("completed", int(_column(df, "completed").notna().sum())))
    frame = pd.DataFrame(stages, columns=["stage", "respondents"])
    base = max(invited, 1)
    frame["percent_of_invited"] = 100 * frame["respondents"] / base
    previous = frame["respondents"].shift(1).replace(0, np.nan)
    frame["percent_of_previous"] = 100 * frame["respondents"] / previous
    frame.loc[0, "percent_of_previous"] = 100.0
    return frame


def _has(df: pd.DataFrame, name: str) -> bool:
    return any(str(c).lower() == name.lower() for c in df.columns)


def response_rate(df: pd.DataFrame, *, freq: str = "D") -> pd.DataFrame:
    """Invitations, starts and completions per period, with the cumulative response rate.

    ``freq`` is a pandas period alias (``"D"`` days, ``"W"`` weeks, ``"h"`` hours). Times
    are counted in UTC. The cumulative rate is completions so far over invitations so far.
    """
    counts = {}
    for stage in ("invited", "started", "completed"):
        if _has(df, stage):
            times = pd.to_datetime(_column(df, stage), utc=True, errors="coerce").dropna()
            counts[stage] = times.dt.floor(freq).value_counts()
    frame = pd.DataFrame(counts).fillna(0).astype("int64").sort_index()
    frame.index.name = "period"
    if "invited" in frame and "completed" in frame:
        invited = frame["invited"].cumsum().replace(0, np.nan)
        frame["cumulative_rate"] = 100 * frame["completed"].cumsum() / invited
    return frame


def answer_distribution(
    df: pd.DataFrame, question: str, *, kind: QuestionKind | None = None
) -> pd.DataFrame:
    """Counts and percentages of each answer to ``question``.

    Ratings list every value 0..10 (zeros included, in order); multi-choice answers are
    split into their options (percentages of respondents who answered, so they can add up to
    more than 100); single choice and text are counted as given, most frequent first.
    """
    series = df[question]
    kind = kind or _kind(series)
    answered = int(series.notna().sum())
    if kind == "rating":
        values = pd.to_numeric(series, errors="coerce").dropna().astype(int)
        counts = values.value_counts().reindex(range(11), fill_value=0)
        counts.index = counts.index.map(str)
    elif kind == "multi":
        options = _answers(series).str.split(MULTI_SEPARATOR).explode().str.strip()
        counts = options[options != ""].value_counts()
    else:
        counts = _answers(series).value_counts()
    frame = counts.rename_axis("answer").reset_index(name="count")
    frame["answer"] = frame["answer"].astype(str)
    frame["count"] = frame["count"].astype("int64")
    frame["percent"] = 100 * frame["count"] / max(answered, 1)
    frame.attrs.update(question=question, kind=kind, answered=answered)
    return frame


def is_nps_scale(series: pd.Series) -> bool:
    """Whether a rating question uses the 0-10 scale of NPS (some answer above 5).

    A 1-5 satisfaction scale also holds whole numbers from 0 to 10; NPS on it would be
    meaningless, and results do not carry the question's scale, so the answers decide.
    """
    values = pd.to_numeric(series, errors="coerce").dropna()
    return bool(len(values)) and _kind(series) == "rating" and float(values.max()) > 5


def batch_summary(result: Any) -> pd.DataFrame:
    """Rows per outcome of a batch (a BatchResult or its ``frame``), with percentages."""
    frame = getattr(result, "frame", result)
    counts = frame["outcome"].value_counts(sort=False)
    counts = counts[counts > 0]
    out: pd.DataFrame = counts.rename_axis("outcome").reset_index(name="rows")
    out["outcome"] = out["outcome"].astype(str)
    out["percent"] = 100 * out["rows"] / max(len(frame), 1)
    return out


def event_summary(events: pd.DataFrame, *, by: Sequence[str] = ("Type", "Status")) -> pd.DataFrame:
    """Callback events counted by type and status (columns matched in any letter case)."""
    columns = [
        next((c for c in events.columns if str(c).lower() == name.lower()), None) for name in by
    ]
    present = [c for c in columns if c is not None]
    if not present:
        raise KeyError(f"events have none of the columns {list(by)}")
    if events.empty:
        return pd.DataFrame(columns=[*present, "events"])
    counts: pd.DataFrame = (
        events.groupby(present, dropna=False, observed=True)
        .size()
        .rename("events")
        .reset_index()
        .sort_values("events", ascending=False, kind="stable")
        .reset_index(drop=True)
    )
    return counts
