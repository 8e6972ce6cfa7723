"""Design-based estimates per domain: means, proportions, totals and ratios.

Each comes with its linearised variance, as R's ``svymean``, ``svytotal`` and ``svyratio``
under ``svyby``.

A domain is a group (``by=``) intersected with the rows that answered: rows outside it keep
their place in the design with an influence value of 0, so strata and PSU counts are the
whole sample's (R's ``svyby(..., na.rm=TRUE)``). Every function takes the design, a group id
per row (``-1`` for rows in no group) and the number of groups, and returns arrays with one
row per group.

On a replicate design (:class:`~surveykit.analysis._replicates.ReplicateDesign`) each
estimate is recomputed from every replicate's weighted sums per domain (``statistic`` below,
a function of a ``sums(values, ids, size)``), and its variance is R's ``svrVar`` of those
replicate estimates; the design effect uses the same denominator.

Design effects are R's ``deff="replace"``: the variance against that of a simple random
sample of the same size drawn with replacement, ``svyvar(y) / n`` with ``n`` the domain's
respondents of non-zero weight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from surveykit.analysis._design import Design
from surveykit.analysis._influence import Basis, FloatArray, Influence, IntArray
from surveykit.analysis._replicates import ReplicateDesign, Sums


@dataclass
class DomainFigures:
    """Estimates per group (rows) and column (options, or one column).

    Attributes:
        estimate: the estimates (groups x columns).
        variance: their variances (the vcov's diagonal), same shape.
        vcov: the full variance matrix of the estimates, flattened group-major.
        deff: design effects (R's ``deff="replace"``), same shape.
        n: respondents in each domain (answered, non-zero weight).
        sum_w: their weights' sum per group.
        count: the weighted count per cell (proportions), or the estimate's numerator.
    """

    estimate: FloatArray
    variance: FloatArray
    vcov: FloatArray
    deff: FloatArray
    n: FloatArray
    sum_w: FloatArray
    count: FloatArray


def _sum(ids: IntArray, values: FloatArray, size: int) -> FloatArray:
    return np.asarray(np.bincount(ids, weights=values, minlength=size), dtype=np.float64)


def _divide(a: FloatArray, b: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def _ratio(top: FloatArray, bottom: FloatArray) -> FloatArray:
    return _divide(top, np.where(bottom != 0, bottom, 0.0))


def _domain(design: Design, ids: IntArray, valid: np.ndarray) -> tuple[IntArray, FloatArray]:
    """Per row its group (-1 when out of every domain) and its weight in the domain."""
    w = design.weights_array
    inside = valid & (ids >= 0)
    return np.where(inside, ids, -1), np.where(inside, w, 0.0)


def _counts(ids: IntArray, wd: FloatArray, size: int) -> tuple[FloatArray, FloatArray]:
    keep = ids >= 0
    n = np.bincount(ids[keep & (wd != 0)], minlength=size).astype(np.float64)
    sum_w = _sum(ids[keep], wd[keep], size)
    return n, sum_w


def _variance(
    design: Design,
    influence: Callable[[], Influence],
    statistic: Callable[[Sums], FloatArray],
    estimate: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """The vcov of the estimates: linearised, or over the replicates of a replicate design.

    ``statistic(sums)`` recomputes the estimates (replicates x k) from weighted sums per
    domain; only a replicate design calls it (and only a linearised one the influence).
    """
    if isinstance(design, ReplicateDesign):
        vcov = design.replicate_vcov(statistic, estimate)
    else:
        vcov = design.vcov(influence())
    return vcov, np.clip(np.diag(vcov), 0.0, None)


def means(design: Design, y: FloatArray, ids: IntArray, groups: int) -> DomainFigures:
    """The weighted mean of ``y`` (NaN: no answer) per group, R's ``svymean``."""
    codes, wd = _domain(design, ids, ~np.isnan(y))
    y0 = np.where(codes >= 0, y, 0.0)
    n, sum_w = _counts(codes, wd, groups)
    keep = codes >= 0
    totals = _sum(codes[keep], (wd * y0)[keep], groups)
    mean = _divide(totals, sum_w)
    safe_mean = np.nan_to_num(mean)
    centred = np.where(keep, y0 - safe_mean[np.maximum(codes, 0)], 0.0)
    safe_w = np.where(sum_w > 0, sum_w, 1.0)

    def influence() -> Influence:
        out = Influence(groups)
        out.add(wd * centred / safe_w[np.maximum(codes, 0)], Basis.one_hot(codes, groups))
        return out

    def statistic(sums: Sums) -> FloatArray:
        return _divide(sums(y0, codes, groups), sums(None, codes, groups))

    vcov, variance = _variance(design, influence, statistic, mean)
    squares = _sum(codes[keep], (wd * centred**2)[keep], groups)
    srs = _divide(squares, sum_w * (n - 1))
    estimate = mean[:, None]
    return DomainFigures(
        estimate=estimate,
        variance=np.where(sum_w > 0, variance, np.nan)[:, None],
        vcov=vcov,
        deff=_divide(variance, srs)[:, None],
        n=n,
        sum_w=sum_w,
        count=totals[:, None],
    )


def proportions(
    design: Design,
    codes: IntArray,
    n_codes: int,
    ids: IntArray,
    groups: int,
    chosen: FloatArray | None = None,
) -> DomainFigures:
    """The weighted share choosing each option per group (R's ``svymean(~factor(q))``).

    ``codes`` are the answers (-1 for none); ``chosen`` (answers x options) says which
    options each answer holds, for multi-choice questions (None: each answer one option).
    """
    dom, wd = _domain(design, ids, codes >= 0)
    n, sum_w = _counts(dom, wd, groups)
    options = n_codes if chosen is None else chosen.shape[1]
    keep = dom >= 0
    cell = np.where(keep, dom * n_codes + np.maximum(codes, 0), -1)
    sums = _sum(cell[keep], wd[keep], groups * n_codes)
    sums = sums.reshape(groups, n_codes)
    count = sums if chosen is None else sums @ chosen
    p = _divide(count, sum_w[:, None])
    safe_w = np.where(sum_w > 0, sum_w, 1.0)

    def influence() -> Influence:
        scaled = wd / safe_w[np.maximum(dom, 0)]
        out = Influence(groups * options)
        if chosen is None:
            out.add(scaled, Basis.one_hot(cell, groups * n_codes))
        else:
            spread_options = np.asarray(np.kron(np.eye(groups), chosen), dtype=np.float64)
            out.add(scaled, Basis.one_hot(cell, groups * n_codes), spread_options)
        spread = np.zeros((groups, groups * options))
        for g in range(groups):
            spread[g, g * options : (g + 1) * options] = np.nan_to_num(p[g])
        out.add(-scaled, Basis.one_hot(dom, groups), spread)
        return out

    def statistic(sums: Sums) -> FloatArray:
        cells = sums(None, cell, groups * n_codes).reshape(-1, groups, n_codes)
        answered = cells.sum(axis=2)
        chose = cells if chosen is None else cells @ chosen
        return _divide(chose, answered[:, :, None]).reshape(len(cells), -1)

    vcov, variance = _variance(design, influence, statistic, p)
    variance = variance.reshape(groups, options)
    variance = np.where(sum_w[:, None] > 0, variance, np.nan)
    srs = _divide(p * (1 - p), np.broadcast_to((n - 1)[:, None], p.shape))
    return DomainFigures(
        estimate=p,
        variance=variance,
        vcov=vcov,
        deff=_divide(variance, srs),
        n=n,
        sum_w=sum_w,
        count=count,
    )


def totals(design: Design, y: FloatArray, ids: IntArray, groups: int) -> DomainFigures:
    """The weighted total of ``y`` (NaN: no answer) per group, R's ``svytotal``."""
    codes, wd = _domain(design, ids, ~np.isnan(y))
    y0 = np.where(codes >= 0, y, 0.0)
    n, sum_w = _counts(codes, wd, groups)
    keep = codes >= 0
    total = _sum(codes[keep], (wd * y0)[keep], groups)

    def influence() -> Influence:
        out = Influence(groups)
        out.add(wd * y0, Basis.one_hot(codes, groups))
        return out

    def statistic(sums: Sums) -> FloatArray:
        return sums(y0, codes, groups)

    vcov, variance = _variance(design, influence, statistic, total)
    mean = _divide(total, sum_w)
    centred = np.where(keep, y0 - np.nan_to_num(mean)[np.maximum(codes, 0)], 0.0)
    squares = _sum(codes[keep], (wd * centred**2)[keep], groups)
    # R: svyvar(y) * (sum w)^2 / n, svyvar = sum w (y - m)^2 / sum w * n / (n - 1)
    srs = _divide(squares * sum_w, n - 1)
    return DomainFigures(
        estimate=total[:, None],
        variance=variance[:, None],
        vcov=vcov,
        deff=_divide(variance, srs)[:, None],
        n=n,
        sum_w=sum_w,
        count=total[:, None],
    )


def ratios(
    design: Design, y: FloatArray, x: FloatArray, ids: IntArray, groups: int
) -> DomainFigures:
    """The ratio of weighted totals ``sum w y / sum w x`` per group, R's ``svyratio``."""
    codes, wd = _domain(design, ids, ~np.isnan(y) & ~np.isnan(x))
    keep = codes >= 0
    y0, x0 = np.where(keep, y, 0.0), np.where(keep, x, 0.0)
    n, sum_w = _counts(codes, wd, groups)
    top = _sum(codes[keep], (wd * y0)[keep], groups)
    bottom = _sum(codes[keep], (wd * x0)[keep], groups)
    ratio = _ratio(top, bottom)
    at = np.maximum(codes, 0)
    safe_bottom = np.where(bottom != 0, bottom, 1.0)

    def influence() -> Influence:
        out = Influence(groups)
        out.add(
            wd * (y0 - np.nan_to_num(ratio)[at] * x0) / safe_bottom[at],
            Basis.one_hot(codes, groups),
        )
        return out

    def statistic(sums: Sums) -> FloatArray:
        return _ratio(sums(y0, codes, groups), sums(x0, codes, groups))

    vcov, variance = _variance(design, influence, statistic, ratio)
    return DomainFigures(
        estimate=ratio[:, None],
        variance=variance[:, None],
        vcov=vcov,
        deff=np.full((groups, 1), np.nan),
        n=n,
        sum_w=sum_w,
        count=top[:, None],
    )
