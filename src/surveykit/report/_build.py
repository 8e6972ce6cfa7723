"""A whole survey report in one call: labels, weights, and an estimate table per question.

``build_report`` is what ``surveykit report`` runs and what a notebook calls to get every
table at once; each table is the frame the matching :mod:`surveykit.analysis` function
returns, so a figure in the workbook is exactly the figure that function gives.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from surveykit.analysis._design import Design
from surveykit.errors import ExportError
from surveykit.report._codebook import Codebook
from surveykit.report._label import Errors, label

WEIGHT_COLUMN = "weight"
"""The column ``build_report`` adds to the labelled frame when it rakes."""

_PROPORTION_KINDS = ("rating", "choice", "multi")
_CROSSTAB_KINDS = ("nps", "rating", "choice", "multi")


@dataclass
class Report:
    """A survey report: the labelled answers, the weights and the estimate tables.

    Attributes:
        labelled: the results labelled by the codebook (:func:`surveykit.label`), with a
            ``weight`` column when the report was weighted.
        codebook: the codebook the labels come from.
        tables: ``{name: frame}`` in report order; each frame is an :mod:`surveykit.analysis`
            estimate (``attrs["estimate"]`` says which), or the weights' summary.
        weights: the weights used, aligned with ``labelled`` (None when unweighted).
        design: the survey design every estimate used (None when unweighted: textbook
            figures).
    """

    labelled: pd.DataFrame
    codebook: Codebook
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    weights: pd.Series | None = None
    design: Design | None = None

    def to_excel(self, path: str | os.PathLike[str]) -> dict[str, str]:
        """Write every table to an ``.xlsx`` workbook (see :func:`surveykit.to_excel`)."""
        from surveykit.report._excel import to_excel

        return to_excel(self.tables, path)

    def __repr__(self) -> str:
        weighted = "weighted" if self.weights is not None else "unweighted"
        return (
            f"Report({len(self.labelled):,} respondents, {len(self.codebook)} questions, "
            f"{len(self.tables)} tables, {weighted})"
        )


def build_report(
    df: pd.DataFrame,
    codebook: Codebook | None = None,
    *,
    targets: Mapping[str, Mapping[Any, float]] | None = None,
    weights: str | pd.Series | None = None,
    strata: str | None = None,
    psu: str | None = None,
    fpc: str | None = None,
    by: str | Sequence[str] | None = None,
    questions: Sequence[str] | None = None,
    ci: float = 0.95,
    errors: Errors = "raise",
) -> Report:
    """Label the results, weight them, and estimate every question (by group when asked).

    For each question of the codebook: NPS questions get :func:`~surveykit.analysis.nps`,
    ratings and numbers :func:`~surveykit.analysis.means`, ratings, choices and
    multi-choice :func:`~surveykit.analysis.proportions`; with ``by``, each of those is
    also computed by group, and each NPS, rating and choice question gets a
    :func:`~surveykit.analysis.crosstab` with significance per ``by`` column. Text and
    date questions are left out of the estimates (they stay in ``labelled``).

    Args:
        df: survey results (:meth:`surveykit.Client.surveys.results`).
        codebook: question texts, kinds and labels; drafted by
            :meth:`surveykit.Codebook.infer` when None.
        targets: population shares ``{column: {level: share}}`` (or totals) to rake to,
            starting from ``weights`` when given (:meth:`surveykit.Design.rake`); the
            weights' summary becomes a table.
        weights: the base (sampling) weights: a column of ``df`` or a Series.
        strata: the design's strata column, if any.
        psu: the design's primary sampling units (clusters, such as households), if any.
        fpc: the design's finite population correction column, if any.
        by: grouping column(s) for the estimates by group and the crosstabs.
        questions: the questions to estimate (default: every codebook question found in
            ``df``).
        ci: the confidence level of every interval.
        errors: ``"raise"`` or ``"coerce"``, as for :func:`surveykit.label`.

    Returns:
        A :class:`Report`.

    With weights, targets, strata or PSUs, every estimate is design-based (R's ``survey``
    package, see ``docs/analysis.md``): the design and its variance method are a table of
    the report ("Design") and in each table's ``attrs``.

    Raises:
        ExportError: a question not in the codebook or the frame.
    """
    from surveykit import analysis
    from surveykit.analysis import weights as weighting

    codebook = codebook if codebook is not None else Codebook.infer(df)
    keys = list(questions) if questions is not None else [k for k in codebook if k in df]
    for key in keys:
        if key not in codebook:
            raise ExportError(f"questions: {key!r} is not in the codebook")
        if key not in df.columns:
            raise ExportError(f"questions: {key!r} is not a column of the results")
    groups = [] if by is None else [by] if isinstance(by, str) else list(by)
    labelled = label(df, codebook, errors=errors)
    tables: dict[str, pd.DataFrame] = {}
    used: pd.Series | None = None
    design: Design | None = None
    if any(v is not None for v in (targets, weights, strata, psu, fpc)):
        design = Design(df, weights=weights, strata=strata, psu=psu, fpc=fpc)
        if targets is not None:
            design = design.rake(targets)
        used = design.weights.rename(WEIGHT_COLUMN)
        labelled[WEIGHT_COLUMN] = used.to_numpy()
        design = design.with_data(labelled)
        summary = weighting.summary(used).rename("value").rename_axis("statistic")
        tables["Weights"] = summary.reset_index()
        tables["Design"] = design_table(design, ci)
    data: pd.DataFrame | Design = labelled if design is None else design
    for key in keys:
        kind = codebook[key].kind
        for grouping in [None, *([groups] if groups else [])]:
            suffix = "" if grouping is None else " by " + ", ".join(groups)
            options: dict[str, Any] = {"by": grouping, "ci": ci}
            if kind == "nps":
                tables[f"{key} NPS{suffix}"] = analysis.nps(data, key, **options)
            if kind in ("rating", "number"):
                tables[f"{key} mean{suffix}"] = analysis.means(data, key, **options)
            if kind in _PROPORTION_KINDS:
                tables[f"{key} %{suffix}"] = analysis.proportions(data, key, **options)
            for name in (f"{key} NPS{suffix}", f"{key} mean{suffix}", f"{key} %{suffix}"):
                if name in tables:
                    tables[name].attrs["by"] = list(grouping or [])
        if kind in _CROSSTAB_KINDS:
            for column in groups:
                tables[f"{key} x {column}"] = analysis.crosstab(data, key, column)
    return Report(labelled=labelled, codebook=codebook, tables=tables, weights=used, design=design)


def design_table(design: Design, ci: float) -> pd.DataFrame:
    """What the report's design is, as rows of ``item``, ``value`` (a sheet of the workbook)."""
    rows = [
        ("design", design.describe()),
        ("variance", design.variance_method),
        ("degrees of freedom", str(design.degrees_of_freedom)),
        ("calibration", "; ".join(design.calibration) or "none"),
        ("confidence level", f"{ci:.0%}"),
        (
            "intervals",
            "proportions: logit (R svyciprop); means and NPS: t on the design's degrees of "
            "freedom",
        ),
        ("tests", "crosstabs: Rao-Scott F (R svychisq); letters: design-based t tests of "
         "column pairs (R svyttest), Bonferroni"),
        ("reference", "R's survey package (svydesign, svymean, svyby, rake)"),
    ]
    frame = pd.DataFrame(rows, columns=["item", "value"])
    frame.attrs = {"estimate": "design", "question": "Design"}
    return frame
