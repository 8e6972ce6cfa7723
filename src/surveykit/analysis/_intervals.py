"""Confidence intervals over whole arrays of groups at once (scipy and statsmodels).

Each function takes arrays with one entry per estimate and returns arrays of the same
shape; an entry that has no interval (no answers, a single answer) is NaN, and nothing
warns: the caller writes the reason in the estimate's ``note``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from surveykit.analysis._inputs import FloatArray

ProportionMethod = Literal["wilson", "clopper-pearson", "normal"]
PROPORTION_METHODS: dict[str, str] = {
    "wilson": "wilson",
    "clopper-pearson": "beta",
    "normal": "normal",
}


def proportion_interval(
    count: FloatArray, nobs: FloatArray, ci: float, method: ProportionMethod
) -> tuple[FloatArray, FloatArray]:
    """``statsmodels.stats.proportion.proportion_confint`` where ``nobs > 0``, else NaN.

    ``count`` and ``nobs`` may be fractional (weighted: the proportion times the Kish
    effective size, and that size).
    """
    from statsmodels.stats.proportion import proportion_confint

    if method not in PROPORTION_METHODS:
        raise ValueError(f"method must be one of {sorted(PROPORTION_METHODS)}, not {method!r}")
    low = np.full(count.shape, np.nan)
    high = np.full(count.shape, np.nan)
    valid = nobs > 0
    if valid.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            lo, hi = proportion_confint(
                count[valid], nobs[valid], alpha=1 - ci, method=PROPORTION_METHODS[method]
            )
        low[valid], high[valid] = lo, hi
    return low, high


def t_interval(
    estimate: FloatArray, se: FloatArray, dof: FloatArray, ci: float
) -> tuple[FloatArray, FloatArray]:
    """``estimate -/+ t(dof).ppf((1 + ci) / 2) * se``; NaN where ``dof < 1`` or se is NaN."""
    from scipy import stats

    half = np.full(estimate.shape, np.nan)
    valid = (dof >= 1) & np.isfinite(se)
    if valid.any():
        half[valid] = stats.t.ppf((1 + ci) / 2, dof[valid]) * se[valid]
    return estimate - half, estimate + half


def normal_interval(
    estimate: FloatArray, se: FloatArray, ci: float
) -> tuple[FloatArray, FloatArray]:
    """``estimate -/+ norm.ppf((1 + ci) / 2) * se`` (NaN where se is NaN)."""
    from scipy import stats

    half = stats.norm.ppf((1 + ci) / 2) * se
    return estimate - half, estimate + half


def two_sided_normal_p(statistic: FloatArray) -> FloatArray:
    """Two-sided p-values of standard normal statistics (NaN stays NaN)."""
    from scipy import stats

    return np.asarray(2 * stats.norm.sf(np.abs(statistic)), dtype=np.float64)


def two_sided_t_p(statistic: FloatArray, dof: FloatArray) -> FloatArray:
    """Two-sided p-values of t statistics with ``dof`` degrees of freedom."""
    from scipy import stats

    p = np.full(statistic.shape, np.nan)
    valid = np.isfinite(statistic) & (dof > 0)
    if valid.any():
        p[valid] = 2 * stats.t.sf(np.abs(statistic[valid]), dof[valid])
    return p


DesignProportionMethod = Literal["logit", "beta", "wilson", "normal"]
DESIGN_PROPORTION_METHODS = ("logit", "beta", "wilson", "normal")


def design_proportion_interval(
    p: FloatArray,
    variance: FloatArray,
    ci: float,
    method: str,
    *,
    dof: float,
    rows: int,
) -> tuple[FloatArray, FloatArray]:
    """A design-based interval for proportions ``p`` with linearised ``variance``.

    - ``"logit"``: R's ``svyciprop(method="logit")``, ``expit(logit(p) -/+ t(dof) * se /
      (p (1 - p)))`` (NaN where p is 0 or 1).
    - ``"beta"``: Korn and Graubard's, R's ``svyciprop(method="beta")``: Clopper-Pearson on
      the effective size ``p (1 - p) / variance`` times ``(t(rows - 1) / t(dof))^2``.
    - ``"wilson"``: Wilson's score interval on the effective size ``p (1 - p) / variance``
      with the normal quantile.
    - ``"normal"``: ``p -/+ z * se``.

    Entries with no variance (NaN) get NaN bounds.
    """
    from scipy import stats

    p = np.asarray(p, dtype=np.float64)
    variance = np.asarray(variance, dtype=np.float64)
    se = np.sqrt(variance)
    low = np.full(p.shape, np.nan)
    high = np.full(p.shape, np.nan)
    alpha = 1 - ci
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (p > 0) & (p < 1) & (variance > 0)
        n_eff = p * (1 - p) / variance
        if method == "logit":
            if dof >= 1 and inside.any():
                half = stats.t.ppf(1 - alpha / 2, dof) * se / (p * (1 - p))
                centre = np.log(p / (1 - p))
                low = np.where(inside, 1 / (1 + np.exp(-(centre - half))), np.nan)
                high = np.where(inside, 1 / (1 + np.exp(-(centre + half))), np.nan)
        elif method == "beta":
            if dof >= 1 and rows > 1 and inside.any():
                n_adj = (
                    n_eff * (stats.t.ppf(alpha / 2, rows - 1) / stats.t.ppf(alpha / 2, dof)) ** 2
                )
                low = np.where(
                    inside, stats.beta.ppf(alpha / 2, n_adj * p, n_adj * (1 - p) + 1), np.nan
                )
                high = np.where(
                    inside, stats.beta.ppf(1 - alpha / 2, n_adj * p + 1, n_adj * (1 - p)), np.nan
                )
        elif method == "wilson":
            z = stats.norm.ppf(1 - alpha / 2)
            n = np.where(inside, n_eff, np.nan)
            centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
            half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
            low, high = centre - half, centre + half
        elif method == "normal":
            z = stats.norm.ppf(1 - alpha / 2)
            low, high = p - z * se, p + z * se
        else:
            raise ValueError(
                f"method must be one of {list(DESIGN_PROPORTION_METHODS)}, not {method!r}"
            )
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def format_p(p: float | None, *, digits: int = 3) -> str:
    """A p-value as a report prints it: ``"p < 0.001"``, ``"p = 0.017"``, ``"p = 1.000"``.

    A p-value smaller than the last shown digit is written as a bound, never as ``0`` or
    ``0.000``; a missing one (no test) is ``"p n/a"``. ``digits`` is how many decimals
    are shown (3 by default, so the bound is ``0.001``).
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be a whole number of at least 1, got {digits!r}")
    if p is None or not np.isfinite(p):
        return "p n/a"
    if not 0 <= p <= 1:
        raise ValueError(f"a p-value is between 0 and 1, got {p!r}")
    floor = 10.0**-digits
    return f"p < {floor:.{digits}f}" if p < floor else f"p = {p:.{digits}f}"
