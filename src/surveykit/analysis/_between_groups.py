"""Design-based tests between groups: Rao-Scott's test of a table and domain contrasts.

Both work on domains of the whole design (R's ``survey`` package): the rows of the groups
compared, and of the respondents who answered, keep their place in the design; everyone
else has an influence value of 0, so strata and PSU counts are the whole sample's.

- :func:`rao_scott` is R's ``svychisq(~q + by, design)``: Pearson's X^2 of the weighted
  table, corrected by the eigenvalues of the design effect matrix ``Delta`` of the table's
  interaction contrasts (Rao and Scott 1984). ``statistic="F"`` (R's default) is the
  second-order correction as an F statistic with fractional degrees of freedom,
  ``"Chisq"`` the first-order one.
- :func:`contrasts` is R's ``svyttest(y ~ group, design)``: the difference of two domain
  means (a proportion is the mean of its 0/1 indicator) with the se from their covariance,
  a t test on ``degf - 1`` degrees of freedom, ``degf`` counting the PSUs and strata of the
  respondents in the two groups (R's ``svyglm`` drops the others before ``degf``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from surveykit.analysis import _inputs as inputs
from surveykit.analysis._design import Design, ReplicateDesign
from surveykit.analysis._domains import proportions
from surveykit.analysis._influence import FloatArray, IntArray
from surveykit.analysis._intervals import two_sided_t_p

ChisqStatistic = Literal["F", "Chisq"]
STATISTICS = ("F", "Chisq")

RAO_SCOTT_F = "Rao-Scott F (R svychisq)"
RAO_SCOTT_CHISQ = 'Rao-Scott chi-square (R svychisq, statistic="Chisq")'
DESIGN_T = "design-based t-test (R svyttest)"

__all__ = [
    "DESIGN_T",
    "RAO_SCOTT_CHISQ",
    "RAO_SCOTT_F",
    "STATISTICS",
    "ChisqStatistic",
    "Contrast",
    "contrasts",
    "pair_degrees_of_freedom",
    "present_groups",
    "rao_scott",
]


def present_groups(design: Design, by: inputs.By) -> inputs.Groups:
    """The groups of ``by`` that hold a row of non-zero weight (missing ``by``: no group).

    A design's subset keeps its other rows with weight 0; their groups are not groups of
    the subset (R's ``subset()`` of a design drops them from ``svyby`` and ``svyttest``).
    """
    grouped = inputs.groups(design.data, by, dropna=True)
    inside = (grouped.ids >= 0) & (design.weights_array > 0)
    seen = np.bincount(grouped.ids[inside], minlength=grouped.count) > 0
    if seen.all():
        return grouped
    lookup = np.cumsum(seen, dtype=np.int64) - 1
    safe = np.maximum(grouped.ids, 0)
    ids = np.where((grouped.ids >= 0) & seen[safe], lookup[safe], -1).astype(np.int64)
    frame = grouped.frame[seen].reset_index(drop=True)
    return inputs.Groups(grouped.columns, ids, int(seen.sum()), frame)


def _table_degrees_of_freedom(design: Design) -> tuple[int, int]:
    """R's ``nu`` of ``svychisq`` and its ``N``: PSUs minus strata, and rows, of the design.

    R counts the rows the design holds: a calibrated design's subset keeps its other rows
    (weight 0), another design's subset drops them; a :class:`Design` subset keeps them
    all with weight 0, so those count only when it is calibrated.
    """
    if isinstance(design, ReplicateDesign):
        # svychisq.svyrep.design: degf() of the design (the replicate weights' rank - 1),
        # N its rows; R's subset of a replicate design drops the other rows, calibrated or not
        return design.degrees_of_freedom, int(np.count_nonzero(design.weights_array))
    if design.calibrated:
        return design.n_psu - design.n_strata, len(design.data)
    return design.degrees_of_freedom, int(np.count_nonzero(design.weights_array))


def rao_scott(
    design: Design,
    rows: IntArray,
    n_rows: int,
    columns: IntArray,
    n_columns: int,
    statistic: ChisqStatistic,
) -> dict[str, Any]:
    """R's ``svychisq(~q + by, design, statistic=statistic)`` on the coded table.

    ``rows`` and ``columns`` give each respondent's cell (-1: not in the table, a missing
    answer or group, which R's ``na.rm=TRUE`` leaves out as a domain). Every row and column
    must hold weight. Returns the test's figures: ``statistic``, ``ndf``, ``ddf`` (NaN for
    ``"Chisq"``), ``p_value``, ``chi2`` (Pearson's X^2 of the weighted table scaled to the
    design's rows, R's ``svytable(..., Ntotal=N)``), ``dof``, ``design_effect`` (the mean
    eigenvalue of ``Delta``) and ``cramers_v``.
    """
    from scipy import stats

    inside = (rows >= 0) & (columns >= 0)
    cells = n_rows * n_columns
    cell = np.where(inside, rows + n_rows * np.maximum(columns, 0), -1).astype(np.int64)
    figures = proportions(design, cell, cells, np.zeros(len(cell), dtype=np.int64), 1)
    p = np.nan_to_num(figures.estimate[0])
    v = figures.vcov
    nu, big_n = _table_degrees_of_freedom(design)
    # R: Cmat <- qr.resid(qr(X1), X12[, interactions]) over the cells, rows varying fastest
    r_of = np.tile(np.arange(n_rows), n_columns)
    c_of = np.repeat(np.arange(n_columns), n_rows)
    main = np.column_stack(
        [np.ones(cells)]
        + [(r_of == r).astype(float) for r in range(1, n_rows)]
        + [(c_of == c).astype(float) for c in range(1, n_columns)]
    )
    inter = np.column_stack(
        [
            ((r_of == r) & (c_of == c)).astype(float)
            for c in range(1, n_columns)
            for r in range(1, n_rows)
        ]
    )
    coef = np.linalg.lstsq(main, inter, rcond=None)[0]
    contrast = inter - main @ coef
    inverse = np.where(p == 0, 0.0, 1.0 / np.where(p == 0, 1.0, p))
    scaled = contrast * inverse[:, None]
    denominator = contrast.T @ scaled / big_n
    numerator = scaled.T @ v @ scaled
    delta = np.linalg.solve(denominator, numerator)
    trace = float(np.trace(delta))
    d0 = trace**2 / float(np.trace(delta @ delta))
    table = (p * big_n).reshape(n_columns, n_rows).T
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / big_n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    dof = (n_rows - 1) * (n_columns - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if statistic == "F":
            value = chi2 / trace
            ndf, ddf = d0, d0 * nu
            p_value = float(stats.f.sf(value, ndf, ddf)) if nu > 0 else np.nan
        else:
            value, ndf, ddf = chi2, float(dof), np.nan
            p_value = float(stats.chi2.sf(chi2 / (trace / dof), dof))
    return {
        "test": RAO_SCOTT_F if statistic == "F" else RAO_SCOTT_CHISQ,
        "statistic": float(value),
        "ndf": float(ndf),
        "ddf": float(ddf),
        "p_value": p_value,
        "chi2": chi2,
        "dof": dof,
        "design_effect": trace / dof,
        "cramers_v": float(np.sqrt(chi2 / (big_n * (min(n_rows, n_columns) - 1)))),
        "note": "" if nu > 0 else "the design has no degrees of freedom: no p-value",
    }


def pair_degrees_of_freedom(
    design: Design, ids: IntArray, groups: int, inside: npt.NDArray[np.bool_]
) -> FloatArray:
    """Per pair of groups (groups x groups), R's ``degf()`` of their rows minus 1.

    The rows counted are those in ``inside`` with a group and a non-zero weight; ``degf``
    is their distinct PSUs minus their distinct strata, what ``svyttest`` on
    ``subset(design, group %in% c(a, b))`` uses (``svyglm``'s ``df.residual``).

    On a replicate design R's subset ``design[group %in% c(a, b), ]`` recomputes ``degf``
    as the rank of the pair's replicate weights less one, before ``svyglm`` drops the rows
    without an answer: every row of the two groups counts, answered or not.
    """
    from scipy import sparse

    if isinstance(design, ReplicateDesign):
        return _replicate_pair_degrees_of_freedom(design, ids, groups)
    keep = inside & (ids >= 0) & (design.weights_array != 0)
    structure = design.structure
    g = ids[keep]

    def unions(units: IntArray, size: int) -> FloatArray:
        if groups * size <= max(4 * len(g), 1 << 20):
            # a small (group, unit) table: one counting pass, then a dense product (the
            # sparse matrix's index sorting cost 10x more on 100,000 rows)
            seen = np.bincount(g * size + units[keep], minlength=groups * size) > 0
            present = seen.reshape(groups, size).astype(np.float64)
            each = present.sum(axis=1)
            both = present @ present.T
        else:
            ones = np.ones(len(g))
            incidence = sparse.csr_matrix((ones, (units[keep], g)), shape=(size, groups))
            incidence.sum_duplicates()
            incidence.data[:] = 1.0  # several rows of one unit and group count once
            each = np.asarray(incidence.sum(axis=0), dtype=np.float64).ravel()
            both = np.asarray((incidence.T @ incidence).toarray(), dtype=np.float64)
        return np.asarray(each[:, None] + each[None, :] - both, dtype=np.float64)

    psus = unions(structure.psu, len(structure.psu_stratum))
    strata = unions(structure.strata, len(structure.strata_labels))
    return psus - strata - 1.0


def _replicate_pair_degrees_of_freedom(
    design: ReplicateDesign, ids: IntArray, groups: int
) -> FloatArray:
    """Per pair of groups, ``degf(design[group %in% c(a, b), ]) - 1`` of a replicate design."""
    out = np.full((groups, groups), np.nan)
    for a in range(groups):
        for b in range(a + 1, groups):
            pair = design.subset((ids == a) | (ids == b))
            out[a, b] = out[b, a] = pair.degrees_of_freedom - 1.0
    return out


@dataclass
class Contrast:
    """Differences ``b - a`` of domain estimates with their design-based t tests.

    All arrays have one entry per compared estimate (e.g. per option of a question).
    """

    estimate_a: FloatArray
    estimate_b: FloatArray
    difference: FloatArray
    se: FloatArray
    statistic: FloatArray
    dof: FloatArray
    p_value: FloatArray


def contrasts(
    estimate: FloatArray, vcov: FloatArray, a: IntArray, b: IntArray, dof: FloatArray
) -> Contrast:
    """``estimate[b] - estimate[a]`` with se from ``vcov`` and two-sided t p-values.

    ``estimate`` is flat and ``vcov`` its variance matrix; ``a`` and ``b`` index the pairs;
    ``dof`` is each pair's degrees of freedom (p-value NaN below 1, as R's ``pt`` gives
    with 0). A pair whose difference has no variance has NaN statistic and p-value.
    """
    variance = vcov[a, a] + vcov[b, b] - 2 * vcov[a, b]
    se = np.sqrt(np.clip(variance, 0.0, None))
    difference = estimate[b] - estimate[a]
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(se > 0, difference / np.where(se > 0, se, 1.0), np.nan)
    dof = np.asarray(dof, dtype=np.float64)
    p_value = np.where(dof >= 1, two_sided_t_p(statistic, np.maximum(dof, 1.0)), np.nan)
    return Contrast(estimate[a], estimate[b], difference, se, statistic, dof, p_value)
