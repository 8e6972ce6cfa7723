"""Benchmark build_import_list against a naive row-by-row phonenumbers loop, in one run.

    python benchmarks/bench_import.py --rows 1000000

Data: 60% of the numbers already E.164 digits (mobiles of ten countries, almost all
distinct), 40% GB numbers in national and international spellings drawn from a pool, so they
repeat; ~1% broken numbers and ~1% broken email addresses; names, emails, dates of birth and
a pass-through column. The naive baseline is what people write first:
``phonenumbers.parse`` + ``is_valid_number`` + ``format_number`` per row, phones only.

Both run in alternating rounds and the speed-up is the ratio of their median rates (the
machine is noisy). The naive loop runs on a sample per round (``--naive-sample``) and its
rate is extrapolated. Memory: RSS growth during the first call (``/proc`` VmHWM, reset just
before the call) against ``df.memory_usage(deep=True)``. Records are built lazily, so the
time to build every record dict is reported separately.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import os
import platform
import resource
import statistics
import time

import numpy as np
import pandas as pd
import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from surveykit.respondents import build_import_list

E164_REGIONS = ["GB", "US", "FR", "DE", "IN", "BR", "ZA", "AU", "NG", "ES"]
FIRST = ["Ann", "Bob", "Chloé", "Dmitri", "Eve", "Fatima", "Giles", "Hana", "Ivo", "Jo"]
LAST = ["Smith", "Jones", "Ng", "O'Brien", "García", "Müller", "Okafor", "Kowalski"]


def make_frame(rows: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_e164 = int(rows * 0.6)
    n_nat = rows - n_e164
    # E.164 digits: an example mobile per region with its last 6 digits randomised.
    stems = []
    for r in E164_REGIONS:
        ex = phonenumbers.example_number_for_type(r, PhoneNumberType.MOBILE)
        stems.append(phonenumbers.format_number(ex, PhoneNumberFormat.E164)[1:-6])
    stem = pd.Series(
        np.array(stems, dtype=object)[rng.integers(0, len(stems), n_e164)], dtype="str"
    )
    tail = pd.Series(rng.integers(0, 1_000_000, n_e164), dtype="int64").astype("str").str.zfill(6)
    e164 = stem + tail
    # National and international spellings of GB numbers, from a pool a tenth of their count.
    pool = max(n_nat // 10, 1)
    body = rng.integers(0, 1_000_000, pool)
    fmts = [
        lambda b: f"07400 {b:06d}",
        lambda b: f"07400-{b // 1000:03d}-{b % 1000:03d}",
        lambda b: f"+44 7400 {b:06d}",
        lambda b: f"0044 7400 {b:06d}",
        lambda b: f"(020) 7946 {b % 10000:04d}",
        lambda b: f"07400.{b:06d}",
    ]
    spelled = np.array([fmts[i % len(fmts)](int(b)) for i, b in enumerate(body)], dtype=object)
    national = pd.Series(spelled[rng.integers(0, pool, n_nat)], dtype="str")
    phones = pd.concat([e164, national], ignore_index=True)
    broken = rng.random(rows) < 0.01
    phones[broken] = "0791112"
    order = rng.permutation(rows)
    phones = phones.iloc[order].reset_index(drop=True)

    first = pd.Series(np.array(FIRST, dtype=object)[rng.integers(0, len(FIRST), rows)], dtype="str")
    last = pd.Series(np.array(LAST, dtype=object)[rng.integers(0, len(LAST), rows)], dtype="str")
    num = pd.Series(np.arange(rows), dtype="int64").astype("str")
    email = (first.str.lower() + "." + num + "@example.com").where(rng.random(rows) < 0.7)
    email[rng.random(rows) < 0.01] = "not-an-address"
    dob_pool = pd.date_range("1940-01-01", "2006-12-31", freq="D").strftime("%Y-%m-%d")
    dob = pd.Series(np.asarray(dob_pool)[rng.integers(0, len(dob_pool), rows)], dtype="str")
    return pd.DataFrame(
        {
            "First Name": first,
            "Last Name": last,
            "Mobile": phones,
            "Email": email,
            "DOB": dob,
            "Segment": pd.Series(rng.integers(1, 6, rows), dtype="int64"),
        }
    )


def naive(values: list[str], region: str) -> int:
    ok = 0
    for v in values:
        try:
            # Bare digits are E.164 without the "+": the same reading build_import_list makes.
            num = phonenumbers.parse("+" + v if v.isdigit() else v, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(num):
            phonenumbers.format_number(num, PhoneNumberFormat.E164)
            ok += 1
    return ok


def rss_mib() -> tuple[float, float]:
    """(current RSS, peak RSS since the last reset) in MiB, from /proc."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def release_freed_memory() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        return True
    except OSError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument(
        "--naive-sample",
        type=int,
        default=200_000,
        help="rows the naive loop runs on per round (rate extrapolated to --rows); 0 = all",
    )
    ap.add_argument(
        "--rounds", type=int, default=3, help="alternating rounds of both (the machine is noisy)"
    )
    args = ap.parse_args()
    rows = args.rows
    rss_imports, _ = rss_mib()

    t = time.perf_counter()
    df = make_frame(rows)
    gen_s = time.perf_counter() - t
    gc.collect()
    release_freed_memory()  # so that generating the data does not count as "before"
    df_mib = df.memory_usage(deep=True).sum() / 2**20
    print(
        f"python {platform.python_version()}, pandas {pd.__version__}, "
        f"phonenumbers {phonenumbers.__version__}, {os.cpu_count()} CPUs"
    )
    print(
        f"frame: {rows:,} rows x {df.shape[1]} columns, {df_mib:,.1f} MiB "
        f"(memory_usage(deep=True)); dtypes {sorted({str(d) for d in df.dtypes})}; "
        f"generated in {gen_s:.1f} s"
    )
    print(f"distinct phone values: {df['Mobile'].nunique():,}")

    # Warm phonenumbers' lazily loaded metadata so neither side pays it.
    build_import_list(df.head(2000), default_region="GB")
    limit = rows if args.naive_sample <= 0 else min(args.naive_sample, rows)
    sample = df["Mobile"].iloc[:limit].tolist()
    naive(sample[:2000], "GB")

    build_rates: list[float] = []
    naive_rates: list[float] = []
    mat_rates: list[float] = []
    peak = rss0 = 0.0
    peak_ok = False
    plan = None
    ok = 0
    for round_ in range(args.rounds):
        del plan
        gc.collect()
        if round_ == 0:
            peak_ok = reset_peak()
            rss0, _ = rss_mib()
        t = time.perf_counter()
        plan = build_import_list(df, default_region="GB")
        build_s = time.perf_counter() - t
        if round_ == 0:
            _, peak = (
                rss_mib()
                if peak_ok
                else (rss_mib()[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            )
        t = time.perf_counter()
        n_dicts = sum(len(chunk) for chunk in plan.records.chunks(1000))
        mat_s = time.perf_counter() - t
        t = time.perf_counter()
        ok = naive(sample, "GB")
        naive_s = time.perf_counter() - t
        build_rates.append(rows / build_s)
        mat_rates.append(rows / (build_s + mat_s))
        naive_rates.append(len(sample) / naive_s)
        print(
            f"round {round_ + 1}: build_import_list {build_s:.2f} s "
            f"({rows / build_s:,.0f} rows/s); "
            f"+ all {n_dicts:,} record dicts {mat_s:.2f} s; naive {len(sample):,} rows "
            f"{naive_s:.2f} s ({len(sample) / naive_s:,.0f} rows/s); "
            f"ratio {build_rates[-1] / naive_rates[-1]:.1f}x"
        )
    assert plan is not None
    print()
    print(plan.summary)
    print()
    build_rate = statistics.median(build_rates)
    naive_rate = statistics.median(naive_rates)
    mat_rate = statistics.median(mat_rates)
    print(
        f"build_import_list (median of {args.rounds}): {rows / build_rate:.2f} s, "
        f"{build_rate:,.0f} rows/s"
    )
    print(f"  including building every record dict (chunks of 1000): {mat_rate:,.0f} rows/s")
    extrapolated = len(sample) < rows
    print(
        "naive loop (parse + is_valid_number + format_number per row, phones only): "
        f"{naive_rate:,.0f} rows/s, {ok / len(sample):.3f} of the sample valid"
        + (
            f"; measured on {len(sample):,} rows per round, extrapolated to {rows:,} rows: "
            f"{rows / naive_rate:.1f} s"
            if extrapolated
            else ""
        )
    )
    print(
        f"speed-up vs naive (ratio of medians): {build_rate / naive_rate:.1f}x build only, "
        f"{mat_rate / naive_rate:.1f}x with every record dict built"
    )
    growth = peak - rss0
    print(
        f"memory (round 1): RSS before the call {rss0:,.0f} MiB "
        f"(imports alone {rss_imports:,.0f} MiB), "
        f"peak during the call {peak:,.0f} MiB: +{growth:,.0f} MiB = {growth / df_mib:.2f}x the "
        f"frame's {df_mib:,.1f} MiB; absolute peak minus the imports = "
        f"{(peak - rss_imports) / df_mib:.2f}x the frame (the frame itself included)"
        + ("" if peak_ok else " [peak from ru_maxrss: whole process]")
    )


if __name__ == "__main__":
    main()
