"""Benchmark design-based estimates against a hand-written numpy computation, in one run.

    python benchmarks/bench_design.py                        # 1,000,000 rows, every section
    python benchmarks/bench_design.py --rows 200000 --sections mean,domains
    python benchmarks/bench_design.py --peers                # R's survey too, where installed

Data (deterministic, numpy seed 21): ``--rows`` respondents in 20 strata of 100 PSUs each
(2,000 PSUs, PSU sizes uneven), log-normal weights, a numeric answer ``y``, a 5-option
question ``q`` (5% unanswered), 90 domains ``dom``, and three raking margins ``a`` (4
levels), ``b`` (5) and ``c`` (6) correlated with ``y``. A second frame, ``--edge``, breaks
the easy paths: weights log-normal with sigma 3, a domain of one respondent, a stratum
with one PSU (``lonely_psu="adjust"``), 40% unanswered.

Sections (each checked to give the baseline's numbers to 1e-9 before it is timed):

- ``mean``: ``means(design, "y")``; baseline: the linearised se written with
  ``np.bincount`` over PSUs and a centring per stratum.
- ``proportions``: ``proportions(design, "q")`` (5 options, missing answers as a domain).
- ``domains``: ``means(design, "y", by="dom")`` (90 domains of the whole sample).
- ``rake``: ``design.rake`` on 3 margins then ``means`` with the calibrated se; baseline:
  the same IPF iterations on codes, then R's 10 sweeps of residuals on the rows.
- ``jk1``, ``jkn``, ``bootstrap``: a mean's replicate se, the replicates built inside the
  timing: JK1 (the same rows without strata, 2,000 PSUs), JKn (2,000 replicates) and a
  200-replicate bootstrap; baseline: PSU totals, the delete-one totals from them (the
  jackknives, checked equal to surveykit's se) or times PSU-level multipliers drawn by
  hand (the bootstrap; not checked: the draws differ). The baselines compute the
  replicate se only, not what ``means`` also reports (the full-sample mean, its design
  effect, degrees of freedom and interval).

Times are CPU seconds of this process (``time.process_time``; the machine is shared), the
median of ``--rounds`` alternating rounds; ratio = surveykit / numpy (lower is better).
Each timed call starts after a pause of ``SETTLE`` seconds: BLAS worker threads keep
spinning for up to about 0.1 s after a threaded call, and ``process_time`` would charge
that to whichever call comes next.
Memory: the peak of tracemalloc-tracked allocations during one call, relative to the frame
(``df.memory_usage(deep=True)``). ``--peers`` runs R's ``survey`` on the same data (through
``Rscript``, timed inside R with ``system.time``) and Python's ``svy`` (a python with svy
installed, named by ``$SVY_PYTHON``, e.g. a separate venv: ``pip install svy``; warm
calls), and prints their seconds and ratios to the numpy baseline of this run.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import surveykit as sk

STRATA = 20
PSU_PER_STRATUM = 100
DOMAINS = 90
MARGINS = {"a": 4, "b": 5, "c": 6}


def make_frame(rows: int, *, edge: bool = False, seed: int = 21) -> pd.DataFrame:
    """The benchmark's respondents (see the module docstring)."""
    rng = np.random.default_rng(seed)
    stratum = rng.integers(0, STRATA, rows)
    sizes = rng.gamma(2.0, 1.0, PSU_PER_STRATUM)
    psu = rng.choice(PSU_PER_STRATUM, rows, p=sizes / sizes.sum())
    if edge:
        psu[stratum == 0] = 0  # one PSU in stratum 0: a lonely PSU
    w = rng.lognormal(0.0, 3.0 if edge else 0.5, rows) * (1 + stratum / 10)
    latent = rng.normal(0, 1, rows)
    frame = pd.DataFrame(
        {
            "stratum": stratum,
            "psu": stratum * PSU_PER_STRATUM + psu,
            "w": w,
            "y": 50 + 10 * latent + stratum,
            "q": pd.Categorical.from_codes(
                np.clip((latent * 1.2 + 2.5).astype(int), 0, 4), ["A", "B", "C", "D", "E"]
            ),
            "dom": rng.integers(0, DOMAINS - (1 if edge else 0), rows),
        }
    )
    for name, levels in MARGINS.items():
        frame[name] = np.clip(
            (latent + rng.normal(0, 1, rows)) * levels / 4 + levels / 2, 0, levels - 1
        ).astype(np.int64)
    missing = rng.random(rows) < (0.4 if edge else 0.05)
    frame["q"] = frame["q"].where(~missing)
    frame.loc[rng.random(rows) < (0.4 if edge else 0.05), "y"] = np.nan
    if edge:
        frame.loc[0, "dom"] = DOMAINS - 1  # a domain of one respondent
    return frame


# -- the numpy baseline: R's formulas written out --------------------------------------


class Floor:
    """Design codes computed once, as a hand-written analysis would."""

    def __init__(self, df: pd.DataFrame, lonely_adjust: bool) -> None:
        self.w = df["w"].to_numpy()
        self.stratum = df["stratum"].to_numpy()
        self.psu = np.unique(df["psu"].to_numpy(), return_inverse=True)[1].ravel()
        self.n_psu_total = int(self.psu.max()) + 1
        psu_stratum = np.zeros(self.n_psu_total, dtype=np.int64)
        psu_stratum[self.psu] = self.stratum
        self.psu_stratum = psu_stratum
        self.n_h = np.bincount(psu_stratum, minlength=STRATA).astype(float)
        self.lonely_adjust = lonely_adjust

    def variance(self, z: np.ndarray) -> np.ndarray:
        """Variances of the totals of z's columns: PSU totals centred per stratum."""
        p, k = self.n_psu_total, z.shape[1]
        totals = np.zeros((p, k))
        for j in range(k):
            totals[:, j] = np.bincount(self.psu, z[:, j], minlength=p)
        return self.centred(totals)

    def centred(self, totals: np.ndarray) -> np.ndarray:
        sums = np.zeros((STRATA, totals.shape[1]))
        np.add.at(sums, self.psu_stratum, totals)
        means = sums / np.maximum(self.n_h, 1)[:, None]
        dev = totals - means[self.psu_stratum]
        lonely = self.n_h == 1
        if self.lonely_adjust:
            dev[lonely[self.psu_stratum]] = totals[lonely[self.psu_stratum]]
        scale = np.where(self.n_h > 1, self.n_h / np.maximum(self.n_h - 1, 1), 1.0)
        return np.asarray((dev**2 * scale[self.psu_stratum][:, None]).sum(axis=0))


def floor_mean(floor: Floor, y: np.ndarray) -> tuple[float, float]:
    ok = ~np.isnan(y)
    wd = np.where(ok, floor.w, 0.0)
    y0 = np.where(ok, y, 0.0)
    total = wd.sum()
    m = (wd * y0).sum() / total
    z = wd * (y0 - m) / total
    return m, float(np.sqrt(floor.variance(z[:, None])[0]))


def floor_proportions(floor: Floor, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    ok = codes >= 0
    wd = np.where(ok, floor.w, 0.0)
    total = wd.sum()
    p = np.bincount(codes[ok], wd[ok], minlength=k) / total
    cells = np.bincount(
        floor.psu[ok] * k + codes[ok], wd[ok] / total, minlength=floor.n_psu_total * k
    )
    psu_w = np.bincount(floor.psu, wd / total, minlength=floor.n_psu_total)
    totals = cells.reshape(floor.n_psu_total, k) - psu_w[:, None] * p[None, :]
    return p, np.sqrt(floor.centred(totals))


def floor_domains(floor: Floor, y: np.ndarray, dom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = ~np.isnan(y)
    wd = np.where(ok, floor.w, 0.0)
    y0 = np.where(ok, y, 0.0)
    sw = np.bincount(dom, wd, minlength=DOMAINS)
    with np.errstate(divide="ignore", invalid="ignore"):  # the edge frame's empty domain
        m = np.bincount(dom, wd * y0, minlength=DOMAINS) / sw
    z = wd * (y0 - m[dom]) / sw[dom]
    totals = np.bincount(floor.psu * DOMAINS + dom, z, minlength=floor.n_psu_total * DOMAINS)
    return m, np.sqrt(floor.centred(totals.reshape(floor.n_psu_total, DOMAINS)))


def floor_rake(
    floor: Floor, df: pd.DataFrame, y: np.ndarray, targets: dict[str, np.ndarray], iterations: int
) -> tuple[float, float]:
    codes = {c: df[c].to_numpy() for c in targets}
    w = floor.w.copy()
    for _ in range(iterations):
        for c, total in targets.items():
            w *= (total / np.bincount(codes[c], w, minlength=len(total)))[codes[c]]
    ok = ~np.isnan(y)
    wd = np.where(ok, w, 0.0)
    y0 = np.where(ok, y, 0.0)
    m = (wd * y0).sum() / wd.sum()
    x = wd * (y0 - m) / wd.sum()
    for _ in range(10):  # R's svyrecvar on a rake() design
        for c in targets:
            size = len(targets[c])
            ave = np.bincount(codes[c], x / w, minlength=size) / np.bincount(
                codes[c], minlength=size
            )
            x = x - w * ave[codes[c]]
    return m, float(np.sqrt(floor.variance(x[:, None])[0]))


# -- timing ---------------------------------------------------------------------------


SETTLE = 0.25
"""Seconds to wait before a timed call, for the previous call's BLAS threads to go idle."""


def cpu(call: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        gc.collect()
        time.sleep(SETTLE)
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return statistics.median(times)


def peak(call: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    call()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def check(name: str, ours: np.ndarray, theirs: np.ndarray) -> None:
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    if not np.allclose(ours, theirs, rtol=1e-9, atol=1e-12, equal_nan=True):
        raise SystemExit(f"{name}: surveykit {ours} != numpy {theirs}")


def sections(
    df: pd.DataFrame, edge: bool
) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """Per section: (surveykit call, numpy call), after checking they agree."""
    lonely = "adjust" if edge else "fail"
    design = sk.Design(df, weights="w", strata="stratum", psu="psu", lonely_psu=lonely)
    floor = Floor(df, lonely_adjust=edge)
    y = df["y"].to_numpy()
    q = np.asarray(df["q"].cat.codes, dtype=np.int64)
    dom = df["dom"].to_numpy()
    out: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {}

    mine = sk.analysis.means(design, "y")
    check("mean", mine[["estimate", "se"]].to_numpy()[0], floor_mean(floor, y))
    out["mean"] = (lambda: sk.analysis.means(design, "y"), lambda: floor_mean(floor, y))

    props = sk.analysis.proportions(design, "q")
    p, se = floor_proportions(floor, q, 5)
    check("proportions", props[["estimate", "se"]].to_numpy().T, np.vstack([p, se]))
    out["proportions"] = (
        lambda: sk.analysis.proportions(design, "q"),
        lambda: floor_proportions(floor, q, 5),
    )

    doms = sk.analysis.means(design, "y", by="dom")
    m, se = floor_domains(floor, y, dom)
    present = np.bincount(dom, minlength=DOMAINS) > 0
    check("domains", doms[["estimate", "se"]].to_numpy().T, np.vstack([m[present], se[present]]))
    out["domains"] = (
        lambda: sk.analysis.means(design, "y", by="dom"),
        lambda: floor_domains(floor, y, dom),
    )

    n_pop = float(df["w"].sum())
    targets = {c: np.full(k, n_pop / k) for c, k in MARGINS.items()}
    spec = {c: dict(enumerate(t)) for c, t in targets.items()}
    raked = design.rake(spec, max_iter=1000)
    iterations = int(raked.calibration[0].split("(")[1].split()[0])
    mine_r = sk.analysis.means(raked, "y")
    check(
        "rake",
        mine_r[["estimate", "se"]].to_numpy()[0],
        floor_rake(floor, df, y, targets, iterations),
    )
    out["rake"] = (
        lambda: sk.analysis.means(design.rake(spec, max_iter=1000), "y"),
        lambda: floor_rake(floor, df, y, targets, iterations),
    )
    if hasattr(design, "replicates"):
        out.update(_replicate_sections(design, floor, y, df, lonely))
    else:
        print("replicates: Design.replicates is not there yet; section skipped")
    return out


def _replicate_sections(
    design: Any, floor: Floor, y: np.ndarray, df: pd.DataFrame, lonely: str
) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """JK1, JKn and a 200-replicate bootstrap: building the replicates and a mean's se.

    The jackknife baselines take the delete-one totals from the PSU totals, as R's
    ``jk1weights``/``jknweights`` replicates give them, and are checked equal to
    surveykit's se. The bootstrap's draws the same kind of PSU multipliers itself (a
    with-replacement draw of n_h - 1 PSUs per stratum, rescaled) and multiplies the PSU
    totals by them: what a hand-written bootstrap needs at the least. No figure check
    there: the draws differ.
    """
    p = floor.n_psu_total
    unstratified = sk.Design(df, weights="w", psu="psu", lonely_psu=lonely)

    def boot_floor() -> float:
        rng = np.random.default_rng(5)
        counts = np.zeros((p, 200))
        for h in range(STRATA):
            members = np.flatnonzero(floor.psu_stratum == h)
            draws = rng.integers(0, len(members), (len(members) - 1, 200))
            for r in range(200):
                counts[members, r] = np.bincount(draws[:, r], minlength=len(members))
        n_h = floor.n_h[floor.psu_stratum][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # a lonely PSU: no replicate
            factors = np.nan_to_num(counts * n_h / (n_h - 1))
        ok = ~np.isnan(y)
        wd = np.where(ok, floor.w, 0.0)
        top = np.bincount(floor.psu, wd * np.where(ok, y, 0.0), minlength=p) @ factors
        bottom = np.bincount(floor.psu, wd, minlength=p) @ factors
        return float(np.std(top / bottom, ddof=1))

    def jkn_floor() -> float:
        ok = ~np.isnan(y)
        wd = np.where(ok, floor.w, 0.0)
        top = np.bincount(floor.psu, wd * np.where(ok, y, 0.0), minlength=p)
        bottom = np.bincount(floor.psu, wd, minlength=p)
        n_h = floor.n_h[floor.psu_stratum]
        top_h = np.bincount(floor.psu_stratum, top)[floor.psu_stratum]
        bottom_h = np.bincount(floor.psu_stratum, bottom)[floor.psu_stratum]
        # Delete PSU i: its stratum's other PSUs scaled by n_h / (n_h - 1).
        with np.errstate(divide="ignore", invalid="ignore"):  # a lonely PSU: no replicate
            t = top.sum() - top_h + (top_h - top) * n_h / (n_h - 1)
            b = bottom.sum() - bottom_h + (bottom_h - bottom) * n_h / (n_h - 1)
            theta = t / b
        theta = theta[np.isfinite(theta)]
        n_h = n_h[n_h > 1]
        return float(np.sqrt(np.sum((n_h - 1) / n_h * (theta - theta.mean()) ** 2)))

    def jk1_floor() -> float:
        ok = ~np.isnan(y)
        wd = np.where(ok, floor.w, 0.0)
        top = np.bincount(floor.psu, wd * np.where(ok, y, 0.0), minlength=p)
        bottom = np.bincount(floor.psu, wd, minlength=p)
        # Delete PSU i (the others' rescaling by p / (p - 1) cancels in the ratio).
        theta = (top.sum() - top) / (bottom.sum() - bottom)
        return float(np.sqrt((p - 1) / p * np.sum((theta - theta.mean()) ** 2)))

    if lonely != "adjust":  # the edge frame's lonely PSU: R's JKn replicate differs
        check(
            "jkn",
            sk.analysis.means(design.replicates("jkn"), "y")["se"].to_numpy()[0],
            jkn_floor(),
        )
    check(
        "jk1",
        sk.analysis.means(unstratified.replicates("jk1"), "y")["se"].to_numpy()[0],
        jk1_floor(),
    )
    return {
        "jk1": (lambda: sk.analysis.means(unstratified.replicates("jk1"), "y"), jk1_floor),
        "jkn": (lambda: sk.analysis.means(design.replicates("jkn"), "y"), jkn_floor),
        "bootstrap": (
            lambda: sk.analysis.means(design.replicates("bootstrap", replicates=200, seed=5), "y"),
            boot_floor,
        ),
    }


R_SCRIPT = r"""
suppressMessages(library(survey))
df <- read.csv(Sys.getenv("BENCH_CSV"))
df$q <- factor(df$q)
d <- svydesign(ids=~psu, strata=~stratum, weights=~w, data=df, nest=TRUE)
t <- function(label, expr) {
  s <- system.time(expr)
  cat(label, s[["user.self"]] + s[["sys.self"]], "\n")
}
t("mean", svymean(~y, d, na.rm=TRUE))
t("proportions", svymean(~q, d, na.rm=TRUE))
t("domains", svyby(~y, ~dom, d, svymean, na.rm=TRUE))
N <- sum(df$w)
ma <- data.frame(a=0:3, Freq=N/4)
mb <- data.frame(b=0:4, Freq=N/5)
mc <- data.frame(c=0:5, Freq=N/6)
t("rake", {
  r <- rake(d, list(~a, ~b, ~c), list(ma, mb, mc),
            control=list(epsilon=1e-9, maxit=1000))
  svymean(~y, r, na.rm=TRUE)
})
t("bootstrap", {
  b <- as.svrepdesign(d, type="bootstrap", replicates=200)
  svymean(~y, b, na.rm=TRUE)
})
status <- readLines("/proc/self/status")
cat("peak_mb", as.numeric(gsub("[^0-9]", "", grep("^VmHWM", status, value=TRUE))) / 1024, "\n")
"""


def run_r(df: pd.DataFrame) -> dict[str, float]:
    """Seconds R's survey takes for each section on the same data (empty without R)."""
    if shutil.which("Rscript") is None:
        print("peers: Rscript not found (apt-get install -y r-base-core r-cran-survey)")
        return {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.csv")
        df.to_csv(path, index=False)
        script = os.path.join(folder, "bench.R")
        with open(script, "w") as handle:
            handle.write(R_SCRIPT)
        done = subprocess.run(
            ["Rscript", script],
            env={**os.environ, "BENCH_CSV": path},
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
    seconds = {}
    for line in done.stdout.splitlines():
        label, value = line.split()
        seconds[label] = float(value)
    if done.returncode:
        print("R failed:", done.stderr[-500:])
    return seconds


SVY_SCRIPT = r"""
import sys, time
import polars as pl, svy
df = pl.read_parquet(sys.argv[1])
smp = svy.Sample(df, svy.Design(stratum="stratum", psu="psu", wgt="w"))
def t(label, call):
    call()  # warm (svy compiles and caches on first use)
    start = time.process_time(); call(); print(label, time.process_time() - start)
t("mean", lambda: smp.estimation.mean("y", drop_nulls=True))
t("proportions", lambda: smp.estimation.prop("q", drop_nulls=True))
t("domains", lambda: smp.estimation.mean("y", by="dom", drop_nulls=True))
n = float(df["w"].sum())
controls = {c: {i: n / k for i in range(k)} for c, k in (("a", 4), ("b", 5), ("c", 6))}
t("rake", lambda: smp.weighting.rake(controls=controls, tol=1e-9, max_iter=1000)
  .estimation.mean("y", drop_nulls=True))
t("bootstrap", lambda: smp.weighting.create_bs_wgts(200, rstate=5)
  .estimation.mean("y", drop_nulls=True))
import resource
print("peak_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run_svy(df: pd.DataFrame) -> dict[str, float]:
    """Seconds Python's svy takes for each section (warm), from the venv in $SVY_PYTHON."""
    python = os.environ.get("SVY_PYTHON")
    if not python:
        print("peers: set SVY_PYTHON to a python with svy installed (pip install svy)")
        return {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.parquet")
        df.assign(q=df["q"].astype(str).where(df["q"].notna())).to_parquet(path)
        done = subprocess.run(
            [python, "-c", SVY_SCRIPT, path],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
    if done.returncode:
        print("svy failed:", done.stderr[-500:])
    return {line.split()[0]: float(line.split()[1]) for line in done.stdout.splitlines()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sections", default="")
    parser.add_argument("--edge", action="store_true", help="the frame that breaks easy paths")
    parser.add_argument("--peers", action="store_true", help="R's survey and svy on the same data")
    args = parser.parse_args()
    df = make_frame(args.rows, edge=args.edge)
    frame_bytes = int(df.memory_usage(deep=True).sum())
    print(
        f"{args.rows:,} rows{' (edge)' if args.edge else ''}, frame {frame_bytes / 2**20:.0f} MiB"
    )
    chosen = sections(df, args.edge)
    wanted = [s for s in args.sections.split(",") if s] or list(chosen)
    peers = run_r(df) if args.peers else {}
    svy = run_svy(df) if args.peers else {}
    print(
        f"{'section':<12} {'surveykit s':>11} {'numpy s':>9} {'ratio':>6} {'peak/frame':>10}"
        + (f" {'R s':>8} {'R ratio':>8}" if peers else "")
        + (f" {'svy s':>8} {'svy ratio':>9}" if svy else "")
    )
    for name in wanted:
        ours, floor = chosen[name]
        ours_s = floor_s = 0.0
        ours_times, floor_times = [], []
        for _ in range(args.rounds):  # alternate, so drift hits both
            ours_times.append(cpu(ours, 1))
            floor_times.append(cpu(floor, 1))
        ours_s, floor_s = statistics.median(ours_times), statistics.median(floor_times)
        memory = peak(ours) / frame_bytes
        line = (
            f"{name:<12} {ours_s:>11.3f} {floor_s:>9.3f} {ours_s / floor_s:>6.2f} {memory:>10.2f}"
        )
        if peers:
            r = peers.get(name, float("nan"))
            line += f" {r:>8.2f} {r / floor_s:>8.1f}"
        if svy:
            v = svy.get(name, float("nan"))
            line += f" {v:>8.3f} {v / floor_s:>9.1f}"
        print(line)
    if peers or svy:
        r_mb, svy_mb = (found.get("peak_mb", float("nan")) for found in (peers, svy))
        print(
            f"peers' peak memory (MiB): R {r_mb:,.0f}, svy {svy_mb:,.0f}; surveykit's: "
            f"peak/frame above x {frame_bytes / 2**20:.0f} MiB"
        )
        print(
            "jk1, jkn: not run in R or svy, whose replicate weights are a rows x replicates "
            f"matrix ({args.rows:,} x 2,000 PSUs: {args.rows * 2000 * 8 / 2**30:.0f} GiB)"
        )


if __name__ == "__main__":
    main()
