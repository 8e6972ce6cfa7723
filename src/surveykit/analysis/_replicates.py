"""Replicate weights (R's svrep): jackknife, bootstrap, BRR or supplied, and their variance.

A replicate design carries, besides the full-sample weights, ``R`` sets of replicate
weights. An estimate is computed once with the full-sample weights and once per replicate;
its variance is R's ``svrVar``:

    V = scale * sum over replicates r of rscales_r * (theta_r - centre)(theta_r - centre)^T

with ``centre`` the mean of the replicate estimates (over replicates with ``rscales > 0``),
or the full-sample estimate when ``mse=True`` (R's ``options(survey.replicates.mse=)``,
FALSE by default). A replicate that gives no estimate (a domain with no weight in it) is
left out of that estimate's variance, as R's ``na.omit`` of the replicates does.

Two sources of replicate weights:

- :meth:`Design.replicates <surveykit.analysis.Design.replicates>` builds them from the
  design's strata and PSUs, as R's ``as.svrepdesign(design, type=)``: ``"jk1"`` (delete one
  PSU, unstratified; ``jk1weights``), ``"jkn"`` (delete one PSU per stratum;
  ``jknweights``) or ``"bootstrap"`` (Canty and Davison's bootstrap of PSUs within strata,
  ``bootweights``). The replicate weights are the base weights times a multiplier per PSU
  and replicate; they are never written out per row. A jackknife's multipliers are not even
  stored: a replicate's totals are the full totals less the dropped PSU's, rescaled within
  its stratum.
- :class:`~surveykit.analysis.ReplicateDesign` takes weights supplied with the data (a panel
  vendor's replicate columns), as R's ``svrepdesign(..., combined.weights=TRUE)``.

A calibrated design (``rake``, ``poststratify``, ``calibrate``) recalibrates every
replicate to the same population totals, as R's ``rake()``, ``postStratify()`` and
``calibrate()`` of a replicate design do, so a calibrated margin has no variance. Raking and
post-stratification multiply each replicate's weights by a factor per calibration cell (the
cross of every margin), so they run on tables of replicate x cell sums, never on rows; a
linear calibration without bounds multiplies them by ``1 + x' lambda_r``, so a replicate's
sums are the uncalibrated sums of ``y`` and of ``y x_j``; raking, logit or bounded
``calibrate()`` runs R's ``grake`` Newton steps on each replicate's weights (rows, a chunk
of replicates at a time) and keeps only each replicate's ``eta``. R's degrees of freedom
follow: recomputed after raking and post-stratification, kept after ``calibrate()``. Where
a replicate's calibration does not converge R keeps it with a warning; here it is an error
naming the replicate.

``calibrate(trim=)`` trims every replicate's factors as R does, with its own weights.

Not done: trimmed raking (``rake(trim=)``) of replicates (R's ``rake()`` has no trimming;
``calibrate(method="raking", trim=)`` is R's trimmed raking).

This module holds the replicate weights themselves (:class:`_Replicates`, the multipliers
of the jackknife, bootstrap and BRR, the checks of supplied weights, the recalibration of
every replicate, ``svrVar``) and imports no design: the designs that carry them,
:class:`~surveykit.analysis.ReplicateDesign` and ``replicate_design`` (what
``Design.replicates()`` calls), are in ``_design``; the strata, PSUs and calibration steps
they read are in ``_variance``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.analysis._calibration import _FUNCTIONS, newton, trimmed
from surveykit.analysis._hadamard import hadamard
from surveykit.analysis._influence import FloatArray, IntArray
from surveykit.analysis._variance import Regression, _Structure
from surveykit.errors import AnalysisInputError

if TYPE_CHECKING:
    from scipy import sparse

    from surveykit.analysis._design import ReplicateDesign

DesignMethod = Literal["auto", "jk1", "jkn", "bootstrap", "brr"]
SuppliedMethod = Literal["jk1", "jkn", "bootstrap", "brr", "other"]
DESIGN_METHODS = ("auto", "jk1", "jkn", "bootstrap", "brr")
SUPPLIED_METHODS = ("jk1", "jkn", "bootstrap", "brr", "other")
R_NAMES = {
    "jk1": "JK1",
    "jkn": "JKn",
    "bootstrap": "bootstrap",
    "brr": "BRR",
    "fay": "Fay",
    "other": "other",
}

Codes = IntArray | npt.NDArray[np.bool_]
"""Group ids per row (-1 or ``size``: none), or for one group a mask of the rows in none."""


class Sums(Protocol):
    """``sums(values, ids, size, weighted=None)``: per replicate and group, weighted sums.

    The sums (replicates x ``size``) of ``values`` (None: 1) over the rows of each group id
    (-1 or ``size``: in no group; with ``size`` 1 a boolean mask of the rows in no group
    will do). ``values`` must be finite on every row (rows in no group weigh 0, and 0
    times NaN is not 0). ``weighted``, when given, makes the full-sample weights times
    ``values`` with 0 on the rows in no group: a design whose replicate weights are its
    full-sample weights times PSU multipliers (not calibrated, not a subset) sums those
    rather than weighting ``values`` again.
    """

    def __call__(
        self,
        values: FloatArray | None,
        ids: Codes,
        size: int,
        weighted: Callable[[], FloatArray] | None = None,
    ) -> FloatArray: ...


DENSE_CELLS = 4_000_000
"""Unit x group tables up to this many cells are dense (bincount); larger ones sparse."""

CHUNK_CELLS = 8_000_000
"""Unit x replicate multipliers are made this many cells at a time when they are made."""

RANK_TOLERANCE = 1e-5
"""Relative tolerance of the replicate weights' rank (R's ``qr(..., tol=1e-5)`` in degf)."""

SPARE_UNITS = 16
"""Units beyond the number of replicates that the rank's certificate takes (see
``_Replicates._full_rank_shown``)."""

LDL_BLOCK = 32
"""Columns per block of the certificate's LDL' factorisation."""

SMALL_PRODUCT = 4_000_000
"""Groups x PSUs x replicates up to this many products are summed without BLAS."""

MAX_JACKKNIFE = 100_000
"""A jackknife makes one replicate per PSU; beyond this many, the bootstrap is the way."""

RAKING_SWEEPS = 1000
RAKING_GAP = 1e-13


@dataclass(frozen=True)
class _Jackknife:
    """Delete-one-PSU replicates, as coefficients rather than a PSU x replicate matrix.

    Replicate ``r``'s totals are ``c1 * total + c2 * (its stratum's total) + c3 * (its
    PSU's total)``: ``(1, a - 1, -a)`` drops a PSU and multiplies the others of its stratum
    by ``a = n_h / (n_h - 1)``; ``(b, -b, 0)`` is R's replicate for a lonely PSU under
    ``"adjust"`` (its stratum dropped, every other PSU times ``b = H / (H - 1)``).
    """

    psu: IntArray
    stratum: IntArray
    coef: FloatArray  # replicates x 3
    psu_stratum: IntArray
    n_strata: int

    @cached_property
    def _starts(self) -> IntArray | None:
        """Where each stratum's PSUs start, when PSUs are coded stratum by stratum.

        A design codes its PSUs sorted by stratum, every stratum with at least one PSU, so
        a stratum's PSU totals are one ``np.add.reduceat`` slice (None: not so coded).
        """
        order = self.psu_stratum
        counts = np.bincount(order, minlength=self.n_strata)
        if len(order) == 0 or (counts == 0).any() or (np.diff(order) < 0).any():
            return None
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

    def _strata_totals(self, z: FloatArray) -> FloatArray:
        """Per stratum the sums of the PSU totals ``z`` (PSUs x k -> strata x k)."""
        if self._starts is not None:
            return np.asarray(np.add.reduceat(z, self._starts, axis=0), dtype=np.float64)
        out = np.zeros((self.n_strata, z.shape[1]))
        np.add.at(out, self.psu_stratum, z)
        return out

    def totals(self, z: FloatArray | sparse.csr_matrix) -> FloatArray:
        """Per replicate the totals, from the PSU totals ``z`` (PSUs x k)."""
        from scipy import sparse

        if isinstance(z, sparse.csr_matrix):
            indicator = sparse.csr_matrix(
                (
                    np.ones(len(self.psu_stratum)),
                    (self.psu_stratum, np.arange(len(self.psu_stratum))),
                ),
                shape=(self.n_strata, len(self.psu_stratum)),
            )
            total = np.asarray(z.sum(axis=0)).ravel()
            strata = np.asarray((indicator @ z).todense())
            own = np.asarray(z[self.psu].todense())
        else:
            total = z.sum(axis=0)
            strata = self._strata_totals(z)
            own = z[self.psu]
        c = self.coef
        return np.asarray(
            c[:, :1] * total[None, :] + c[:, 1:2] * strata[self.stratum] + c[:, 2:] * own,
            dtype=np.float64,
        )

    def columns(self, chosen: slice) -> FloatArray:
        """The multipliers of replicates ``chosen`` (PSUs x replicates)."""
        c = self.coef[chosen]
        n = len(self.psu_stratum)
        out = np.broadcast_to(c[:, 0], (n, len(c))).copy()
        out += (self.psu_stratum[:, None] == self.stratum[chosen][None, :]) * c[:, 1]
        out[self.psu[chosen], np.arange(len(c))] += c[:, 2]
        return out

    def rank(self, present: npt.NDArray[np.bool_]) -> int | None:
        """The rank of the multipliers of the ``present`` PSUs, when a formula gives it.

        With every stratum's PSUs all deleted in turn (no lonely PSU), the rows of PSUs that
        are present are independent but for one relation per stratum whose PSUs are all
        present, less one: rank = present PSUs - max(0, such strata - 1).
        """
        if present.all():
            return self._whole_rank()
        if (self.coef[:, 2] == 0).any():
            return None
        counts = np.bincount(self.psu_stratum, minlength=self.n_strata)
        with_replicates = np.bincount(self.stratum, minlength=self.n_strata)
        if (with_replicates != counts).any():
            return None
        shown = np.bincount(self.psu_stratum[present], minlength=self.n_strata)
        whole = int(((shown == counts) & (counts > 0)).sum())
        return int(present.sum()) - max(0, whole - 1)

    def _whole_rank(self) -> int:
        """The rank with every PSU present, lonely and census strata included.

        A stratum's delete-one replicates span the differences between its PSUs and the
        all-ones vector (their sum is n_h times it); a lonely PSU's "adjust" replicate,
        ``b (1 - e_L)``, adds one direction of its own; census and removed strata add none.
        So the rank is the sum of (n_h - 1) over strata with replicates, plus 1 when there
        is one, plus the lonely replicates.
        """
        deleting = self.coef[:, 2] != 0
        lonely = int((~deleting).sum())
        strata = np.unique(self.stratum[deleting])
        return int(deleting.sum()) - len(strata) + (1 if len(strata) else 0) + lonely


@dataclass(frozen=True)
class _Calfun:
    """Every replicate calibrated by R's ``grake``: ``g_r = (1 + F(X eta_r)) * scale_r``.

    Only ``eta`` (replicates x q) is kept; the factors are made per chunk of replicates.
    """

    matrix: FloatArray  # rows x q
    eta: FloatArray  # replicates x q
    scale: FloatArray  # replicates (1 where grake did not rescale)
    method: str
    bounds: tuple[float, float]
    trim: tuple[float, float] | None = None
    shift: FloatArray | None = None  # replicates: what trimming adds to the untrimmed rows

    def factors(self, chosen: slice) -> FloatArray:
        """The calibration factors of replicates ``chosen`` (rows x replicates)."""
        function = _FUNCTIONS[self.method][0]
        low, high = self.bounds
        with np.errstate(over="ignore"):
            g = 1.0 + function(self.matrix @ self.eta[chosen].T, low, high)
        g = np.asarray(g * self.scale[chosen][None, :], dtype=np.float64)
        if self.trim is None or self.shift is None:
            return g
        outside = (g < self.trim[0]) | (g > self.trim[1])
        np.clip(g, self.trim[0], self.trim[1], out=g)
        return np.asarray(np.where(outside, g, g + self.shift[chosen][None, :]), dtype=np.float64)


@dataclass(frozen=True)
class _Replicates:
    """The replicate weights of a design, in factored form.

    Row ``i``'s weight in replicate ``r`` is ``row_scale[i] * M[psu[i], r] * G[r, cell[i]]``:
    ``M`` the multipliers (PSUs x replicates, or rows x replicates when supplied; a
    :class:`_Jackknife` when not stored), ``G`` the calibration factors (None: none). Sums
    are taken over units, the distinct (PSU, cell) pairs.
    """

    psu: IntArray  # per row, its row of the multipliers
    factors: FloatArray | None  # PSUs x replicates (None: jackknife)
    jackknife: _Jackknife | None
    row_scale: FloatArray  # base weights (1 for supplied combined weights), 0 outside a subset
    scale: float
    rscales: FloatArray
    mse: bool
    method: str
    cells: IntArray | None = None  # per row, its calibration cell
    calibration: FloatArray | None = None  # replicates x cells
    units: IntArray | None = None  # per row its (PSU, cell) unit (None: its PSU)
    unit_psu: IntArray | None = None
    unit_cell: IntArray | None = None
    greg: tuple[FloatArray, FloatArray] | None = None  # model matrix (rows x q), R x q
    calfun: _Calfun | None = None  # calibrate() with raking, logit or bounds
    _last_cells: list[Any] = field(default_factory=list, compare=False, repr=False)
    notes: tuple[str, ...] = field(default=())
    whole: bool = False  # known: no row_scale is 0 (no subset), so no row pass to check

    @property
    def count(self) -> int:
        """The number of replicates."""
        return len(self.rscales)

    @property
    def n_psu(self) -> int:
        """Rows of the multipliers."""
        if self.factors is not None:
            return int(self.factors.shape[0])
        assert self.jackknife is not None
        return len(self.jackknife.psu_stratum)

    def _raw(self, chosen: slice) -> FloatArray:
        """Multipliers of replicates ``chosen`` (PSUs x replicates), before calibration."""
        if self.factors is not None:
            return self.factors[:, chosen]
        assert self.jackknife is not None
        return self.jackknife.columns(chosen)

    def _unit_codes(self) -> tuple[IntArray, int]:
        if self.units is None:
            return self.psu, self.n_psu
        assert self.unit_psu is not None
        return self.units, len(self.unit_psu)

    def multipliers(self, chosen: slice) -> FloatArray:
        """Per unit the multipliers of replicates ``chosen`` (units x replicates)."""
        raw = self._raw(chosen)
        if self.calibration is None:
            return raw
        assert self.unit_psu is not None and self.unit_cell is not None
        return raw[self.unit_psu] * self.calibration[chosen][:, self.unit_cell].T

    def _chunks(self, units: int) -> list[slice]:
        step = max(1, CHUNK_CELLS // max(units, 1))
        return [slice(a, min(a + step, self.count)) for a in range(0, self.count, step)]

    def sums(
        self,
        values: FloatArray | None,
        ids: Codes,
        size: int,
        weighted: FloatArray | None = None,
    ) -> FloatArray:
        """Per replicate and group id, the replicate-weighted sums of ``values`` (R x size).

        ``weighted``: ``row_scale * values`` (``row_scale`` for no values) already made,
        0 on the rows in no group (see :class:`Sums`).
        """
        if self.calfun is not None:
            return self._calfun_sums(values, ids, size)
        if self.greg is not None:
            # weights times g_r = 1 + x' lambda_r: the sums of values and of values * x_j
            matrix, coef = self.greg
            inner = replace(self, greg=None)
            out = inner.sums(values, ids, size)
            for j in range(matrix.shape[1]):
                x = matrix[:, j] if values is None else matrix[:, j] * values
                out += coef[:, j : j + 1] * inner.sums(x, ids, size)
            return out
        units, n_units = self._unit_codes()
        cells = self._cells(units, n_units, ids, size)
        # Rows outside every group weigh 0 and go to any cell: no compacted copies of rows.
        # Their weights are zeroed once per estimate, for all its sums.
        if weighted is not None:
            weight = weighted
        else:
            scale = cells.scaled(self.row_scale)
            weight = scale if values is None else scale * values
        table = cells.table(weight)
        if self.calibration is None and self.jackknife is not None:
            return self.jackknife.totals(table)
        across = table.T if isinstance(table, np.ndarray) else table.T.tocsr()
        if self.calibration is None and self.factors is not None:  # stored: no chunks
            if isinstance(across, np.ndarray) and across.size * self.count <= SMALL_PRODUCT:
                # a few groups: numpy's own loop, not BLAS threads that spin on a busy machine
                product = np.einsum("gp,pr->rg", across, self.factors, optimize=False)
                return np.asarray(product, dtype=np.float64)
            return np.asarray((across @ self.factors).T, dtype=np.float64)
        out = np.empty((self.count, size))
        for chosen in self._chunks(n_units):
            out[chosen] = np.asarray((across @ self.multipliers(chosen)).T)
        return out

    def _cells(self, units: IntArray, n_units: int, ids: Codes, size: int) -> _Cells:
        """The unit x group cell of every row, kept for the next call with the same ids.

        An estimate asks for several sums over the same groups (a mean: of ``y`` and of the
        weights), so the row pass that codes the cells is made once; the same ``ids``
        object is the same groups (estimates never change their codes in place), and
        :meth:`ReplicateDesign.replicate_vcov` forgets the cells when the estimate is done.
        """
        last = self._last_cells
        if last and last[0] is ids and last[1] is units and last[2] == size:
            return cast(_Cells, last[3])
        cells = _Cells.of(units, n_units, ids, size)
        self._last_cells[:] = [ids, units, size, cells]
        return cells

    def forget_cells(self) -> None:
        """Drop the rows' cells kept by :meth:`_cells` (at the end of an estimate)."""
        self._last_cells.clear()

    def _calfun_sums(self, values: FloatArray | None, codes: Codes, size: int) -> FloatArray:
        """Sums of a design calibrated per replicate by ``grake``, a chunk at a time.

        Weights are made rows x chunk of replicates, never rows x replicates at once.
        """
        from scipy import sparse

        assert self.calfun is not None
        inner = replace(self, calfun=None)
        n = len(self.psu)
        ids = np.asarray(codes, dtype=np.int64)
        inside = (ids >= 0) & (ids < size)
        row_values = np.where(inside, 1.0 if values is None else values, 0.0)
        indicator = sparse.csr_matrix(
            (row_values, (np.where(inside, ids, 0), np.arange(n))), shape=(size, n)
        )
        out = np.empty((self.count, size))
        for chosen in inner._chunks(n):
            weights = inner._row_weights(chosen) * self.calfun.factors(chosen)
            out[chosen] = np.asarray(indicator @ weights).T
        return out

    def _row_weights(self, chosen: slice) -> FloatArray:
        """The weights of replicates ``chosen`` per row (rows x chunk), before ``calibrate()``."""
        units, _ = self._unit_codes()
        return np.asarray(self.multipliers(chosen)[units] * self.row_scale[:, None])

    def restricted(self, keep: npt.NDArray[np.bool_]) -> _Replicates:
        """The replicates of a subset (rows outside weigh 0 in every replicate)."""
        return replace(self, row_scale=np.where(keep, self.row_scale, 0.0), whole=False)

    # -- variance ---------------------------------------------------------------------

    def vcov(self, thetas: FloatArray, estimate: FloatArray) -> FloatArray:
        """R's ``svrVar`` of replicate estimates ``thetas`` (R x k) around ``estimate``."""
        finite = np.isfinite(thetas)
        used = finite & (self.rscales > 0)[:, None]
        if self.mse:
            centre = estimate
        else:
            counts = used.sum(axis=0)
            total = np.where(used, thetas, 0.0).sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                centre = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
        deviation = np.where(finite, thetas - centre[None, :], 0.0)
        deviation = np.nan_to_num(deviation)
        weighted = deviation * self.rscales[:, None]
        return np.asarray(self.scale * (weighted.T @ deviation), dtype=np.float64)

    # -- degrees of freedom -----------------------------------------------------------

    @cached_property
    def rank(self) -> int:
        """The rank of the replicate (analysis) weights, rows x replicates (R's ``degf`` + 1).

        The rank of the units' multipliers (a row's weights are its unit's times its base
        weight): a jackknife's by formula; otherwise full when a subset of units shows it
        (:meth:`_full_rank_shown`, no BLAS), else the eigenvalues of their Gram matrix.
        """
        if self.greg is not None or self.calfun is not None:  # R's calibrate() keeps degf
            return replace(self, greg=None, calfun=None).rank
        units, n_units = self._unit_codes()
        if self.whole or self.row_scale.all():  # every unit has a row (units come from rows)
            present = np.ones(n_units, dtype=bool)
        else:
            present = np.zeros(n_units, dtype=bool)
            present[units[self.row_scale != 0]] = True
        if self.calibration is None and self.jackknife is not None:
            known = self.jackknife.rank(present)
            if known is not None:
                return known
        where = np.flatnonzero(present)
        if self._full_rank_shown(where):
            return self.count
        gram = np.zeros((self.count, self.count))
        step = max(1, CHUNK_CELLS // max(self.count, 1))
        for start in range(0, len(where), step):
            block = self._unit_rows(where[start : start + step])
            gram += block.T @ block
        values = np.linalg.eigvalsh(gram)
        top = float(values.max(initial=0.0))
        return int((values > top * RANK_TOLERANCE**2).sum()) if top > 0 else 0

    def _unit_rows(self, chosen: IntArray) -> FloatArray:
        """The multipliers of units ``chosen`` in every replicate (len(chosen) x replicates)."""
        raw = self.factors if self.factors is not None else self._raw(slice(None))
        if self.calibration is None:
            return np.asarray(raw[chosen], dtype=np.float64)
        assert self.unit_psu is not None and self.unit_cell is not None
        return np.asarray(
            raw[self.unit_psu[chosen]] * self.calibration[:, self.unit_cell[chosen]].T,
            dtype=np.float64,
        )

    def _full_rank_shown(self, where: IntArray) -> bool:
        """Whether the multipliers of units ``where`` have full column rank, by a certificate.

        The rank is full when the smallest eigenvalue of their Gram matrix ``G`` exceeds
        ``RANK_TOLERANCE**2`` times the largest. ``G`` is at least the Gram matrix ``G_S``
        of any subset ``S`` of the units, and its largest eigenvalue at most the sum of
        squares of every multiplier, so a factorisation ``G_S - floor I = L D L'`` with
        every pivot positive, ``floor`` that sum times the tolerance (plus room for
        rounding), shows it. ``S`` is a few more units than replicates, spread over the
        units; all in numpy's own loops (no BLAS threads), a few milliseconds for 200
        replicates. False when not shown (too few units, a rank-deficient or badly
        conditioned ``G_S``): the caller computes the eigenvalues then.
        """
        count = self.count
        if len(where) < count + SPARE_UNITS:
            return False
        squares = 0.0
        step = max(1, CHUNK_CELLS // count)
        if self.calibration is None and self.factors is not None and len(where) == self.n_psu:
            squares = float(np.einsum("ij,ij->", self.factors, self.factors))
        else:
            for start in range(0, len(where), step):
                block = self._unit_rows(where[start : start + step])
                squares += float(np.einsum("ij,ij->", block, block))
        picked = np.unique(np.linspace(0, len(where) - 1, count + SPARE_UNITS).round())
        rows = self._unit_rows(where[picked.astype(np.int64)])
        gram = np.einsum("pr,ps->rs", rows, rows)
        rounding = 8.0 * count * count * float(np.finfo(np.float64).eps)
        return squares > 0 and _exceeds(gram, squares * (RANK_TOLERANCE**2 + rounding))

    # -- calibration of every replicate -----------------------------------------------

    def calibrated(self, margins: Sequence[tuple[IntArray, int]], after: FloatArray) -> _Replicates:
        """Every replicate raked (one margin: post-stratified) to the totals of ``after``."""
        if self.greg is not None or self.calfun is not None:
            raise AnalysisInputError(
                "a replicate design calibrated with calibrate() cannot be raked or "
                "post-stratified again; rake or post-stratify first, then calibrate"
            )
        previous = np.zeros(len(self.psu), dtype=np.int64) if self.cells is None else self.cells
        combined = previous.copy()
        for codes, size in margins:
            combined = combined * size + codes
        _, first, cells = np.unique(combined, return_index=True, return_inverse=True)
        cells = np.asarray(cells, dtype=np.int64).ravel()
        n_cells = len(first)
        levels = [np.asarray(codes[first], dtype=np.int64) for codes, _ in margins]
        targets = [
            np.asarray(np.bincount(codes, weights=after, minlength=size), dtype=np.float64)
            for codes, size in margins
        ]
        base = replace(
            self, cells=None, calibration=None, units=None, unit_psu=None, unit_cell=None
        )
        tables = base.sums(None, cells, n_cells)  # replicates x cells, uncalibrated
        factors = (
            np.ones_like(tables)
            if self.calibration is None
            else self.calibration[:, previous[first]]
        )
        factors = _rake_tables(tables, factors, levels, [s for _, s in margins], targets)
        pairs = self.psu * n_cells + cells
        unique_pairs, units = np.unique(pairs, return_inverse=True)
        return replace(
            self,
            cells=cells,
            calibration=factors,
            units=np.asarray(units, dtype=np.int64).ravel(),
            unit_psu=np.asarray(unique_pairs // n_cells, dtype=np.int64),
            unit_cell=np.asarray(unique_pairs % n_cells, dtype=np.int64),
        )

    def regression(self, matrix: FloatArray, population: FloatArray) -> _Replicates:
        """Every replicate calibrated by GREG to ``population`` (R's ``regcalibrate``).

        Replicate ``r``'s factors are ``g = 1 + x' lambda_r`` with ``lambda_r = (X' W_r
        X)^-1 (population - X' w_r)``; the sums this needs are replicate sums of ``x_j``
        and ``x_j x_k`` over the whole sample.
        """
        if self.greg is not None or self.calfun is not None:
            raise AnalysisInputError("calibrate: a replicate design can be calibrated once")
        q = matrix.shape[1]
        everyone = np.zeros(len(self.psu), dtype=np.int64)
        totals = np.column_stack([self.sums(matrix[:, j], everyone, 1)[:, 0] for j in range(q)])
        cross = np.empty((self.count, q, q))
        for j in range(q):
            for k in range(j, q):
                cross[:, j, k] = self.sums(matrix[:, j] * matrix[:, k], everyone, 1)[:, 0]
                cross[:, k, j] = cross[:, j, k]
        misfit = population[None, :] - totals
        coef = np.asarray(np.linalg.solve(cross, misfit[:, :, None])[:, :, 0], dtype=np.float64)
        return replace(self, greg=(matrix, coef))

    def nonlinear(self, step: Regression) -> _Replicates:
        """Every replicate calibrated by R's ``grake`` (raking, logit or bounded linear).

        As R's ``calibrate()`` of a replicate design: each replicate's own weights are
        calibrated to the same population totals with the same function and bounds, from
        ``eta = 0``; Newton steps run on rows, a chunk of replicates at a time.
        """
        if self.greg is not None or self.calfun is not None:
            raise AnalysisInputError("calibrate: a replicate design can be calibrated once")
        assert step.population is not None
        functions = _FUNCTIONS[step.method]
        names = [f"calibration total {j + 1}" for j in range(step.matrix.shape[1])]
        eta = np.zeros((self.count, step.matrix.shape[1]))
        scale = np.ones(self.count)
        shift = np.zeros(self.count)
        for chosen in self._chunks(len(self.psu)):
            weights = self._row_weights(chosen)
            for j, r in enumerate(range(*chosen.indices(self.count))):
                try:
                    eta[r], rescaled = newton(
                        step.matrix,
                        weights[:, j],
                        step.population,
                        functions,
                        step.bounds,
                        step.max_iter,
                        step.tol,
                        names,
                    )
                except AnalysisInputError as error:
                    raise AnalysisInputError(f"replicate {r + 1}: {error}") from None
                scale[r] = 1.0 if rescaled is None else rescaled
                if step.trim is not None:  # R trims every replicate's g the same way
                    g = (1.0 + functions[0](step.matrix @ eta[r], *step.bounds)) * scale[r]
                    after = trimmed(g, weights[:, j], step.trim)
                    inside = (g >= step.trim[0]) & (g <= step.trim[1])
                    if inside.any() and not inside.all():
                        shift[r] = float((after - g)[inside][0])
        calfun = _Calfun(step.matrix, eta, scale, step.method, step.bounds, step.trim, shift)
        return replace(self, calfun=calfun)

    def analysis_weights(self) -> FloatArray:
        """The replicate weights per row (rows x replicates), R's ``weights(, "analysis")``."""
        units, n_units = self._unit_codes()
        out = np.empty((len(self.psu), self.count))
        for chosen in self._chunks(n_units):
            out[:, chosen] = self.multipliers(chosen)[units] * self.row_scale[:, None]
            if self.calfun is not None:
                out[:, chosen] *= self.calfun.factors(chosen)
        if self.greg is not None:
            matrix, coef = self.greg
            out *= 1.0 + matrix @ coef.T
        return out


def _exceeds(gram: FloatArray, floor: float) -> bool:
    """Whether every eigenvalue of the symmetric ``gram`` is above ``floor``.

    ``gram - floor I`` is factorised as ``L D L'`` without pivoting; every pivot in ``D``
    is positive exactly when that matrix is positive definite. Blocked, with numpy's own
    loops (``np.multiply.outer``, ``np.einsum``) rather than LAPACK, whose threads a busy
    machine charges to the process long after the call.
    """
    a = np.array(gram, dtype=np.float64)
    n = len(a)
    a[np.diag_indices(n)] -= floor
    for start in range(0, n, LDL_BLOCK):
        stop = min(start + LDL_BLOCK, n)
        for j in range(start, stop):  # the panel: columns start..stop, every row below
            pivot = a[j, j]
            if not pivot > 0:
                return False
            factor = a[j + 1 :, j] / pivot
            if j + 1 < stop:
                a[j + 1 :, j + 1 : stop] -= np.multiply.outer(factor, a[j, j + 1 : stop])
            a[j + 1 :, j] = factor
        if stop < n:  # the rest: less L D L' of the panel
            lower = a[stop:, start:stop]
            a[stop:, stop:] -= np.einsum("ik,k,jk->ij", lower, np.diagonal(a)[start:stop], lower)
    return True


@dataclass(frozen=True)
class _Cells:
    """Each row's unit x group cell: ``key`` for a dense table, the codes for a sparse one.

    ``outside`` marks the rows in no group (id -1 or ``size``; None: there is none), whose
    weight must be zeroed.
    """

    units: IntArray
    ids: IntArray
    n_units: int
    size: int
    outside: npt.NDArray[np.bool_] | None
    key: IntArray | None
    _scaled: list[Any] = field(default_factory=list, compare=False, repr=False)

    @staticmethod
    def of(units: IntArray, n_units: int, codes: Codes, size: int) -> _Cells:
        """Code the cells of ``codes`` (one unsigned comparison finds -1 and ``size``)."""
        outside: npt.NDArray[np.bool_] | None
        if codes.dtype == np.bool_ and size == 1:  # a mask of the rows in no group
            outside = cast(npt.NDArray[np.bool_], codes)
            ids = np.zeros(0, dtype=np.int64)  # not read: one group
        else:
            ids = np.ascontiguousarray(codes, dtype=np.int64)
            outside = ids.view(np.uint64) >= size
        assert outside is not None
        if not outside.any():
            outside = None
        elif size > 1:
            ids = np.where(outside, 0, ids)
        key = None
        if n_units * size <= DENSE_CELLS:
            if size == 1:
                key = units  # every row is in the one group, or weighs 0
            else:
                key = units * size
                key += ids
        return _Cells(units, ids, n_units, size, outside, key)

    def scaled(self, row_scale: FloatArray) -> FloatArray:
        """``row_scale`` with the rows outside every group at 0 (kept for the next sum)."""
        if self.outside is None:
            return row_scale
        kept = self._scaled
        if kept and kept[0] is row_scale:
            return cast(FloatArray, kept[1])
        out = np.where(self.outside, 0.0, row_scale)
        kept[:] = [row_scale, out]
        return out

    def table(self, weight: FloatArray) -> FloatArray | sparse.csr_matrix:
        """Per unit and group the sums of ``weight`` (units x size), dense or sparse."""
        if self.key is not None:
            table = np.bincount(self.key, weights=weight, minlength=self.n_units * self.size)
            return np.asarray(table, dtype=np.float64).reshape(self.n_units, self.size)
        from scipy import sparse

        ids = self.ids if self.size > 1 else np.zeros(len(self.units), dtype=np.int64)
        return sparse.csr_matrix((weight, (self.units, ids)), shape=(self.n_units, self.size))


def _rake_tables(
    tables: FloatArray,
    factors: FloatArray,
    levels: Sequence[IntArray],
    sizes: Sequence[int],
    targets: Sequence[FloatArray],
) -> FloatArray:
    """Iterative proportional fitting of every replicate's cell table (replicates x cells)."""
    indicators = [np.eye(size)[level] for level, size in zip(levels, sizes, strict=True)]
    population = max(float(t.sum()) for t in targets) or 1.0
    for _ in range(RAKING_SWEEPS):
        for indicator, level, target in zip(indicators, levels, targets, strict=True):
            margin = (tables * factors) @ indicator
            ratio = np.divide(target[None, :], margin, out=np.ones_like(margin), where=margin > 0)
            factors = factors * ratio[:, level]
        if len(levels) == 1:
            break
        gap = max(
            float(np.abs((tables * factors) @ ind - t[None, :]).max())
            for ind, t in zip(indicators, targets, strict=True)
        )
        if gap <= RAKING_GAP * population:
            break
    return factors


# -- building replicates from a design ------------------------------------------------


def _jackknife(structure: _Structure, method: str) -> tuple[_Jackknife, float, FloatArray]:
    """R's ``jk1weights`` / ``jknweights`` for the design's PSUs: replicates, scale, rscales."""
    s = structure
    h = len(s.n_psu)
    n_h = s.n_psu.astype(np.float64)
    finite = 1.0 - s.fraction
    # one replicate per PSU, stratum by stratum: none where every PSU was sampled (R drops
    # them); a lonely PSU's under "adjust" (its stratum dropped, the others times H/(H-1))
    order = np.argsort(s.psu_stratum, kind="stable")
    in_stratum = s.psu_stratum[order]
    sampled = finite[in_stratum] > 0
    size = n_h[in_stratum]
    lonely = sampled & (size == 1) & (s.lonely == "adjust") & (h > 1)
    chosen = (sampled & (size > 1)) | lonely
    if not chosen.any():
        raise AnalysisInputError(
            "replicates: every stratum was sampled whole or has one PSU, so there is no "
            "replicate to make (you have the whole population)"
        )
    n = size[chosen]
    alone = lonely[chosen]
    a = n / np.where(alone, 1.0, n - 1)
    b = h / (h - 1) if h > 1 else 0.0
    coef = np.where(
        alone[:, None], np.array([b, -b, 0.0]), np.column_stack([np.ones(len(n)), a - 1.0, -a])
    )
    stratum = in_stratum[chosen]
    r = np.where(alone, (h - 1) / h, finite[stratum] * (n - 1) / n)
    jackknife = _Jackknife(
        psu=np.asarray(order[chosen], dtype=np.int64),
        stratum=np.asarray(stratum, dtype=np.int64),
        coef=np.asarray(coef, dtype=np.float64),
        psu_stratum=s.psu_stratum,
        n_strata=h,
    )
    if method == "jk1":  # R keeps the JK1 factor in scale, not rscales
        return jackknife, float(finite[0] * (n_h[0] - 1) / n_h[0]), np.ones(len(r))
    return jackknife, 1.0, r


def _bootstrap(
    structure: _Structure, replicates: int, rng: np.random.Generator
) -> tuple[FloatArray, float]:
    """R's ``bootweights``: PSUs resampled with replacement in each stratum (PSUs x R)."""
    s = structure
    n_psu = len(s.psu_stratum)
    out = np.zeros((n_psu, replicates))
    counts = s.n_psu
    for stratum in range(len(counts)):
        members = np.flatnonzero(s.psu_stratum == stratum)
        n = len(members)
        if n == 0:
            continue
        if s.fraction[stratum] <= 0:
            draws = rng.integers(0, n, size=(replicates, n))
            offsets = np.arange(replicates)[:, None] * n
            table = np.bincount((draws + offsets).ravel(), minlength=replicates * n)
            out[members] = table.reshape(replicates, n).T
        else:
            # R samples n without replacement from the PSUs repeated to the population size.
            population = round(n / s.fraction[stratum])
            order = rng.permutation(n)
            copies = np.full(n, population // n, dtype=np.int64)
            copies[order[: population % n]] += 1
            draws = rng.multivariate_hypergeometric(copies, n, size=replicates)
            out[members] = draws.T
    harmonic = 1.0 / float(np.mean(1.0 / counts[counts > 0]))
    if harmonic <= 1:
        raise AnalysisInputError(
            "replicates: the bootstrap needs strata with at least 2 PSUs on average"
        )
    return out, harmonic / ((harmonic - 1) * (replicates - 1))


def _brr(structure: _Structure, rho: float) -> tuple[FloatArray, float]:
    """R's ``brrweights`` (``fay.rho=rho``): PSU multipliers (PSUs x replicates) and scale.

    Every stratum must have exactly 2 PSUs. As R: strata are taken in the order of their
    labels as text (R's ``table()``), stratum ``k`` follows row ``k + 1`` of R's
    ``hadamard(strata)``, and in replicate ``r`` the PSU that appears first in the data
    gets ``rho + (2 - 2 rho) H[k + 1, r]``, the other ``2 - rho - (2 - 2 rho) H[k + 1,
    r]``; the scale is ``1 / (R (1 - rho)^2)``.
    """
    s = structure
    wrong = np.flatnonzero(s.n_psu != 2)
    if len(wrong):
        k = int(wrong[0])
        raise AnalysisInputError(
            f"replicates: method='brr' needs exactly 2 PSUs in every stratum; stratum "
            f"{s.strata_labels[k]!r} has {int(s.n_psu[k])} ({len(wrong)} such strata; R's "
            "brrweights would split or merge them)"
        )
    h = len(s.n_psu)
    order = sorted(range(h), key=lambda k: str(s.strata_labels[k]))
    row = np.empty(h, dtype=np.int64)
    row[order] = np.arange(1, h + 1)
    n_psu = len(s.psu_stratum)
    first_row = np.full(n_psu, len(s.psu), dtype=np.int64)
    np.minimum.at(first_row, s.psu, np.arange(len(s.psu), dtype=np.int64))
    ranked = np.argsort(s.psu_stratum * (len(s.psu) + 1) + first_row, kind="stable")
    second = np.empty(n_psu, dtype=bool)
    second[ranked] = np.arange(n_psu) % 2 == 1
    matrix = hadamard(h).astype(np.float64)
    signs = matrix[row[s.psu_stratum]]
    half = rho + (2.0 - 2.0 * rho) * signs
    factors = np.where(second[:, None], 2.0 - half, half)
    return np.ascontiguousarray(factors), 1.0 / (matrix.shape[1] * (1.0 - rho) ** 2)


def _recalibrated(reps: _Replicates, step: Regression) -> _Replicates:
    """Every replicate calibrated as ``step`` calibrated the full sample (R's ``calibrate``).

    A linear calibration without bounds is R's ``regcalibrate`` (closed form per
    replicate); any other function or bounds is R's ``grake`` per replicate.
    """
    assert step.population is not None
    if step.method == "linear" and step.bounds == (-np.inf, np.inf):
        return reps.regression(step.matrix, step.population)
    return reps.nonlinear(step)


def _supplied_weights(
    data: pd.DataFrame, replicate_weights: Sequence[str] | pd.DataFrame | npt.ArrayLike
) -> tuple[FloatArray, list[str]]:
    """The supplied replicate weights as a rows x replicates float array, and their names."""
    if isinstance(replicate_weights, pd.DataFrame):
        if not replicate_weights.index.equals(data.index):
            raise AnalysisInputError(
                "replicate_weights: the DataFrame's index must be the data's index"
            )
        frame = replicate_weights
    elif isinstance(replicate_weights, str):
        raise AnalysisInputError(
            "replicate_weights: give a list of column names, a DataFrame or an array, not "
            f"one name ({replicate_weights!r})"
        )
    elif isinstance(replicate_weights, Sequence) and all(
        isinstance(c, str) for c in replicate_weights
    ):
        missing = [c for c in replicate_weights if c not in data.columns]
        if missing:
            raise AnalysisInputError(
                f"replicate_weights: no column {missing[0]!r} in the data"
                + (f" ({len(missing)} missing)" if len(missing) > 1 else "")
                + f"; columns are {[str(c) for c in data.columns]}"
            )
        frame = data[list(replicate_weights)]
    else:
        array = np.asarray(replicate_weights)
        if array.ndim != 2 or array.shape[0] != len(data):
            raise AnalysisInputError(
                f"replicate_weights: an array needs one row per respondent ({len(data)}) and "
                f"one column per replicate, got shape {array.shape}"
            )
        frame = pd.DataFrame(array, index=data.index)
    names = [str(c) for c in frame.columns]
    if frame.shape[1] < 2:
        raise AnalysisInputError(
            f"replicate_weights: at least 2 replicates are needed, got {frame.shape[1]}"
        )
    try:
        matrix = np.ascontiguousarray(frame.to_numpy(dtype=np.float64))
    except (TypeError, ValueError):
        matrix = None
    if matrix is not None and matrix.size:
        low, high = matrix.min(), matrix.max()  # NaN fails both; no rows x R temporaries
        if low >= 0 and np.isfinite(high):
            return matrix, names
    matrix = np.empty(frame.shape, dtype=np.float64)
    for j, name in enumerate(frame.columns):
        column = frame.iloc[:, j]
        values = np.asarray(pd.to_numeric(column, errors="coerce"), dtype=np.float64)
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            value = column.iloc[at]
            value = value.item() if isinstance(value, np.generic) else value
            what = "no weight" if pd.isna(value) else f"{value!r}, not a finite number >= 0"
            raise AnalysisInputError(
                f"replicate weights {name!r}: row {data.index[at]!r} has {what}; "
                f"{int(bad.sum())} row(s) like it"
            )
        matrix[:, j] = values
    return matrix, names


def _scales(
    method: str, count: int, scale: float | None, rscales: float | npt.ArrayLike | None
) -> tuple[float, FloatArray]:
    """R's ``svrepdesign`` defaults of ``scale`` and ``rscales`` for combined weights."""
    if scale is not None and (
        isinstance(scale, bool) or not np.isfinite(float(scale)) or float(scale) <= 0
    ):
        raise AnalysisInputError(f"scale must be a finite number > 0, not {scale!r}")
    if method == "brr" and scale is not None:
        raise AnalysisInputError(
            "scale: method='brr' has scale 1/R, its own (use method='other' for another)"
        )
    if method == "jkn" and rscales is None:
        raise AnalysisInputError(
            "rscales: method='jkn' needs rscales, each replicate's (n_h - 1) / n_h (R: "
            '"Must provide rscales for combined JKn weights")'
        )
    defaults = {"jk1": (count - 1) / count, "bootstrap": 1 / (count - 1), "brr": 1 / count}
    the_scale = float(scale) if scale is not None else defaults.get(method, 1.0)
    if rscales is None:
        the_rscales = np.ones(count)
    else:
        given = np.asarray(rscales, dtype=np.float64).ravel()
        if given.size == 1:
            given = np.full(count, float(given[0]))
        if given.size != count:
            raise AnalysisInputError(
                f"rscales has {given.size} values; it needs one per replicate ({count})"
            )
        if not np.isfinite(given).all() or (given < 0).any():
            raise AnalysisInputError("rscales must be finite numbers >= 0")
        the_rscales = given
    return the_scale, the_rscales


def analysis_weight_chunks(
    design: ReplicateDesign, cells: int = CHUNK_CELLS
) -> Iterator[tuple[slice, FloatArray]]:
    """R's ``weights(design, "analysis")`` a chunk of replicates at a time.

    Yields ``(replicates, weights)``, ``weights`` rows x chunk (about ``cells`` cells),
    never the rows x replicates table at once: for estimates that refit a model per
    replicate (``regress``) rather than add up sums.
    """
    reps = design._replicates
    step = max(1, cells // max(len(reps.psu), 1))
    for start in range(0, reps.count, step):
        chosen = slice(start, min(start + step, reps.count))
        weights = reps._row_weights(chosen)
        if reps.calfun is not None:
            weights = weights * reps.calfun.factors(chosen)
        if reps.greg is not None:
            matrix, coef = reps.greg
            weights = weights * (1.0 + matrix @ coef[chosen].T)
        yield chosen, np.asarray(weights, dtype=np.float64)


__all__ = ["Sums", "analysis_weight_chunks"]
