"""The survey designs: :class:`Design` (linearised variance) and :class:`ReplicateDesign`.

:class:`Design` is R's ``svydesign(ids=~psu, strata=~strata, weights=~w, fpc=~fpc,
nest=TRUE)``: one stage of clusters sampled with replacement within strata (the "ultimate
cluster" approximation), with an optional finite population correction per stratum. Its
variance of the totals of influence values is R's ``svyrecvar``, calibration (``rake``,
``poststratify``, ``calibrate``) first replacing them by their residuals from the
calibration variables, so a calibrated margin has no variance: the formula, the strata and
PSU codes and the calibration steps are in ``_variance``.

:class:`ReplicateDesign` is R's ``svrepdesign``: a design with replicate weights, whose
variances come from re-estimating with every replicate's weights (R's ``svrVar``). It is
made by :meth:`Design.replicates` (:func:`replicate_design`, R's ``as.svrepdesign``) or
from replicate weights supplied with the data; the replicate weights themselves (how they
are made, stored, recalibrated and turned into variances) are in ``_replicates``.

A subset (``design.subset(mask)``, ``by=`` groups, missing answers) keeps every row with a
weight of 0 outside it, as R's subset of a design does: PSU counts and strata stay those of
the whole sample (domain estimation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.analysis import _calibration
from surveykit.analysis import _inputs as inputs
from surveykit.analysis._influence import Basis, FloatArray, Influence
from surveykit.analysis._replicates import (
    DESIGN_METHODS,
    MAX_JACKKNIFE,
    R_NAMES,
    SUPPLIED_METHODS,
    Codes,
    Sums,
    SuppliedMethod,
    _bootstrap,
    _brr,
    _Jackknife,
    _jackknife,
    _recalibrated,
    _Replicates,
    _scales,
    _supplied_weights,
)
from surveykit.analysis._variance import (
    CalibrationStep,
    PostStratum,
    Raking,
    Regression,
    _residuals,
    _stratified,
    _Structure,
    _structure,
    by_row_blocks,
    by_rows,
    rows_are_psus,
)
from surveykit.errors import AnalysisInputError

LonelyPSU = Literal["fail", "adjust", "remove", "certainty"]
LONELY_PSU = ("fail", "adjust", "remove", "certainty")


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
        return replicate_design(self, method, replicates=replicates, seed=seed, mse=mse, fay=fay)

    # -- variance ---------------------------------------------------------------------

    def vcov(self, influence: Influence) -> FloatArray:
        """The variance matrix of the totals of ``influence`` (``k x k``)."""
        x = self._residualised(influence)
        s = self._structure
        if rows_are_psus(s):  # no PSU totals (a rows x k matrix): sums over rows
            found = by_rows(x, s)
            return found if found is not None else by_row_blocks(x, s)
        return self.covariance(self._psu_sums(x))

    def variances(self, influence: Influence) -> tuple[FloatArray, Callable[[], FloatArray]]:
        """The variances of the totals of ``influence`` (``k``), and their matrix on demand.

        The function returned makes the variance matrix (``k x k``). Estimates by many
        domains need only the variances; a comparison reads the matrix.
        """
        x = self._residualised(influence)
        s = self._structure
        if rows_are_psus(s):  # no PSU totals (a rows x k matrix): sums over rows
            found = by_rows(x, s, diagonal=True)
            if found is None:
                found = by_row_blocks(x, s, diagonal=True)
            return found, lambda: self.vcov(influence)
        z = self._psu_sums(x)
        return self.covariance(z, diagonal=True), lambda: self.covariance(z)

    def psu_totals(self, influence: Influence) -> FloatArray:
        """The PSU totals of ``influence`` (PSUs x k), after the calibration's residuals."""
        return self._psu_sums(self._residualised(influence))

    def _residualised(self, influence: Influence) -> Influence:
        x = influence
        for step in self._steps:
            x = _residuals(x, step)
        return x

    def _psu_sums(self, x: Influence) -> FloatArray:
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


class ReplicateDesign(Design):
    """A survey design with replicate weights (R's ``svrepdesign``).

    Every ``sk.analysis`` estimate takes it where it takes a :class:`Design`; standard
    errors then come from the replicates: ``V = scale * sum_r rscales_r (theta_r -
    centre)^2`` (R's ``svrVar``), centred on the mean of the replicates (``mse=False``,
    R's default) or on the full-sample estimate (``mse=True``). Degrees of freedom are the
    rank of the replicate weights less one (R's ``degf()``).

    This constructor takes replicate weights supplied with the data, as R's
    ``svrepdesign(data=, weights=, repweights=, type=, scale=, rscales=,
    combined.weights=TRUE)``: each replicate column is a full weight (not a multiplier).
    ``design.replicates()`` makes them from a design's strata and PSUs instead.

    Args:
        data: one row per respondent.
        weights: the full-sample weights, a column name or a Series (None: every weight 1).
        replicate_weights: the replicate weights: a list of column names of ``data``, a
            DataFrame with ``data``'s index, or an array (rows x replicates).
        method: how they were made, which sets the defaults of ``scale`` and ``rscales``:
            ``"jk1"`` (scale ``(R - 1) / R``), ``"jkn"`` (``rscales`` required),
            ``"bootstrap"`` (scale ``1 / (R - 1)``), ``"brr"`` (scale ``1 / R``, fixed) or
            ``"other"`` (scale 1).
        scale: the overall multiplier of the variance.
        rscales: one multiplier per replicate (or one for all; default 1).
        mse: centre the variance on the full-sample estimate instead of the replicates'
            mean.

    Example:
        >>> design = sk.ReplicateDesign(
        ...     df, weights="w", replicate_weights=[f"rw{i}" for i in range(1, 81)],
        ...     method="jk1")  # doctest: +SKIP
        >>> sk.analysis.means(design, "Q3", by="region")  # doctest: +SKIP
    """

    _replicates: _Replicates

    def __init__(
        self,
        data: pd.DataFrame,
        *,
        weights: str | pd.Series | None = None,
        replicate_weights: Sequence[str] | pd.DataFrame | npt.ArrayLike,
        method: SuppliedMethod,
        scale: float | None = None,
        rscales: float | npt.ArrayLike | None = None,
        mse: bool = False,
    ) -> None:
        super().__init__(data, weights=weights)
        if method not in SUPPLIED_METHODS:
            raise AnalysisInputError(
                f"ReplicateDesign: method must be one of {list(SUPPLIED_METHODS)}, not {method!r}"
            )
        matrix, names = _supplied_weights(data, replicate_weights)
        count = matrix.shape[1]
        the_scale, the_rscales = _scales(method, count, scale, rscales)
        self._replicates = _Replicates(
            psu=np.arange(len(data), dtype=np.int64),
            factors=matrix,
            jackknife=None,
            row_scale=np.ones(len(data)),
            scale=the_scale,
            rscales=the_rscales,
            mse=bool(mse),
            method=method,
            notes=tuple(names),
        )

    @classmethod
    def _of(cls, design: Design, replicates: _Replicates) -> ReplicateDesign:
        new = object.__new__(cls)
        new.__dict__.update(design.__dict__)
        new._calibration = list(design.calibration)
        new._replicates = replicates
        return new

    # -- what it is ---------------------------------------------------------------------

    @property
    def method(self) -> str:
        """How the replicates were made: jk1, jkn, bootstrap, brr or other."""
        return self._replicates.method

    @property
    def n_replicates(self) -> int:
        """The number of replicates."""
        return self._replicates.count

    @property
    def scale(self) -> float:
        """The variance's overall multiplier (R's ``scale``)."""
        return self._replicates.scale

    @property
    def rscales(self) -> FloatArray:
        """Each replicate's multiplier of the variance (R's ``rscales``)."""
        return self._replicates.rscales.copy()

    @property
    def mse(self) -> bool:
        """Whether variances are centred on the full-sample estimate (else the replicates')."""
        return self._replicates.mse

    @property
    def degrees_of_freedom(self) -> int:
        """The rank of the replicate weights less one (R's ``degf()`` of a svrep design)."""
        return self._replicates.rank - 1

    @property
    def variance_method(self) -> str:
        """How standard errors are computed, in words (for reports)."""
        centre = "the full-sample estimate" if self.mse else "the replicates' mean"
        calibrated = ", each recalibrated" if self.calibrated else ""
        return (
            f"replicate weights ({R_NAMES[self.method]}, {self.n_replicates} replicates"
            f"{calibrated}; centred on {centre})"
        )

    def describe(self) -> str:
        """One line saying what the design is, in R's terms."""
        return super().describe() + f"; {self.variance_method}"

    def replicate_weights(self) -> pd.DataFrame:
        """Every replicate's weights per row (R's ``weights(design, "analysis")``).

        This writes out a rows x replicates table, which estimates never need.
        """
        values = self._replicates.analysis_weights()
        columns = [f"replicate_{r + 1}" for r in range(values.shape[1])]
        return pd.DataFrame(values, index=self.data.index, columns=columns)

    # -- new designs from this one ----------------------------------------------------

    def subset(self, mask: pd.Series | npt.ArrayLike) -> ReplicateDesign:
        """The design restricted to ``mask`` (every replicate too), as R's ``subset()``."""
        keep = _mask(self.data, mask)
        new = cast(ReplicateDesign, super().subset(keep))
        new._replicates = self._replicates.restricted(keep)
        return new

    def rake(
        self,
        targets: Mapping[Any, Mapping[Any, float]],
        *,
        max_iter: int = 100,
        tol: float = 1e-6,
        trim: tuple[float | None, float | None] | None = None,
    ) -> ReplicateDesign:
        """The design and every replicate raked to ``targets`` (R's ``rake()``).

        See :meth:`Design.rake`; ``trim=`` is not available on replicates (use
        ``calibrate(method="raking", trim=)``, R's trimmed raking).
        """
        if trim is not None:
            raise AnalysisInputError(
                "rake: trim= is not available on a replicate design (R's rake() has no "
                "trimming); calibrate(totals, method='raking', trim=(low, high)) is R's "
                "trimmed raking and recalibrates every replicate"
            )
        new = cast(ReplicateDesign, super().rake(targets, max_iter=max_iter, tol=tol))
        step = new._steps[-1]
        assert isinstance(step, Raking)
        new._replicates = self._replicates.calibrated(step.margins, step.after)
        return new

    def poststratify(self, column: str, shares: Mapping[Any, float]) -> ReplicateDesign:
        """The design and every replicate post-stratified on ``column`` (R's ``postStratify``).

        See :meth:`Design.poststratify`.
        """
        new = cast(ReplicateDesign, super().poststratify(column, shares))
        step = new._steps[-1]
        assert isinstance(step, PostStratum)
        new._replicates = self._replicates.calibrated([(step.codes, step.size)], step.after)
        return new

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
    ) -> ReplicateDesign:
        """The design and every replicate calibrated to ``totals`` (R's ``calibrate``).

        See :meth:`Design.calibrate`. Every replicate is calibrated to the same totals with
        the same function and bounds, as R's ``calibrate()`` of a replicate design: the
        linear calibration without bounds in closed form (R's ``regcalibrate``, ``g = 1 +
        x' lambda_r``), raking, logit or bounds by Newton steps per replicate (R's
        ``grake``). ``trim=`` trims every replicate's factors as the full sample's, as R.
        """
        new = cast(
            ReplicateDesign,
            super().calibrate(
                totals,
                method=method,
                bounds=bounds,
                population=population,
                max_iter=max_iter,
                tol=tol,
                trim=trim,
            ),
        )
        step = new._steps[-1]
        assert isinstance(step, Regression)
        new._replicates = _recalibrated(self._replicates, step)
        return new

    # -- variance ---------------------------------------------------------------------

    def vcov(self, influence: Influence) -> FloatArray:
        """Not defined: a replicate design's variances come from re-estimating."""
        return self.psu_totals(influence)

    def variances(self, influence: Influence) -> tuple[FloatArray, Callable[[], FloatArray]]:
        """Not defined: a replicate design's variances come from re-estimating."""
        return self.psu_totals(influence), lambda: self.psu_totals(influence)

    def psu_totals(self, influence: Influence) -> FloatArray:
        """Not defined: a replicate design's variances come from re-estimating."""
        raise AnalysisInputError(
            "a replicate design has no linearised variance; its estimates use replicate_vcov"
        )

    def replicate_sums(
        self,
        values: FloatArray | None,
        ids: Codes,
        size: int,
        weighted: Callable[[], FloatArray] | None = None,
    ) -> FloatArray:
        """Per replicate and group id the weighted sums of ``values`` (replicates x size).

        See :class:`Sums`; ``weighted`` is used only where the replicates' base weights are
        the design's weights (the same array: no calibration, no subset).
        """
        reps = self._replicates
        if weighted is None or reps.row_scale is not self.weights_array:
            return reps.sums(values, ids, size)
        return reps.sums(values, ids, size, weighted())

    def replicate_vcov(
        self, statistic: Callable[[Sums], FloatArray], estimate: FloatArray
    ) -> FloatArray:
        """R's ``svrVar`` of ``statistic``: re-estimated with every replicate's weights.

        ``statistic(sums)`` computes the estimates (replicates x k) from weighted sums
        given by ``sums(values, ids, size)``; ``estimate`` is the full-sample one (k).
        """
        try:
            thetas = np.asarray(statistic(self.replicate_sums), dtype=np.float64)
        finally:  # the rows' cells are kept for one estimate's sums only
            self._replicates.forget_cells()
        thetas = thetas.reshape(self.n_replicates, -1)
        return self._replicates.vcov(thetas, np.asarray(estimate, dtype=np.float64).ravel())


def replicate_design(
    design: Design,
    method: str = "auto",
    *,
    replicates: int | None = None,
    seed: int | np.random.Generator | None = None,
    mse: bool = False,
    fay: float = 0.0,
) -> ReplicateDesign:
    """The replicate design of ``design``: R's ``as.svrepdesign(design, type=)``.

    See :meth:`surveykit.analysis.Design.replicates`.
    """
    if isinstance(design, ReplicateDesign):
        raise AnalysisInputError("replicates: the design already has replicate weights")
    if method not in DESIGN_METHODS:
        raise AnalysisInputError(
            f"replicates: method must be one of {list(DESIGN_METHODS)}, not {method!r}"
        )
    s = design.structure
    stratified = design.n_strata > 1
    if method == "auto":
        method = "jkn" if stratified else "jk1"
    if method == "jk1" and stratified:
        raise AnalysisInputError(
            f"replicates: method='jk1' is for an unstratified design; this one has "
            f"{design.n_strata} strata: use method='jkn' or 'bootstrap' (R: \"Can't use JK1 "
            'for a stratified design")'
        )
    if method in ("jkn", "brr") and not stratified:
        raise AnalysisInputError(
            f"replicates: method={method!r} is for a stratified design; this one has no "
            "strata: use method='jk1' or 'bootstrap' (R: \"Must use JK1 or bootstrap for an "
            'unstratified design")'
        )
    if isinstance(fay, bool) or not isinstance(fay, int | float) or not 0 <= fay < 1:
        raise AnalysisInputError(
            f"replicates: fay= must be a number from 0 to below 1, not {fay!r}"
        )
    if fay and method != "brr":
        raise AnalysisInputError("replicates: fay= is Fay's factor of method='brr'")
    if replicates is not None and method != "bootstrap":
        raise AnalysisInputError(
            f"replicates: method={method!r} makes its own number of replicates; replicates= "
            "is for the bootstrap"
        )
    base = design._base
    jackknife: _Jackknife | None = None
    factors: FloatArray | None = None
    if method == "brr":
        factors, scale = _brr(s, float(fay))
        rscales = np.ones(factors.shape[1])
        method = "fay" if fay else "brr"
    elif method == "bootstrap":
        count = 50 if replicates is None else replicates
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 2:
            raise AnalysisInputError(
                f"replicates: replicates= must be a whole number >= 2, not {replicates!r}"
            )
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        factors, scale = _bootstrap(s, int(count), rng)
        rscales = np.ones(int(count))
    else:
        if design.n_psu > MAX_JACKKNIFE:
            raise AnalysisInputError(
                f"replicates: method={method!r} makes one replicate per PSU, "
                f"{design.n_psu:,} here (each respondent is a PSU without psu=); use "
                "method='bootstrap' with replicates= (R would need a PSUs x PSUs matrix)"
            )
        jackknife, scale, rscales = _jackknife(s, method)
    reps = _Replicates(
        psu=s.psu,
        factors=factors,
        jackknife=jackknife,
        row_scale=base,
        scale=scale,
        rscales=rscales,
        mse=bool(mse),
        method=method,
        whole=design.all_positive,  # positive weights: positive base weights
    )
    for step in design._steps:
        if isinstance(step, PostStratum):
            reps = reps.calibrated([(step.codes, step.size)], step.after)
        elif isinstance(step, Raking):
            reps = reps.calibrated(step.margins, step.after)
        else:
            reps = _recalibrated(reps, step)
    if not design.all_positive:  # a subset, or zero weights: they weigh 0 in every replicate
        reps = reps.restricted(design.weights_array != 0)
    return ReplicateDesign._of(design, reps)


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


__all__ = ["Design", "LonelyPSU", "ReplicateDesign", "design_of", "replicate_design"]


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
