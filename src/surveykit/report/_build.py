"""A whole survey report in one call: labels, weights, and an estimate table per question.

``build_report`` is what ``surveykit report`` runs and what a notebook calls to get every
table at once; each table is the frame the matching :mod:`surveykit.analysis` function
returns, so a figure in the workbook is exactly the figure that function gives.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from surveykit import analysis
from surveykit.analysis import _inputs as inputs
from surveykit.analysis import weights as weighting
from surveykit.analysis._design import Design
from surveykit.campaign import _aapor
from surveykit.errors import ExportError
from surveykit.report._banner import Banner
from surveykit.report._banner import banner as banner_table
from surveykit.report._codebook import Codebook
from surveykit.report._excel import MISSING_GROUP
from surveykit.report._label import Errors, label
from surveykit.report._workbook import OVERALL, write_report

WEIGHT_COLUMN = "weight"
"""The column ``build_report`` adds to the labelled frame when it rakes."""


FIELDWORK_COLUMNS: Final = ("invited", "started", "completed", "submitted", "date", "timestamp")
"""Datetime columns of the results whose span is the fieldwork (any letter case)."""

SKIPPED_COLUMNS: Final = ["question", "text", "kind", "answers", "reason"]
VERBATIM_COLUMNS: Final = ["respondentId", "question", "answer"]
"""The columns of ``Report.verbatims``: one row per free-text answer."""
BANNER_KINDS: Final = ("nps", "rating", "choice", "multi", "number")
"""The question kinds a banner table shows (free text and dates are not rows)."""
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
        survey: the survey's reference (given, or the results' ``surveyReference``).
        ci: the confidence level of every interval.
        by: the grouping columns.
        variables: the design's columns, ``{"weights", "strata", "psu", "fpc"}`` (None
            where not given; ``"(a Series)"`` for weights given as a Series).
        targets: the population shares raked to (None when not raked).
        fieldwork: the first and last timestamp of the results (:data:`FIELDWORK_COLUMNS`),
            None when they have none.
        skipped: the questions not tabulated (free text, dates): ``["question", "text",
            "kind", "answers", "reason"]``.
        outcome_rates: AAPOR's outcome rates (:func:`surveykit.outcome_rates`), with a
            ``wave`` column (:data:`OVERALL` for every wave together); None when no
            dispositions were given.
        banner: the banner table (:func:`surveykit.report.banner`) of every question it
            shows by the ``banner`` variables, with the report's design; None when not
            asked for.
        verbatims: the free-text answers, ``["respondentId", "question", "answer"]`` (text),
            one row per non-empty answer; None when not asked for.
    """

    labelled: pd.DataFrame
    codebook: Codebook
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    weights: pd.Series | None = None
    design: Design | None = None
    survey: str | None = None
    ci: float = 0.95
    by: list[str] = field(default_factory=list)
    variables: dict[str, str | None] = field(default_factory=dict)
    targets: Mapping[str, Mapping[Any, float]] | None = None
    fieldwork: tuple[pd.Timestamp, pd.Timestamp] | None = None
    skipped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SKIPPED_COLUMNS))
    outcome_rates: pd.DataFrame | None = None
    banner: Banner | None = None
    verbatims: pd.DataFrame | None = None

    def to_excel(self, path: str | os.PathLike[str]) -> dict[str, str]:
        """Write the report workbook: a cover, contents, every table, the outcome rates.

        The cover says what the report is (survey, fieldwork, respondents, design and
        weighting, confidence level, tests, methods, AAPOR rates); the contents sheet
        links every other sheet; each table sheet is as :func:`surveykit.to_excel` writes
        it, with its base. See ``docs/report.md``.

        Returns:
            ``{sheet name: table name}`` of every sheet (``"Cover"``, ``"Contents"``,
            ``"Outcome rates"`` and the tables).
        """
        return write_report(self, path)

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
    survey: str | None = None,
    dispositions: pd.DataFrame | pd.Series | None = None,
    outcome_rates: pd.DataFrame | None = None,
    banner: str | Sequence[str] | None = None,
    top_box: int | None = None,
    verbatims: bool = False,
) -> Report:
    """Label the results, weight them, and estimate every question (by group when asked).

    For each question of the codebook: NPS questions get :func:`~surveykit.analysis.nps`,
    ratings and numbers :func:`~surveykit.analysis.means`, ratings, choices and
    multi-choice :func:`~surveykit.analysis.proportions`; with ``by``, each of those is
    also computed by group, and each NPS, rating and choice question gets a
    :func:`~surveykit.analysis.crosstab` with significance per ``by`` column. Text and
    date questions are left out of the estimates (they stay in ``labelled``, and
    ``Report.skipped`` lists them with their number of answers).

    Each table's ``attrs["base"]`` says who it counts: ``{"who", "n"`` (respondents
    answering, unweighted), ``"weighted"`` (their weights' sum, None unweighted),
    ``"groups"`` (``{by column: {group: [n, weighted]}}``, a missing value as
    :data:`MISSING_GROUP`)``}``.

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
        survey: the survey's reference for the cover (default: the results'
            ``surveyReference`` when it holds one value).
        dispositions: AAPOR final dispositions (:func:`surveykit.dispositions`, or any
            frame with a ``disposition`` column of codes as text, and optionally a
            ``wave`` column): the report carries the outcome rates, overall and per wave.
        outcome_rates: rates already computed (:func:`surveykit.outcome_rates`, with or
            without a ``wave`` column), instead of ``dispositions``.
        banner: banner variables: the report also holds a banner table
            (:func:`surveykit.report.banner`, letters between columns, Bonferroni) of every
            question it can show (NPS, rating, choice, multi-choice, number; not the
            banner variables themselves), with the report's design, written on its own
            sheet.
        top_box: with ``banner``, ``"Top k"`` and ``"Bottom k"`` nets on every rating.
        verbatims: also keep every free-text answer (``Report.verbatims``, a
            "Verbatims" sheet of the workbook).

    Returns:
        A :class:`Report`.

    With weights, targets, strata or PSUs, every estimate is design-based (R's ``survey``
    package, see ``docs/analysis.md``): the design and its variance method are a table of
    the report ("Design") and in each table's ``attrs``.

    Raises:
        ExportError: a question not in the codebook or the frame; both ``dispositions``
            and ``outcome_rates``; a banner variable that is not a column of the results,
            or a banner without a question to show.
        DispositionError: a disposition that is not an AAPOR code.
    """
    codebook = codebook if codebook is not None else Codebook.infer(df)
    keys = _questions_of(df, codebook, questions)
    if dispositions is not None and outcome_rates is not None:
        raise ExportError("give dispositions or outcome_rates, not both")
    groups = [] if by is None else [by] if isinstance(by, str) else list(by)
    banners = [] if banner is None else [banner] if isinstance(banner, str) else list(banner)
    for column in banners:
        if column not in df.columns:
            raise ExportError(f"banner: {column!r} is not a column of the results")
    if top_box is not None and not banners:
        raise ExportError("top_box goes with banner= (the banner table's nets)")
    labelled = label(df, codebook, errors=errors)
    tables: dict[str, pd.DataFrame] = {}
    design, used = _report_design(df, labelled, tables, targets, weights, strata, psu, fpc, ci)
    data: pd.DataFrame | Design = labelled if design is None else design
    w = None if used is None else used.to_numpy(dtype=np.float64)
    skipped: list[dict[str, Any]] = []
    for key in keys:
        kind = codebook[key].kind
        if kind not in _PROPORTION_KINDS + _CROSSTAB_KINDS + ("number",):
            skipped.append(_skipped(labelled, codebook, key))
            continue
        tables.update(_question_tables(data, labelled, key, kind, groups, w, ci))
    banner_result = _banner_of(data, codebook, keys, banners, top_box)
    return Report(
        labelled=labelled,
        codebook=codebook,
        tables=tables,
        weights=used,
        design=design,
        survey=survey if survey is not None else _survey_of(df),
        ci=ci,
        by=groups,
        variables={
            "weights": weights if isinstance(weights, str) or weights is None else "(a Series)",
            "strata": strata,
            "psu": psu,
            "fpc": fpc,
        },
        targets=targets,
        fieldwork=fieldwork(df),
        skipped=pd.DataFrame(skipped, columns=SKIPPED_COLUMNS),
        outcome_rates=_rates(dispositions, outcome_rates),
        banner=banner_result,
        verbatims=_verbatims(labelled, codebook, keys) if verbatims else None,
    )



def _questions_of(
    df: pd.DataFrame, codebook: Codebook, questions: Sequence[str] | None
) -> list[str]:
    """The questions to estimate: those asked for, else every codebook question in ``df``."""
    keys = list(questions) if questions is not None else [k for k in codebook if k in df]
    for key in keys:
        if key not in codebook:
            raise ExportError(f"questions: {key!r} is not in the codebook")
        if key not in df.columns:
            raise ExportError(f"questions: {key!r} is not a column of the results")
    return keys


def _report_design(
    df: pd.DataFrame,
    labelled: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    targets: Mapping[str, Mapping[Any, float]] | None,
    weights: str | pd.Series | None,
    strata: str | None,
    psu: str | None,
    fpc: str | None,
    ci: float,
) -> tuple[Design | None, pd.Series | None]:
    """The design (raked when targets are given) and its weights, or None for neither.

    With a design, ``labelled`` gets the weight column and ``tables`` the Weights and
    Design tables.
    """
    if all(v is None for v in (targets, weights, strata, psu, fpc)):
        return None, None
    design = Design(df, weights=weights, strata=strata, psu=psu, fpc=fpc)
    if targets is not None:
        design = design.rake(targets)
    used = design.weights.rename(WEIGHT_COLUMN)
    labelled[WEIGHT_COLUMN] = used.to_numpy()
    design = design.with_data(labelled)
    summary = weighting.summary(used).rename("value").rename_axis("statistic")
    tables["Weights"] = summary.reset_index()
    tables["Design"] = design_table(design, ci)
    return design, used


def _question_tables(
    data: pd.DataFrame | Design,
    labelled: pd.DataFrame,
    key: str,
    kind: str,
    groups: list[str],
    w: np.ndarray[Any, np.dtype[np.float64]] | None,
    ci: float,
) -> dict[str, pd.DataFrame]:
    """A question's estimates (whole and by group) and its crosstabs, each with its base."""
    tables: dict[str, pd.DataFrame] = {}
    answered = _answered(labelled, key, kind)
    base = _base(labelled, key, answered, w, groups)
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
                tables[name].attrs["base"] = base
    if kind in _CROSSTAB_KINDS:
        for column in groups:
            table = analysis.crosstab(data, key, column)
            in_group = answered & labelled[column].notna().to_numpy()
            table.attrs["base"] = _base(labelled, key, in_group, w, [column])
            table.attrs["base"]["who"] += f" with a {column} value"
            tables[f"{key} x {column}"] = table
    return tables


def _banner_of(
    data: pd.DataFrame | Design,
    codebook: Codebook,
    keys: list[str],
    banners: list[str],
    top_box: int | None,
) -> Banner | None:
    """The report's banner table of every question it can show, or None without banners."""
    if not banners:
        return None
    shown = [k for k in keys if codebook[k].kind in BANNER_KINDS and k not in banners]
    if not shown:
        raise ExportError(
            "banner: no question a banner table shows (NPS, rating, choice, multi, "
            "number) besides the banner variables"
        )
    return banner_table(data, shown, banners, top_box=top_box, codebook=codebook)

def _verbatims(labelled: pd.DataFrame, codebook: Codebook, keys: Sequence[str]) -> pd.DataFrame:
    """Every non-empty free-text answer as text: respondent, question, answer."""
    ids = next((c for c in labelled.columns if str(c).lower() == "respondentid"), None)
    respondents = (
        labelled[ids].astype("string") if ids is not None else labelled.index.astype(str)
    )
    parts = []
    for key in keys:
        if codebook[key].kind != "text":
            continue
        answers = labelled[key].astype("string")
        given = answers.notna() & answers.str.strip().fillna("").ne("")
        parts.append(
            pd.DataFrame(
                {
                    "respondentId": pd.Series(respondents, index=labelled.index)[given]
                    .astype(object)
                    .to_numpy(),
                    "question": key,
                    "answer": answers[given].astype(object).to_numpy(),
                }
            )
        )
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in VERBATIM_COLUMNS})
    return pd.concat(parts, ignore_index=True)[VERBATIM_COLUMNS]


def _answered(labelled: pd.DataFrame, key: str, kind: str) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which respondents answered ``key`` (as the estimates count them)."""
    codes = inputs.answers(labelled, key, multi=kind == "multi").codes
    return np.asarray(codes >= 0, dtype=bool)


def _base(
    labelled: pd.DataFrame,
    key: str,
    answered: np.ndarray[Any, np.dtype[np.bool_]],
    w: np.ndarray[Any, np.dtype[np.float64]] | None,
    groups: Sequence[str],
) -> dict[str, Any]:
    """Who a table counts: respondents answering, unweighted and weighted, per group."""
    per_group: dict[str, dict[str, list[float | int | None]]] = {}
    for column in groups:
        values = labelled[column].astype(object).where(labelled[column].notna(), MISSING_GROUP)
        values = values.to_numpy()[answered]
        counts = pd.Series(1, index=values).groupby(level=0, sort=False).size()
        if w is not None:
            sums = pd.Series(w[answered], index=values).groupby(level=0, sort=False).sum()
        per_group[column] = {
            str(g): [int(counts[g]), None if w is None else float(sums[g])] for g in counts.index
        }
    return {
        "who": f"all respondents answering {key}",
        "n": int(answered.sum()),
        "weighted": None if w is None else float(w[answered].sum()),
        "groups": per_group,
    }


def _skipped(labelled: pd.DataFrame, codebook: Codebook, key: str) -> dict[str, Any]:
    question = codebook[key]
    series = labelled[key]
    given = series.notna()
    if not pd.api.types.is_numeric_dtype(series.dtype) and not isinstance(
        series.dtype, pd.DatetimeTZDtype
    ) and not pd.api.types.is_datetime64_any_dtype(series.dtype):
        given &= series.astype("string").str.strip().fillna("").ne("")
    reason = "free text: not tabulated" if question.kind == "text" else "dates: not tabulated"
    return {
        "question": key,
        "text": question.text or "",
        "kind": question.kind,
        "answers": int(given.sum()),
        "reason": reason,
    }


def _survey_of(df: pd.DataFrame) -> str | None:
    for column in df.columns:
        if str(column).lower() == "surveyreference":
            values = df[column].dropna().unique()
            return str(values[0]) if len(values) == 1 else None
    return None


def fieldwork(df: pd.DataFrame) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The first and last timestamp of the results' :data:`FIELDWORK_COLUMNS` (UTC)."""
    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None
    for column in df.columns:
        series = df[column]
        if str(column).lower() not in FIELDWORK_COLUMNS:
            continue
        if not pd.api.types.is_datetime64_any_dtype(series.dtype):
            continue
        if getattr(series.dtype, "tz", None) is None:
            series = series.dt.tz_localize("UTC")
        low, high = series.min(), series.max()
        if pd.isna(low):
            continue
        first = low if first is None else min(first, low)
        last = high if last is None else max(last, high)
    return None if first is None or last is None else (first, last)


def _rates(
    dispositions: pd.DataFrame | pd.Series | None, given: pd.DataFrame | None
) -> pd.DataFrame | None:
    """The outcome rates with a ``wave`` column: every wave (:data:`OVERALL`), then each."""
    if given is not None:
        frame = given.copy()
        if "wave" not in frame.columns:
            frame.insert(0, "wave", OVERALL)
        return frame
    if dispositions is None:
        return None
    overall = _aapor.outcome_rates(dispositions)
    overall.insert(0, "wave", OVERALL)
    parts = [overall]
    if isinstance(dispositions, pd.DataFrame) and "wave" in dispositions.columns:
        waves = dispositions.dropna(subset=["wave"])
        if len(waves):
            per_wave = _aapor.outcome_rates(waves, by="wave")
            per_wave["wave"] = per_wave["wave"].astype(str)
            parts.append(per_wave)
    return pd.concat(parts, ignore_index=True)


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
