"""Design-based estimates per domain: means, proportions, totals and ratios.

Each comes with its linearised variance, as R's ``svymean``, ``svytotal`` and ``svyratio``
under ``svyby``.

A domain is a group (``by=``) intersected with the rows that answered: rows outside it keep
their place in the design with an influence value of 0, so strata and PSU counts are the
whole sample's (R's ``svyby(..., na.rm=TRUE)``). Every function takes the design, a group id
per row (``-1`` for rows in no group) and the number of groups, and returns arrays with one
row per group.

On a replicate design (:class:`~surveykit.analysis._design.ReplicateDesign`) each
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
from functools import cached_property

import numpy as np
import numpy.typing as npt

from surveykit.analysis import _reliability as reliability
from surveykit.analysis._design import Design, ReplicateDesign
from surveykit.analysis._influence import Basis, FloatArray, Influence, IntArray
from surveykit.analysis._replicates import Sums


@dataclass
class DomainFigures:
    """Estimates per group (rows) and column (options, or one column).

    Attributes:
        estimate: the estimates (groups x columns).
        variance: their variances (the vcov's diagonal), same shape.
        covariance: computes the full variance matrix of the estimates, flattened
            group-major (:attr:`vcov`, made once when first read).
        deff: design effects (R's ``deff="replace"``), same shape.
        n: respondents in each domain (answered, non-zero weight).
        answered: rows in each domain whatever their weight (0 outside a subset).
        sum_w: their weights' sum per group.
        count: the weighted count per cell (proportions), or the estimate's numerator.
        domains: per row its domain (group and answered), ``groups`` for none, when the
            estimator made them (their degrees of freedom need no new pass); :func:`means`
            of one group gives a mask of the rows in none instead; else None.
        respondents: per (group, answer) the respondents of non-zero weight, from
            :func:`proportions`; else None.
        domain_dof: each domain's degrees of freedom (its PSUs less its strata), when the
            estimator counted its rows per PSU on the way; else None.
    """

    estimate: FloatArray
    variance: FloatArray
    covariance: Callable[[], FloatArray]
    deff: FloatArray
    n: FloatArray
    answered: FloatArray
    sum_w: FloatArray
    count: FloatArray
    domains: IntArray | npt.NDArray[np.bool_] | None = None
    respondents: FloatArray | None = None
    domain_dof: FloatArray | None = None

    @cached_property
    def vcov(self) -> FloatArray:
        """The full variance matrix of the estimates, flattened group-major."""
        return self.covariance()


def _sum(codes: IntArray, values: FloatArray | None, size: int) -> FloatArray:
    """Per code the sum of ``values`` (the count without them); code ``size`` is dropped."""
    table = np.bincount(codes, weights=values, minlength=size + 1)
    return np.asarray(table[:size], dtype=np.float64)


def _nonzero(design: Design, codes: IntArray, size: int) -> FloatArray:
    """Per code the rows of non-zero weight (one counting pass when no weight is 0)."""
    w = design.weights_array
    if design.all_positive:
        return _sum(codes, None, size)
    return _sum(codes, (w != 0).astype(np.float64), size)


def _ratio(top: FloatArray, bottom: FloatArray) -> FloatArray:
    return _divide(top, np.where(bottom != 0, bottom, 0.0))


def _divide(a: FloatArray, b: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def _domain(
    ids: IntArray, outside: npt.NDArray[np.bool_], groups: int, complete: bool = False
) -> IntArray:
    """Per row its group, or ``groups`` (no domain) for a row outside every domain.

    ``complete``: no id is -1 (every row in a group), so only ``outside`` is read.
    """
    return np.where(outside if complete else outside | (ids < 0), groups, ids)


def _variance(
    design: Design,
    influence: Callable[[], Influence],
    statistic: Callable[[Sums], FloatArray],
    estimate: FloatArray,
) -> tuple[Callable[[], FloatArray], FloatArray]:
    """The variances of the estimates, and their vcov on demand (a function of nothing).

    Linearised, or over the replicates of a replicate design. ``statistic(sums)``
    recomputes the estimates (replicates x k) from weighted sums per domain; only a
    replicate design calls it (and only a linearised one the influence). The linearised
    vcov waits to be asked for: the frames need its diagonal, only comparisons the rest.
    """
    k = np.size(estimate)
    if not np.isfinite(estimate).any():  # no groups, or nobody answered: nothing to vary
        return lambda: np.full((k, k), np.nan), np.full(k, np.nan)
    if isinstance(design, ReplicateDesign):
        vcov = design.replicate_vcov(statistic, np.ravel(estimate))
        return lambda: vcov, np.clip(np.diag(vcov), 0.0, None)
    variance, covariance = design.variances(influence())
    return covariance, np.clip(variance, 0.0, None)


def _padded(values: FloatArray, fill: float) -> FloatArray:
    """``values`` with one more entry for the no-domain code."""
    return np.append(np.nan_to_num(values, nan=fill), fill)


def _dot(a: FloatArray, b: FloatArray) -> float:
    """``sum(a * b)`` in numpy's own loop.

    ``np.dot`` of long vectors starts BLAS threads, whose spinning afterwards a busy machine
    charges to the process.
    """
    return float(np.einsum("i,i->", a, b))


CANCELLATION = 1e-3
"""A one-pass sum of squares is kept when it keeps at least this share of the raw sum."""


def _centred_squares(
    w: FloatArray, y: FloatArray, centre: float, total: float, wy: FloatArray | None
) -> float:
    """``sum w (y - centre)^2``, ``centre`` being ``total / sum w`` (``total = sum w y``).

    In one pass as ``sum w y^2 - total centre`` (``wy``: ``w y`` if made) when that loses
    at most 3 of the 16 digits (``y`` within about 30 standard deviations of its mean, as
    answers are); otherwise in two, from the residuals.
    """
    raw = float(np.einsum("i,i,i->", w, y, y) if wy is None else np.einsum("i,i->", wy, y))
    squares = raw - total * centre
    if squares > raw * CANCELLATION:
        return squares
    resid = y - centre
    return float(np.einsum("i,i,i->", w, resid, resid))


def means(
    design: Design, y: FloatArray, ids: IntArray, groups: int, *, complete: bool = False
) -> DomainFigures:
    """The weighted mean of ``y`` (NaN: no answer) per group, R's ``svymean``.

    ``complete``: no id is -1 (every row in a group), so the ids are not searched for one.
    """
    w = design.weights_array
    missing = np.isnan(y)
    if groups == 1:  # a common case: codes are 0 or the spare bin 1, and nothing is gathered
        if not complete and ids.any():  # ids are 0, or -1 for rows in no group
            missing |= ids < 0
    else:
        codes = _domain(ids, missing, groups, complete)
        if not complete:
            missing = codes == groups
    some_missing = bool(missing.any())
    y0 = np.where(missing, 0.0, y) if some_missing else y
    if groups > 1 and _by_cells(design, groups, len(y)):
        return _cell_means(design, y0, codes, groups)
    wy: FloatArray | None = None
    if groups == 1:  # sums over the domain are dot products with the weights 0 outside it
        wd = np.where(missing, 0.0, w) if some_missing else w
        sum_w = np.array([float(wd.sum())])
        if isinstance(design, ReplicateDesign):  # its replicate sums may take w y too
            wy = wd * y0
            totals = np.array([float(wy.sum())])
        else:
            totals = np.array([_dot(wd, y0)])
    else:
        sum_w = _sum(codes, w, groups)
        totals = _sum(codes, w * y0, groups)
    mean = _divide(totals, sum_w)
    centre = float(np.nan_to_num(mean[0])) if groups == 1 else 0.0
    if groups != 1:
        resid = y0 - _padded(mean, 0.0)[codes]
        w_resid = w * resid

    def influence() -> Influence:
        out = Influence(groups)
        safe = np.where(sum_w > 0, sum_w, 1.0)
        if groups == 1:  # wd, so the row values, are 0 outside the domain: no codes needed
            out.add(wd * (y0 - centre) / safe[0], Basis.constant())
        else:
            out.add(w_resid / _padded(safe, 1.0)[codes], Basis.one_hot(codes, groups))
        return out

    def statistic(sums: Sums) -> FloatArray:
        if groups == 1:  # the mask is the codes: 0 in the domain, 1 (no group) outside
            top = sums(y0, missing, 1, lambda: wd * y0 if wy is None else wy)
            return _divide(top, sums(None, missing, 1, lambda: wd))
        return _divide(sums(y0, codes, groups), sums(None, codes, groups))

    covariance, variance = _variance(design, influence, statistic, mean)
    if groups == 1:
        answered = np.array([float(len(y) - np.count_nonzero(missing))])
        squares = np.array([_centred_squares(wd, y0, centre, float(totals[0]), wy)])
    else:
        answered = _sum(codes, None, groups)
        squares = _sum(codes, w_resid * resid, groups)
    if design.all_positive:
        n = answered
    else:
        n = _nonzero(design, missing.astype(np.int64) if groups == 1 else codes, groups)
    srs = _divide(squares, sum_w * (n - 1))
    return DomainFigures(
        estimate=mean[:, None],
        variance=np.where(sum_w > 0, variance, np.nan)[:, None],
        covariance=covariance,
        deff=_divide(variance, srs)[:, None],
        n=n,
        answered=answered,
        sum_w=sum_w,
        count=totals[:, None],
        domains=missing if groups == 1 else codes,
    )


CELLS_PER_ROW = 2
""":func:`_cell_means` is taken while its tables have at most this many cells per row."""


def _by_cells(design: Design, groups: int, rows: int) -> bool:
    """Whether means by ``groups`` domains take :func:`_cell_means`.

    Only a design neither calibrated nor replicated has a variance that is a sum over
    (PSU, domain) cells, and the tables of those cells are cheaper than passes over the
    rows only while they are not much longer than the rows (a design without PSUs has one
    per row: there the influence values' single table is the cheaper way).
    """
    if isinstance(design, ReplicateDesign) or design.calibrated:
        return False
    return len(design.structure.psu_stratum) * (groups + 1) <= CELLS_PER_ROW * rows


def _cell_means(design: Design, y0: FloatArray, codes: IntArray, groups: int) -> DomainFigures:
    """:func:`means` by several domains of a design neither calibrated nor replicated.

    Its variance is a sum over the cells of (PSU, domain), so every figure comes from sums
    over one key of those cells (weights, ``w y``, the influence values, the centred
    squares, the rows): one table per figure, read per domain by summing over the PSUs,
    instead of one pass per figure by domain and another by (PSU, domain). The rows per
    cell give the domains' degrees of freedom too. ``y0`` is 0 and ``codes`` ``groups``
    where a row is in no domain.
    """
    w = design.weights_array
    s = design.structure
    n_psus, width = len(s.psu_stratum), groups + 1
    key = s.psu * width
    key += codes

    def table(values: FloatArray | None) -> FloatArray:
        sums = np.bincount(key, weights=values, minlength=n_psus * width)
        return np.asarray(sums, dtype=np.float64).reshape(n_psus, width)[:, :groups]

    sum_w = table(w).sum(axis=0)
    totals = table(w * y0).sum(axis=0)
    mean = _divide(totals, sum_w)
    resid = y0 - _padded(mean, 0.0)[codes]
    w_resid = w * resid
    z = table(w_resid) / np.where(sum_w > 0, sum_w, 1.0)[None, :]
    variance = np.clip(design.covariance(z, diagonal=True), 0.0, None)
    rows = table(None)
    counted = rows if design.all_positive else table((w != 0).astype(np.float64))
    n = counted.sum(axis=0)
    squares = table(w_resid * resid).sum(axis=0)
    srs = _divide(squares, sum_w * (n - 1))
    return DomainFigures(
        estimate=mean[:, None],
        variance=np.where(sum_w > 0, variance, np.nan)[:, None],
        covariance=lambda: design.covariance(z),
        deff=_divide(variance, srs)[:, None],
        n=n,
        answered=rows.sum(axis=0),
        sum_w=sum_w,
        count=totals[:, None],
        domains=codes,
        domain_dof=reliability.cells_degrees_of_freedom(design, counted > 0),
    )


def proportions(
    design: Design,
    codes: IntArray,
    n_codes: int,
    ids: IntArray,
    groups: int,
    chosen: FloatArray | None = None,
    *,
    complete: bool = False,
) -> DomainFigures:
    """The weighted share choosing each option per group (R's ``svymean(~factor(q))``).

    ``codes`` are the answers (-1 for none); ``chosen`` (answers x options) says which
    options each answer holds, for multi-choice questions (None: each answer one option).
    ``complete``: no id is -1.
    """
    w = design.weights_array
    dom = _domain(ids, codes < 0, groups, complete)
    options = n_codes if chosen is None else chosen.shape[1]
    none = groups * n_codes
    cell = np.where(dom < groups, dom * n_codes + codes, none)
    sums = _sum(cell, w, none).reshape(groups, n_codes)
    sum_w = sums.sum(axis=1)
    answered = _sum(cell, None, none).reshape(groups, n_codes)
    respondents = answered if design.all_positive else _nonzero(design, cell, none)
    respondents = respondents.reshape(groups, n_codes)
    n = respondents.sum(axis=1)
    count = sums if chosen is None else sums @ chosen
    p = _divide(count, sum_w[:, None])

    def influence() -> Influence:
        scaled = w / _padded(np.where(sum_w > 0, sum_w, 1.0), 1.0)[dom]
        out = Influence(groups * options)
        if chosen is None:
            out.add(scaled, Basis.one_hot(cell, none))
        else:
            spread_options = np.asarray(np.kron(np.eye(groups), chosen), dtype=np.float64)
            out.add(scaled, Basis.one_hot(cell, none), spread_options)
        spread = np.zeros((groups, groups * options))
        for g in range(groups):
            spread[g, g * options : (g + 1) * options] = np.nan_to_num(p[g])
        out.add(-scaled, Basis.one_hot(dom, groups), spread)
        return out

    def statistic(sums: Sums) -> FloatArray:
        cells = sums(None, cell, none).reshape(-1, groups, n_codes)
        answered = cells.sum(axis=2)
        chose = cells if chosen is None else cells @ chosen
        return _divide(chose, answered[:, :, None]).reshape(len(cells), -1)

    covariance, variance = _variance(design, influence, statistic, p)
    variance = np.where(sum_w[:, None] > 0, variance.reshape(groups, options), np.nan)
    srs = _divide(p * (1 - p), np.broadcast_to((n - 1)[:, None], p.shape))
    return DomainFigures(
        estimate=p,
        variance=variance,
        covariance=covariance,
        deff=_divide(variance, srs),
        n=n,
        answered=answered.sum(axis=1),
        sum_w=sum_w,
        count=count,
        domains=dom,
        respondents=respondents,
    )


def totals(design: Design, y: FloatArray, ids: IntArray, groups: int) -> DomainFigures:
    """The weighted total of ``y`` (NaN: no answer) per group, R's ``svytotal``."""
    w = design.weights_array
    codes = _domain(ids, np.isnan(y), groups)
    y0 = np.where(codes < groups, y, 0.0)
    sum_w = _sum(codes, w, groups)
    total = _sum(codes, w * y0, groups)

    def influence() -> Influence:
        out = Influence(groups)
        out.add(w * y0, Basis.one_hot(codes, groups))
        return out

    def statistic(sums: Sums) -> FloatArray:
        return sums(y0, codes, groups)

    covariance, variance = _variance(design, influence, statistic, total)
    n = _nonzero(design, codes, groups)
    resid = y0 - _padded(_divide(total, sum_w), 0.0)[codes]
    squares = _sum(codes, w * resid * resid, groups)
    # R: svyvar(y) * (sum w)^2 / n, svyvar = sum w (y - m)^2 / sum w * n / (n - 1)
    srs = _divide(squares * sum_w, n - 1)
    return DomainFigures(
        estimate=total[:, None],
        variance=variance[:, None],
        covariance=covariance,
        deff=_divide(variance, srs)[:, None],
        n=n,
        answered=_sum(codes, None, groups),
        sum_w=sum_w,
        count=total[:, None],
        domains=codes,
    )


def ratios(
    design: Design, y: FloatArray, x: FloatArray, ids: IntArray, groups: int
) -> DomainFigures:
    """The ratio of weighted totals ``sum w y / sum w x`` per group, R's ``svyratio``."""
    w = design.weights_array
    codes = _domain(ids, np.isnan(y) | np.isnan(x), groups)
    inside = codes < groups
    y0, x0 = np.where(inside, y, 0.0), np.where(inside, x, 0.0)
    sum_w = _sum(codes, w, groups)
    top = _sum(codes, w * y0, groups)
    bottom = _sum(codes, w * x0, groups)
    ratio = _ratio(top, bottom)

    def influence() -> Influence:
        out = Influence(groups)
        out.add(
            w
            * (y0 - _padded(ratio, 0.0)[codes] * x0)
            / _padded(np.where(bottom != 0, bottom, 1.0), 1.0)[codes],
            Basis.one_hot(codes, groups),
        )
        return out

    def statistic(sums: Sums) -> FloatArray:
        return _ratio(sums(y0, codes, groups), sums(x0, codes, groups))

    covariance, variance = _variance(design, influence, statistic, ratio)
    return DomainFigures(
        estimate=ratio[:, None],
        variance=variance[:, None],
        covariance=covariance,
        deff=np.full((groups, 1), np.nan),
        n=_nonzero(design, codes, groups),
        answered=_sum(codes, None, groups),
        sum_w=sum_w,
        count=top[:, None],
        domains=codes,
    )
