"""Results in long form: one row per respondent and answered question."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from surveykit.results._columns import STRING_DTYPE, is_respondent_column
from surveykit.results._text import to_text


def split_columns(
    columns: Iterable[str], *, respondent_columns: Sequence[str] | None = None
) -> tuple[list[str], list[str]]:
    """Split column names into (respondent columns, question columns), keeping order.

    Rule: a column is a respondent column when it is one of
    :data:`~surveykit.results.RESPONDENT_COLUMNS` or
    :data:`~surveykit.results.DESIGN_COLUMNS` (any letter case) or listed in
    ``respondent_columns``; every other column is a question.
    """
    extra = set(respondent_columns or ())
    respondent: list[str] = []
    questions: list[str] = []
    for name in columns:
        (respondent if is_respondent_column(name) or name in extra else questions).append(name)
    return respondent, questions


def tidy_results(
    df: pd.DataFrame,
    *,
    respondent_columns: Sequence[str] | None = None,
    id_column: str = "respondentId",
    dropna: bool = True,
) -> pd.DataFrame:
    """Long form of wide results: columns ``respondentId``, ``question``, ``answer``.

    Rows come respondent by respondent, questions in column order. ``answer`` is the
    answer's text (as written in the payloads: ``"7"``, ``"1.5"``, ``"true"``,
    ISO timestamps in UTC), so answers of every type fit one string column; an empty
    answer ``""`` is kept, and missing answers are dropped unless ``dropna`` is false.

    Example:
        >>> wide = pd.DataFrame({"respondentId": ["R1"], "Q1": [7], "Q2": ["yes"]})
        >>> tidy_results(wide)["answer"].tolist()
        ['7', 'yes']
    """
    if id_column not in df.columns:
        raise ValueError(f"no {id_column!r} column; pass id_column= to name the respondent id")
    _, questions = split_columns(
        [str(c) for c in df.columns], respondent_columns=[*(respondent_columns or ()), id_column]
    )
    n, m = len(df), len(questions)
    ids = to_text(df[id_column], id_column)
    texts = [to_text(df[q], q) for q in questions]
    answers = (
        pa.chunked_array(texts, type=pa.large_string())
        if texts
        else pa.chunked_array([], type=pa.large_string())
    )
    # Column-major -> respondent-major order.
    order = (np.arange(n)[:, None] + n * np.arange(m)[None, :]).ravel()
    answer = answers.take(pa.array(order)) if m else answers
    respondent = ids.take(pa.array(np.repeat(np.arange(n), m)))
    question = pa.array(np.tile(np.array(questions, dtype=object), n), type=pa.large_string())
    out = pd.DataFrame(
        {
            "respondentId": pd.arrays.ArrowStringArray(pa.chunked_array([respondent])),
            "question": pd.arrays.ArrowStringArray(pa.chunked_array([question])),
            "answer": pd.arrays.ArrowStringArray(
                answer if isinstance(answer, pa.ChunkedArray) else pa.chunked_array([answer])
            ),
        }
    )
    if dropna:
        out = out[out["answer"].notna()].reset_index(drop=True)
    out = out.astype({"respondentId": STRING_DTYPE, "question": STRING_DTYPE})
    return out
