"""Benchmark surveykit.read_results against baselines, format by format, in one run.

    python benchmarks/bench_results.py --rows 1000000

Every method runs in a fresh subprocess (so peak RSS is per method); each subprocess
loads the payload into memory first (counted in its peak RSS, like for every method),
then times the parse alone, --inner times in a row (the first call in a fresh process
also pays for faulting in fresh memory, which is the noisiest part on a small VM; it is
shown apart as "first call"). Subprocesses of the methods of a format take turns,
--repeat rounds, so drift on the machine hits every method alike. Ratios compare the
fastest steady-state run of each method, measured in this run. Afterwards the
frames read from every format are checked equal, and the known traps are checked on them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMATS = ["CSV", "PIPE", "TAB", "XML", "JSON"]
DELIMS = {"CSV": ",", "PIPE": "|", "TAB": "\t"}
METHODS = {
    "CSV": ["surveykit", "pyarrow.csv"],
    "PIPE": ["surveykit", "pyarrow.csv"],
    "TAB": ["surveykit", "pyarrow.csv"],
    "XML": ["surveykit", "pandas.read_xml", "iterparse", "iterparse(tag)"],
    "JSON": ["surveykit", "pandas.read_json", "orjson.loads"],
}


# The XML record, and pandas.read_xml's xpath and namespaces, in each layout (--layout).
XML_RECORDS = {
    "aspnet": ("SurveyResult", "/ArrayOfSurveyResult/SurveyResult", None),
    "namespaced": (
        "{urn:surveykit:results}Result",
        "/r:Results/r:Result",
        {"r": "urn:surveykit:results"},
    ),
}


def xml_record() -> tuple[str, str, dict[str, str] | None]:
    """The record tag, xpath and namespaces of the layout the payloads were written in."""
    default = ("Result", "/Results/Result", None)
    return XML_RECORDS.get(os.environ.get("BENCH_LAYOUT", "documented"), default)


def peak_rss_mib() -> float:
    # VmHWM restarts at exec; ru_maxrss would carry the parent's peak over.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_method(method: str, fmt: str, path: str, inner: int) -> dict[str, float]:
    """Time ``method`` ``inner`` times on the payload at ``path``, in this process."""
    data = Path(path).read_bytes()
    times, cpu, rows = [], [], 0
    for _ in range(inner):
        start, start_cpu = time.perf_counter(), time.process_time()
        rows = parse_once(method, fmt, data)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {
        "seconds": min(times),
        "cpu": min(cpu),
        "first": times[0],
        "peak_mib": peak_rss_mib(),
        "rows": rows,
        "bytes": len(data),
    }


def parse_once(method: str, fmt: str, data: bytes) -> int:
    """Parse ``data`` once with ``method``; the number of rows read (the result is dropped)."""
    import io

    import orjson
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pacsv
    from lxml import etree

    from surveykit.results import read_results

    if method in ("surveykit", "before"):
        rows = len(read_results(data, fmt))
    elif method == "pyarrow.csv":
        table = pacsv.read_csv(
            pa.BufferReader(data),
            parse_options=pacsv.ParseOptions(delimiter=DELIMS[fmt], newlines_in_values=True),
        )
        rows = len(table.to_pandas())
    elif method == "pandas.read_xml":
        _, xpath, namespaces = xml_record()
        frame = pd.read_xml(io.BytesIO(data), xpath=xpath, namespaces=namespaces, parser="lxml")
        rows = len(frame)
    elif method in ("iterparse", "iterparse(tag)"):
        record = xml_record()[0]
        kw = {"tag": record} if method == "iterparse(tag)" else {}
        rows = 0
        for _, el in etree.iterparse(io.BytesIO(data), events=("end",), **kw):
            if el.tag == record:
                rows += 1
                el.clear()
                while el.getprevious() is not None:
                    del el.getparent()[0]
    elif method == "pandas.read_json":
        rows = len(pd.read_json(io.BytesIO(data)))
    elif method == "orjson.loads":
        rows = len(orjson.loads(data))
    else:
        raise SystemExit(f"unknown method {method}")
    return rows


def write_payloads(
    rows: int, seed: int, workdir: Path, data: str = "survey", layout: str = "documented"
) -> tuple[dict[str, Path], list]:
    from surveykit.results import write_results
    from surveykit.sandbox.generator import generate_results

    start = time.perf_counter()
    if data == "awkward":
        sys.path.insert(0, str(Path(__file__).parent))
        from _awkward import awkward_chunks

        chunks = list(awkward_chunks(rows, seed=seed))
    else:
        chunks = list(generate_results(rows, seed=seed))
    print(f"  generated {rows:,} rows in {time.perf_counter() - start:.1f} s", flush=True)
    paths = {}
    for fmt in FORMATS:
        path = workdir / f"results.{fmt.lower()}"
        start = time.perf_counter()
        with path.open("wb") as out:
            for piece in write_results(chunks, fmt, layout=layout):
                out.write(piece)
        print(
            f"  wrote {fmt:<4} {path.stat().st_size / 1e6:8.1f} MB in "
            f"{time.perf_counter() - start:6.1f} s",
            flush=True,
        )
        paths[fmt] = path
    return paths, chunks


def verify(paths: dict[str, Path], chunks: list) -> list[str]:
    """Frames equal across formats, and every value checked against the generator's text."""
    import datetime as dt

    import pandas as pd

    from surveykit.results import read_results

    string = pd.StringDtype("pyarrow")
    notes = []
    reference = read_results(paths["CSV"])
    for fmt in FORMATS[1:]:
        start = time.perf_counter()
        pd.testing.assert_frame_equal(read_results(paths[fmt]), reference, obj=fmt)
        notes.append(f"{fmt} frame == CSV frame ({time.perf_counter() - start:.1f} s)")
    source = pd.concat(chunks)
    if "mobileNumber" not in source.columns:  # --data awkward: every value, as text
        for column in source.columns:
            got = reference[column].astype(string)
            pd.testing.assert_series_equal(got, source[column], check_index=False, obj=column)
        notes.append(f"every value equals the generated text; types {dict(reference.dtypes)}")
        return notes
    assert len(reference) == len(source)
    timestamps = ("invited", "started", "completed")
    for column in source.columns:
        if column in timestamps:
            continue
        got = reference[column].astype(string)
        pd.testing.assert_series_equal(got, source[column], check_index=False, obj=column)
    sample = source.sample(min(len(source), 20_000), random_state=0).index
    for column in timestamps:
        for i in sample:
            text = source[column].iloc[i]
            got = reference[column].iloc[i]
            if text is pd.NA:
                assert got is pd.NaT, (column, i)
            else:
                want = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
                assert got.to_pydatetime() == want and str(got.tz) == "UTC", (column, i)
    questions = [c for c in source.columns if c.startswith("Q")]
    na_like = int(source[questions].isin(["N/A", "null", "None", "NA"]).sum().sum())
    zeros = int(source["mobileNumber"].str.startswith("0").sum())
    notes.append(
        f"every value equals the generator's text ({na_like:,} 'N/A'/'null'/'None'/"
        f"'NA' answers kept, {zeros:,} numbers with a leading zero kept); timestamps "
        "(sampled) converted from their offsets to UTC"
    )
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--data",
        choices=["survey", "awkward"],
        default="survey",
        help="survey: generated results; awkward: columns that break type prediction late",
    )
    parser.add_argument(
        "--read-xml-max-rows",
        type=int,
        default=1_000_000,
        help="skip pandas.read_xml above this many rows (it is slow)",
    )
    from surveykit.results import LAYOUTS

    parser.add_argument(
        "--layout",
        default="documented",
        choices=sorted(LAYOUTS),
        help="write the payloads in this results layout, e.g. aspnet",
    )
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time the payloads already in --workdir (skips verification)",
    )
    parser.add_argument(
        "--formats",
        default=",".join(FORMATS),
        help="comma-separated formats to time (all are verified)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="fresh subprocesses per method, in turns; the fastest is kept (the machine is noisy)",
    )
    parser.add_argument(
        "--inner", type=int, default=3, help="timed parses in each subprocess (default 3)"
    )
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="also time read_results from this src directory (e.g. the previous commit's, "
        "git archive'd), as method 'before', in the same turns",
    )
    parser.add_argument(
        "--after",
        metavar="SRC",
        help="time 'surveykit' from this src directory instead of the installed one",
    )
    parser.add_argument(
        "--worker", nargs=4, metavar=("METHOD", "FORMAT", "PATH", "INNER"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if not args.worker:
        os.environ["BENCH_LAYOUT"] = args.layout  # the workers read it (xml_record)
    if args.worker:
        method, fmt, path, inner = args.worker
        print(json.dumps(run_method(method, fmt, path, int(inner))))
        return

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench_results_"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"{args.rows:,} rows, seed {args.seed}, payloads in {workdir}", flush=True)
    existing = {fmt: workdir / f"results.{fmt.lower()}" for fmt in FORMATS}
    if args.reuse and all(p.exists() for p in existing.values()):
        paths, chunks = existing, []
        args.no_verify = True
        print("  reusing the payloads already there (no verification)")
    else:
        paths, chunks = write_payloads(args.rows, args.seed, workdir, args.data, args.layout)
    results: dict[tuple[str, str], dict[str, float]] = {}
    timed = [f.strip().upper() for f in args.formats.split(",")]
    for fmt in [f for f in FORMATS if f in timed]:
        methods = [
            m
            for m in METHODS[fmt] + (["before"] if args.before else [])
            if not (m == "pandas.read_xml" and args.rows > args.read_xml_max_rows)
        ]
        if "pandas.read_xml" in METHODS[fmt] and "pandas.read_xml" not in methods:
            print(f"  skip {fmt} pandas.read_xml: {args.rows:,} rows > --read-xml-max-rows")
        runs: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
        failed: set[str] = set()
        for _ in range(args.repeat):
            for method in methods:
                if method in failed:
                    continue
                inner = 1 if method == "pandas.read_xml" else args.inner
                env = dict(os.environ)
                src = {"before": args.before, "surveykit": args.after}.get(method)
                if src:
                    env["PYTHONPATH"] = src
                proc = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        method,
                        fmt,
                        str(paths[fmt]),
                        str(inner),
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                    env=env,
                )
                if proc.returncode:
                    print(f"  {fmt} {method} FAILED: {proc.stderr.strip().splitlines()[-1:]}")
                    failed.add(method)
                    continue
                runs[method].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        for method in methods:
            if not runs[method]:
                continue
            best = dict(min(runs[method], key=lambda r: r["seconds"]))
            best["first"] = min(r["first"] for r in runs[method])
            best["cpu"] = min(r["cpu"] for r in runs[method])
            best["peak_mib"] = max(r["peak_mib"] for r in runs[method])
            results[fmt, method] = r = best
            print(
                f"  ran {fmt:<4} {method:<17} {r['seconds']:7.2f} s (first call "
                f"{r['first']:.2f} s) {r['peak_mib']:8.0f} MiB",
                flush=True,
            )

    print()
    header = (
        "| Format | Method | Seconds | First call | MB/s | Peak RSS MiB | time vs surveykit "
        "| surveykit speed-up | RSS surveykit/baseline | CPU s | CPU vs surveykit |"
    )
    print(header)
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for fmt in FORMATS:
        ours = results.get((fmt, "surveykit"))
        for method in METHODS[fmt] + ["before"]:
            r = results.get((fmt, method))
            if r is None:
                continue
            mbs = r["bytes"] / 1e6 / r["seconds"]
            if ours is None or method == "surveykit":
                rel = speed = mem = cpu = "-"
            else:
                rel = f"{ours['seconds'] / r['seconds']:.2f}x"
                speed = f"{r['seconds'] / ours['seconds']:.2f}x"
                mem = f"{ours['peak_mib'] / r['peak_mib']:.2f}x"
                cpu = f"{ours['cpu'] / r['cpu']:.2f}x"
            print(
                f"| {fmt} | {method} | {r['seconds']:.2f} | {r['first']:.2f} | {mbs:.0f} "
                f"| {r['peak_mib']:.0f} "
                f"| {rel} | {speed} | {mem} | {r['cpu']:.2f} | {cpu} |"
            )
    print(
        "\n'time vs surveykit' = surveykit seconds / baseline seconds (goal: <= 1.2 for "
        "pyarrow.csv, <= 1.3 for iterparse, <= 1.0 for orjson.loads); 'surveykit speed-up' ="
        " baseline seconds / surveykit seconds (goal: >= 3.5 vs pandas.read_xml, >= 2 vs "
        "pandas.read_json). 'CPU s': process CPU time of the fastest parse (all threads: "
        "steadier than wall time on a shared machine, but it adds up pyarrow's threads)."
    )
    if not args.no_verify:
        start = time.perf_counter()
        for note in verify(paths, chunks):
            print(f"verified: {note}")
        print(f"verification took {time.perf_counter() - start:.1f} s")
    if args.workdir is None and chunks:
        for path in paths.values():
            os.unlink(path)
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
