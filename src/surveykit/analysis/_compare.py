"""Two groups or two waves compared: differences with intervals and p-values.

On a :class:`~surveykit.Design` (or with ``weights=``) the test is R's design-based
``svyttest``; a frame alone keeps the textbook z- and Welch tests.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from surveykit.analysis import _between_groups as between
from surveykit.analysis import _domains
from surveykit.analysis import _inputs as inputs
from surveykit.analysis._design import Design, ReplicateDesign, design_of
from surveykit.analysis._estimates import _check_nps_scale, _per_row, means, nps, proportions
from surveykit.analysis._inputs import Answers, By, FloatArray, IntArray, Weights
from surveykit.analysis._intervals import (
    ProportionMethod,
    normal_interval,
    t_interval,
    two_sided_normal_p,
    two_sided_t_p,
)
from surveykit.errors import AnalysisInputError

Estimate = Literal["proportions", "means", "nps"]
COLUMNS = [
    "question",
    "option",
    "group_a",
    "group_b",
    "n_a",
    "n_b",
    "estimate_a",
    "estimate_b",
    "difference",
    "se",
    "ci_low",
    "ci_high",
    "statistic",
    "p_value",
    "significant",
    "test",
    "note",
]

__all__ = ["compare"]


def compare(
    df: pd.DataFrame | Design,
    question: str | pd.DataFrame,
    other_question: str | None = None,
    *,
    by: By = None,
    weights: Weights | tuple[pd.Series, pd.Series] = None,
    estimate: Estimate | None = None,
    ci: float = 0.95,
    alpha: float = 0.05,
    names: tuple[str, str] = ("a", "b"),
    method: ProportionMethod = "wilson",
) -> pd.DataFrame:
    """Compare a question between two groups, ``b - a``, with an interval and a p-value.

    Two ways to call it: ``compare(df, "Q1", by="wave")``, where ``by`` (one column or
    several) has exactly two groups among respondents (``a`` the first in sorted order, ``b``
    the second; with more, an error names them: filter the frame to the two you mean, so
    no test is run that you did not ask for); or ``compare(df_a, df_b, "Q1")`` for two
    frames (waves), named by ``names``.

    A frame alone (no weights) gives the textbook tests:

    - ``"proportions"`` (text or categorical answers by default), one row per option:
      difference ``p_b - p_a``, its ``se = sqrt(p_a (1 - p_a) / n_a + p_b (1 - p_b) / n_b)``
      and normal interval; ``statistic`` the two-proportion z-test with the pooled
      proportion (``statsmodels.stats.proportion.proportions_ztest``), two-sided.
    - ``"means"`` (numeric answers by default): Welch's t-test,
      ``se = sqrt(se_a^2 + se_b^2)`` with the means' own ``se``, Welch-Satterthwaite
      degrees of freedom ``se^4 / (se_a^4 / (n_a - 1) + se_b^4 / (n_b - 1))``, t interval;
      unweighted this is ``scipy.stats.ttest_ind(b, a, equal_var=False)``.
    - ``"nps"``: ``se = sqrt(se_a^2 + se_b^2)`` of the two scores, z-test, normal interval.

    ``significant`` is ``p_value < alpha``; a comparison without a test (a group with
    fewer than two answers, both groups at 0% or 100%) has NaN, ``significant`` False and
    a ``note``.

    On a :class:`~surveykit.Design` (or with ``weights=``, a shortcut for
    ``Design(df, weights=...)``) every estimate is a domain of the whole design and the
    test is R's ``svyttest(y ~ group, design)``: the difference ``b - a`` of the two
    domain means with ``se = sqrt(v_aa + v_bb - 2 v_ab)`` from their linearised covariance
    (calibration counted), ``statistic = difference / se`` on ``degf - 1`` degrees of
    freedom (R's ``svyglm`` ``df.residual``: ``degf`` counts the PSUs minus strata of the
    two groups' respondents who answered, after R drops the others) and the interval
    ``difference -/+ t(degf - 1) * se`` (R's ``confint``). ``y`` is the answer for
    ``"means"``, the option's 0/1 indicator for each row of ``"proportions"``, the
    +100/0/-100 score for ``"nps"``. Respondents without an answer or a ``by`` value stay
    in the design as a domain; groups of a subset's other rows (weight 0) are not groups.
    Fewer than 1 degree of freedom: the statistic without p-value or interval, as R.
    ``attrs["degrees_of_freedom"]`` holds them, ``attrs["design"]`` the design.

    Two frames with weights (a column name in both, or a pair of Series) are two
    independent samples: they are stacked into one design with the wave as a stratum,
    R's ``svyttest(y ~ wave, svydesign(ids=~1, strata=~wave, weights=~w,
    data=rbind(a, b)))``: each wave's variance is its own sample's, the covariance 0, and
    the degrees of freedom ``n_a + n_b - 3`` (answers). Two designs cannot be given as
    frames: stack the waves in one frame (the wave a stratum) and use ``by=``.

    Args:
        df: results or a :class:`~surveykit.Design`, or the first wave with ``question``
            the second.
        question: the question's column, or the second frame.
        other_question: the question's column when two frames are given.
        by: the column(s) whose two groups are compared (one frame only).
        weights: a column name (in both frames), a Series, or a pair of Series (two frames).
        estimate: ``"proportions"``, ``"means"`` or ``"nps"``; None decides from the answers.
        ci: the confidence level of the interval of the difference.
        alpha: the significance level.
        names: the groups' names when two frames are given.
        method: the interval method of unweighted proportions (the test is the same; a
            design's difference has a t interval).

    Returns:
        ``["question", "option" (proportions only), "group_a", "group_b", "n_a", "n_b",
        "estimate_a", "estimate_b", "difference", "se", "ci_low", "ci_high", "statistic",
        "p_value", "significant", "test", "note"]``.
    """
    ci = inputs.check_ci(ci)
    if isinstance(question, Design) or (
        isinstance(question, pd.DataFrame) and isinstance(df, Design)
    ):
        raise AnalysisInputError(
            "compare(design_a, design_b, question) is not supported: stack the waves in one "
            "frame with the wave as a stratum, Design(..., strata='wave'), and use by='wave'"
        )
    if isinstance(question, pd.DataFrame):
        if other_question is None or by is not None:
            raise AnalysisInputError("compare(df_a, df_b, question): give the question, not by")
        assert not isinstance(df, Design)
        frames, q = (df, question), other_question
        pair = weights if isinstance(weights, tuple) else (weights, weights)
        kind = estimate or _default_estimate(df, q)
        if any(w is not None for w in pair):
            design, wave = _stacked(frames, pair, names)
            return _design_compare(design, q, wave, kind, ci, alpha)
        parts = [
            _estimate(kind, frame, q, None, w, ci, method).assign(_group=name)
            for frame, w, name in zip(frames, pair, names, strict=True)
        ]
        a, b = parts
        source = df
    else:
        if by is None or other_question is not None:
            raise AnalysisInputError("compare(df, question, by=COLUMN) needs by=")
        if isinstance(weights, tuple):
            raise AnalysisInputError("weights: a pair of Series goes with two frames")
        q = question
        inputs.not_crossed_with_itself(q, by)
        source, design_or_none = design_of(df, weights)
        kind = estimate or _default_estimate(source, q)
        if design_or_none is not None:
            return _design_compare(design_or_none, q, by, kind, ci, alpha)
        a, b = _two_groups(source, q, by, kind, ci, method)
    frame = _difference(kind, a, b, ci, alpha)
    frame.insert(0, "question", q)
    frame.attrs = {
        "estimate": "compare",
        "question": q,
        "question_text": inputs.question_text(source, q),
        "ci": ci,
        "weights": a.attrs.get("weights"),
        "method": kind,
        "alpha": alpha,
    }
    return frame


def _default_estimate(df: pd.DataFrame, question: str) -> Estimate:
    series = inputs.question_series(df, question)
    if isinstance(series.dtype, pd.CategoricalDtype):
        return "proportions"
    ans = inputs.answers(df, question, multi=None)
    numeric = ans.chosen is None and not np.isnan(ans.values).any()
    return "means" if numeric else "proportions"


def _estimate(
    kind: Estimate,
    df: pd.DataFrame,
    question: str,
    by: By,
    weights: Any,
    ci: float,
    method: ProportionMethod,
) -> pd.DataFrame:
    if kind == "proportions":
        return proportions(df, question, by=by, weights=weights, ci=ci, method=method)
    if kind == "means":
        return means(df, question, by=by, weights=weights, ci=ci)
    if kind == "nps":
        return nps(df, question, by=by, weights=weights, ci=ci)
    raise AnalysisInputError(f"estimate must be proportions, means or nps, not {kind!r}")


def _two_groups(
    df: pd.DataFrame,
    question: str,
    by: By,
    kind: Estimate,
    ci: float,
    method: ProportionMethod,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    columns = inputs.by_columns(df, by)
    present = df.dropna(subset=columns) if df[columns].isna().to_numpy().any() else df
    table = _estimate(kind, present, question, columns, None, ci, method)
    levels = table[columns].drop_duplicates()
    if len(levels) != 2:
        found = [_name(row) for row in levels.itertuples(index=False)]
        raise AnalysisInputError(
            f"compare by {columns}: needs exactly two groups, found {len(found)}: {found}; "
            "filter the frame to the two you mean"
        )
    keys = [tuple(row) for row in levels.itertuples(index=False)]
    parts = []
    for key in keys:
        mask = np.logical_and.reduce([table[c] == v for c, v in zip(columns, key, strict=True)])
        parts.append(table[mask].reset_index(drop=True).assign(_group=_name(key)))
    parts[0].attrs = table.attrs
    return parts[0], parts[1]


def _name(key: tuple[Any, ...]) -> Any:
    return key[0] if len(key) == 1 else " / ".join(str(k) for k in key)


def _difference(
    kind: Estimate, a: pd.DataFrame, b: pd.DataFrame, ci: float, alpha: float
) -> pd.DataFrame:
    if kind == "proportions":
        merged = a.merge(b, on="option", how="outer", suffixes=("_a", "_b"), sort=False)
        for side, part in (("_a", a), ("_b", b)):  # an option only one frame has: 0 there
            for column in ("n", "n_eff"):
                merged[column + side] = merged[column + side].fillna(part[column].iloc[0])
            answered = merged["n" + side] > 0
            merged["estimate" + side] = merged["estimate" + side].where(
                merged["estimate" + side].notna() | ~answered, 0.0
            )
            merged["note" + side] = merged["note" + side].fillna(part["note"].iloc[0])
            merged["_group" + side] = part["_group"].iloc[0]
    else:
        merged = pd.concat(
            [a.add_suffix("_a").reset_index(drop=True), b.add_suffix("_b").reset_index(drop=True)],
            axis=1,
        )
    est_a = merged["estimate_a"].to_numpy(dtype=float)
    est_b = merged["estimate_b"].to_numpy(dtype=float)
    n_a = merged["n_eff_a"].to_numpy(dtype=float)
    n_b = merged["n_eff_b"].to_numpy(dtype=float)
    diff = est_b - est_a
    with np.errstate(invalid="ignore", divide="ignore"):
        if kind == "proportions":
            se = np.sqrt(est_a * (1 - est_a) / n_a + est_b * (1 - est_b) / n_b)
            pooled = (est_a * n_a + est_b * n_b) / (n_a + n_b)
            pooled_se = np.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
            statistic = np.where(pooled_se > 0, diff / pooled_se, np.nan)
            p_value = two_sided_normal_p(statistic)
            low, high = normal_interval(diff, se, ci)
            test = "two-proportion z-test"
        else:
            se_a = merged["se_a"].to_numpy(dtype=float)
            se_b = merged["se_b"].to_numpy(dtype=float)
            se = np.sqrt(se_a**2 + se_b**2)
            statistic = np.where(se > 0, diff / se, np.nan)
            if kind == "means":
                n_a, n_b = (merged[c].to_numpy(dtype=float) for c in ("n_a", "n_b"))
                dof = se**4 / (se_a**4 / (n_a - 1) + se_b**4 / (n_b - 1))
                p_value = two_sided_t_p(statistic, dof)
                low, high = t_interval(diff, np.where(se > 0, se, np.nan), dof, ci)
                test = "Welch t-test"
            else:
                p_value = two_sided_normal_p(statistic)
                low, high = normal_interval(diff, se, ci)
                test = "z-test"
    out = pd.DataFrame(
        {
            "option": merged["option"] if kind == "proportions" else None,
            "group_a": merged["_group_a"],
            "group_b": merged["_group_b"],
            "n_a": merged["n_a"].astype("int64"),
            "n_b": merged["n_b"].astype("int64"),
            "estimate_a": est_a,
            "estimate_b": est_b,
            "difference": diff,
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "statistic": statistic,
            "p_value": p_value,
            "significant": np.nan_to_num(p_value, nan=1.0) < alpha,
            "test": test,
            "note": _notes(merged, statistic),
        }
    )
    return out if kind == "proportions" else out.drop(columns="option")


def _notes(merged: pd.DataFrame, statistic: FloatArray) -> list[str]:
    notes = []
    for note_a, note_b, stat in zip(merged["note_a"], merged["note_b"], statistic, strict=True):
        parts = [f"{side}: {note}" for side, note in (("a", note_a), ("b", note_b)) if note]
        if not parts and not np.isfinite(stat):
            parts.append("no variation in either group: no test")
        notes.append("; ".join(parts))
    return notes


# -- design-based (R's svyttest) -----------------------------------------------------------

_WAVE = "_wave"


def _stacked(
    frames: tuple[pd.DataFrame, pd.DataFrame], weights: tuple[Any, Any], names: tuple[str, str]
) -> tuple[Design, str]:
    """Two waves as one design, the wave a stratum (two independent samples)."""
    if names[0] == names[1]:
        raise AnalysisInputError(f"names: the two waves need two names, not {list(names)}")
    parts, ws = [], []
    for frame, w, name in zip(frames, weights, names, strict=True):
        if w is None:
            raise AnalysisInputError(
                f"weights: wave {name!r} has none; give both waves weights or neither"
            )
        values, _ = inputs.weights_array(frame, w)
        assert values is not None
        parts.append(frame)
        ws.append(values)
    wave = _WAVE
    while any(wave in frame.columns for frame in frames):
        wave = "_" + wave
    labels = np.repeat(np.asarray(names, dtype=object), [len(f) for f in frames])
    stacked = pd.concat(parts, ignore_index=True)
    # pandas keeps attrs only when both waves' are equal; the labels' codes and question
    # texts (sk.label) are needed to read the answers, so they are carried over.
    stacked.attrs = {
        key: frames[0].attrs[key]
        for key in ("value_codes", "questions", "codebook")
        if key in frames[0].attrs
    }
    stacked[wave] = pd.Categorical(labels, categories=list(names))
    name = next((str(w) for w in weights if isinstance(w, str)), "weights")
    series = pd.Series(np.concatenate(ws), index=stacked.index, name=name)
    return Design(stacked, weights=series, strata=wave), wave


def _design_compare(
    design: Design, question: str, by: By, kind: Estimate, ci: float, alpha: float
) -> pd.DataFrame:
    """``b - a`` of two domain estimates, R's ``svyttest(y ~ by, design)`` per row."""
    grouped = between.present_groups(design, by)
    if grouped.count != 2:
        found = [_name(tuple(row)) for row in grouped.frame.itertuples(index=False)]
        raise AnalysisInputError(
            f"compare by {grouped.columns}: needs exactly two groups, found {len(found)}: "
            f"{found}; compare a subset of the design, design.subset(mask)"
        )
    df = design.data
    ans = inputs.answers(df, question, multi=None if kind == "proportions" else False)
    figures, option = _two_domains(design, question, kind, ans, grouped.ids)
    k = figures.estimate.shape[1]
    dof = _compare_dof(design, ans.codes, grouped.ids)
    result = between.contrasts(
        np.nan_to_num(figures.estimate.ravel()),
        figures.vcov,
        np.arange(k),
        k + np.arange(k),
        np.full(k, dof),
    )
    usable = (figures.n > 0).all()
    statistic = np.where(usable, result.statistic, np.nan)
    p_value = np.where(usable, result.p_value, np.nan)
    low, high = t_interval(
        result.difference, np.where(np.isfinite(statistic), result.se, np.nan), np.full(k, dof), ci
    )
    names = [_name(tuple(row)) for row in grouped.frame.itertuples(index=False)]
    notes = _compare_notes(statistic, figures.n, dof)
    estimate_a = figures.estimate[0]
    estimate_b = figures.estimate[1]
    frame = pd.DataFrame(
        {
            "question": question,
            "option": option if option is not None else None,
            "group_a": names[0],
            "group_b": names[1],
            "n_a": np.full(k, int(figures.n[0])),
            "n_b": np.full(k, int(figures.n[1])),
            "estimate_a": estimate_a,
            "estimate_b": estimate_b,
            "difference": estimate_b - estimate_a,
            "se": result.se,
            "ci_low": low,
            "ci_high": high,
            "statistic": statistic,
            "p_value": p_value,
            "significant": np.nan_to_num(p_value, nan=1.0) < alpha,
            "test": between.DESIGN_T,
            "note": notes,
        }
    )
    if option is None:
        frame = frame.drop(columns="option")
    frame.attrs = {
        "estimate": "compare",
        "question": question,
        "question_text": inputs.question_text(df, question),
        "ci": ci,
        "weights": design.weights_name,
        "method": kind,
        "alpha": alpha,
        "design": design.describe(),
        "degrees_of_freedom": dof,
    }
    return frame


def _two_domains(
    design: Design, question: str, kind: Estimate, ans: Answers, ids: IntArray
) -> tuple[_domains.DomainFigures, list[str] | None]:
    """The two groups' figures for ``kind``, and the options they are per (proportions)."""
    option: list[str] | None = None
    if kind == "proportions":
        figures = _domains.proportions(design, ans.codes, len(ans.labels), ids, 2, ans.chosen)
        option = ans.options or [] if ans.chosen is not None else ans.labels
    elif kind in ("means", "nps"):
        series = inputs.question_series(design.data, question)
        values = ans.numbers(series, "a mean" if kind == "means" else "an NPS")
        if kind == "nps":
            _check_nps_scale(ans, values, series)
            values = np.where(values >= 9, 100.0, np.where(values >= 7, 0.0, -100.0))
        figures = _domains.means(design, _per_row(ans, values), ids, 2)
    else:
        raise AnalysisInputError(f"estimate must be proportions, means or nps, not {kind!r}")
    return figures, option


def _compare_dof(design: Design, codes: IntArray, ids: IntArray) -> float:
    """The degrees of freedom of the comparison's t test."""
    if isinstance(design, ReplicateDesign):
        # svyglm.svyrep.design: degf() of the design it was given, before the rows
        # without an answer or a group are dropped
        return float(design.degrees_of_freedom - 1)
    inside = (codes >= 0) & (ids >= 0)
    return float(design.subset(inside).degrees_of_freedom - 1)


def _compare_notes(statistic: FloatArray, n: FloatArray, dof: float) -> list[str]:
    """Why a row has no test, no p-value or no interval ("" when it has them)."""
    notes = []
    for stat in statistic:
        parts = [f"{side}: no answers" for side, count in zip("ab", n, strict=True) if count == 0]
        if not parts and not np.isfinite(stat):
            parts.append("no variation in either group: no test")
        elif not parts and dof < 1:
            parts.append("no degrees of freedom left in the design: no p-value or interval")
        notes.append("; ".join(parts))
    return notes
