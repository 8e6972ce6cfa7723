"""Calibrated weights for a design: raking, post-stratification and GREG calibration.

Each function starts from the design's own (base) weights and returns the new weights plus
what :class:`surveykit.analysis.Design` needs to count the calibration in standard errors.
They follow R's ``survey`` package: ``rake()`` is iterative proportional fitting to
population margins, ``postStratify()`` one such margin, ``calibrate()`` the Newton
iterations of ``grake`` (Deville and Särndal's calibration functions, including R's
rescaling of the weights when every population total is more than 20 times the sample's).

Targets are shares (summing to 1 per column, of the design's weighted total) or
population totals (every column summing to the same population size).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from surveykit.analysis._influence import FloatArray, IntArray
from surveykit.analysis.weights import RakingConvergenceError, RakingError, _bounds, _margin
from surveykit.errors import AnalysisInputError

SHARE_TOLERANCE = 1e-6
RESCALE_THRESHOLD = 20.0  # R's grake: SOMETHRESHOLD


def _population_targets(
    data: pd.DataFrame, base: FloatArray, targets: Mapping[Any, Mapping[Any, float]]
) -> list[tuple[Any, IntArray, int, FloatArray]]:
    """Per column its level codes and population totals (shares times the population)."""
    if not isinstance(targets, Mapping) or not targets:
        raise RakingError("targets must be a non-empty {column: {level: share or total}} mapping")
    sums: dict[Any, float] = {}
    for column, levels in targets.items():
        if not isinstance(levels, Mapping):
            raise RakingError(
                f"targets for column {column!r} must map level -> share or total, "
                f"got {type(levels).__name__}",
                column=column,
            )
        values = [_number(column, level, value) for level, value in levels.items()]
        sums[column] = float(np.sum(values)) if values else 0.0
    totals = {c: s for c, s in sums.items() if abs(s - 1) > SHARE_TOLERANCE}
    if totals:
        population = next(iter(totals.values()))
        for column, total in totals.items():
            if abs(total - population) > 1e-6 * max(abs(population), 1.0):
                first = next(iter(totals))
                raise RakingError(
                    f"targets: column {first!r} sums to {population:.10g} but column "
                    f"{column!r} to {total:.10g}; population totals must agree (or give "
                    "shares summing to 1)",
                    column=column,
                )
    else:
        population = float(base.sum())
    out = []
    for column, levels in targets.items():
        total = sums[column]
        shares = {level: float(value) / total for level, value in levels.items()}
        margin = _margin(data, column, shares)
        codes = margin.codes.astype(np.int64)
        out.append((column, codes, len(margin.levels), margin.shares * population))
    return out


def _number(column: Any, level: Any, value: Any) -> float:
    if (
        not isinstance(value, int | float | np.integer | np.floating)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or value < 0
    ):
        raise RakingError(
            f"column {column!r}, level {level!r}: the target must be a number >= 0, got {value!r}",
            column=column,
            level=level,
        )
    return float(value)


def rake(
    data: pd.DataFrame,
    base: FloatArray,
    targets: Mapping[Any, Mapping[Any, float]],
    *,
    max_iter: int,
    tol: float,
    trim: tuple[float | None, float | None] | None,
) -> tuple[FloatArray, tuple[tuple[IntArray, int], ...], str]:
    """Raked weights (iterative proportional fitting from ``base``), the margins, a label.

    Raking goes on past ``tol`` while it still converges (to 1e-13), so the weights are
    those of the exact fixed point, as R's ``rake()`` with a tiny ``epsilon`` gives.
    """
    if not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 1:
        raise RakingError(f"max_iter must be a whole number >= 1, got {max_iter!r}")
    margins = _population_targets(data, base, targets)
    bounds = _bounds(trim)
    w = base.copy()
    gap = np.inf
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007
        for _, codes, size, total in margins:
            sums = np.bincount(codes, weights=w, minlength=size)
            factor = np.divide(total, sums, out=np.ones(size), where=sums > 0)
            w *= factor[codes]
        if bounds is not None:
            _clip_factors(w, base, bounds)
        previous, gap = gap, _worst_gap(w, margins)
        if gap <= 1e-13 or (gap <= tol and gap >= previous * 0.999):
            break
    if gap > tol:
        column, level = _worst_margin(w, margins)
        raise RakingConvergenceError(
            f"raking did not converge in {max_iter} iterations: column {column!r}, level "
            f"{level!r} is {gap:.3g} (as a share) from its target"
            + (f" with trim={trim!r}" if trim is not None else ""),
            column=column,
            level=level,
            gap=gap,
            weights=pd.Series(w, index=data.index, name="weight"),
        )
    names = ", ".join(str(column) for column, *_ in margins)
    text = f"raked to {names} ({iterations} iteration{'' if iterations == 1 else 's'})"
    return w, tuple((codes, size) for _, codes, size, _ in margins), text


def _worst_gap(w: FloatArray, margins: list[tuple[Any, IntArray, int, FloatArray]]) -> float:
    worst = 0.0
    for _, codes, size, total in margins:
        sums = np.bincount(codes, weights=w, minlength=size)
        population = total.sum()
        worst = max(worst, float(np.abs(sums - total).max() / population))
    return worst


def _worst_margin(
    w: FloatArray, margins: list[tuple[Any, IntArray, int, FloatArray]]
) -> tuple[Any, int]:
    best: tuple[float, Any, int] = (-1.0, None, 0)
    for column, codes, size, total in margins:
        gaps = np.abs(np.bincount(codes, weights=w, minlength=size) - total)
        k = int(np.argmax(gaps))
        if gaps[k] > best[0]:
            best = (float(gaps[k]), column, k)
    return best[1], best[2]


def _clip_factors(w: FloatArray, base: FloatArray, bounds: tuple[float, float]) -> None:
    """Clip the raking factors ``w / base`` to ``bounds`` times their (weighted) mean."""
    has = base > 0
    for _ in range(100):
        g = np.where(has, w / np.where(has, base, 1.0), 1.0)
        mean = float((base * g).sum() / base.sum())
        low, high = bounds[0] * mean, bounds[1] * mean
        if g[has].min() >= low * (1 - 1e-12) and g[has].max() <= high * (1 + 1e-12):
            return
        w[:] = base * np.clip(g, low, high)


def poststratify(
    data: pd.DataFrame, base: FloatArray, column: str, shares: Mapping[Any, float]
) -> tuple[IntArray, int, FloatArray, str]:
    """Post-stratified weights: each cell's weights scaled to its population total."""
    [(_, codes, size, total)] = _population_targets(data, base, {column: shares})
    sums = np.bincount(codes, weights=base, minlength=size)
    factor = np.divide(total, sums, out=np.ones(size), where=sums > 0)
    return codes, size, base * factor[codes], f"post-stratified on {column}"


def calibrate(
    data: pd.DataFrame,
    base: FloatArray,
    totals: Mapping[Any, float | Mapping[Any, float]],
    *,
    method: str,
    bounds: tuple[float, float] | None,
    population: float | None,
    max_iter: int,
    tol: float,
    trim: tuple[float, float] | None = None,
) -> tuple[FloatArray, FloatArray, str, FloatArray]:
    """The model matrix, factors ``g``, a label and the totals (R's ``calibrate``, ``grake``).

    ``trim`` is R's ``calibrate(trim=)``: factors outside ``(low, high)`` are set to the
    bound and what that took or gave is spread over the others in proportion to their
    weights (once, as R). R ignores ``trim`` for a linear calibration without bounds (its
    closed form ``regcalibrate``); here that is an error rather than silently ignored.
    """
    functions = _FUNCTIONS.get(method)
    if functions is None:
        raise AnalysisInputError(
            f"calibrate: method must be one of {sorted(_FUNCTIONS)}, not {method!r}"
        )
    low, high = (-np.inf, np.inf) if bounds is None else (float(bounds[0]), float(bounds[1]))
    if method == "logit" and not (np.isfinite(low) and np.isfinite(high) and low < 1 < high):
        raise AnalysisInputError(
            "calibrate: method='logit' needs finite bounds=(low, high) with low < 1 < high"
        )
    if trim is not None:
        trim = _trim_bounds(trim)
        if method == "linear" and bounds is None:
            raise AnalysisInputError(
                "calibrate: trim= applies to method='raking' or 'logit' or with bounds= "
                "(R's calibrate() ignores it for a linear calibration without bounds)"
            )
    matrix, target, names = _model_matrix(data, totals, population)
    g = _grake(matrix, base, target, functions, (low, high), max_iter, tol, names)
    if trim is not None:
        g = trimmed(g, base, trim)
    text = f"calibrated ({method}) to {', '.join(str(c) for c in totals)}"
    if trim is not None:
        text += f", factors trimmed to [{trim[0]:g}, {trim[1]:g}]"
    return matrix, g, text, target


def _trim_bounds(trim: Any) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in trim)
    except (TypeError, ValueError):
        raise AnalysisInputError(f"calibrate: trim must be (low, high), not {trim!r}") from None
    if not (np.isfinite(low) and np.isfinite(high) and 0 <= low < high):
        raise AnalysisInputError(f"calibrate: trim must be 0 <= low < high, not {trim!r}")
    return low, high


def trimmed(g: FloatArray, weights: FloatArray, trim: tuple[float, float]) -> FloatArray:
    """R's trimming of calibration factors: clip to ``trim``, spread the rest over the others.

    The weight taken from (or given to) the trimmed rows, ``sum((g - clipped) w)``, is
    added to the factors of the rows inside the bounds as ``/ sum(w inside)``.
    """
    low, high = trim
    outside = (g < low) | (g > high)
    if not outside.any():
        return g
    clipped = np.clip(g, low, high)
    moved = float(((g - clipped) * weights).sum())
    inside = float(weights[~outside].sum())
    return np.where(outside, clipped, clipped + (moved / inside if inside else 0.0))


def _model_matrix(
    data: pd.DataFrame, totals: Mapping[Any, float | Mapping[Any, float]], population: float | None
) -> tuple[FloatArray, FloatArray, list[str]]:
    """Calibration variables as the columns of a matrix.

    Every level of the first categorical column, the levels but the first of the others
    (their first is implied by the population), and numeric columns as they are; an
    intercept when no column is categorical.
    """
    if not isinstance(totals, Mapping) or not totals:
        raise AnalysisInputError("calibrate: totals must be a non-empty {column: total} mapping")
    columns: list[FloatArray] = []
    target: list[float] = []
    names: list[str] = []
    size: float | None = None
    for column, spec in totals.items():
        if column not in data.columns:
            raise AnalysisInputError(f"calibrate: no column {column!r} in the data")
        if isinstance(spec, Mapping):
            values = {level: _number(column, level, v) for level, v in spec.items()}
            total = sum(values.values())
            if size is not None and abs(total - size) > 1e-6 * max(size, 1.0):
                raise AnalysisInputError(
                    f"calibrate: the totals of column {column!r} sum to {total:.10g}, "
                    f"not the population {size:.10g} of the other columns"
                )
            margin = _margin(data, column, {k: v / total for k, v in values.items()})
            first = size is None
            size = total
            for position, level in enumerate(margin.levels):
                if not first and position == 0:
                    continue
                columns.append((margin.codes == position).astype(np.float64))
                target.append(float(values[level]))
                names.append(f"{column}={level}")
        else:
            number = pd.to_numeric(data[column], errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(number)
            if bad.any():
                row = data.index[int(np.flatnonzero(bad)[0])]
                raise AnalysisInputError(
                    f"calibrate: column {column!r} has no number at row {row!r}"
                )
            columns.append(number)
            target.append(_number(column, "total", spec))
            names.append(str(column))
    if size is None:
        if population is None:
            raise AnalysisInputError(
                "calibrate: give population= (the population size) when no column is categorical"
            )
        columns.insert(0, np.ones(len(data)))
        target.insert(0, float(population))
        names.insert(0, "(population)")
    elif population is not None and abs(population - size) > 1e-6 * max(size, 1.0):
        raise AnalysisInputError(
            f"calibrate: population={population!r} but the categorical totals sum to {size:.10g}"
        )
    return np.column_stack(columns), np.asarray(target), names


CalFunction = Callable[[FloatArray, float, float], FloatArray]


def _linear(u: FloatArray, low: float, high: float) -> FloatArray:
    return np.asarray(np.minimum(np.maximum(u + 1, low), high) - 1)


def _linear_d(u: FloatArray, low: float, high: float) -> FloatArray:
    return ((u < high - 1) & (u > low - 1)).astype(np.float64)


def _raking(u: FloatArray, low: float, high: float) -> FloatArray:
    with np.errstate(over="ignore"):
        return np.asarray(np.minimum(np.maximum(np.exp(u), low), high) - 1)


def _raking_d(u: FloatArray, low: float, high: float) -> FloatArray:
    with np.errstate(over="ignore"):
        return np.where((u < high - 1) & (u > low - 1), np.exp(u), 0.0)


def _logit(u: FloatArray, low: float, high: float) -> FloatArray:
    a = (high - low) / ((high - 1) * (1 - low))
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(a * u)
        return np.asarray(
            (low * (high - 1) + high * (1 - low) * e) / (high - 1 + (1 - low) * e) - 1
        )


def _logit_d(u: FloatArray, low: float, high: float) -> FloatArray:
    a = (high - low) / ((high - 1) * (1 - low))
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(a * u)
        d = high - 1 + (1 - low) * e
        return np.asarray(
            high * (1 - low) * e * a / d
            - (low * (high - 1) + high * (1 - low) * e) * ((1 - low) * e * a) / d**2
        )


_FUNCTIONS: dict[str, tuple[CalFunction, CalFunction]] = {
    "linear": (_linear, _linear_d),
    "raking": (_raking, _raking_d),
    "logit": (_logit, _logit_d),
}


def _grake(
    mm: FloatArray,
    ww: FloatArray,
    population: FloatArray,
    functions: tuple[CalFunction, CalFunction],
    bounds: tuple[float, float],
    max_iter: int,
    tol: float,
    names: list[str],
) -> FloatArray:
    """R's ``grake``: Newton steps on the calibration equations ``sum w g x = totals``."""
    eta, scale = newton(mm, ww, population, functions, bounds, max_iter, tol, names)
    g = 1 + functions[0](mm @ eta, *bounds)
    return g * scale if scale is not None else g


def newton(
    mm: FloatArray,
    ww: FloatArray,
    population: FloatArray,
    functions: tuple[CalFunction, CalFunction],
    bounds: tuple[float, float],
    max_iter: int,
    tol: float,
    names: list[str],
) -> tuple[FloatArray, float | None]:
    """``grake``'s solution ``eta`` and rescaling: ``g = (1 + F(mm @ eta)) * scale``."""
    fm1, df = functions
    low, high = bounds
    sample = mm.T @ ww
    with np.errstate(divide="ignore"):
        scales = population / sample
    scale = float(scales.mean()) if scales.min() > RESCALE_THRESHOLD else None
    if scale is not None:
        ww = ww * scale
        sample = sample * scale
    eta = np.zeros(mm.shape[1])
    xeta = mm @ eta
    deriv = df(xeta, low, high)
    misfit = population - sample
    for _ in range(max_iter):
        gram = (mm * (ww * deriv)[:, None]).T @ mm
        misfit = population - sample - mm.T @ (ww * fm1(xeta, low, high))
        step = np.linalg.pinv(gram, rcond=256 * np.finfo(float).eps) @ misfit
        eta = eta + step
        xeta = mm @ eta
        g = 1 + fm1(xeta, low, high)
        deriv = df(xeta, low, high)
        for _ in range(max_iter):
            if np.isfinite(g).all() and np.isfinite(deriv).all():
                break
            step = step / 2
            eta = eta - step
            xeta = mm @ eta
            g = 1 + fm1(xeta, low, high)
            deriv = df(xeta, low, high)
        misfit = population - sample - mm.T @ (ww * fm1(xeta, low, high))
        if (np.abs(misfit) / (1 + np.abs(population)) < tol).all():
            break
    else:
        worst = int(np.argmax(np.abs(misfit) / (1 + np.abs(population))))
        raise AnalysisInputError(
            f"calibrate: the totals cannot be met within {max_iter} iterations (worst: "
            f"{names[worst]}, off by {misfit[worst]:.6g}); loosen the bounds or check the "
            "totals"
        )
    return eta, scale
