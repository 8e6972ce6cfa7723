"""Design-based quantiles with Woodruff intervals: R's ``svyquantile`` (survey 4.1).

R's defaults in survey 4.1 are ``qrule="math"`` and ``interval.type="mean"``, and this is
what they compute (``w`` the weights of the domain's answered rows, zero weights left out):

- the estimate (``qrule_math``): sort the answers ``x``, cumulate their weights ``W_k``
  and take ``k``, the last position with ``W_k <= p * sum(w)`` (the first when there is
  none); the quantile is ``x_k`` when ``W_k / sum(w) == p`` exactly, else ``x_(k+1)``: the
  inverse of the weighted distribution function, a value that was answered, never an
  interpolation, which matters for 1-5 or 0-10 answers full of ties;
- the interval (Woodruff, ``woodruffCI(method="mean")``): the share ``m`` of the domain
  answering at most the estimate, ``svymean(x <= q)`` with its design-based se, gives
  ``m + se * t(df)`` at ``(1 -/+ ci) / 2``; the interval is the same rule's quantiles at those two
  shares (NaN where a share falls below 0 or above 1);
- the se is ``(high - low) / (2 t(df))``, the interval's width turned back into one;
- ``df`` is ``degf`` of the domain: its PSUs minus its strata, counting rows with an answer
  and a weight.

Per group (``by=``), every figure is that of R's ``svyby(~x, ~g, design, svyquantile,
quantiles=q, ci=TRUE, na.rm=TRUE)``: each group's answered rows are a domain of the whole
design. The weights are cumulated in extended precision in the rows' order, as R's
``cumsum`` and ``sum`` do, so that a share that lands exactly on ``p`` (equal weights, as
in a cluster sample) is decided as R decides it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from surveykit.analysis import _domains
from surveykit.analysis import _inputs as inputs
from surveykit.analysis._design import Design, ReplicateDesign, design_of
from surveykit.analysis._inputs import By, FloatArray, IntArray, Weights
from surveykit.errors import AnalysisInputError

NO_ANSWERS = "no answers"
NO_DF = "fewer than 2 PSUs in this group: no interval"
OUTSIDE = "the interval's share falls outside 0..1: no bound there (R gives NaN)"

__all__ = ["quantiles"]


def quantiles(
    data: pd.DataFrame | Design,
    question: str,
    *,
    q: float | Sequence[float] = (0.5,),
    by: By = None,
    weights: Weights = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Quantiles (the median by default) of a numeric question, with Woodruff intervals.

    R's ``svyquantile(~question, design, quantiles=q, ci=TRUE, na.rm=TRUE)`` with survey
    4.1's defaults (``qrule="math"``: a weighted quantile that is always an answer given;
    ``interval.type="mean"``: Woodruff's interval from the design-based se of the share
    below the estimate), per group as ``svyby``. Missing answers are left out as a domain.
    A frame without a design or ``weights=`` is a design of equal weights.

    Args:
        data: a :class:`~surveykit.Design`, or results (with ``weights=``, a design of
            those weights).
        question: a numeric question's column (a labelled frame maps labels back to codes).
        q: the probabilities, each from 0 to 1.
        by: one column or several; one set of rows per group.
        weights: a column name or a Series aligned with the frame (only with a frame).
        ci: the confidence level.

    Returns:
        ``[*by, "question", "q", "estimate", "se", "ci_low", "ci_high", "n", "note"]``, one
        row per group and probability; ``n`` counts the group's answers with a weight. A
        bound whose share falls outside 0..1 is NaN, as in R, and so is the se; the note
        says why. ``attrs["degrees_of_freedom"]`` lists each group's ``degf``.

    Example:
        >>> sk.analysis.quantiles(design, "Q5", q=(0.25, 0.5, 0.75), by="channel")  # doctest: +SKIP
    """
    from scipy import stats

    ci = inputs.check_ci(ci)
    probs = _probabilities(q)
    frame, found = design_of(data, weights)
    design = found if found is not None else Design(frame)
    grouped = inputs.groups(frame, by)
    ans = inputs.answers(frame, question)
    values = ans.numbers(inputs.question_series(frame, question), "a quantile")
    y = np.append(values, np.nan)[np.where(ans.codes >= 0, ans.codes, len(values))]
    w = design.weights_array
    ids = np.where(np.isnan(y), -1, grouped.ids)
    counted = (ids >= 0) & (w != 0)
    n = np.bincount(ids[counted], minlength=grouped.count).astype(np.int64)
    dof = _domain_degf(design, ids, counted, grouped.count)
    members = _members(ids, counted, grouped.count)
    estimate = np.full((grouped.count, len(probs)), np.nan)
    for g, rows in enumerate(members):
        if len(rows):
            estimate[g] = _rule(y[rows], w[rows], probs)
    alpha = (1 - ci) / 2
    with np.errstate(invalid="ignore"):
        t_low, t_high = stats.t.ppf(alpha, dof), stats.t.ppf(1 - alpha, dof)
        crit = stats.t.ppf(1 - (1 - ci) / 2, dof)
    share = _share_below(design, y, ids, estimate)
    low = np.full(estimate.shape, np.nan)
    high = np.full(estimate.shape, np.nan)
    for g, rows in enumerate(members):
        if not len(rows):
            continue
        centre, se = share[g, 0], share[g, 1]
        share_low, share_high = centre + se * t_low[g], centre + se * t_high[g]
        # Where every answer is at most the estimate, the share is 1 with se 0, but R's
        # share is its own rounded sum of w / sum(w): an ulp above 1, R has no upper bound.
        top = np.nanmax(y[rows]) <= estimate[g]
        share_low[top] = share_high[top] = _r_share_of_all(w[rows])
        ok_low = ~np.isnan(share_low) & (share_low >= 0)
        ok_high = ~np.isnan(share_high) & (share_high <= 1)
        low[g, ok_low] = _rule(y[rows], w[rows], share_low[ok_low])
        high[g, ok_high] = _rule(y[rows], w[rows], share_high[ok_high])
    se_q = (high - low) / (2 * crit[:, None])
    note = _notes(n, dof, low, high)
    k = len(probs)
    table: dict[Hashable, Any] = {
        **inputs.group_frame(grouped, k),
        "question": question,
        "q": np.tile(probs, grouped.count),
        "estimate": estimate.ravel(),
        "se": se_q.ravel(),
        "ci_low": low.ravel(),
        "ci_high": high.ravel(),
        "n": np.repeat(n, k),
        "note": note.ravel(),
    }
    result = pd.DataFrame(table)
    result.attrs = {
        "estimate": "quantiles",
        "question": question,
        "question_text": inputs.question_text(frame, question),
        "ci": ci,
        "weights": design.weights_name,
        "method": "qrule='math', Woodruff interval (interval.type='mean')",
        "design": design.describe(),
        "variance": design.variance_method,
        "degrees_of_freedom": dof.astype(np.int64).tolist(),
    }
    return result


def _share_below(design: Design, y: FloatArray, ids: IntArray, estimate: FloatArray) -> FloatArray:
    """Per group and quantile, R's ``svymean(x <= estimate)`` and its se (groups x 2 x q)."""
    groups, k = estimate.shape
    out = np.full((groups, 2, k), np.nan)
    for j in range(k):
        at = np.where(ids >= 0, estimate[np.maximum(ids, 0), j], np.nan)
        with np.errstate(invalid="ignore"):
            below = np.where(np.isnan(y) | np.isnan(at), np.nan, (y <= at).astype(np.float64))
        figures = _domains.means(design, below, np.where(np.isnan(below), -1, ids), groups)
        out[:, 0, j] = figures.estimate[:, 0]
        out[:, 1, j] = np.sqrt(figures.variance[:, 0])
    return out


def _probabilities(q: float | Sequence[float]) -> FloatArray:
    values = [q] if isinstance(q, int | float) else list(q)
    if not values:
        raise AnalysisInputError("q: give at least one probability, such as 0.5")
    try:
        probs = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise AnalysisInputError(f"q must be probabilities from 0 to 1, not {q!r}") from None
    if not ((probs >= 0) & (probs <= 1)).all():
        raise AnalysisInputError(f"q must be probabilities from 0 to 1, not {q!r}")
    return probs


def _members(ids: IntArray, counted: np.ndarray, groups: int) -> list[IntArray]:
    """Per group its rows with an answer and a weight, in the data's order."""
    rows = np.flatnonzero(counted)
    order = np.argsort(ids[rows], kind="stable")
    split = np.cumsum(np.bincount(ids[rows], minlength=groups))[:-1]
    return [np.asarray(part, dtype=np.int64) for part in np.split(rows[order], split)]


def _domain_degf(design: Design, ids: IntArray, counted: np.ndarray, groups: int) -> FloatArray:
    """Per group, R's ``degf`` of the domain: PSUs minus strata with an answered row.

    On a replicate design, R's ``degf`` of ``design[rows, ]``: the rank of the domain's
    replicate weights less one (``svyby`` and ``na.rm`` subset the design, which recomputes it).
    """
    if isinstance(design, ReplicateDesign):
        return np.array(
            [
                float(design.subset(counted & (ids == g)).degrees_of_freedom)
                if (counted & (ids == g)).any()
                else 0.0
                for g in range(groups)
            ]
        )
    structure = design.structure
    g = ids[counted]
    psus = np.unique(g * (len(structure.psu_stratum) + 1) + structure.psu[counted])
    strata = np.unique(g * (len(structure.n_psu) + 1) + structure.strata[counted])
    n_psu = np.bincount(psus // (len(structure.psu_stratum) + 1), minlength=groups)
    n_strata = np.bincount(strata // (len(structure.n_psu) + 1), minlength=groups)
    return np.asarray(n_psu - n_strata, dtype=np.float64)


def _rule(x: FloatArray, w: FloatArray, probs: FloatArray) -> FloatArray:
    """R's ``qrule_math(x, w, p)`` for each ``p`` (``x``, ``w`` one domain, weights > 0).

    R cumulates the sorted weights and sums them in long double (``cumsum``, ``sum``),
    so this does too: equal weights then give shares exactly equal to ``p`` as R's do.
    """
    order = np.argsort(x, kind="stable")
    xs = x[order]
    cumw = np.cumsum(w[order].astype(np.longdouble)).astype(np.float64)
    total = float(np.cumsum(w.astype(np.longdouble))[-1])
    last = len(xs) - 1
    pos = np.searchsorted(cumw, probs * total, side="right") - 1
    pos = np.where(pos < 0, 0, pos)  # R's last(): the first position when none qualifies
    after = np.minimum(pos + 1, last)
    exact = (probs - cumw[pos] / total) == 0
    return np.asarray(np.where(exact, xs[pos], xs[after]), dtype=np.float64)


def _r_share_of_all(w: FloatArray) -> float:
    """R's ``svymean`` of an indicator that is 1 in every row: ``sum(w / sum(w))``.

    R sums in long double in the rows' order and rounds to double, which can land an ulp
    away from 1.
    """
    total = np.cumsum(w.astype(np.longdouble))[-1].astype(np.float64)
    return float(np.cumsum((w / total).astype(np.longdouble))[-1].astype(np.float64))


def _notes(n: IntArray, dof: FloatArray, low: FloatArray, high: FloatArray) -> Any:
    rows = np.broadcast_to(n[:, None], low.shape)
    degf = np.broadcast_to(dof[:, None], low.shape)
    return np.where(
        rows == 0,
        NO_ANSWERS,
        np.where(degf < 1, NO_DF, np.where(np.isnan(low) | np.isnan(high), OUTSIDE, "")),
    )
