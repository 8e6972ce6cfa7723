"""Benchmark a hostile payload: very many columns and very few rows.

    python benchmarks/bench_wide.py --columns 100000 --rows 2

The same table (questions of integers, text, booleans, categories, ISO datetimes and
blanks) is written by ``write_results`` in every format (and, with ``--layouts``, in
every layout of each). With ``--before SRC``, ``read_results`` from another checkout's
``src`` (e.g. the previous commit, ``git archive``'d) takes its turns too. Each method
runs in its own subprocess, in turns, ``--repeat`` rounds; the fastest run counts. The
baseline is ``pyarrow.csv.read_csv(..., newlines_in_values=True).to_pandas()`` on the CSV
payload, the goal ``read_results`` at most 2x of it in every format. No test asserts a
time: this script prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KINDS = [("7", "8"), ("x", None), ("true", "false"), ("a", "a"), ("2024-08-07T21:51:26Z", "")]


def write_payloads(columns: int, rows: int, workdir: Path, layouts: bool) -> dict[str, Path]:
    import pandas as pd

    from surveykit.results import LAYOUTS, write_results

    data = {}
    for i in range(columns):
        pair = KINDS[i % len(KINDS)]
        data[f"Q{i + 1}"] = pd.array([pair[r % 2] for r in range(rows)], dtype="string[pyarrow]")
    frame = pd.DataFrame(data)
    paths = {}
    for layout, formats in LAYOUTS.items():
        if layout != "documented" and not layouts:
            continue
        for fmt in sorted(formats):
            path = workdir / f"{layout}.{fmt.lower()}"
            path.write_bytes(b"".join(write_results(frame, fmt, layout=layout)))
            paths[f"{fmt} {layout}"] = path
    return paths


def parse(method: str, path: str) -> float:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from surveykit.results import read_results

    data = Path(path).read_bytes()
    read_results(b"a,b\n1,2\n")  # modules imported lazily are loaded before timing
    start = time.perf_counter()
    if method == "pyarrow":
        pacsv.read_csv(
            pa.BufferReader(data), parse_options=pacsv.ParseOptions(newlines_in_values=True)
        ).to_pandas()
    else:
        read_results(data)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--columns", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--layouts", action="store_true", help="every layout, not just ours")
    parser.add_argument("--before", help="a src directory whose read_results runs as 'before'")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(parse(*args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_payloads(args.columns, args.rows, Path(tmp), args.layouts)
        runs = [("pyarrow", "CSV documented")]
        for key in paths:
            runs += [("before", key)] if args.before else []
            runs += [("surveykit", key)]
        best: dict[tuple[str, str], float] = {}
        for _ in range(args.repeat):
            for method, key in runs:
                env = dict(os.environ)
                if method == "before":
                    env["PYTHONPATH"] = args.before
                out = subprocess.run(
                    [sys.executable, __file__, "--child", method, str(paths[key])],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                seconds = float(out.stdout)
                best[method, key] = min(best.get((method, key), seconds), seconds)
    base = best["pyarrow", "CSV documented"]
    print(f"{args.columns:,} columns x {args.rows} rows, fastest of {args.repeat}")
    print("| Payload | Method | Seconds | x pyarrow (goal <= 2) |")
    print("|---|---|---|---|")
    for (method, key), seconds in best.items():
        print(f"| {key} | {method} | {seconds:.2f} | {seconds / base:.2f}x |")


if __name__ == "__main__":
    main()
