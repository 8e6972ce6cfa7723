"""``sk.label`` on generated results against a hand-written pandas mapping, same run.

    python benchmarks/bench_report.py [--rows 1000000] [--questions 20]
        [--workbook-rows 200000]

The workbook section (:func:`workbook`) builds the full report of ``--workbook-rows``
generated respondents (raked to the channels, by channel, AAPOR rates per wave) and times
``Report.to_excel`` (cover, contents, every table with its base, formats, page set-up,
outcome rates) against openpyxl alone writing the same cells (the values of every sheet
of the report's workbook, no formats, links or page set-up) in the same run. Goal:
under 3x.

The results come from the sandbox's generator, typed as the results readers type them
(ratings ``Int64``, choices categorical, text ``string``), with the generated survey's
codebook (``Prefer not to say`` a missing code). The baseline does the same work by hand,
column by column: map each answer's code to its label with ``Series.map`` (keys of the
column's own type), make the
ordered categorical, and collect the rows of missing codes with their reasons (a
``{row: reason}`` dict, no checking of unknown answers). Goal: ``label`` at most 1.5x the
baseline.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

import surveykit as sk
from surveykit.sandbox import Sandbox
from surveykit.sandbox.generator import generate_results_frame


def typed(raw: pd.DataFrame, codebook: sk.Codebook) -> pd.DataFrame:
    df = raw.copy()
    for key, question in codebook.items():
        if question.kind == "nps":
            df[key] = pd.to_numeric(df[key]).astype("Int64")
        elif question.kind in ("choice", "multi"):
            df[key] = df[key].astype("category")
    return df


def baseline(df: pd.DataFrame, codebook: sk.Codebook) -> dict[str, dict[object, str]]:
    reasons: dict[str, dict[object, str]] = {}
    out = df.copy(deep=False)
    for key, question in codebook.items():
        if question.kind not in ("nps", "choice"):
            continue
        series = df[key]
        # keys of the column's own type: ints for Int64 ratings, text for categoricals
        native = int if question.kind == "nps" else str
        labels = {native(c): t for c, t in question.value_labels().items()}
        missing_codes = {native(c): r for c, r in question.missing.items()}
        out[key] = pd.Categorical(
            series.map(labels), categories=list(labels.values()), ordered=True
        )
        missing = series.isin(list(missing_codes)).fillna(False).to_numpy(dtype=bool)
        if missing.any():
            reasons[key] = dict(
                zip(df.index[missing], series[missing].map(missing_codes), strict=True)
            )
    return reasons


def best(function, *args, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--workbook-rows", type=int, default=200_000)
    args = parser.parse_args()
    sandbox = Sandbox()
    survey = sandbox.add_generated_survey("BENCH", args.rows, questions=args.questions)
    codebook = sandbox.codebook(survey.reference)
    df = typed(generate_results_frame(args.rows, questions=args.questions, nasty=False), codebook)
    label = best(sk.label, df, codebook)
    hand = best(baseline, df, codebook)
    print(f"{args.rows:,} rows x {args.questions} questions")
    print("| step | seconds | ratio to baseline |")
    print("|---|---|---|")
    print(f"| hand-written pandas mapping | {hand:.3f} | 1.00 |")
    print(f"| sk.label | {label:.3f} | {label / hand:.2f} |")
    workbook(args.workbook_rows, args.questions)


def cells_of(path: str) -> dict[str, list[tuple[int, int, object]]]:
    """Every non-empty cell of a workbook, ``{sheet: [(row, column, value), ...]}``."""
    from openpyxl import load_workbook

    book = load_workbook(path)
    return {
        sheet.title: [
            (cell.row, cell.column, cell.value)
            for row in sheet.iter_rows()
            for cell in row
            if cell.value is not None
        ]
        for sheet in book.worksheets
    }


def openpyxl_alone(cells: dict[str, list[tuple[int, int, object]]], path: str) -> None:
    """The baseline: a plain openpyxl workbook holding the same cell values."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, values in cells.items():
        sheet = book.create_sheet(title)
        for row, column, value in values:
            sheet.cell(row, column, value)
    book.save(path)


def workbook(rows: int, questions: int) -> None:
    """The full report workbook against openpyxl alone writing the same cells."""
    import tempfile
    from pathlib import Path

    import numpy as np

    from surveykit.report import build_report

    sandbox = Sandbox()
    survey = sandbox.add_generated_survey("BENCH-WB", rows, questions=questions)
    codebook = sandbox.codebook(survey.reference)
    df = typed(generate_results_frame(rows, questions=questions, nasty=False), codebook)
    rng = np.random.default_rng(5)
    dispositions = pd.DataFrame(
        {
            "disposition": rng.choice(["1.1", "1.2", "2.11", "2.20", "3.19", "4.70"], rows),
            "wave": rng.choice(["1", "2", "3"], rows),
        }
    )
    channels = df["channel"].dropna().astype(str).unique()
    targets = {"channel": {c: 1 / len(channels) for c in channels}}
    started = time.perf_counter()
    report = build_report(df, codebook, targets=targets, by="channel", dispositions=dispositions)
    built = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        ours, plain = str(Path(folder) / "report.xlsx"), str(Path(folder) / "plain.xlsx")
        write = best(report.to_excel, ours)
        cells = cells_of(ours)
        alone = best(openpyxl_alone, cells, plain)
    count = sum(len(v) for v in cells.values())
    print()
    print(
        f"report workbook: {rows:,} respondents x {questions} questions, by channel, raked; "
        f"{len(cells)} sheets, {count:,} cells (build_report {built:.2f} s, not in the ratio)"
    )
    print("| step | seconds | ratio to baseline |")
    print("|---|---|---|")
    print(f"| openpyxl alone, same cells | {alone:.3f} | 1.00 |")
    print(f"| Report.to_excel | {write:.3f} | {write / alone:.2f} |")


if __name__ == "__main__":
    main()
