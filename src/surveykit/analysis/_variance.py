"""What a design's linearised variance is made of: the sample's structure and its calibrations.

:class:`_Structure` codes the strata and PSUs (PSUs nested in strata) with each stratum's
PSUs in the whole sample and its sampling fraction, as :func:`_structure` reads them from
the data (R's ``svydesign(ids=~psu, strata=~strata, fpc=~fpc, nest=TRUE)``).
:class:`PostStratum`, :class:`Raking` and :class:`Regression` record what a calibration
step did: what the variance needs, and what replicates need to be recalibrated the same way.

:func:`_stratified` is R's ``svyrecvar`` of the totals of influence values ``x``, one stage
of clusters sampled with replacement within strata (the "ultimate cluster" approximation):

    V = sum over strata h of (1 - f_h) * n_h / (n_h - 1) * sum over PSUs i in h of
        (z_i - mean_h z) (z_i - mean_h z)^T

with ``z_i`` the PSU totals of ``x``, ``n_h`` the stratum's PSUs in the whole sample and
``f_h`` its sampling fraction. Calibration (``rake``, ``poststratify``, ``calibrate``) first
replaces ``x`` by its residuals from the calibration variables (:func:`_residuals`), exactly
as ``svyrecvar`` does for R's ``postStratify``, ``rake`` and ``calibrate`` designs, so a
calibrated margin has no variance.

The designs (``_design``) and the replicate weights (``_replicates``) build on this module;
it imports neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.analysis._influence import Basis, FloatArray, Influence, IntArray, cross_sums
from surveykit.errors import AnalysisInputError

RAKING_SWEEPS = 10
"""Sweeps over the margins when a raked design's influence values are residualised (R's
``svyrecvar`` does 10 for a ``rake()`` design)."""


@dataclass(frozen=True)
class PostStratum:
    """One post-stratification: per row its cell, the weights before and after."""

    codes: IntArray
    size: int
    before: FloatArray
    after: FloatArray


@dataclass(frozen=True)
class Raking:
    """A raking to several margins: per margin the cell codes and their number; the weights."""

    margins: tuple[tuple[IntArray, int], ...]
    after: FloatArray


@dataclass(frozen=True)
class Regression:
    """A calibration (R's ``calibrate``): model matrix, weights before, factors ``g``.

    ``method``, ``bounds``, ``population`` and the Newton settings are what replicates
    need to be calibrated the same way (R's ``calibrate()`` of a replicate design).
    """

    matrix: FloatArray
    before: FloatArray
    g: FloatArray
    method: str = "linear"
    bounds: tuple[float, float] = (-np.inf, np.inf)
    population: FloatArray | None = None
    max_iter: int = 50
    tol: float = 1e-7
    trim: tuple[float, float] | None = None


CalibrationStep = PostStratum | Raking | Regression


@dataclass(frozen=True)
class _Structure:
    """Strata and PSUs as codes, shared by a design, its subsets and calibrations."""

    strata: IntArray  # per row, 0..H-1
    strata_labels: tuple[Any, ...]
    psu: IntArray  # per row, 0..P-1 (PSUs nested in strata)
    psu_stratum: IntArray  # per PSU, its stratum
    n_psu: IntArray  # per stratum, its PSUs in the whole sample
    fraction: FloatArray  # per stratum, the sampling fraction of PSUs (0 without fpc)
    lonely: str


def _codes(data: pd.DataFrame, column: str, role: str) -> tuple[IntArray, list[Any]]:
    if column not in data.columns:
        raise AnalysisInputError(
            f"{role}: no column {column!r} in the data; columns are "
            f"{[str(c) for c in data.columns]}"
        )
    codes, uniques = pd.factorize(data[column], sort=True, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    if (codes < 0).any():
        row = data.index[int(np.flatnonzero(codes < 0)[0])]
        raise AnalysisInputError(f"{role} {column!r}: row {row!r} has no value")
    return codes, list(uniques)


def _structure(
    data: pd.DataFrame, strata: str | None, psu: str | None, fpc: str | None, lonely: str
) -> _Structure:
    n = len(data)
    if strata is None:
        strata_codes, labels = np.zeros(n, dtype=np.int64), [None]
    else:
        strata_codes, labels = _codes(data, strata, "strata")
    h = len(labels)
    if psu is None:
        psu_codes = np.arange(n, dtype=np.int64)
    else:
        raw, _ = _codes(data, psu, "psu")
        nested = strata_codes * (int(raw.max(initial=0)) + 1) + raw
        psu_codes = np.asarray(np.unique(nested, return_inverse=True)[1], dtype=np.int64).ravel()
    n_psu_total = int(psu_codes.max(initial=-1)) + 1
    psu_stratum = np.zeros(n_psu_total, dtype=np.int64)
    psu_stratum[psu_codes] = strata_codes
    n_psu = np.bincount(psu_stratum, minlength=h).astype(np.int64)
    fraction = _fraction(data, fpc, strata_codes, labels, n_psu) if fpc else np.zeros(h)
    lonely_strata = np.flatnonzero(n_psu == 1)
    if strata is None and n_psu_total == 1 and lonely == "fail":
        lonely = "none"  # one PSU in all: no variance (NaN), not an error
    elif len(lonely_strata) and lonely == "fail":
        label = labels[int(lonely_strata[0])]
        raise AnalysisInputError(
            f"stratum {label!r} of {strata!r} has only one PSU, so its variance cannot be "
            f"estimated ({len(lonely_strata)} such strata); pass lonely_psu='adjust', "
            "'remove' or 'certainty' (R's options(survey.lonely.psu=...))"
        )
    return _Structure(strata_codes, tuple(labels), psu_codes, psu_stratum, n_psu, fraction, lonely)


def _fraction(
    data: pd.DataFrame, fpc: str, strata: IntArray, labels: Sequence[Any], n_psu: IntArray
) -> FloatArray:
    if fpc not in data.columns:
        raise AnalysisInputError(f"fpc: no column {fpc!r} in the data")
    values = np.asarray(pd.to_numeric(data[fpc], errors="coerce"), dtype=np.float64)
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        row = data.index[int(np.flatnonzero(bad)[0])]
        raise AnalysisInputError(
            f"fpc {fpc!r}: row {row!r} has {data[fpc].iloc[int(np.flatnonzero(bad)[0])]!r}, "
            "not a positive number"
        )
    h = len(labels)
    low = np.full(h, np.inf)
    high = np.full(h, -np.inf)
    np.minimum.at(low, strata, values)
    np.maximum.at(high, strata, values)
    varies = np.flatnonzero(high - low > 1e-9 * np.maximum(1.0, high))
    if len(varies):
        raise AnalysisInputError(
            f"fpc {fpc!r} differs within stratum {labels[int(varies[0])]!r}; it must be the "
            "stratum's population size (or sampling fraction)"
        )
    if (values <= 1).all():  # sampling fractions
        return high
    population = high
    small = np.flatnonzero(population < n_psu)
    if len(small):
        s = int(small[0])
        raise AnalysisInputError(
            f"fpc {fpc!r}: stratum {labels[s]!r} has a population of {population[s]:g} "
            f"but {int(n_psu[s])} PSUs in the sample (the fpc must be at least the sample)"
        )
    return np.asarray(n_psu / population, dtype=np.float64)


def _stratified(z: FloatArray, s: _Structure, *, diagonal: bool = False) -> FloatArray:
    """R's ``onestage`` over PSU totals ``z`` (PSUs x k); its diagonal alone if asked."""
    n_h = s.n_psu.astype(np.float64)
    means = stratum_sums(z, s) / np.maximum(n_h, 1.0)[:, None]
    centred = z - means[s.psu_stratum]
    uncentred = _uncentred(s)
    if uncentred.any():
        centred[uncentred[s.psu_stratum]] = z[uncentred[s.psu_stratum]]
    weighted = centred * _scales(s)[s.psu_stratum][:, None]
    if diagonal:
        return np.asarray(np.einsum("pk,pk->k", weighted, centred), dtype=np.float64)
    return np.asarray(weighted.T @ centred, dtype=np.float64)


def _uncentred(s: _Structure) -> npt.NDArray[np.bool_]:
    """Per stratum whether its PSUs stay uncentred.

    R leaves a lonely PSU under ``"adjust"`` deviating from the overall mean (0) instead of
    its stratum's.
    """
    lonely = s.n_psu == 1
    return lonely if s.lonely == "adjust" else np.zeros_like(lonely)


def _scales(s: _Structure) -> FloatArray:
    """Per stratum the factor of its centred squares: ``(1 - f) n / (n - 1)`` (R's)."""
    h = len(s.n_psu)
    n_h = s.n_psu.astype(np.float64)
    finite = 1.0 - s.fraction
    scale = np.where(n_h > 1, finite * n_h / np.maximum(n_h - 1, 1.0), finite)
    scale = np.where(finite < 1e-7, 0.0, scale)
    if s.lonely == "none":
        scale = np.full(h, np.nan)
    return np.asarray(scale, dtype=np.float64)


def rows_are_psus(s: _Structure) -> bool:
    """Whether every PSU is one row (a design without ``psu=``)."""
    return len(s.psu_stratum) == len(s.psu)


def by_rows(x: Influence, s: _Structure, *, diagonal: bool = False) -> FloatArray | None:
    """:func:`_stratified` of the totals of ``x`` when every PSU is one row, or None.

    Then the PSU totals are the rows' own influence values, a rows x k matrix (720 MB for
    a million rows and 90 domains) that is never made here. This handles influence values
    of one term ``r_i`` on one-hot codes ``c_i`` (estimates by domain of a design not
    calibrated; None for anything else). Per stratum h with mean ``m`` (a k-vector) and
    ``S_d = sum over rows of code d of (r_i - m_d)``, ``C_d`` those rows:

        V_dd = sum_{c_i = d} (r_i - m_d)^2 + (n_h - C_d) m_d^2
        V_de = -m_e S_d - m_d S_e + (n_h - C_d - C_e) m_d m_e       (d != e)

    centred in two passes as R's, so a variance of 0 stays 0 to rounding.
    """
    if len(x.terms) != 1 or x.terms[0].coef is not None:
        return None
    term = x.terms[0]
    codes, k = term.basis.codes, x.k
    if codes is None:
        return None
    h = len(s.n_psu)
    n_h = s.n_psu.astype(np.float64)
    cell = s.strata * (k + 1) + codes

    def table(values: FloatArray | None) -> FloatArray:
        sums = np.bincount(cell, weights=values, minlength=h * (k + 1)).reshape(h, k + 1)
        return np.asarray(sums[:, :k], dtype=np.float64)

    totals, rows = table(term.row), table(None)
    means = np.where(_uncentred(s)[:, None], 0.0, totals / np.maximum(n_h, 1.0)[:, None])
    deviation = term.row - np.append(means, np.zeros((h, 1)), axis=1).ravel()[cell]
    scale = _scales(s)
    squares = table(deviation * deviation) + (n_h[:, None] - rows) * means**2
    variances = np.asarray(scale @ squares, dtype=np.float64)
    if diagonal:
        return variances
    sums = totals - rows * means
    scaled_means = means * scale[:, None]
    counted = rows * means
    out = -(sums.T @ scaled_means) - (scaled_means.T @ sums)
    out += (means * (scale * n_h)[:, None]).T @ means
    out -= counted.T @ scaled_means + scaled_means.T @ counted
    np.fill_diagonal(out, variances)
    return np.asarray(out, dtype=np.float64)


BLOCK_CELLS = 1 << 19
"""Influence values made at a time by :func:`by_row_blocks` (rows x k; 4 MiB)."""


def by_row_blocks(x: Influence, s: _Structure, *, diagonal: bool = False) -> FloatArray:
    """:func:`_stratified` of the totals of ``x`` when every PSU is one row, for any ``x``.

    The PSU totals are the rows' influence values: made a block of rows at a time and
    centred on their stratum's mean (two passes, as R's), so the memory stays one block
    (:data:`BLOCK_CELLS`) whatever the rows and estimates (proportions by 90 domains of a
    million rows: 450 columns, 3.4 GB at once).
    """
    h = len(s.n_psu)
    n_h = s.n_psu.astype(np.float64)
    means = x.sums(Basis.one_hot(s.strata, h)) / np.maximum(n_h, 1.0)[:, None]
    means[_uncentred(s)] = 0.0
    scale = _scales(s)
    rows, k = len(s.strata), x.k
    step = max(1, BLOCK_CELLS // max(k, 1))
    out = np.zeros(k) if diagonal else np.zeros((k, k))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        strata = s.strata[start:stop]
        centred = x.block(start, stop) - means[strata]
        weighted = centred * scale[strata][:, None]
        if diagonal:
            out += np.einsum("ik,ik->k", weighted, centred)
        else:
            out += weighted.T @ centred
    return np.asarray(out, dtype=np.float64)


def stratum_sums(z: FloatArray, s: _Structure) -> FloatArray:
    """Per stratum the sums of the PSU totals ``z`` (strata x k).

    By PSUs sorted by stratum and ``np.add.reduceat``, not a (strata x PSUs) product: a
    BLAS product starts threads whose spinning afterwards costs more than the sums.
    """
    h = len(s.n_psu)
    if len(z) == 0 or not (s.n_psu > 0).all():  # reduceat needs every stratum non-empty
        out = np.zeros((h, z.shape[1]))
        np.add.at(out, s.psu_stratum, z)
        return out
    order = np.argsort(s.psu_stratum, kind="stable")
    starts = np.concatenate([[0], np.cumsum(s.n_psu)[:-1]])
    return np.asarray(np.add.reduceat(z[order], starts, axis=0), dtype=np.float64)


def _residuals(x: Influence, step: CalibrationStep) -> Influence:
    """The influence values after a calibration step (R's ``svyrecvar`` adjustments)."""
    out = Influence(x.k, list(x.terms))
    if isinstance(step, PostStratum):
        after = np.where((step.after == 0) & (step.before == 0), 1.0, step.after)
        cells = Basis.one_hot(step.codes, step.size)
        sums = x.sums(cells, step.before / after)
        totals = np.bincount(step.codes, weights=step.before, minlength=step.size)
        means = sums / np.where(totals > 0, totals, 1.0)[:, None]
        out.add(-after, cells, means)
    elif isinstance(step, Raking):
        _rake_residuals(x, step, out)
    else:
        ww = step.before
        g = np.where(step.g == 0, 1.0, step.g)
        basis = Basis.dense(step.matrix)
        gram = cross_sums(basis, basis, ww)
        coef = np.linalg.pinv(gram) @ x.sums(basis, 1.0 / g)
        out.add(-(step.g * ww), basis, coef)
    return out


def _rake_residuals(x: Influence, step: Raking, out: Influence) -> None:
    """R's residuals for a ``rake()`` design: 10 sweeps of ``x -= w * ave(x / w, margin)``.

    Every correction is ``-w * M_j[level]`` for margin ``j``, so the sweeps only need the
    sums of ``x / w`` per level of each margin and the counts of each pair of margins'
    levels; they then run on tables of levels, not on rows.
    """
    w = np.where(step.after == 0, 1.0, step.after)
    bases = [Basis.one_hot(codes, size) for codes, size in step.margins]
    ones = np.ones(len(w))
    sums = [x.sums(b, 1.0 / w) for b in bases]
    cross = [[cross_sums(a, b, ones) for b in bases] for a in bases]
    counts = [cross[i][i].diagonal() for i in range(len(bases))]
    coef = [np.zeros((b.size, x.k)) for b in bases]
    for _ in range(RAKING_SWEEPS):
        for j in range(len(bases)):
            current = sums[j] - sum(cross[j][m] @ coef[m] for m in range(len(bases)))
            coef[j] = coef[j] + current / np.where(counts[j] > 0, counts[j], 1.0)[:, None]
    for basis, c in zip(bases, coef, strict=True):
        out.add(-w, basis, c)
