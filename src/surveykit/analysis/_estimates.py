"""Proportions, means, Net Promoter Scores, totals and ratios with their uncertainty.

Two kinds of figures, by what is passed:

- A frame alone: textbook figures for a simple random sample. Proportions ``count / n``
  with ``se = sqrt(p (1 - p) / n)`` and statsmodels' ``proportion_confint``; means with
  ``sd(ddof=1) / sqrt(n)`` and a t interval on ``n - 1``; NPS the mean of ``s_i`` = +100
  (9-10), 0 (7-8), -100 (0-6) with a normal interval clipped to [-100, 100].
- A :class:`~surveykit.Design` (or ``weights=``): R's ``survey`` package, through
  :mod:`surveykit.analysis._domains` (linearised or replicate variances of domain
  estimates, ``deff="replace"``), with the intervals of :mod:`._intervals`.

See ``docs/analysis.md``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from surveykit.analysis import _domains
from surveykit.analysis import _inputs as inputs
from surveykit.analysis import _reliability as reliability
from surveykit.analysis._design import Design, ReplicateDesign, design_of
from surveykit.analysis._inputs import By, FloatArray, Weights
from surveykit.analysis._intervals import (
    DESIGN_PROPORTION_METHODS,
    design_proportion_interval,
    normal_interval,
    proportion_interval,
    t_interval,
)
from surveykit.errors import AnalysisInputError

Data = pd.DataFrame | Design

NO_ANSWERS = "no answers"
ZERO_WEIGHT = "weights of this group's answers sum to zero"
ONE_ANSWER = "one answer: no standard error or interval"

__all__ = ["means", "nps", "proportions", "ratio", "totals"]


def _attrs(
    frame: pd.DataFrame,
    df: pd.DataFrame,
    estimate: str,
    question: str,
    ci: float,
    weights: str | None,
    method: str,
) -> pd.DataFrame:
    frame.attrs = {
        "estimate": estimate,
        "question": question,
        "question_text": inputs.question_text(df, question),
        "ci": ci,
        "weights": weights,
        "method": method,
    }
    return frame


def _notes(n: FloatArray, sum_w: FloatArray, *, need: int) -> Any:
    """Per estimate the reason it has no interval ('' when it has one)."""
    return np.where(
        n == 0,
        NO_ANSWERS,
        np.where(sum_w <= 0, ZERO_WEIGHT, np.where(n < need, ONE_ANSWER, "")),
    )


def _divide(a: FloatArray, b: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def proportions(
    data: Data,
    question: str,
    *,
    by: By = None,
    weights: Weights = None,
    ci: float = 0.95,
    method: str | None = None,
    multi: bool | None = None,
    separator: str = ";",
) -> pd.DataFrame:
    """The share of respondents choosing each option of ``question``, with its interval.

    Textbook (a frame alone): ``p = count / n`` over the respondents who answered,
    ``se = sqrt(p * (1 - p) / n)``, the interval
    ``statsmodels.stats.proportion.proportion_confint(count, n, method)``: Wilson by default,
    ``"clopper-pearson"`` (exact, beta) or ``"normal"`` (Wald).

    Options are the categories of a categorical (a frame from ``sk.label``, in its order,
    unchosen ones included), else the distinct answers: numbers by value (``"7"`` and ``7``
    are one option), text alphabetically. Blank text is no answer. A multi-choice question
    (``multi=None``: some answer holds ``separator``) gives every option a row; its
    proportions can sum to more than 1 and a blank answer counts as answered, no option.

    With a :class:`~surveykit.Design` (or ``weights=``, a shortcut for
    ``Design(df, weights=...)``), every figure is design-based, as R's ``survey`` package
    gives it: the proportion is the mean of the option's indicator with its linearised se
    (``svymean(~factor(q))``; groups and missing answers are domains of the whole sample,
    as ``svyby(..., na.rm=TRUE)``), ``n_eff`` the estimate's effective size
    ``p (1 - p) / se^2``, ``deff`` its design effect (``deff="replace"``), and the interval
    ``method`` one of ``"logit"`` (the default, R's ``svyciprop``: t on the design's degrees
    of freedom), ``"beta"`` (Korn-Graubard; ``"clopper-pearson"`` is taken as its name),
    ``"wilson"`` (Wilson's score interval on the effective size, normal quantile) or
    ``"normal"``.

    Args:
        data: results (raw answers or a labelled frame), or a :class:`~surveykit.Design`.
        question: the question's column.
        by: one column or several; one set of rows per group (missing values a group).
        weights: a column name or a Series aligned with ``df`` (makes the estimate
            design-based).
        ci: the confidence level.
        method: the interval (None: ``"wilson"`` unweighted, ``"logit"`` on a design).
        multi: force (True) or forbid (False) splitting answers into options.
        separator: what joins a multi-choice answer's options.

    Returns:
        ``[*by, "question", "option", "count", "count_weighted", "n", "n_weighted", "n_eff",
        "estimate", "se", "ci_low", "ci_high", "deff", "flag", "flag_reason", "note"]``:
        ``count`` the respondents choosing the option and ``n`` those who answered
        (integers, respondents of non-zero weight), ``count_weighted`` and ``n_weighted``
        the sums of their weights (equal to the counts without a design), ``estimate`` the
        proportion (0..1), exact; ``deff`` is 1 for textbook (unweighted) figures;
        ``flag`` NCHS's reliability flag (``""``, ``"review"``, ``"unreliable"``, see
        :mod:`surveykit.analysis._reliability`) and ``flag_reason`` the rules that fired.
        A group with no answers has NaN and a note.

    Example:
        >>> sk.analysis.proportions(df, "Q2", by="channel", weights="w")  # doctest: +SKIP
    """
    ci = inputs.check_ci(ci)
    df, design = design_of(data, weights)
    if design is not None:
        return _design_proportions(design, question, by, ci, method, multi, separator)
    method = "wilson" if method is None else method
    grouped = inputs.groups(df, by)
    ans = inputs.answers(df, question, multi=multi, separator=separator)
    counts, _, _ = inputs.cell_sums(grouped.ids, ans.codes, grouped.count, len(ans.labels), None)
    n = counts.sum(axis=1)
    if ans.chosen is not None:
        chosen, options = counts @ ans.chosen, ans.options or []
    else:
        chosen, options = counts, ans.labels
    n_options = len(options)
    p = _divide(chosen, n[:, None])
    nobs = np.broadcast_to(n[:, None], p.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(p * (1 - p) / nobs)
    low, high = proportion_interval(
        chosen.ravel(),
        nobs.ravel(),
        ci,
        method,  # type: ignore[arg-type]
    )
    note = _notes(n, n, need=1)
    flag, reason = reliability.proportion_flags(
        p.ravel(), (se * se).ravel(), nobs.ravel(), nobs.ravel() - 1
    )
    frame = pd.DataFrame(
        {
            **inputs.group_frame(grouped, n_options),
            "question": question,
            "option": np.tile(np.asarray(options, dtype=object), grouped.count),
            "count": chosen.astype(np.int64).ravel(),
            "count_weighted": chosen.astype(np.float64).ravel(),
            "n": np.repeat(n.astype(np.int64), n_options),
            "n_weighted": np.repeat(n.astype(np.float64), n_options),
            "n_eff": np.repeat(n, n_options),
            "estimate": p.ravel(),
            "se": se.ravel(),
            "ci_low": low,
            "ci_high": high,
            "deff": np.where(np.isnan(p.ravel()), np.nan, 1.0),
            "flag": flag,
            "flag_reason": reason,
            "note": np.repeat(note, n_options),
        }
    )
    return _attrs(frame, df, "proportions", question, ci, None, method)


def _mean_parts(
    grouped: inputs.Groups, ans: inputs.Answers, values: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per group: n, sum w, n_eff, the weighted mean and its linearisation se."""
    n_codes = len(values)
    if grouped.count * n_codes <= inputs._MAX_CELLS:
        counts, sum_w, sum_w2 = inputs.cell_sums(
            grouped.ids, ans.codes, grouped.count, n_codes, None
        )
        return _mean_from_cells(values, counts, sum_w, sum_w2)
    keep = (ans.codes >= 0) & (grouped.ids >= 0)
    ids, y = grouped.ids[keep], values[ans.codes[keep]]
    weight = np.ones(len(y))
    size = grouped.count
    bincount = inputs.weighted_bincount
    n = np.bincount(ids, minlength=size).astype(np.float64)
    total_w = bincount(ids, weight, size)
    mean = _divide(bincount(ids, weight * y, size), total_w)
    resid = weight * (y - mean[ids])
    squares = bincount(ids, resid * resid, size)
    n_eff = _divide(total_w**2, bincount(ids, weight * weight, size))
    return n, total_w, n_eff, mean, _se(n, squares, total_w)


def _mean_from_cells(
    values: FloatArray, counts: FloatArray, sum_w: FloatArray, sum_w2: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    n = counts.sum(axis=1)
    total_w = sum_w.sum(axis=1)
    mean = _divide(sum_w @ values, total_w)
    # sum((w_i (y_i - m))^2) = sum over answer values v of (sum of w_i^2 at v) * (v - m)^2
    with np.errstate(invalid="ignore"):
        squares = (sum_w2 * (values[None, :] - mean[:, None]) ** 2).sum(axis=1)
    n_eff = _divide(total_w**2, sum_w2.sum(axis=1))
    return n, total_w, n_eff, mean, _se(n, squares, total_w)


def _se(n: FloatArray, squares: FloatArray, total_w: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(n / (n - 1) * squares) / total_w
    return np.where((n >= 2) & (total_w > 0), se, np.nan)


def means(
    data: Data,
    question: str,
    *,
    by: By = None,
    weights: Weights = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """The (weighted) mean answer to a numeric question, with its t interval.

    ``m = sum(w_i y_i) / sum(w_i)``;
    ``se = sqrt(n / (n - 1) * sum((w_i * (y_i - m))^2)) / sum(w_i)``, the with-replacement
    linearisation estimator (R's ``survey::svymean`` with ``svydesign(ids=~1,
    weights=~w)``; ``sd(ddof=1) / sqrt(n)`` when unweighted; not statsmodels'
    ``DescrStatsW``, which reads weights as frequencies); interval
    ``m -/+ scipy.stats.t.ppf((1 + ci) / 2, n - 1) * se``.

    Answers are numbers, text holding numbers (``"7"``), or the labels of a labelled frame,
    mapped back to their codes through ``df.attrs["value_codes"][question]``.

    With a :class:`~surveykit.Design` (or ``weights=``), the figures are R's
    ``svymean(~q, design, na.rm=TRUE, deff="replace")`` (per group ``svyby``, domains of the
    whole sample), the interval ``m -/+ t(df) * se`` on the design's degrees of freedom
    (``confint(..., df=degf(design))``), ``n_eff = n / deff``.

    Args:
        data: results (raw answers or a labelled frame), or a :class:`~surveykit.Design`.
        question: the question's column.
        by: one column or several.
        weights: a column name or a Series aligned with ``df`` (makes it design-based).
        ci: the confidence level.

    Returns:
        ``[*by, "question", "n", "n_weighted", "n_eff", "estimate", "se", "ci_low",
        "ci_high", "deff", "flag", "flag_reason", "note"]``; ``n`` the respondents who
        answered, ``n_weighted`` their weights' sum; ``flag`` is ``"unreliable"`` below 30
        answers or at a relative standard error of 30% or more, ``"review"`` below 8
        degrees of freedom. Unweighted, a group with fewer than 2 answers has NaN ``se``
        and interval and a note, and ``deff`` is 1.

    Raises:
        AnalysisInputError: an answer that is not a number (naming the row and value).
    """
    ci = inputs.check_ci(ci)
    df, design = design_of(data, weights)
    if design is not None:
        return _design_mean(design, question, by, ci, "means")
    grouped = inputs.groups(df, by)
    ans = inputs.answers(df, question)
    values = ans.numbers(inputs.question_series(df, question), "a mean")
    n, total_w, n_eff, mean, se = _mean_parts(grouped, ans, values)
    low, high = t_interval(mean, se, n - 1, ci)
    flag, reason = reliability.estimate_flags(mean, se, n, n - 1)
    frame = pd.DataFrame(
        {
            **inputs.group_frame(grouped, 1),
            "question": question,
            "n": n.astype(np.int64),
            "n_weighted": total_w,
            "n_eff": n_eff,
            "estimate": mean,
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "deff": np.where(np.isnan(mean), np.nan, 1.0),
            "flag": flag,
            "flag_reason": reason,
            "note": _notes(n, total_w, need=2),
        }
    )
    return _attrs(frame, df, "means", question, ci, None, "t")


def nps(
    data: Data,
    question: str,
    *,
    by: By = None,
    weights: Weights = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Net Promoter Score of a 0-10 question: detractors 0-6, passives 7-8, promoters 9-10.

    ``estimate`` is % promoters - % detractors, exact (nothing in the frame is rounded): the
    (weighted) mean of ``s_i`` = +100 for a promoter, 0 for a passive, -100 for a
    detractor, with the mean's linearisation
    ``se = sqrt(n / (n - 1) * sum((w_i (s_i - m))^2)) / sum(w_i)`` and the normal interval
    ``m -/+ z * se`` clipped to [-100, 100]. Weighted, the detractor/passive/promoter
    counts are in the ``*_weighted`` columns (the plain ones count respondents).

    With a :class:`~surveykit.Design` (or ``weights=``), the score's mean, se and design
    effect are R's ``svymean`` of the score (domains per group), the interval
    ``m -/+ t(df) * se`` on the design's degrees of freedom, clipped to [-100, 100].

    Args:
        data: results (raw answers or a labelled frame with ``attrs["value_codes"]``), or a
            :class:`~surveykit.Design`.
        question: the question's column.
        by: one column or several.
        weights: a column name or a Series aligned with ``df`` (makes it design-based).
        ci: the confidence level.

    Returns:
        ``[*by, "question", "detractors", "passives", "promoters", "detractors_weighted",
        "passives_weighted", "promoters_weighted", "percent_detractors",
        "percent_passives", "percent_promoters", "n", "n_weighted", "n_eff", "estimate",
        "se", "ci_low", "ci_high", "deff", "flag", "flag_reason", "note"]``: counts of
        respondents (integers), sums of their weights, and weighted percentages (0..100,
        exact). ``flag`` is ``"unreliable"`` below 30 answers or when the 95% interval is
        60 points or wider, ``"review"`` below 8 degrees of freedom. (The ``responses``
        and rounded ``nps`` columns of earlier versions are ``n`` and ``estimate``.)

    Raises:
        AnalysisInputError: an answer that is not a whole number from 0 to 10.
    """
    ci = inputs.check_ci(ci)
    df, design = design_of(data, weights)
    _check_nps_kind(df, question)
    if design is not None:
        return _design_nps(design, question, by, ci)
    grouped = inputs.groups(df, by)
    ans = inputs.answers(df, question)
    series = inputs.question_series(df, question)
    values = ans.numbers(series, "an NPS")
    _check_nps_scale(ans, values, series)
    # Each distinct answer maps to detractor (0), passive (1) or promoter (2).
    kind = np.where(values >= 9, 2, np.where(values >= 7, 1, 0))
    to_kind = np.zeros((len(values), 3))
    to_kind[np.arange(len(values)), kind] = 1.0
    counts, sum_w, sum_w2 = inputs.cell_sums(
        grouped.ids, ans.codes, grouped.count, len(values), None
    )
    scores = np.array([-100.0, 0.0, 100.0])
    n, total_w, n_eff, mean, se = _mean_from_cells(
        scores, counts @ to_kind, sum_w @ to_kind, sum_w2 @ to_kind
    )
    low, high = normal_interval(mean, se, ci)
    flag, reason = reliability.score_flags(se, n, n - 1)
    frame = pd.DataFrame(
        {
            **inputs.group_frame(grouped, 1),
            "question": question,
            **_kind_columns(counts @ to_kind, sum_w @ to_kind, total_w),
            "n": n.astype(np.int64),
            "n_weighted": total_w,
            "n_eff": n_eff,
            "estimate": mean,
            "se": se,
            "ci_low": np.clip(low, -100.0, 100.0),
            "ci_high": np.clip(high, -100.0, 100.0),
            "deff": np.where(np.isnan(mean), np.nan, 1.0),
            "flag": flag,
            "flag_reason": reason,
            "note": _notes(n, total_w, need=2),
        }
    )
    return _attrs(frame, df, "nps", question, ci, None, "normal")


def _kind_columns(
    counts: FloatArray, sum_w: FloatArray, total_w: FloatArray
) -> dict[Hashable, Any]:
    """Per group the detractors, passives and promoters: counted, weighted, in percent.

    ``counts`` and ``sum_w`` are (groups x 3) respondents and their weights per kind; the
    percentages are of the weights (exact: rounded only for display).
    """
    whole = counts.astype(np.int64)
    percent = 100 * _divide(sum_w, total_w[:, None])
    kinds = ("detractors", "passives", "promoters")
    return {
        **{kind: whole[:, k] for k, kind in enumerate(kinds)},
        **{f"{kind}_weighted": sum_w[:, k] for k, kind in enumerate(kinds)},
        **{f"percent_{kind}": percent[:, k] for k, kind in enumerate(kinds)},
    }


def _check_nps_kind(df: pd.DataFrame, question: str) -> None:
    """Refuse NPS on a question the codebook says is something else (a 1-5 rating...)."""
    entry = inputs.codebook_entry(df, question)
    if entry is None or entry.get("kind") == "nps":
        return
    scale = ""
    if entry.get("min") is not None and entry.get("max") is not None:
        scale = f" on a {entry['min']}-{entry['max']} scale"
    raise AnalysisInputError(
        f"{question}: the codebook says it is a {entry.get('kind')} question{scale}, not an "
        "NPS question (0-10); NPS on it would be meaningless (use means or proportions)"
    )


def _check_nps_scale(ans: inputs.Answers, values: FloatArray, series: pd.Series) -> None:
    used = np.bincount(ans.codes[ans.codes >= 0], minlength=len(values)) > 0
    bad = used & ((values < 0) | (values > 10) | (values % 1 != 0))
    if bad.any():
        code = int(np.flatnonzero(bad)[0])
        row = series.index[int(np.flatnonzero(ans.codes == code)[0])]
        raise AnalysisInputError(
            f"{ans.question}: NPS needs whole-number answers from 0 to 10; row {row!r} has "
            f"{ans.labels[code]!r}"
        )


# -- design-based figures (R's survey package) ------------------------------------------


def _design_attrs(
    frame: pd.DataFrame, design: Design, estimate: str, question: str, ci: float, method: str
) -> pd.DataFrame:
    _attrs(frame, design.data, estimate, question, ci, design.weights_name, method)
    frame.attrs.update(
        design=design.describe(),
        variance=design.variance_method,
        degrees_of_freedom=design.degrees_of_freedom,
    )
    return frame


def _design_notes(figures: _domains.DomainFigures) -> Any:
    return np.where(
        figures.answered == 0,
        NO_ANSWERS,
        np.where(
            figures.sum_w <= 0,
            ZERO_WEIGHT,
            np.where(figures.n == 1, "one respondent: the design-based se is 0", ""),
        ),
    )


def _design_proportions(
    design: Design,
    question: str,
    by: By,
    ci: float,
    method: str | None,
    multi: bool | None,
    separator: str,
) -> pd.DataFrame:
    method = "logit" if method is None else "beta" if method == "clopper-pearson" else method
    if method not in DESIGN_PROPORTION_METHODS:
        raise AnalysisInputError(
            f"method must be one of {list(DESIGN_PROPORTION_METHODS)} on a design, not {method!r}"
        )
    df = design.data
    grouped = inputs.groups(df, by)
    ans = inputs.answers(df, question, multi=multi, separator=separator)
    figures = _domains.proportions(
        design,
        ans.codes,
        len(ans.labels),
        grouped.ids,
        grouped.count,
        ans.chosen,
        complete=grouped.complete,
    )
    options = ans.options or [] if ans.chosen is not None else ans.labels
    k = len(options)
    p, variance = figures.estimate.ravel(), figures.variance.ravel()
    low, high = design_proportion_interval(
        p, variance, ci, method, dof=design.degrees_of_freedom, rows=len(df)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(variance > 0, p * (1 - p) / variance, np.nan)
    dof = _answered_dof(design, grouped, figures)
    flag, reason = reliability.proportion_flags(
        p, variance, np.repeat(figures.n, k), np.repeat(dof, k)
    )
    chosen = _respondents(figures)
    if ans.chosen is not None:
        chosen = chosen @ ans.chosen
    frame = pd.DataFrame(
        {
            **inputs.group_frame(grouped, k),
            "question": question,
            "option": np.tile(np.asarray(options, dtype=object), grouped.count),
            "count": chosen.astype(np.int64).ravel(),
            "count_weighted": figures.count.ravel(),
            "n": np.repeat(figures.n.astype(np.int64), k),
            "n_weighted": np.repeat(figures.sum_w, k),
            "n_eff": n_eff,
            "estimate": p,
            "se": np.sqrt(variance),
            "ci_low": low,
            "ci_high": high,
            "deff": figures.deff.ravel(),
            "flag": flag,
            "flag_reason": reason,
            "note": np.repeat(_design_notes(figures), k),
        }
    )
    return _design_attrs(frame, design, "proportions", question, ci, method)


def _respondents(figures: _domains.DomainFigures) -> FloatArray:
    """Per (group, answer) the respondents of non-zero weight (the unweighted count)."""
    assert figures.respondents is not None  # proportions' figures count them
    return figures.respondents


def _per_row(ans: inputs.Answers, values: FloatArray) -> FloatArray:
    """Each row's number (NaN for no answer)."""
    padded = np.append(values, np.nan)
    return np.asarray(padded[np.where(ans.codes >= 0, ans.codes, len(values))], dtype=np.float64)


def _row_numbers(design: Design, question: str, what: str) -> FloatArray:
    """Each row's answer as a number (NaN: no answer), or an error naming a row that is not.

    A numeric column is read as it is (a million distinct values cost nothing); text and
    categorical answers go through their distinct values (labels mapped to codes).
    """
    df = design.data
    series = inputs.question_series(df, question)
    dtype = series.dtype
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        if pd.api.types.is_bool_dtype(dtype):
            series = series.astype("float64")
        return np.asarray(series.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    ans = inputs.answers(df, question)
    return _per_row(ans, ans.numbers(series, what))


def _mean_columns(
    design: Design,
    figures: _domains.DomainFigures,
    ci: float,
    domain_dof: FloatArray,
    *,
    score: bool = False,
) -> dict[Hashable, Any]:
    """The figures of a mean-like estimate per group, as tidy columns.

    ``domain_dof`` is each group's own degrees of freedom, for its reliability flag (the
    interval uses the design's, as R's ``svyby``); ``score`` flags an NPS.
    """
    mean = figures.estimate[:, 0]
    se = np.sqrt(figures.variance[:, 0])
    dof = np.full(mean.shape, float(design.degrees_of_freedom))
    low, high = t_interval(mean, se, dof, ci)
    deff = figures.deff[:, 0]
    if score:
        flag, reason = reliability.score_flags(se, figures.n, domain_dof)
    else:
        flag, reason = reliability.estimate_flags(mean, se, figures.n, domain_dof)
    return {
        "n": figures.n.astype(np.int64),
        "n_weighted": figures.sum_w,
        "n_eff": _divide(figures.n, deff),
        "estimate": mean,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "deff": deff,
        "flag": flag,
        "flag_reason": reason,
        "note": _design_notes(figures),
    }


def _answered_dof(
    design: Design, grouped: inputs.Groups, figures: _domains.DomainFigures, *values: FloatArray
) -> FloatArray:
    """Per group the degrees of freedom of its rows that answered (no NaN in ``values``).

    The domain codes of ``figures`` say who answered when the estimator kept them.
    """
    if isinstance(design, ReplicateDesign):  # one figure, whoever answered: no row pass
        return reliability.domain_degrees_of_freedom(design, grouped.ids, grouped.count)
    if figures.domain_dof is not None:
        return figures.domain_dof
    if figures.domains is not None:
        return reliability.domain_codes_degrees_of_freedom(
            design, figures.domains, grouped.count
        )
    missing = np.zeros(len(grouped.ids), dtype=bool)
    for v in values:
        missing |= np.isnan(v)
    ids = np.where(missing, -1, grouped.ids)
    return reliability.domain_degrees_of_freedom(design, ids, grouped.count)


def _design_mean(design: Design, question: str, by: By, ci: float, name: str) -> pd.DataFrame:
    grouped = inputs.groups(design.data, by)
    y = _row_numbers(design, question, "a mean")
    figures = _domains.means(design, y, grouped.ids, grouped.count, complete=grouped.complete)
    dof = _answered_dof(design, grouped, figures, y)
    return _per_group_frame(design, grouped, question, figures, ci, name, dof)


def _per_group_frame(
    design: Design,
    grouped: inputs.Groups,
    question: str,
    figures: _domains.DomainFigures,
    ci: float,
    name: str,
    dof: FloatArray,
) -> pd.DataFrame:
    """One row per group of a mean-like estimate (mean, total), with the design's attrs."""
    table: dict[Hashable, Any] = {
        **inputs.group_frame(grouped, 1),
        "question": question,
        **_mean_columns(design, figures, ci, dof),
    }
    return _design_attrs(pd.DataFrame(table), design, name, question, ci, "t")


def _design_nps(design: Design, question: str, by: By, ci: float) -> pd.DataFrame:
    df = design.data
    grouped = inputs.groups(df, by)
    ans = inputs.answers(df, question)
    values = ans.numbers(inputs.question_series(df, question), "an NPS")
    _check_nps_scale(ans, values, inputs.question_series(df, question))
    score = np.where(values >= 9, 100.0, np.where(values >= 7, 0.0, -100.0))
    rows = _per_row(ans, score)
    figures = _domains.means(design, rows, grouped.ids, grouped.count)
    to_kind = np.eye(3)[np.where(values >= 9, 2, np.where(values >= 7, 1, 0))]
    kinds = _domains.proportions(
        design, ans.codes, len(values), grouped.ids, grouped.count, to_kind
    )
    dof = _answered_dof(design, grouped, kinds, rows)
    columns = _mean_columns(design, figures, ci, dof, score=True)
    counted = _respondents(kinds) @ to_kind
    frame = pd.DataFrame(
        {
            **inputs.group_frame(grouped, 1),
            "question": question,
            **_kind_columns(counted, kinds.count, kinds.sum_w),
            **columns,
        }
    )
    frame["ci_low"] = np.clip(frame["ci_low"], -100.0, 100.0)
    frame["ci_high"] = np.clip(frame["ci_high"], -100.0, 100.0)
    return _design_attrs(frame, design, "nps", question, ci, "t")


def totals(
    data: Data,
    question: str,
    *,
    by: By = None,
    weights: Weights = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """The population total of a numeric question, with its design-based se (R's ``svytotal``).

    ``t = sum(w_i y_i)`` over the respondents who answered (per group, a domain of the whole
    sample); the se is the linearised one of the design (a frame without a design or
    ``weights=`` is a design of equal weights 1: the sample total), the interval
    ``t -/+ t(df) * se`` on the design's degrees of freedom, ``deff`` R's
    ``deff="replace"``.

    Returns:
        ``[*by, "question", "n", "n_weighted", "n_eff", "estimate", "se", "ci_low",
        "ci_high", "deff", "flag", "flag_reason", "note"]``, flagged as :func:`means`.
    """
    ci = inputs.check_ci(ci)
    df, design = design_of(data, weights)
    design = design if design is not None else Design(df)
    grouped = inputs.groups(df, by)
    y = _row_numbers(design, question, "a total")
    figures = _domains.totals(design, y, grouped.ids, grouped.count)
    dof = _answered_dof(design, grouped, figures, y)
    return _per_group_frame(design, grouped, question, figures, ci, "totals", dof)


def ratio(
    data: Data,
    numerator: str,
    denominator: str,
    *,
    by: By = None,
    weights: Weights = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """The ratio of two totals, ``sum(w y) / sum(w x)``, with its se (R's ``svyratio``).

    Respondents missing either answer are left out (a domain). The interval is
    ``r -/+ t(df) * se`` on the design's degrees of freedom.

    Returns:
        ``[*by, "numerator", "denominator", "n", "n_weighted", "estimate", "se", "ci_low",
        "ci_high", "flag", "flag_reason", "note"]``, flagged as :func:`means`.
    """
    ci = inputs.check_ci(ci)
    df, design = design_of(data, weights)
    design = design if design is not None else Design(df)
    grouped = inputs.groups(df, by)
    top = _row_numbers(design, numerator, "a ratio")
    bottom = _row_numbers(design, denominator, "a ratio")
    figures = _domains.ratios(design, top, bottom, grouped.ids, grouped.count)
    dof = _answered_dof(design, grouped, figures, top, bottom)
    columns = _mean_columns(design, figures, ci, dof)
    frame = pd.DataFrame(
        {
            **inputs.group_frame(grouped, 1),
            "numerator": numerator,
            "denominator": denominator,
            **{k: v for k, v in columns.items() if k not in ("n_eff", "deff")},
        }
    )
    _design_attrs(frame, design, "ratio", numerator, ci, "t")
    frame.attrs["denominator"] = denominator
    return frame
