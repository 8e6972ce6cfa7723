"""The hand-written baselines of bench_analysis.py (plain pandas), and the checks that
surveykit's estimates equal them before anything is timed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import surveykit as sk

Z95 = 1.959963984540054


# ---------------------------------------------------------------- baselines (plain pandas)


def _keys(df: pd.DataFrame, by: list[str], mask: Any) -> list[Any]:
    # Arrays, not Series: groupby would align a filtered Series' labels with the parts' index.
    return [df[b].array[mask] for b in by]


def wilson(count: Any, nobs: Any) -> tuple[Any, Any]:
    p = count / nobs
    denom = 1 + Z95**2 / nobs
    centre = (p + Z95**2 / (2 * nobs)) / denom
    half = Z95 * np.sqrt(p * (1 - p) / nobs + Z95**2 / (4 * nobs**2)) / denom
    return centre - half, centre + half


def base_nps(df: pd.DataFrame, q: str, by: list[str], weights: str | None) -> pd.DataFrame:
    y = df[q]
    valid = y.notna().to_numpy()
    v = y.to_numpy(dtype=float, na_value=np.nan)[valid]
    s = np.where(v >= 9, 100.0, np.where(v <= 6, -100.0, 0.0))
    w = np.ones(len(s)) if weights is None else df[weights].to_numpy()[valid]
    parts = pd.DataFrame(
        {
            "n": 1,
            "p": (s > 0) * 1,
            "d": (s < 0) * 1,
            "w": w,
            "ws": w * s,
            "w2": w * w,
            "w2s": w * w * s,
            "w2s2": w * w * s * s,
        }
    )
    g = parts.groupby(_keys(df, by, valid), observed=True).sum().rename_axis(by)
    mean = g["ws"] / g["w"]
    # sum((w (s - m))^2) expanded into per-group sums, so one groupby pass suffices.
    squares = g["w2s2"] - 2 * mean * g["w2s"] + mean**2 * g["w2"]
    se = np.sqrt(g["n"] / (g["n"] - 1) * squares.clip(lower=0)) / g["w"]
    out = pd.DataFrame(
        {
            "n": g["n"],
            "promoters": g["p"],
            "detractors": g["d"],
            "n_eff": g["w"] ** 2 / g["w2"],
            "estimate": mean,
            "se": se,
            "ci_low": (mean - Z95 * se).clip(-100, 100),
            "ci_high": (mean + Z95 * se).clip(-100, 100),
        }
    )
    return out.reset_index()


def base_proportions(df: pd.DataFrame, q: str, by: list[str], weights: str | None) -> pd.DataFrame:
    y = df[q]
    valid = y.notna().to_numpy()
    w = np.ones(int(valid.sum())) if weights is None else df[weights].to_numpy()[valid]
    keys = _keys(df, by, valid)
    parts = pd.DataFrame({"w": w, "w2": w * w})
    per_group = (
        parts.groupby(keys, observed=True)
        .agg(n=("w", "size"), tw=("w", "sum"), w2=("w2", "sum"))
        .rename_axis(by)
    )
    cells = parts["w"].groupby([*keys, y.array[valid]], observed=True).sum()
    cells = cells.rename("cw").reset_index()
    cells.columns = [*by, q, "cw"]
    out = cells.merge(per_group.reset_index(), on=by)
    out = out.rename(columns={q: "option"})
    n_eff = out["tw"] ** 2 / out["w2"]
    p = out["cw"] / out["tw"]
    low, high = wilson(p * n_eff, n_eff)
    return out.assign(
        n_eff=n_eff, estimate=p, se=np.sqrt(p * (1 - p) / n_eff), ci_low=low, ci_high=high
    )


def base_crosstab(df: pd.DataFrame, q: str, by: str, weights: str | None) -> dict[str, Any]:
    from scipy import stats

    valid = (df[q].notna() & df[by].notna()).to_numpy()
    w = np.ones(int(valid.sum())) if weights is None else df[weights].to_numpy()[valid]
    # Categorical keys keep the categories' order: the column letters follow it, as in SPSS.
    counts = (
        pd.Series(w)
        .groupby([df[q].array[valid], df[by].array[valid]], observed=True)
        .sum()
        .unstack(fill_value=0.0)
    )
    percent = 100 * counts / counts.sum()
    n_eff = w.sum() ** 2 / (w * w).sum()
    scaled = counts * (n_eff / w.sum())
    chi2, p_value, _dof, _ = stats.chi2_contingency(scaled.to_numpy(), correction=False)
    v = np.sqrt(chi2 / (scaled.to_numpy().sum() * (min(scaled.shape) - 1)))
    cols = list(scaled.columns)
    letters = {c: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i] for i, c in enumerate(cols)}
    pairs = [(i, j) for i in range(len(cols)) for j in range(i + 1, len(cols))]
    col_n = scaled.sum().to_numpy()
    marks = pd.DataFrame("", index=scaled.index, columns=cols)
    for row in scaled.index:
        x = scaled.loc[row].to_numpy()
        prop = x / col_n
        for i, j in pairs:
            pooled = (x[i] + x[j]) / (col_n[i] + col_n[j])
            if pooled in (0, 1):
                continue
            z = (prop[i] - prop[j]) / np.sqrt(pooled * (1 - pooled) * (1 / col_n[i] + 1 / col_n[j]))
            if min(1.0, 2 * stats.norm.sf(abs(z)) * len(pairs)) < 0.05:
                hi, lo = (i, j) if prop[i] > prop[j] else (j, i)
                marks.loc[row, cols[hi]] += letters[cols[lo]]
    marks = marks.map(lambda s: "".join(sorted(s)))
    return {"percent": percent, "chi2": chi2, "p_value": p_value, "cramers_v": v, "letters": marks}


# ---------------------------------------------------------------- checks


def _same_rows(ours: pd.DataFrame, theirs: pd.DataFrame, keys: list[str], cols: list[str]) -> str:
    a = ours.assign(**{k: ours[k].astype(str) for k in keys}).set_index(keys)
    b = theirs.assign(**{k: theirs[k].astype(str) for k in keys}).set_index(keys)
    common = a.index.intersection(b.index)
    worst = 0.0
    for c in cols:
        x = a.loc[common, c].to_numpy(dtype=float)
        y = b.loc[common, c].to_numpy(dtype=float)
        if not np.allclose(x, y, rtol=1e-9, atol=1e-9, equal_nan=True):
            return f"DIFFERENT {c}"
        finite = np.isfinite(x) & np.isfinite(y)
        worst = max(worst, float(np.max(np.abs(x[finite] - y[finite]), initial=0.0)))
    extra = "" if len(a) == len(b) else f", rows {len(a)} vs {len(b)} (sk lists empty cells)"
    return f"same ({len(common)} rows, max diff {worst:.1e}{extra})"


def check_nps(df: pd.DataFrame, q: str, by: list[str], weights: str | None) -> str:
    ours = sk.analysis.nps(df, q, by=by, weights=weights)
    theirs = base_nps(df, q, by, weights)
    ours = ours[ours["n"] > 0]
    columns = ["estimate", "se", "ci_low", "ci_high", "n_eff"]
    return _same_rows(ours, theirs, by, [*columns, "n"] if weights is None else columns)


def check_proportions(df: pd.DataFrame, q: str, by: list[str], weights: str | None) -> str:
    ours = sk.analysis.proportions(df, q, by=by, weights=weights)
    theirs = base_proportions(df, q, by, weights)
    return _same_rows(
        ours, theirs, [*by, "option"], ["estimate", "se", "ci_low", "ci_high", "n_eff"]
    )


def check_crosstab(df: pd.DataFrame, q: str, by: str, weights: str | None) -> str:
    ours = sk.analysis.crosstab(df, q, by, weights=weights)
    theirs = base_crosstab(df, q, by, weights)
    test = ours.attrs["test"]
    table = ours.copy()
    table.index, table.columns = table.index.astype(str), table.columns.astype(str)
    percent = theirs["percent"]
    percent.index, percent.columns = percent.index.astype(str), percent.columns.astype(str)
    problems = []
    if not np.allclose(table.loc[percent.index, percent.columns], percent, atol=1e-9):
        problems.append("percent")
    for name in ("chi2", "p_value", "cramers_v"):
        if not np.isclose(test[name], theirs[name], rtol=1e-9):
            problems.append(name)
    letters = ours.attrs["letters"]
    letters = pd.DataFrame(letters) if isinstance(letters, dict) else letters
    letters.index, letters.columns = letters.index.astype(str), letters.columns.astype(str)
    theirs_letters = theirs["letters"]
    theirs_letters.index = theirs_letters.index.astype(str)
    theirs_letters.columns = theirs_letters.columns.astype(str)
    if not letters.loc[percent.index, percent.columns].equals(theirs_letters):
        problems.append("letters")
    return "same" if not problems else "DIFFERENT " + ", ".join(problems)
