"""Reliability flags on estimates: NCHS's presentation standards, one home for every rule.

Proportions follow the National Center for Health Statistics Data Presentation Standards
for Proportions (Parker JD, Talih M, Malec DJ, et al., Vital Health Stat 2(175), 2017), as
NCHS's own ``surveytable`` package applies them, always at the 95% level whatever the
frame's ``ci``:

1. the effective sample size ``n_eff = p (1 - p) / var``, capped at the actual sample size
   ``n`` (``n`` itself for an estimate of 0 or 1, which has no variance): below 30 the
   estimate is ``"unreliable"``;
2. the Korn-Graubard interval, Clopper-Pearson on ``min(n, n_eff (t(n-1) / t(df))^2)``
   (0 when ``df < 1``: the interval is then 0..1): an absolute width of 0.05 or less is
   reliable; 0.30 or more is ``"unreliable"``;
3. between the two, a relative width ``width / p`` above 130% is ``"unreliable"``;
4. a reliable estimate is flagged for ``"review"`` when ``df < 8``, when it is 0 or 1 (its
   interval rules do not apply: width taken as 0), or when its complement's relative width
   ``width / (1 - p)`` is above 130% (NCHS footnotes it: the complement would be
   suppressed).

``df`` is that of the estimate's domain: the PSUs minus the strata among the group's rows
that answered with a non-zero weight (R's ``degf`` of the subset), the rank of the
replicate weights less one on a replicate design, ``n - 1`` for textbook figures.

NCHS has no such standard for means, totals or scores; the older NCHS rule for them is
kept: a sample size ``n`` below 30, or a relative standard error ``se / |estimate|`` of 30%
or more, is ``"unreliable"``; ``df < 8`` is ``"review"``. A Net Promoter Score is a
difference of two shares that can be 0, so its RSE means nothing: the score is
``"unreliable"`` below ``n`` 30 or when its 95% interval (``2 t(df) se``) is 60 points
(30% of the -100..100 scale, the proportions' 0.30 of 0..1) or wider.

Each function returns the ``flag`` (``""``, ``"review"``, ``"unreliable"``) and its
``flag_reason`` (the rules that fired, ``"; "``-joined) per estimate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from surveykit.analysis._design import Design, ReplicateDesign
from surveykit.analysis._inputs import FloatArray, IntArray
from surveykit.analysis._variance import rows_are_psus, stratum_sums

UNRELIABLE = "unreliable"
REVIEW = "review"
LEVEL = 0.95
MIN_N_EFF = 30
SMALL_WIDTH = 0.05
MAX_WIDTH = 0.30
MAX_RELATIVE_WIDTH = 1.30
MIN_DF = 8
MIN_N = 30
MAX_RSE = 0.30
MAX_SCORE_WIDTH = 60.0

LOW_N_EFF = "effective sample size < 30"
WIDE = "Korn-Graubard CI width >= 0.30"
RELATIVE_WIDE = "relative CI width > 130%"
FEW_DF = "degrees of freedom < 8"
EXTREME = "estimate of 0% or 100%"
COMPLEMENT = "complement's relative CI width > 130%"
LOW_N = "sample size < 30"
HIGH_RSE = "relative standard error >= 30%"
WIDE_SCORE = "95% CI width >= 60 points"

__all__ = [
    "REVIEW",
    "UNRELIABLE",
    "cells_degrees_of_freedom",
    "domain_codes_degrees_of_freedom",
    "domain_degrees_of_freedom",
    "effective_size",
    "estimate_flags",
    "korn_graubard",
    "proportion_flags",
    "proportion_rules",
    "score_flags",
]


def effective_size(p: FloatArray, variance: FloatArray, n: FloatArray) -> FloatArray:
    """NCHS's effective sample size: ``p (1 - p) / variance`` capped at ``n``.

    An estimate of 0 or 1 (or one with no variance) has ``n``; no estimate (NaN) has 0.
    """
    p, variance, n = (np.asarray(a, dtype=np.float64) for a in (p, variance, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = p * (1 - p) / variance
    edge = (p <= 0) | (p >= 1) | ~(variance > 0)
    size = np.where(edge, n, np.minimum(raw, n))
    return np.where(np.isnan(p), 0.0, size)


def korn_graubard(
    p: FloatArray, n_eff: FloatArray, n: FloatArray, df: FloatArray, level: float = LEVEL
) -> tuple[FloatArray, FloatArray]:
    """NCHS's Korn-Graubard interval: Clopper-Pearson on the df-adjusted effective size.

    ``n_kg = min(n, n_eff (t(n - 1) / t(df))^2)`` at the interval's two-sided level (0 when
    ``df < 1`` or ``n < 2``), then ``beta.ppf(a/2, n_kg p, n_kg (1 - p) + 1)`` and
    ``beta.ppf(1 - a/2, n_kg p + 1, n_kg (1 - p))``; a bound whose beta parameter is 0 is
    0 (lower) or 1 (upper). NaN where ``p`` is NaN.
    """
    from scipy import stats

    p, n_eff, n, df = (np.asarray(a, dtype=np.float64) for a in (p, n_eff, n, df))
    alpha = 1 - level
    ok = (df >= 1) & (n >= 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            ok,
            (
                stats.t.ppf(alpha / 2, np.where(ok, n - 1, 1.0))
                / stats.t.ppf(alpha / 2, np.where(ok, df, 1.0))
            )
            ** 2,
            0.0,
        )
        size = np.minimum(n, n_eff * ratio)
        a_low, b_low = size * p, size * (1 - p) + 1
        a_high, b_high = size * p + 1, size * (1 - p)
        low = np.where(
            a_low > 0, stats.beta.ppf(alpha / 2, np.where(a_low > 0, a_low, 1.0), b_low), 0.0
        )
        high = np.where(
            b_high > 0,
            stats.beta.ppf(1 - alpha / 2, a_high, np.where(b_high > 0, b_high, 1.0)),
            1.0,
        )
    missing = np.isnan(p)
    return np.where(missing, np.nan, low), np.where(missing, np.nan, high)


def _reasons(rules: list[tuple[Any, str]], shape: tuple[int, ...]) -> Any:
    """Per estimate the names of the rules that fired, ``"; "``-joined."""
    out = np.full(shape, "", dtype=object)
    for fired, name in rules:
        fired = np.broadcast_to(np.asarray(fired, dtype=bool), shape)
        out[fired] = np.where(out[fired] == "", name, out[fired] + "; " + name)
    return out


def _flags(
    bad: list[tuple[Any, str]], review: list[tuple[Any, str]], shape: Any
) -> tuple[Any, Any]:
    unreliable = np.zeros(shape, dtype=bool)
    for fired, _ in bad:
        unreliable |= np.broadcast_to(np.asarray(fired, dtype=bool), shape)
    # a rule for review applies to an estimate that is presented (NCHS, surveytable)
    review = [(np.asarray(fired, dtype=bool) & ~unreliable, name) for fired, name in review]
    flagged = np.zeros(shape, dtype=bool)
    for fired, _ in review:
        flagged |= fired
    flag = np.where(unreliable, UNRELIABLE, np.where(flagged, REVIEW, "")).astype(object)
    return flag, _reasons([*bad, *review], shape)


def proportion_flags(
    p: FloatArray, variance: FloatArray, n: FloatArray, df: FloatArray
) -> tuple[Any, Any]:
    """NCHS's flags of proportions ``p`` with variances, domain sizes ``n`` and ``df``.

    Returns ``(flag, flag_reason)``, object arrays shaped like ``p``.
    """
    p = np.asarray(p, dtype=np.float64)
    shape = p.shape
    n, df = (np.broadcast_to(np.asarray(a, dtype=np.float64), shape) for a in (n, df))
    n_eff = effective_size(p, variance, n)
    low, high = korn_graubard(p, n_eff, n, df)
    return proportion_rules(p, n_eff, high - low, df)


def proportion_rules(
    p: FloatArray, n_eff: FloatArray, width: FloatArray, df: FloatArray
) -> tuple[Any, Any]:
    """NCHS's rules on an estimate's effective size, interval width and degrees of freedom.

    ``width`` is the Korn-Graubard interval's (ignored for an estimate of 0 or 1).
    """
    p = np.asarray(p, dtype=np.float64)
    shape = p.shape
    n_eff, width, df = (
        np.broadcast_to(np.asarray(a, dtype=np.float64), shape) for a in (n_eff, width, df)
    )
    edge = (p <= 0) | (p >= 1)
    width = np.where(edge, 0.0, width)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(p > 0, width / np.where(p > 0, p, 1.0), np.inf)
        complement = np.where(p < 1, width / np.where(p < 1, 1 - p, 1.0), np.inf)
    small = n_eff < MIN_N_EFF
    wide = ~small & (width >= MAX_WIDTH)
    middle = ~small & (width > SMALL_WIDTH) & (width < MAX_WIDTH)
    relative_wide = middle & (relative > MAX_RELATIVE_WIDTH)
    bad = [(small, LOW_N_EFF), (wide, WIDE), (relative_wide, RELATIVE_WIDE)]
    review = [
        (df < MIN_DF, FEW_DF),
        (edge, EXTREME),
        (middle & ~edge & (complement > MAX_RELATIVE_WIDTH), COMPLEMENT),
    ]
    return _flags(bad, review, shape)


def estimate_flags(
    estimate: FloatArray, se: FloatArray, n: FloatArray, df: FloatArray
) -> tuple[Any, Any]:
    """Flags of means, totals and ratios: ``n < 30`` or RSE >= 30% unreliable, df < 8 review.

    The relative standard error is ``se / |estimate|``; an estimate of 0, or one without an
    se, counts as an RSE above any limit.
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    shape = estimate.shape
    se = np.asarray(se, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rse = np.where((estimate != 0) & np.isfinite(se), se / np.abs(estimate), np.inf)
    n, df = (np.broadcast_to(np.asarray(a, dtype=np.float64), shape) for a in (n, df))
    small = n < MIN_N
    bad = [(small, LOW_N), (~small & ~(rse < MAX_RSE), HIGH_RSE)]
    return _flags(bad, [(df < MIN_DF, FEW_DF)], shape)


def score_flags(se: FloatArray, n: FloatArray, df: FloatArray) -> tuple[Any, Any]:
    """Flags of Net Promoter Scores: ``n < 30`` or a 95% interval of 60 points or more.

    The interval's width is ``2 t(df) se`` (the normal quantile when ``df`` is infinite);
    no se counts as too wide. ``df < 8`` is ``"review"``.
    """
    from scipy import stats

    se = np.asarray(se, dtype=np.float64)
    shape = se.shape
    n, df = (np.broadcast_to(np.asarray(a, dtype=np.float64), shape) for a in (n, df))
    with np.errstate(invalid="ignore"):
        quantile = stats.t.ppf(1 - (1 - LEVEL) / 2, np.where(df >= 1, df, 1.0))
    width = np.where((df >= 1) & np.isfinite(se), 2 * quantile * se, np.inf)
    small = n < MIN_N
    bad = [(small, LOW_N), (~small & ~(width < MAX_SCORE_WIDTH), WIDE_SCORE)]
    return _flags(bad, [(df < MIN_DF, FEW_DF)], shape)


def domain_degrees_of_freedom(design: Design, ids: IntArray, groups: int) -> FloatArray:
    """Per group, R's ``degf`` of the domain: its PSUs minus its strata.

    ``ids`` is each row's group, -1 for rows in no domain (no answer, no group); rows of
    weight 0 do not count. A replicate design has one figure: the rank of its replicate
    weights less one.
    """
    if isinstance(design, ReplicateDesign):
        return np.full(groups, float(design.degrees_of_freedom))
    counted = ids >= 0
    if groups == 1:
        return _one_domain_dof(design, counted)
    if not design.all_positive:
        counted &= design.weights_array != 0
    return domain_codes_degrees_of_freedom(design, np.where(counted, ids, groups), groups)


def domain_codes_degrees_of_freedom(
    design: Design, codes: IntArray | npt.NDArray[np.bool_], groups: int
) -> FloatArray:
    """:func:`domain_degrees_of_freedom` of domain codes: ``groups`` for a row in none.

    Codes in that form (as the domain estimators make them) save the pass that turns -1
    into the spare code; for one group they may be a mask of the rows in none. Rows of
    weight 0 do not count.
    """
    if isinstance(design, ReplicateDesign):
        return np.full(groups, float(design.degrees_of_freedom))
    if codes.dtype == np.bool_:
        return _one_domain_dof(design, np.logical_not(codes))
    structure = design.structure
    if rows_are_psus(structure):  # a (group, PSU) pair is a counted row
        return _rows_dof(design, np.asarray(codes, dtype=np.int64), groups)
    n_psus = len(structure.psu_stratum)
    # the (group, PSU) pairs with a counted row, in one pass over the rows when the table
    # of pairs is small, else by sorting; strata follow from the PSUs
    size = groups * n_psus
    if size <= max(4 * len(codes), 1 << 20):
        key = codes * n_psus + structure.psu  # the spare code's pairs land past ``size``
        if not design.all_positive:
            key = np.where(design.weights_array != 0, key, size)
        pairs = np.flatnonzero(np.bincount(key, minlength=size + n_psus)[:size])
    else:
        counted = codes < groups
        if not design.all_positive:
            counted &= design.weights_array != 0
        pairs = np.unique(codes[counted] * n_psus + structure.psu[counted])
    return _pairs_dof(design, pairs, groups)


def cells_degrees_of_freedom(design: Design, present: npt.NDArray[np.bool_]) -> FloatArray:
    """Per domain its PSUs less its strata, from which (PSU, domain) cells have a row.

    ``present`` is PSUs x domains: whether the cell has a counted row (of non-zero weight,
    in the domain), as an estimator that summed by those cells already knows.
    """
    structure = design.structure
    psus = present.sum(axis=0)
    strata = (stratum_sums(present.astype(np.float64), structure) > 0).sum(axis=0)
    return np.asarray(psus - strata, dtype=np.float64)


def _rows_dof(design: Design, codes: IntArray, groups: int) -> FloatArray:
    """:func:`domain_codes_degrees_of_freedom` when every PSU is one row."""
    s = design.structure
    n_strata = len(s.n_psu)
    counted = codes < groups
    if not design.all_positive:
        counted &= design.weights_array != 0
    group = codes[counted]
    psus = np.bincount(group, minlength=groups)
    keys = group * n_strata + s.strata[counted]
    seen = np.bincount(keys, minlength=groups * n_strata).reshape(groups, n_strata) > 0
    return np.asarray(psus - seen.sum(axis=1), dtype=np.float64)


def _one_domain_dof(design: Design, inside: npt.NDArray[np.bool_]) -> FloatArray:
    """The degrees of freedom of one domain (the rows ``inside``): its PSUs in one pass."""
    counted = inside if design.all_positive else inside & (design.weights_array != 0)
    if counted.all():
        return np.array([float(design.degrees_of_freedom)])
    psu, n_psus = design.structure.psu, len(design.structure.psu_stratum)
    return _pairs_dof(design, np.flatnonzero(np.bincount(psu, counted, minlength=n_psus)), 1)


def _pairs_dof(design: Design, pairs: IntArray, groups: int) -> FloatArray:
    """Per group its PSUs less its strata, from the (group, PSU) pairs ``group * PSUs + PSU``."""
    structure = design.structure
    n_psus, n_strata = len(structure.psu_stratum), len(structure.n_psu)
    group, psu = pairs // n_psus, pairs % n_psus
    psus = np.bincount(group, minlength=groups)
    keys = group * n_strata + structure.psu_stratum[psu]
    cells = groups * n_strata
    if cells <= max(4 * len(keys), 1 << 20):  # a table of (group, stratum): no sort
        seen = np.bincount(keys, minlength=cells).reshape(groups, n_strata) > 0
        strata = seen.sum(axis=1)
    else:
        strata = np.bincount(np.unique(keys) // n_strata, minlength=groups)
    return np.asarray(psus - strata, dtype=np.float64)
