"""Benchmark the report layer's estimates and raking against hand-written baselines, in one run.

    python benchmarks/bench_analysis.py --rows 1000000            # every section
    python benchmarks/bench_analysis.py --sections rake,edge      # some of them

Data (deterministic, numpy seed 7): one row per respondent, 3 grouping columns (``region``
5 levels, ``age_band`` 6, ``gender`` 3), ``education`` (4, a fourth raking margin), a weight
column ``w`` (lognormal, mean 1) and 20 questions: Q01-Q06 NPS 0-10 and Q07-Q13 ratings 1-5
(``Int64``, ~5% unanswered), Q14-Q20 single choice (categorical, 5 options, ~5% unanswered),
the dtypes ``sk.read_results`` gives. Groups and answers are correlated, so raking needs
several iterations.

Sections:

- ``estimates``: ``sk.analysis.nps``, ``proportions`` and ``crosstab`` (by the 3 grouping
  columns, unweighted: the textbook figures; weighted, design-based figures are measured by
  ``bench_design.py``) against a hand-written pandas groupby computing the same
  numbers (estimate, se, interval; crosstab: percentages, chi-square, Cramér's V, letters).
  Every pair is checked to give the same numbers before it is timed. These functions come
  with the estimates branch of issue 12: where they are missing the section says so.
- ``rake``: ``sk.weights.rake`` on 4 margins against a bare numpy IPF loop (``np.bincount``
  + gather on precomputed integer codes) doing the same number of iterations; the weights
  are checked equal.
- ``edge``: data that breaks easy paths: many empty groups (categories nobody has), a level
  with a tiny share, heavy skew, extreme weights (lognormal sigma 3).

Times are CPU seconds of this process (``time.process_time``: the machines here are shared,
and wall time would measure the neighbours too), the median of ``--rounds`` alternating
rounds; the ratio is surveykit / baseline (lower is better). Memory is the peak of
Python-tracked allocations during one separate call (``tracemalloc``: numpy and pandas
buffers are tracked; this frame holds no Arrow memory), relative to
``df.memory_usage(deep=True)`` of the whole frame.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from _analysis_baselines import (
    base_crosstab,
    base_nps,
    base_proportions,
    check_crosstab,
    check_nps,
    check_proportions,
)

import surveykit as sk

GROUPS = {
    "region": ["North", "South", "East", "West", "Central"],
    "age_band": ["18-24", "25-34", "35-44", "45-54", "55-64", "65+"],
    "gender": ["Female", "Male", "Other"],
}
EDUCATION = ["Primary", "Secondary", "Tertiary", "Postgraduate"]
OPTIONS = ["Price", "Service", "App", "Delivery", "Other"]
BY = list(GROUPS)


def make_frame(rows: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(5, rows, p=[0.35, 0.25, 0.2, 0.15, 0.05])
    # Age depends on region, gender on age, education on age: raking has to iterate.
    age = np.clip(rng.choice(6, rows) + (region == 0) * rng.choice([0, 1, 2], rows), 0, 5)
    gender = np.where(rng.random(rows) < 0.02, 2, (rng.random(rows) < 0.4 + 0.03 * age) * 1)
    education = np.clip(rng.choice(4, rows, p=[0.2, 0.4, 0.3, 0.1]) + (age < 2), 0, 3)
    frame: dict[str, Any] = {
        name: pd.Categorical.from_codes(codes, levels)
        for (name, levels), codes in zip(GROUPS.items(), (region, age, gender), strict=True)
    }
    frame["education"] = pd.Categorical.from_codes(education, EDUCATION)
    frame["w"] = rng.lognormal(0, 0.5, rows) / np.exp(0.125)
    for i in range(1, 21):
        missing = rng.random(rows) < 0.05
        if i <= 6:
            values = np.clip(rng.binomial(10, 0.62 + 0.03 * (region % 3), rows), 0, 10)
        elif i <= 13:
            values = np.clip(rng.binomial(4, 0.55 + 0.04 * (age % 3), rows) + 1, 1, 5)
        else:
            codes = np.clip(rng.choice(5, rows) - (gender == 1), 0, 4)
            frame[f"Q{i:02d}"] = pd.Categorical.from_codes(np.where(missing, -1, codes), OPTIONS)
            continue
        frame[f"Q{i:02d}"] = pd.array(np.where(missing, None, values), dtype="Int64")
    return pd.DataFrame(frame)


# ---------------------------------------------------------------- raking


def bare_ipf(codes: list[np.ndarray], shares: list[np.ndarray], iterations: int) -> np.ndarray:
    w = np.ones(len(codes[0]))
    with np.errstate(divide="ignore", invalid="ignore"):  # empty levels: never gathered
        for _ in range(iterations):
            for c, s in zip(codes, shares, strict=True):
                totals = np.bincount(c, weights=w, minlength=len(s))
                w *= (s * totals.sum() / totals).take(c)
    return w


def rake_inputs(
    df: pd.DataFrame, targets: dict[str, dict[str, float]]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    codes = [df[c].cat.codes.to_numpy().astype(np.intp) for c in targets]
    shares = [np.array([targets[c][level] for level in df[c].cat.categories]) for c in targets]
    return codes, shares


def targets_for(df: pd.DataFrame, columns: list[str], seed: int = 3) -> dict[str, dict[str, float]]:
    """Population shares that differ from the sample's (so raking has work to do)."""
    rng = np.random.default_rng(seed)
    out = {}
    for c in columns:
        sample = df[c].value_counts(normalize=True, sort=False)
        moved = sample.to_numpy() * rng.uniform(0.6, 1.4, len(sample))
        out[c] = dict(zip(sample.index.astype(str), moved / moved.sum(), strict=True))
    return out


# ---------------------------------------------------------------- measuring


@dataclass
class Row:
    section: str
    what: str
    ours_s: list[float] = field(default_factory=list)
    base_s: list[float] = field(default_factory=list)
    ratio_goal: float | None = 1.5
    peak: float | None = None
    check: str = ""


def timed(fn: Callable[[], Any]) -> float:
    # CPU time of this process: the machines here are shared, and wall time then measures
    # the neighbours too (every call here runs on one thread).
    gc.collect()
    t = time.process_time()
    fn()
    return time.process_time() - t


def peak_ratio(fn: Callable[[], Any], frame_bytes: int) -> float:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / frame_bytes


def run(
    rows_out: list[Row],
    section: str,
    what: str,
    ours: Callable[[], Any],
    base: Callable[[], Any],
    *,
    rounds: int,
    frame_bytes: int,
    check: Callable[[], str] | None = None,
    goal: float | None = 1.5,
) -> None:
    row = Row(section, what, ratio_goal=goal)
    row.check = check() if check else ""
    for _ in range(rounds):
        row.ours_s.append(timed(ours))
        row.base_s.append(timed(base))
    row.peak = peak_ratio(ours, frame_bytes)
    rows_out.append(row)
    ours_s, base_s = statistics.median(row.ours_s), statistics.median(row.base_s)
    print(f"  {what}: {ours_s:.3f} s vs {base_s:.3f} s  {row.check}", flush=True)


def missing(name: str) -> str | None:
    fn = getattr(sk.analysis, name, None)
    if fn is None:
        return f"sk.analysis.{name} is not on this branch (issue 12 estimates): run after merging"
    if "weights" not in inspect.signature(fn).parameters:
        return f"sk.analysis.{name} here is the old point-estimate version: run after merging"
    return None


def estimate_rows(
    df: pd.DataFrame,
    label: str,
    rounds: int,
    frame_bytes: int,
    out: list[Row],
    *,
    by: list[str] = BY,
    weights: tuple[str | None, ...] = (None,),
) -> None:
    for name in ("nps", "proportions", "crosstab"):
        reason = missing(name)
        if reason:
            print(f"  skipped {name}: {reason}")
            continue
        for wt in weights:
            tag = f"{label}{', weighted' if wt else ''}"
            if name == "nps":
                run(
                    out,
                    "estimates",
                    f"nps Q01 by {'+'.join(by)} ({tag})",
                    lambda wt=wt: sk.analysis.nps(df, "Q01", by=by, weights=wt),
                    lambda wt=wt: base_nps(df, "Q01", by, wt),
                    rounds=rounds,
                    frame_bytes=frame_bytes,
                    check=lambda wt=wt: check_nps(df, "Q01", by, wt),
                )
            elif name == "proportions":
                run(
                    out,
                    "estimates",
                    f"proportions Q14 by {'+'.join(by)} ({tag})",
                    lambda wt=wt: sk.analysis.proportions(df, "Q14", by=by, weights=wt),
                    lambda wt=wt: base_proportions(df, "Q14", by, wt),
                    rounds=rounds,
                    frame_bytes=frame_bytes,
                    check=lambda wt=wt: check_proportions(df, "Q14", by, wt),
                )
            else:
                run(
                    out,
                    "estimates",
                    f"crosstab Q14 x {by[0]} ({tag.replace('90 groups', '5 groups')})",
                    lambda wt=wt: sk.analysis.crosstab(df, "Q14", by[0], weights=wt),
                    lambda wt=wt: base_crosstab(df, "Q14", by[0], wt),
                    rounds=rounds,
                    frame_bytes=frame_bytes,
                    check=lambda wt=wt: check_crosstab(df, "Q14", by[0], wt),
                )


def rake_row(
    df: pd.DataFrame,
    what: str,
    targets: dict[str, dict[str, float]],
    rounds: int,
    frame_bytes: int,
    out: list[Row],
    *,
    goal: float | None = 1.5,
    codes_from: pd.DataFrame | None = None,
) -> None:
    weights = sk.weights.rake(df, targets)
    iterations = int(weights.attrs["iterations"])
    codes, shares = rake_inputs(df if codes_from is None else codes_from, targets)
    bare = bare_ipf(codes, shares, iterations)
    same = np.allclose(weights.to_numpy(), bare * (len(bare) / bare.sum()), rtol=1e-9)
    run(
        out,
        "rake",
        f"{what}, {iterations} iterations",
        lambda: sk.weights.rake(df, targets),
        lambda: bare_ipf(codes, shares, iterations),
        rounds=rounds,
        frame_bytes=frame_bytes,
        goal=goal,
        check=lambda: (
            f"{'same weights' if same else 'DIFFERENT weights'}; max weight {weights.max():.1f}"
        ),
    )


# ---------------------------------------------------------------- edge data


def edge_frames(df: pd.DataFrame, seed: int = 11) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n = len(df)
    frames = {}
    # Many empty groups: 50 regions and 20 age bands declared, 5 and 6 used.
    empty = df.copy()
    empty["region"] = empty["region"].cat.add_categories([f"R{i}" for i in range(45)])
    empty["age_band"] = empty["age_band"].cat.add_categories([f"A{i}" for i in range(14)])
    frames["many empty groups"] = empty
    # A level with a tiny share: 12 respondents in "Islands".
    tiny = df.copy()
    tiny["region"] = tiny["region"].cat.add_categories(["Islands"])
    tiny.loc[rng.choice(n, 12, replace=False), "region"] = "Islands"
    frames["tiny level"] = tiny
    # Heavy skew: 97% in one age band and one gender.
    skew = df.copy()
    pick = rng.random(n) < 0.97
    skew.loc[pick, "age_band"] = "35-44"
    skew.loc[pick, "gender"] = "Female"
    frames["heavy skew"] = skew
    # Extreme weights: lognormal sigma 3 (max/min ~ 1e10), no NaN.
    extreme = df.copy()
    extreme["w"] = rng.lognormal(0, 3, n)
    frames["extreme weights"] = extreme
    return frames


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument(
        "--rounds", type=int, default=3, help="alternating rounds (the machine is noisy)"
    )
    ap.add_argument("--sections", default="estimates,rake,edge")
    args = ap.parse_args()
    sections = set(args.sections.split(","))

    t = time.perf_counter()
    df = make_frame(args.rows)
    frame_bytes = int(df.memory_usage(deep=True).sum())
    print(
        f"python {platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"frame: {len(df):,} rows x {df.shape[1]} columns, {frame_bytes / 2**20:,.1f} MiB "
        f"(memory_usage(deep=True)), generated in {time.perf_counter() - t:.1f} s"
    )
    rows: list[Row] = []
    if "estimates" in sections:
        print("estimates (checked equal first, then timed):")
        estimate_rows(df, "90 groups", args.rounds, frame_bytes, rows)
    if "rake" in sections:
        print("rake:")
        targets = targets_for(df, [*BY, "education"])
        rake_row(df, "rake 4 margins (categorical)", targets, args.rounds, frame_bytes, rows)
        text = df[[*BY, "education"]].astype(str)
        rake_row(
            text,
            "rake 4 margins (text columns; baseline codes precomputed)",
            targets,
            args.rounds,
            frame_bytes,
            rows,
            goal=None,
            codes_from=df,
        )
        trimmed = sk.weights.rake(df, targets, trim=(0.5, 2.0))
        free = sk.weights.rake(df, targets)
        print(
            f"  (trim=(0.5, 2.0): {trimmed.attrs['iterations']} iterations, "
            f"weights {trimmed.min():.3f}..{trimmed.max():.3f}; "
            f"untrimmed {free.min():.3f}..{free.max():.3f})"
        )
        codes, shares = rake_inputs(df, targets)
        run(
            rows,
            "rake",
            "rake 4 margins, trim=(0.5, 2.0) (vs untrimmed bare loop, same iterations)",
            lambda: sk.weights.rake(df, targets, trim=(0.5, 2.0)),
            lambda: bare_ipf(codes, shares, int(trimmed.attrs["iterations"])),
            rounds=args.rounds,
            frame_bytes=frame_bytes,
            goal=None,
        )
    if "edge" in sections:
        print("edge data:")
        for label, edge in edge_frames(df).items():
            edge_bytes = int(edge.memory_usage(deep=True).sum())
            targets = targets_for(edge, [*BY, "education"])
            if label == "tiny level":
                targets["region"] = {k: v * 0.95 for k, v in targets["region"].items()}
                targets["region"]["Islands"] = 0.0
                total = sum(targets["region"].values())
                targets["region"] = {k: v / total * 0.95 for k, v in targets["region"].items()}
                targets["region"]["Islands"] = 0.05
            try:
                rake_row(edge, f"rake ({label})", targets, args.rounds, edge_bytes, rows)
            except sk.weights.RakingError as exc:
                print(f"  rake ({label}): {type(exc).__name__}: {exc}")
            # Weighted estimates are design-based now: benchmarks/bench_design.py times them
            # (extreme weights included, with --edge) against R's formula written in numpy.
            estimate_rows(edge, label, args.rounds, edge_bytes, rows)

    print()
    print("| section | call | surveykit | baseline | ratio | goal | peak / frame | goal | check |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ours, base = statistics.median(r.ours_s), statistics.median(r.base_s)
        ratio = ours / base
        goal = f"<= {r.ratio_goal}x" if r.ratio_goal else "-"
        flag = "" if r.ratio_goal is None or ratio <= r.ratio_goal else " **over**"
        mem_flag = "" if r.peak is None or r.peak <= 2 else " **over**"
        print(
            f"| {r.section} | {r.what} | {ours:.3f} s | {base:.3f} s | {ratio:.2f}x{flag} | {goal} "
            f"| {r.peak:.2f}x{mem_flag} | <= 2x | {r.check} |"
        )


if __name__ == "__main__":
    main()
