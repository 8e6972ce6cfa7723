"""A survey design: weights, strata, PSUs, finite population correction and calibration.

:class:`Design` is R's ``svydesign(ids=~psu, strata=~strata, weights=~w, fpc=~fpc,
nest=TRUE)``: one stage of clusters sampled with replacement within strata (the "ultimate
cluster" approximation), with an optional finite population correction per stratum. Its
variance of the totals of influence values ``x`` is R's ``svyrecvar``:

    V = sum over strata h of (1 - f_h) * n_h / (n_h - 1) * sum over PSUs i in h of
        (z_i - mean_h z) (z_i - mean_h z)^T

with ``z_i`` the PSU totals of ``x``, ``n_h`` the stratum's PSUs in the whole sample and
``f_h`` its sampling fraction. Calibration (``rake``, ``poststratify``, ``calibrate``) first
replaces ``x`` by its residuals from the calibration variables, exactly as ``svyrecvar``
does for R's ``postStratify``, ``rake`` and ``calibrate`` designs, so a calibrated margin
has no variance.

A subset (``design.subset(mask)``, ``by=`` groups, missing answers) keeps every row with a
weight of 0 outside it, as R's subset of a design does: PSU counts and strata stay those of
the whole sample (domain estimation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.analysis import _calibration
from surveykit.analysis import _inputs as inputs
from surveykit.analysis._influence import Basis, FloatArray, Influence, IntArray, cross_sums
from surveykit.errors import AnalysisInputError

if TYPE_CHECKING:
    from surveykit.analysis._replicates import ReplicateDesign

LonelyPSU = Literal["fail", "adjust", "remove", "certainty"]
LONELY_PSU = ("fail", "adjust", "remove", "certainty")

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


class Design:
    """A survey design (R's ``svydesign``): the data with its weights, strata, PSUs and fpc.

    Every ``sk.analysis`` estimate takes a design where it takes a DataFrame, and then gives
    design-based figures (R's ``survey`` package): linearised standard errors, domain
    estimation for groups and missing answers, design effects and tests on the design's
    degrees of freedom.

    Args:
        data: one row per respondent.
        weights: sampling weights, a column name or a Series aligned with ``data`` (None:
            every weight 1). Missing, negative or infinite weights are an error naming the
            row.
        strata: the column of strata (None: one stratum).
        psu: the column of primary sampling units, clusters such as households (None: each
            respondent is its own PSU). PSUs are nested in strata: the same id in two strata
            is two PSUs (R's ``nest=TRUE``).
        fpc: a column with the stratum's population size in PSUs, or its sampling fraction
            (every value <= 1), constant within a stratum (R's ``fpc=``).
        lonely_psu: what a stratum with one PSU does (R's ``options(survey.lonely.psu=)``):
            ``"fail"`` (an error naming it), ``"adjust"`` (its PSU deviates from the
            overall mean, not its own), ``"remove"`` or ``"certainty"`` (it adds no
            variance).

    Example:
        >>> design = sk.Design(df, weights="w", strata="region", psu="household")
        >>> sk.analysis.proportions(design, "Q2", by="channel")  # doctest: +SKIP
    """

    def __init__(
        self,
        data: pd.DataFrame,
        *,
        weights: str | pd.Series | None = None,
        strata: str | None = None,
        psu: str | None = None,
        fpc: str | None = None,
        lonely_psu: LonelyPSU = "fail",
    ) -> None:
        if not isinstance(data, pd.DataFrame):
            raise AnalysisInputError(f"Design needs a DataFrame, not {type(data).__name__}")
        if lonely_psu not in LONELY_PSU:
            raise AnalysisInputError(
                f"lonely_psu must be one of {list(LONELY_PSU)}, not {lonely_psu!r}"
            )
        w, name = inputs.weights_array(data, weights)
        self._data = data
        self._weights: FloatArray = np.ones(len(data)) if w is None else w
        self._base: FloatArray = self._weights
        self._names: dict[str, str | None] = {
            "weights": name,
            "strata": strata,
            "psu": psu,
            "fpc": fpc,
        }
        self._structure = _structure(data, strata, psu, fpc, lonely_psu)
        self._steps: tuple[CalibrationStep, ...] = ()
        self._calibration: list[str] = []
        self._dof: int | None = None
        self._positive: bool | None = None

    # -- what it is ---------------------------------------------------------------------

    @property
    def data(self) -> pd.DataFrame:
        """The respondents (every row, those outside a subset included)."""
        return self._data

    @property
    def weights(self) -> pd.Series:
        """The weights, calibrated if the design is; 0 outside a subset."""
        return pd.Series(self._weights, index=self._data.index, name=self.weights_name)

    @property
    def weights_name(self) -> str:
        """The weights' name (``"weights"`` when none was given)."""
        return self._names["weights"] or "weights"

    @property
    def weights_array(self) -> FloatArray:
        """The weights as a float array (read-only use)."""
        return self._weights

    @property
    def all_positive(self) -> bool:
        """Whether every weight is above 0 (no subset, no zero weight)."""
        if self._positive is None:
            self._positive = bool((self._weights > 0).all())
        return self._positive

    @property
    def degrees_of_freedom(self) -> int:
        """PSUs minus strata, counting those with a non-zero weight (R's ``degf()``)."""
        if self._dof is None:
            s = self._structure
            inset = (self._weights != 0).astype(np.float64)
            psus = np.count_nonzero(np.bincount(s.psu, inset, minlength=len(s.psu_stratum)))
            strata = np.count_nonzero(np.bincount(s.strata, inset, minlength=len(s.n_psu)))
            self._dof = int(psus - strata)
        return self._dof

    @property
    def n_strata(self) -> int:
        """The number of strata."""
        return len(self._structure.strata_labels)

    @property
    def n_psu(self) -> int:
        """The number of PSUs in the whole sample."""
        return len(self._structure.psu_stratum)

    @property
    def calibrated(self) -> bool:
        """Whether the weights were raked, post-stratified or calibrated."""
        return bool(self._steps)

    @property
    def calibration(self) -> list[str]:
        """What calibrated the weights, one line per step (empty when none did)."""
        return list(self._calibration)

    @property
    def variance_method(self) -> str:
        """How standard errors are computed, in words (for reports)."""
        return "Taylor linearisation (with-replacement PSUs" + (
            ", calibration residuals)" if self._steps else ")"
        )

    def describe(self) -> str:
        """One line saying what the design is, in R's terms."""
        parts = [f"{len(self._data):,} respondents"]
        names = self._names
        parts.append(f"weights {names['weights']!r}" if names["weights"] else "equal weights")
        if names["strata"]:
            word = "stratum" if self.n_strata == 1 else "strata"
            parts.append(f"{self.n_strata} {word} ({names['strata']!r})")
        if names["psu"]:
            parts.append(f"{self.n_psu} PSUs ({names['psu']!r})")
        if names["fpc"]:
            parts.append(f"fpc {names['fpc']!r}")
        parts.extend(self._calibration)
        dof = self.degrees_of_freedom
        return "Design: " + ", ".join(parts) + f"; {dof} degree{'' if dof == 1 else 's'} of freedom"

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    # -- new designs from this one ----------------------------------------------------

    def subset(self, mask: pd.Series | npt.ArrayLike) -> Design:
        """The design restricted to ``mask`` for estimation, whole for variance (a domain).

        Rows outside get weight 0 and stay in the design, as R's ``subset()`` of a design
        does, so strata and PSU counts are the whole sample's.
        """
        keep = _mask(self._data, mask)
        return self._with(weights=np.where(keep, self._weights, 0.0))

    def with_data(self, data: pd.DataFrame) -> Design:
        """The same design over another frame of the same rows (its labelled answers).

        Weights, strata, PSUs and calibration stay; ``data`` must have the design's index.
        """
        if not isinstance(data, pd.DataFrame) or len(data) != len(self._data):
            raise AnalysisInputError(
                f"with_data: needs a DataFrame of the design's {len(self._data)} rows"
            )
        if not data.index.equals(self._data.index):
            raise AnalysisInputError("with_data: the frame's index must be the design's")
        return self._with(data=data)

    def _with(self, **changes: Any) -> Design:
        new = object.__new__(type(self))  # a replicate design stays one
        new.__dict__.update(self.__dict__)
        new._calibration = list(self._calibration)
        new._dof = None
        new._positive = None
        for key, value in changes.items():
            setattr(new, "_" + key, value)
        return new

    def _calibrated_by(self, weights: FloatArray, step: CalibrationStep, what: str) -> Design:
        return self._with(
            weights=weights, steps=(*self._steps, step), calibration=[*self._calibration, what]
        )

    def rake(
        self,
        targets: Mapping[Any, Mapping[Any, float]],
        *,
        max_iter: int = 100,
        tol: float = 1e-6,
        trim: tuple[float | None, float | None] | None = None,
    ) -> Design:
        """The design raked to ``targets``, starting from its own weights (R's ``rake()``).

        ``targets`` is ``{column: {level: share}}`` (shares summing to 1 per column, of the
        design's weighted total) or ``{column: {level: population total}}`` (every column
        summing to the same population size). Standard errors of the new design count the
        raking (a raked margin has se 0).
        """
        weights, margins, text = _calibration.rake(
            self._data, self._weights, targets, max_iter=max_iter, tol=tol, trim=trim
        )
        return self._calibrated_by(weights, Raking(margins, weights), text)

    def poststratify(self, column: str, shares: Mapping[Any, float]) -> Design:
        """The design post-stratified on ``column`` (R's ``postStratify``).

        ``shares`` maps each level to its population share (summing to 1) or its population
        total.
        """
        codes, size, weights, text = _calibration.poststratify(
            self._data, self._weights, column, shares
        )
        return self._calibrated_by(weights, PostStratum(codes, size, self._weights, weights), text)

    def calibrate(
        self,
        totals: Mapping[Any, float | Mapping[Any, float]],
        *,
        method: Literal["linear", "raking", "logit"] = "linear",
        bounds: tuple[float, float] | None = None,
        population: float | None = None,
        max_iter: int = 50,
        tol: float = 1e-7,
        trim: tuple[float, float] | None = None,
    ) -> Design:
        """The design calibrated to population totals (GREG; R's ``calibrate``).

        Args:
            totals: ``{column: total}`` for a numeric column, ``{column: {level: total}}``
                for a categorical one (every level; every categorical column summing to
                the population size).
            method: the calibration function: ``"linear"`` (GREG), ``"raking"``
                (multiplicative) or ``"logit"`` (bounded; needs ``bounds``).
            bounds: ``(low, high)`` bounds on the calibration factors ``g``.
            population: the population size, required when ``totals`` has no categorical
                column (R's intercept).
            max_iter: Newton iterations at most.
            tol: convergence of the totals, relative (R's ``epsilon``).
            trim: ``(low, high)``: R's ``trim=``, factors ``g`` outside are set to the
                bound and the difference spread over the others in proportion to their
                weights (for ``"raking"``, ``"logit"`` or ``bounds=``; R ignores it for
                an unbounded linear calibration, and so it is an error here).
        """
        matrix, g, text, target = _calibration.calibrate(
            self._data,
            self._weights,
            totals,
            method=method,
            bounds=bounds,
            population=population,
            max_iter=max_iter,
            tol=tol,
            trim=trim,
        )
        low, high = (-np.inf, np.inf) if bounds is None else (float(bounds[0]), float(bounds[1]))
        step = Regression(
            matrix,
            self._weights,
            g,
            method,
            (low, high),
            target,
            max_iter,
            tol,
            None if trim is None else (float(trim[0]), float(trim[1])),
        )
        return self._calibrated_by(self._weights * g, step, text)

    def replicates(
        self,
        method: Literal["auto", "jk1", "jkn", "bootstrap", "brr"] = "auto",
        *,
        replicates: int | None = None,
        seed: int | np.random.Generator | None = None,
        mse: bool = False,
        fay: float = 0.0,
    ) -> ReplicateDesign:
        """The design with replicate weights (R's ``as.svrepdesign(design, type=)``).

        Args:
            method: ``"jk1"`` (delete one PSU; unstratified designs), ``"jkn"`` (delete one
                PSU per stratum; stratified designs), ``"bootstrap"`` (Canty and Davison's
                bootstrap of PSUs within strata, R's ``bootweights``), ``"brr"`` (balanced
                repeated replication for exactly 2 PSUs per stratum, R's ``brrweights``
                with R's Hadamard matrix, ``type="BRR"``; with ``fay=`` Fay's method,
                ``type="Fay"``) or ``"auto"`` (R's default: jk1 without strata, jkn with).
                The design's fpc carries over, except to BRR (R drops it there too).
            replicates: the bootstrap's number of replicates (default 50, as R).
            seed: the bootstrap's random seed (or a ``numpy.random.Generator``).
            mse: centre variances on the full-sample estimate (R's ``mse=TRUE``); by
                default on the mean of the replicates (R's default).
            fay: Fay's factor ``rho`` (0 <= rho < 1) of ``method="brr"``: the PSUs of a
                replicate's half-sample get ``2 - rho``, the others ``rho`` (R's
                ``fay.rho``); 0 is plain BRR.

        A raked, post-stratified or calibrated design recalibrates every
        replicate to the same totals: what R's ``rake(as.svrepdesign(uncalibrated design),
        ...)`` gives (likewise ``postStratify``, ``calibrate``). R's ``as.svrepdesign`` of an
        already calibrated design does not recalibrate, so there its calibrated margins keep
        a variance. A subset stays a subset.
        """
        from surveykit.analysis import _replicates

        return _replicates.replicate_design(
            self, method, replicates=replicates, seed=seed, mse=mse, fay=fay
        )

    # -- variance ---------------------------------------------------------------------

    def vcov(self, influence: Influence) -> FloatArray:
        """The variance matrix of the totals of ``influence`` (``k x k``)."""
        return self.covariance(self.psu_totals(influence))

    def psu_totals(self, influence: Influence) -> FloatArray:
        """The PSU totals of ``influence`` (PSUs x k), after the calibration's residuals."""
        x = influence
        for step in self._steps:
            x = _residuals(x, step)
        s = self._structure
        return x.sums(Basis.one_hot(s.psu, len(s.psu_stratum)))

    def covariance(self, z: FloatArray, *, diagonal: bool = False) -> FloatArray:
        """The variance matrix (``k x k``) of the totals whose PSU totals are ``z``.

        ``diagonal=True`` gives the variances alone (``k``), without the matrix product:
        90 domains need 90 figures, not a BLAS product of 8,100.
        """
        return _stratified(z, self._structure, diagonal=diagonal)

    def se(self, influence: Influence) -> FloatArray:
        """The standard errors of the totals of ``influence`` (the vcov's diagonal, rooted)."""
        return np.sqrt(np.clip(np.diag(self.vcov(influence)), 0.0, None))

    @property
    def structure(self) -> _Structure:
        """Strata and PSU codes (for replicate weights)."""
        return self._structure


def _mask(data: pd.DataFrame, mask: pd.Series | npt.ArrayLike) -> npt.NDArray[np.bool_]:
    if isinstance(mask, pd.Series):
        if not mask.index.equals(data.index):
            raise AnalysisInputError("subset: the mask's index must be the data's index")
        values = mask.to_numpy()
    else:
        values = np.asarray(mask)
    if values.shape != (len(data),):
        raise AnalysisInputError(
            f"subset: the mask needs one value per row ({len(data)}), got shape {values.shape}"
        )
    if values.dtype != bool:
        if pd.isna(values).any():
            raise AnalysisInputError("subset: the mask has missing values; use True or False")
        values = values.astype(bool)
    return values


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
    h = len(s.n_psu)
    n_h = s.n_psu.astype(np.float64)
    means = _stratum_sums(z, s) / np.maximum(n_h, 1.0)[:, None]
    centred = z - means[s.psu_stratum]
    lonely = n_h == 1
    if s.lonely == "adjust" and lonely.any():
        # R leaves a lonely PSU uncentred: it deviates from the overall mean (0) instead.
        uncentred = lonely[s.psu_stratum]
        centred[uncentred] = z[uncentred]
    finite = 1.0 - s.fraction
    scale = np.where(n_h > 1, finite * n_h / np.maximum(n_h - 1, 1.0), finite)
    scale = np.where(finite < 1e-7, 0.0, scale)
    if s.lonely == "none":
        scale = np.full(h, np.nan)
    weighted = centred * scale[s.psu_stratum][:, None]
    if diagonal:
        return np.asarray(np.einsum("pk,pk->k", weighted, centred), dtype=np.float64)
    return np.asarray(weighted.T @ centred, dtype=np.float64)


def _stratum_sums(z: FloatArray, s: _Structure) -> FloatArray:
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


__all__ = ["Design", "LonelyPSU", "design_of"]


def design_of(
    data: pd.DataFrame | Design, weights: str | pd.Series | None
) -> tuple[pd.DataFrame, Design | None]:
    """The frame and the design of an estimate's input (None: unweighted, textbook figures).

    A :class:`Design` is used as it is; a frame with ``weights=`` becomes
    ``Design(frame, weights=weights)``; a frame alone has no design.
    """
    if isinstance(data, Design):
        if weights is not None:
            raise AnalysisInputError(
                "weights: a Design carries its own weights; give weights= to Design() instead"
            )
        return data.data, data
    if not isinstance(data, pd.DataFrame):
        raise AnalysisInputError(f"expected a DataFrame or a sk.Design, not {type(data).__name__}")
    if weights is None:
        return data, None
    return data, Design(data, weights=weights)
