"""Analysis of survey results, batch outcomes and callback events, as DataFrames.

Results are the wide table :func:`surveykit.read_results` gives (respondent columns, then
one column per question; see ``docs/results-format.md``). Question kinds are inferred from
the answers (see :func:`question_kinds`) and can always be given explicitly.

Example:
    >>> df = client.surveys.results("CSAT-2026")                 # doctest: +SKIP
    >>> sk.analysis.response_funnel(df)                           # doctest: +SKIP
    >>> sk.analysis.nps(df, "Q1")                                 # doctest: +SKIP
"""

from surveykit.analysis._descriptive import (
    MULTI_SEPARATOR,
    QuestionKind,
    answer_distribution,
    batch_summary,
    crosstab,
    event_summary,
    is_nps_scale,
    nps,
    question_columns,
    question_kinds,
    response_funnel,
    response_rate,
)

__all__ = [
    "MULTI_SEPARATOR",
    "QuestionKind",
    "answer_distribution",
    "batch_summary",
    "crosstab",
    "event_summary",
    "is_nps_scale",
    "nps",
    "question_columns",
    "question_kinds",
    "response_funnel",
    "response_rate",
]
