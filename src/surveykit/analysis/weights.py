"""Survey weights: raking to population margins, and what a set of weights costs.

:func:`rake` finds weights (mean 1, one per respondent) whose weighted shares match target
shares on several columns at once (iterative proportional fitting, "raking"):

    >>> w = sk.weights.rake(df, {"region": {"North": 0.4, "South": 0.6},
    ...                          "age": {"18-34": 0.3, "35+": 0.7}})   # doctest: +SKIP
    >>> sk.weights.summary(w)                                            # doctest: +SKIP

Targets are shares summing to 1 per column (not percent: a column summing to 100 is an
error that says so, rather than a guess about the unit).

Why plain numpy rather than a raking library: weightipy (MIT, the maintained one; samplics
is archived, balance pins old numpy/pandas, svy is young) was read and tried. Its engine
loops over every target level in Python (a fancy-indexed sum and multiply per level and
iteration), stops when an iteration improves the fit by less than 1% rather than when the
margins are within a tolerance, prints (not raises) when it does not converge, silently
turns weights of 0 into 1, and pulls requests and watchdog into the install. Raking itself
is a few lines: each column's levels become integer codes once, and one pass over a margin
is an ``np.bincount`` (weighted totals per level) and one gather (``factor.take(codes)``):
on 1,000,000 respondents and 4 margins ``rake`` took 1.2x the CPU time of a bare numpy loop
doing the same iterations (``benchmarks/bench_analysis.py``).
weightipy stays a test-only dependency, the independent oracle for the weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.errors import RakingConvergenceError, RakingError, WeightsError

_Floats = npt.NDArray[np.float64]

__all__ = ["RakingConvergenceError", "RakingError", "WeightsError", "rake", "summary"]

SHARE_SUM_TOLERANCE = 1e-6
"""How far a column's target shares may be from summing to 1 (they are rescaled to 1)."""


@dataclass
class _Margin:
    column: Any
    levels: list[Any]  # target levels, in the targets' order
    shares: np.ndarray  # target shares, summing to 1
    codes: np.ndarray  # per row, the position of its level in ``levels`` (intp)
    counts: np.ndarray  # respondents per level


def rake(
    df: pd.DataFrame,
    targets: Mapping[Any, Mapping[Any, float]],
    *,
    max_iter: int = 100,
    tol: float = 1e-6,
    trim: tuple[float | None, float | None] | None = None,
    base_weights: str | pd.Series | np.ndarray | Sequence[float] | None = None,
) -> pd.Series:
    """Weights that make ``df``'s shares match ``targets`` on every column (raking).

    Raking starts from ``base_weights`` (the design's sampling weights) when given, else
    from equal weights. For a design-based analysis of the raked weights, with standard
    errors that count the raking, use ``sk.Design(df, weights=base).rake(targets)``.

    Args:
        df: one row per respondent, with every column of ``targets``.
        targets: ``{column: {level: share}}``; each column's shares are fractions summing to
            1 (within 1e-6, then rescaled to exactly 1). Every level present in the column
            must have a target; a target level nobody in ``df`` has must have share 0.
        max_iter: most raking iterations (one iteration adjusts every margin once).
        tol: every weighted share ends within ``tol`` of its target (absolute, as a share:
            1e-6 is 0.0001 percentage points).
        trim: ``(low, high)`` bounds for the weights relative to their mean of 1 (either may
            be None). After each iteration the weights are scaled to mean 1 and clipped to
            the bounds (again until both hold, as clipping moves the mean), then raking goes
            on, so the result meets the margins within ``tol`` and the bounds. Bounds close
            to the tightest possible converge slowly (raise ``max_iter``). If the margins and
            the bounds cannot both hold, :class:`RakingConvergenceError` is raised after
            ``max_iter`` iterations (its ``weights`` are the last, bounded, ones): a margin
            is never silently missed. With ``base_weights`` the bounds apply to the raking
            factors (raked / base weights), relative to their mean.
        base_weights: the weights raking starts from: a column name or a Series aligned
            with ``df`` (or an array in its order); every weight finite and >= 0.

    Returns:
        A float Series named ``"weight"``, aligned with ``df.index``, of mean 1 (so weighted
        counts stay on the sample's scale), or, with ``base_weights``, summing to the base
        weights' sum (the raking factors times the base weights, rescaled). Exactly the
        starting weights when the sample already matches the targets within ``tol``.
        ``attrs`` holds ``iterations`` (0 in that case),
        ``max_gap`` (the worst margin's final gap, or an upper bound on it: raking stops
        without recounting when the last pass's factors provably kept every margin within
        ``tol``) and ``trim`` (the bounds used, or None).

    Raises:
        RakingError: a column missing from ``df``; shares that are negative, not numbers,
            or do not sum to 1; a level in the data without a target; a target level with no
            respondents (unreachable) or a share of 0 for a level that has respondents; a
            missing value in a raking column (naming the first row); bad arguments.
        RakingConvergenceError: the margins (and bounds) not all met within ``max_iter``
            iterations; names the worst margin and its gap.
    """
    if not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 1:
        raise RakingError(f"max_iter must be a whole number >= 1, got {max_iter!r}")
    if not (isinstance(tol, int | float) and np.isfinite(tol) and tol > 0):
        raise RakingError(f"tol must be a positive number, got {tol!r}")
    bounds = _bounds(trim)
    if not isinstance(targets, Mapping) or not targets:
        raise RakingError("targets must be a non-empty {column: {level: share}} mapping")
    n = len(df)
    if n == 0:
        raise RakingError("cannot rake an empty frame (no respondents)")
    margins = [_margin(df, column, levels) for column, levels in targets.items()]
    base = _base_weights(df, base_weights)

    start = np.ones(n) if base is None else base
    start_gaps = _gaps(start, margins)
    if max(map(_max, start_gaps)) <= tol:
        gap = max(map(_max, start_gaps))
        return _result(start, df.index, iterations=0, gap=gap, bounds=bounds, base=base)

    weights = np.ones(n)  # the raking factors; the weights are base * factors
    for iteration in range(1, max_iter + 1):
        worst = 0.0
        spreads = []  # per margin, max factor / min factor of its adjustment
        for m in margins:
            current = weights if base is None else base * weights
            totals = np.bincount(m.codes, weights=current, minlength=len(m.levels))
            total = totals.sum()
            worst = max(worst, float(np.abs(totals / total - m.shares).max()))
            # Levels with no respondents have a 0 target (checked above): factor unused.
            factor = np.divide(m.shares * total, totals, out=np.ones_like(totals), where=totals > 0)
            spreads.append(float(factor.max() / factor.min()))
            weights *= factor.take(m.codes)
        if not np.isfinite(total):  # pragma: no cover - needs astronomically bad data
            break
        raked = weights if base is None else base * weights
        if bounds is not None:
            _trim(weights, *bounds)
            raked = weights if base is None else base * weights
            if worst <= tol:
                gap = max(map(_max, _gaps(raked, margins)))
                if gap <= tol:
                    return _result(
                        raked, df.index, iterations=iteration, gap=gap, bounds=bounds, base=base
                    )
            continue
        # Each margin was exact after its own adjustment; the later adjustments of this pass
        # multiplied every weight by factors whose max/min ratio is at most r, which moves any
        # share by at most (r - 1) / 4. When that bound is within tol no recount is needed.
        bound = max((float(np.prod(spreads[j + 1 :])) - 1) / 4 + 1e-12 for j in range(len(spreads)))
        if bound <= tol:
            return _result(raked, df.index, iterations=iteration, gap=bound, base=base)
        if worst <= tol:  # close: recount every margin on the final weights (once)
            gap = max(map(_max, _gaps(raked, margins)))
            if gap <= tol:
                return _result(raked, df.index, iterations=iteration, gap=gap, base=base)
    raked = weights if base is None else base * weights
    raise _not_converged(raked, df.index, margins, max_iter, tol, trim)


def _base_weights(
    df: pd.DataFrame, base: str | pd.Series | np.ndarray | Sequence[float] | None
) -> np.ndarray | None:
    """The base weights as floats in ``df``'s row order (None when not given)."""
    if base is None:
        return None
    if isinstance(base, str):
        if base not in df.columns:
            raise RakingError(f"base_weights: no column {base!r} in the frame", column=base)
        series = df[base]
    elif isinstance(base, pd.Series):
        if not base.index.equals(df.index):
            absent = df.index.difference(base.index)
            if len(absent):
                raise RakingError(f"base_weights: no weight for row {absent[0]!r}", row=absent[0])
            base = base.reindex(df.index)
        series = base
    else:
        series = pd.Series(np.asarray(base, dtype=float), index=df.index)
        if len(series) != len(df):
            raise RakingError(f"base_weights: {len(series)} weights for {len(df)} rows")
    values = np.asarray(pd.to_numeric(series, errors="coerce"), dtype=np.float64)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise RakingError(
            f"base_weights: row {df.index[at]!r} has {series.iloc[at]}, not a finite number >= 0",
            row=df.index[at],
        )
    if not values.sum() > 0:
        raise RakingError("base_weights sum to zero")
    return values


def _trim(weights: np.ndarray, low: float, high: float) -> None:
    """Scale to mean 1 and clip to the bounds, until both hold (clipping moves the mean)."""
    n = len(weights)
    for _ in range(100):
        weights *= n / weights.sum()
        if weights.min() >= low * (1 - 1e-12) and weights.max() <= high * (1 + 1e-12):
            return
        np.clip(weights, low, high, out=weights)


def _max(gap: np.ndarray) -> float:
    return float(gap.max()) if gap.size else 0.0


def _gap(totals: np.ndarray, shares: np.ndarray) -> np.ndarray:
    gap: np.ndarray = np.abs(totals / totals.sum() - shares)
    return gap


def _gaps(weights: np.ndarray, margins: Sequence[_Margin]) -> list[np.ndarray]:
    return [
        _gap(np.bincount(m.codes, weights=weights, minlength=len(m.levels)), m.shares)
        for m in margins
    ]


def _result(
    weights: np.ndarray,
    index: pd.Index,
    *,
    iterations: int,
    gap: float,
    bounds: tuple[float, float] | None = None,
    base: np.ndarray | None = None,
) -> pd.Series:
    if base is not None:
        series = pd.Series(weights * (base.sum() / weights.sum()), index=index, name="weight")
        series.attrs.update(iterations=iterations, max_gap=gap, trim=bounds)
        return series
    weights = weights * (len(weights) / weights.sum())
    if bounds is not None:
        # _trim left the weights within the bounds at mean 1: this only removes rounding.
        np.clip(weights, bounds[0], bounds[1], out=weights)
    series = pd.Series(weights, index=index, name="weight")
    series.attrs.update(iterations=iterations, max_gap=gap, trim=None if bounds is None else bounds)
    return series


def _not_converged(
    weights: np.ndarray,
    index: pd.Index,
    margins: Sequence[_Margin],
    max_iter: int,
    tol: float,
    trim: Any,
) -> RakingConvergenceError:
    gaps = _gaps(weights, margins) if np.isfinite(weights).all() else None
    if gaps is None:  # pragma: no cover - see the loop
        m, position, gap = margins[0], 0, float("inf")
    else:
        m, gaps_m = max(zip(margins, gaps, strict=True), key=lambda pair: _max(pair[1]))
        position = int(np.argmax(gaps_m))
        gap = float(gaps_m[position])
    level = m.levels[position]
    totals = np.bincount(m.codes, weights=weights, minlength=len(m.levels))
    reached = float(totals[position] / totals.sum()) if gaps is not None else float("nan")
    hint = (
        f" with trim={trim!r}: the bounds may be too tight for these targets"
        if trim is not None
        else ": the targets may contradict the data (a combination of levels nobody has)"
    )
    return RakingConvergenceError(
        f"raking did not converge in {max_iter} iterations{hint}; the worst margin is "
        f"column {m.column!r}, level {level!r}: weighted share {reached:.8f} against target "
        f"{float(m.shares[position]):.8f} (gap {gap:.3g} > tol {tol:g})",
        column=m.column,
        level=level,
        gap=gap,
        weights=pd.Series(weights * (len(weights) / weights.sum()), index=index, name="weight"),
    )


def _bounds(trim: tuple[float | None, float | None] | None) -> tuple[float, float] | None:
    if trim is None:
        return None
    if not isinstance(trim, Sequence) or isinstance(trim, str) or len(trim) != 2:
        raise RakingError(f"trim must be a (low, high) pair, got {trim!r}")
    low, high = trim
    low_value = 0.0 if low is None else low
    high_value = np.inf if high is None else high
    for name, value in (("low", low_value), ("high", high_value)):
        if not isinstance(value, int | float) or isinstance(value, bool) or np.isnan(value):
            raise RakingError(f"trim {name} bound must be a number or None, got {value!r}")
    if not 0 <= low_value <= 1 <= high_value:
        raise RakingError(
            f"trim=({low!r}, {high!r}): bounds are relative to the mean weight of 1, so they "
            "need 0 <= low <= 1 <= high"
        )
    return float(low_value), float(high_value)


def _margin(df: pd.DataFrame, column: Any, levels: Mapping[Any, float]) -> _Margin:
    """One raking margin: its checked target shares and each respondent's level."""
    if column not in df.columns:
        raise RakingError(
            f"targets name column {column!r}, which is not in the frame "
            f"(columns: {[str(c) for c in df.columns]})",
            column=column,
        )
    names, shares = _target_shares(column, levels)
    raw, uniques = _level_codes(df, column)
    raw_counts = np.bincount(raw, minlength=len(uniques))
    mapping = _to_targets(column, names, uniques, raw_counts > 0)
    present = raw_counts > 0
    counts = np.zeros(len(names), dtype=np.int64)
    np.add.at(counts, mapping[present], raw_counts[present])
    _check_reachable(column, levels, names, shares, counts)
    return _Margin(
        column=column, levels=names, shares=shares, codes=mapping.take(raw), counts=counts
    )


def _target_shares(column: Any, levels: Mapping[Any, float]) -> tuple[list[Any], _Floats]:
    """The target levels and their shares, each a number >= 0, summing to 1."""
    if not isinstance(levels, Mapping) and not isinstance(levels, pd.Series):
        raise RakingError(
            f"targets for column {column!r} must map level -> share, got {type(levels).__name__}",
            column=column,
        )
    names = list(levels.keys())
    if not names:
        raise RakingError(f"targets for column {column!r} list no levels", column=column)
    shares = np.empty(len(names))
    for position, (level, share) in enumerate(levels.items()):
        if (
            not isinstance(share, int | float | np.integer | np.floating)
            or isinstance(share, bool)
            or not np.isfinite(share)
            or share < 0
        ):
            raise RakingError(
                f"column {column!r}, level {level!r}: the target share must be a number >= 0, "
                f"got {share!r}",
                column=column,
                level=level,
            )
        shares[position] = share
    total = float(shares.sum())
    if abs(total - 1) > SHARE_SUM_TOLERANCE:
        hint = (
            " (they look like percentages: divide them by 100)" if abs(total - 100) < 1e-3 else ""
        )
        raise RakingError(
            f"column {column!r}: target shares sum to {total:.10g}, not 1{hint}; levels: "
            + ", ".join(f"{level!r}={share!r}" for level, share in levels.items()),
            column=column,
        )
    return names, shares / total


def _level_codes(df: pd.DataFrame, column: Any) -> tuple[Any, Any]:
    """Each row's code among the column's distinct values; a missing value is an error."""
    series = df[column]
    if isinstance(series, pd.DataFrame):
        raise RakingError(f"column {column!r} appears more than once in the frame", column=column)
    if isinstance(series.dtype, pd.CategoricalDtype):
        raw = series.cat.codes.to_numpy()  # no hashing: the categories are the levels
        uniques: Any = series.cat.categories
    else:
        raw, uniques = pd.factorize(series, use_na_sentinel=True)
    if len(raw) and raw.min() < 0:
        missing = np.flatnonzero(raw < 0)
        raise RakingError(
            f"column {column!r} has {missing.size:,} missing value(s), first at row "
            f"{df.index[missing[0]]!r}: give those respondents a level (or drop them) "
            "before raking",
            column=column,
            row=df.index[missing[0]],
        )
    return raw, uniques


def _to_targets(column: Any, names: list[Any], uniques: Any, present: Any) -> Any:
    """For each distinct value in the data, the position of its target level (by value)."""
    position_of = {level: position for position, level in enumerate(names)}
    by_value = _levels_by_value(column, names)
    mapping = np.zeros(len(uniques), dtype=np.intp)
    for code in np.flatnonzero(present):
        value = uniques[code]
        found = position_of.get(value)
        if found is None:  # "3" for 3, 3 for 3.0, " North" for "North": the same level
            found = by_value.get(_level_value(value))
        if found is None:
            raise RakingError(
                f"column {column!r}, level {value!r} is in the data but not in the targets "
                f"(target levels: {names!r})",
                column=column,
                level=value,
            )
        mapping[code] = found
    return mapping


def _check_reachable(
    column: Any,
    levels: Mapping[Any, float],
    names: list[Any],
    shares: _Floats,
    counts: Any,
) -> None:
    """Every level with a share has respondents, and none without one does."""
    for position, level in enumerate(names):
        if counts[position] == 0 and shares[position] > 0:
            raise RakingError(
                f"column {column!r}, level {level!r}: target share {levels[level]!r} but no "
                "respondent has this level, so the margin cannot be reached",
                column=column,
                level=level,
            )
        if counts[position] > 0 and shares[position] == 0:
            raise RakingError(
                f"column {column!r}, level {level!r}: target share 0 but {counts[position]:,} "
                "respondent(s) have this level (they would get weight 0: drop them instead)",
                column=column,
                level=level,
            )


def _level_value(level: Any) -> Any:
    """A level compared by value (numbers, and text reading as one, as floats; text stripped).

    So the target ``"3"`` matches the answer ``3`` and ``3.0``.
    """
    if isinstance(level, bool | np.bool_):
        return level
    if isinstance(level, int | float | np.integer | np.floating):
        return float(level)
    text = str(level).strip()
    try:
        return float(text)
    except ValueError:
        return text


def _levels_by_value(column: Any, names: list[Any]) -> dict[Any, int]:
    """Target levels by value; two targets of one value are an error naming them."""
    out: dict[Any, int] = {}
    for position, level in enumerate(names):
        key = _level_value(level)
        if key in out and names[out[key]] != level:
            raise RakingError(
                f"column {column!r}: targets {names[out[key]]!r} and {level!r} are the same "
                "level; give it once",
                column=column,
                level=level,
            )
        out.setdefault(key, position)
    return out


def summary(weights: pd.Series | np.ndarray | Sequence[float]) -> pd.Series:
    """What a set of weights costs in precision.

    Returns:
        A float Series with ``n`` (number of weights), ``n_eff`` (Kish's effective sample
        size ``(sum w)^2 / sum w^2``), ``design_effect`` (``1 + cv^2``, which equals
        ``n / n_eff``), ``cv`` (coefficient of variation, standard deviation with
        ``ddof=0`` over the mean), ``min``, ``max`` and ``mean``; named as the weights
        (``"weight"`` when they have no name).

    Raises:
        WeightsError: no weights, or a weight that is missing, infinite or negative (naming
            its row), or weights summing to zero.
    """
    series = weights if isinstance(weights, pd.Series) else pd.Series(weights)
    try:
        values = series.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise WeightsError(f"weights must be numbers: {exc}") from None
    if values.ndim != 1 or values.size == 0:
        raise WeightsError("summary needs a non-empty one-dimensional set of weights")
    for problem, bad in (
        ("missing", np.isnan(values)),
        ("infinite", np.isinf(values)),
        ("negative", values < 0),
    ):
        if bad.any():
            first = int(np.argmax(bad))
            raise WeightsError(
                f"{int(bad.sum()):,} weight(s) are {problem}, first at row "
                f"{series.index[first]!r} ({values[first]!r})"
            )
    total = float(values.sum())
    if total <= 0:
        raise WeightsError("weights sum to zero")
    n = values.size
    n_eff = total**2 / float(np.square(values).sum())
    mean = total / n
    cv = float(values.std(ddof=0)) / mean
    return pd.Series(
        {
            "n": float(n),
            "n_eff": n_eff,
            "design_effect": 1 + cv**2,
            "cv": cv,
            "min": float(values.min()),
            "max": float(values.max()),
            "mean": mean,
        },
        name=series.name if series.name is not None else "weight",
        dtype=float,
    )
