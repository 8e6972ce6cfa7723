"""Analysis of survey results, batch outcomes and callback events, as DataFrames.

Results are the wide table :func:`surveykit.read_results` gives (respondent columns, then
one column per question; see ``docs/results-format.md``). Question kinds are inferred from
the answers (see :func:`question_kinds`) and can always be given explicitly.

Estimates come with their uncertainty: :func:`proportions`, :func:`means`, :func:`nps`,
:func:`totals` and :func:`ratio` return tidy frames with ``n``, ``n_eff``, ``estimate``,
``se``, ``ci_low``, ``ci_high`` and ``deff`` per group (``by=``). Given a :class:`Design`
(strata, PSUs, fpc, calibration), a :class:`ReplicateDesign` (jackknife, bootstrap or
supplied replicate weights) or ``weights=``, every figure is design-based and agrees with
R's ``survey`` package; a frame alone gives textbook figures. :func:`crosstab` adds its
test (Rao-Scott on a design, Pearson's chi-square otherwise) and column letters in its
``attrs``; :func:`compare` tests two groups or waves; :func:`quantiles` and
:func:`regress` are R's ``svyquantile`` and ``svyglm``. Formulas: ``docs/analysis.md``.

Example:
    >>> df = client.surveys.results("CSAT-2026")                 # doctest: +SKIP
    >>> sk.analysis.response_funnel(df)                           # doctest: +SKIP
    >>> sk.analysis.nps(df, "Q1", by="channel")                   # doctest: +SKIP
    >>> sk.analysis.compare(df, "Q1", by="wave", estimate="nps")  # doctest: +SKIP
"""

from surveykit.analysis._compare import compare
from surveykit.analysis._crosstab import crosstab
from surveykit.analysis._descriptive import (
    MULTI_SEPARATOR,
    QuestionKind,
    answer_distribution,
    batch_summary,
    event_summary,
    is_nps_scale,
    question_columns,
    question_kinds,
    response_funnel,
    response_rate,
)
from surveykit.analysis._design import Design, ReplicateDesign
from surveykit.analysis._estimates import means, nps, proportions, ratio, totals
from surveykit.analysis._intervals import format_p
from surveykit.analysis._quantiles import quantiles
from surveykit.analysis._regression import regress
from surveykit.errors import AnalysisInputError

__all__ = [
    "MULTI_SEPARATOR",
    "AnalysisInputError",
    "Design",
    "QuestionKind",
    "ReplicateDesign",
    "answer_distribution",
    "batch_summary",
    "compare",
    "crosstab",
    "event_summary",
    "format_p",
    "is_nps_scale",
    "means",
    "nps",
    "proportions",
    "quantiles",
    "question_columns",
    "question_kinds",
    "ratio",
    "regress",
    "response_funnel",
    "response_rate",
    "totals",
]
