"""``sk.label``, ``sk.report.banner`` and the report workbook against hand-written baselines.

    python benchmarks/bench_report.py [--rows 1000000] [--questions 20]
        [--part label|banner|workbook|all] [--banner-questions 40] [--data plain|awkward]
        [--workbook-rows 200000] [--design-rows 100000]

The banner part also times ``sk.report.banner`` on a stratified cluster design (2,000 PSUs
in 20 strata, ``--design-rows`` respondents, column letters) against a hand-written numpy
computation of the same design-based t tests (:func:`design_baseline`), checked equal first.

The workbook section (:func:`workbook`) builds the full report of ``--workbook-rows``
generated respondents (raked to the channels, by channel, AAPOR rates per wave) and times
``Report.to_excel`` (cover, contents, every table with its base, formats, page set-up,
outcome rates) against openpyxl alone writing the same cells (the values of every sheet
of the report's workbook, no formats, links or page set-up) in the same run. Goal:
under 3x.

**label.**
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
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

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


BANNERS = {"channel": 5, "region": 6, "wave": 8}
COMBOS = ["A", "B", "C", "A;B", "A;C", "B;C", "A;B;C", ""]
OPTIONS = [f"opt{k}" for k in range(6)]


def banner_survey(
    rows: int, questions: int, awkward: bool, seed: int = 0
) -> tuple[pd.DataFrame, sk.Codebook, dict[str, str]]:
    """Generated answers, their codebook and each question's kind."""
    rng = np.random.default_rng(seed)
    ratings, choices = questions * 24 // 40, questions * 10 // 40
    multis = questions - ratings - choices
    columns: dict[str, Any] = {}
    book = []
    kinds = {}
    for i in range(ratings):
        values = rng.integers(1, 6, rows).astype(float)
        values[rng.random(rows) < 0.05] = np.nan
        if awkward:
            values[rng.random(rows) < 0.02] = 99
            text = pd.Series(values).map(lambda v: "" if v != v else str(int(v)))
            columns[f"R{i}"] = text.astype(object).to_numpy()
        else:
            columns[f"R{i}"] = values
        book.append(
            sk.report.Question(
                f"R{i}", "", "rating", min=1, max=5, missing={"99": "Don't know"} if awkward else {}
            )
        )
        kinds[f"R{i}"] = "rating"
    for i in range(choices):
        codes = rng.integers(0, len(OPTIONS), rows)
        columns[f"C{i}"] = (
            np.asarray(OPTIONS, dtype=object)[codes]
            if awkward
            else pd.Categorical.from_codes(codes, OPTIONS)
        )
        book.append(sk.report.Question(f"C{i}", "", "choice"))
        kinds[f"C{i}"] = "choice"
    for i in range(multis):
        codes = rng.integers(-1, len(COMBOS), rows)
        if awkward:
            text = np.asarray([*COMBOS, None], dtype=object)[codes]
            columns[f"M{i}"] = text
        else:
            columns[f"M{i}"] = pd.Categorical.from_codes(codes, COMBOS)
        book.append(sk.report.Question(f"M{i}", "", "multi"))
        kinds[f"M{i}"] = "multi"
    for name, levels in BANNERS.items():
        codes = rng.integers(0, levels, rows)
        if awkward:
            values = np.asarray([f"{name} {j}" for j in range(levels)], dtype=object)[codes]
            values[rng.random(rows) < 0.03] = None
            values[:5] = f"{name} few"
            columns[name] = values
        else:
            columns[name] = pd.Categorical.from_codes(codes, [f"{name} {j}" for j in range(levels)])
    return pd.DataFrame(columns), sk.Codebook(book), kinds


def banner_nets(kinds: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    return {q: {"First two": OPTIONS[:2]} for q, kind in kinds.items() if kind == "choice"}


def _factorized(series: pd.Series) -> tuple[Any, pd.Index]:
    """Codes 0..k (0: missing) and the k values, as ``pd.factorize`` gives them."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, pd.Index([np.nan, *uniques], dtype=object)


def banner_baseline(
    df: pd.DataFrame,
    kinds: dict[str, str],
    alpha: float = 0.05,
    missing: float | None = None,
    counting: str = "groupby",
) -> dict[str, Any]:
    """The banner's cells by hand: counts tables from pandas (``groupby``) or from
    ``pd.factorize`` + ``np.bincount`` (``counting="bincount"``), the rest in numpy."""
    shares: list[Any] = []
    letters = 0
    banners = {name: _factorized(df[name]) for name in BANNERS} if counting != "groupby" else {}
    for question, kind in kinds.items():
        if counting != "groupby":
            q_codes, q_values = _factorized(df[question])
        for name in BANNERS:
            if counting == "groupby":
                table = df.groupby([df[name], df[question]], observed=True, dropna=False).size()
                counts = table.unstack(fill_value=0)
            else:
                b_codes, b_values = banners[name]
                size = len(q_values)
                flat = np.bincount(b_codes * size + q_codes, minlength=len(b_values) * size)
                counts = pd.DataFrame(
                    flat.reshape(len(b_values), size), index=b_values, columns=q_values
                )
                counts = counts.loc[counts.sum(axis=1) > 0]
            counts = counts.loc[:, counts.columns.notna()]
            labels = [str(c) for c in counts.columns]
            if kind == "rating":
                values = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy()
                answered = np.isfinite(values) & (values != missing)
                counts, values = counts.loc[:, answered], values[answered]
                matrix = np.eye(len(values))
                order = np.argsort(values)
                top = (values >= 4).astype(float)[:, None]
                bottom = (values <= 2).astype(float)[:, None]
                matrix = np.hstack([matrix[:, order], top, bottom])
            elif kind == "choice":
                matrix = np.eye(len(labels))
                matrix = np.hstack([matrix, np.isin(labels, OPTIONS[:2])[:, None]])
            else:  # multi: each combination's options
                options = ["A", "B", "C"]
                matrix = np.array(
                    [[o in label.split(";") for o in options] for label in labels], dtype=float
                )
            n = counts.to_numpy(dtype=float)
            keep = counts.index.notna()  # the (missing) column is shown, not tested
            total = n.sum(axis=0, keepdims=True)
            base = n.sum(axis=1)
            chose = n @ matrix
            with np.errstate(invalid="ignore", divide="ignore"):
                share = chose / base[:, None]
                share[base < 10] = np.nan  # suppressed
                shares += [share, total @ matrix / total.sum()]
                tested = np.flatnonzero(keep & (base >= 10))
                pairs = np.array(list(combinations(tested, 2)))
                i, j = pairs[:, 0], pairs[:, 1]
                pooled = (chose[i] + chose[j]) / (base[i] + base[j])[:, None]
                se = np.sqrt(pooled * (1 - pooled) * (1 / base[i] + 1 / base[j])[:, None])
                z = (share[i] - share[j]) / np.where(se > 0, se, np.nan)
                p = 2 * stats.norm.sf(np.abs(z))
                tests = np.isfinite(p).sum(axis=0)
                letters += int((np.minimum(p * tests, 1) < alpha).sum())
                if kind == "rating":
                    s1, s2 = n @ values, n @ (values * values)
                    mean = np.where(base >= 10, s1 / base, np.nan)
                    shares += [mean[:, None], (total @ values / total.sum())[:, None]]
                    var = (s2 - base * mean * mean) / (base - 1) / base
                    t = (mean[i] - mean[j]) / np.sqrt(var[i] + var[j])
                    dof = (var[i] + var[j]) ** 2 / (
                        var[i] ** 2 / (base[i] - 1) + var[j] ** 2 / (base[j] - 1)
                    )
                    p = 2 * stats.t.sf(np.abs(t), dof)
                    letters += int((np.minimum(p * len(p), 1) < alpha).sum())
    values = np.concatenate([np.ravel(s) for s in shares])
    return {"estimates": np.sort(values[np.isfinite(values)]), "letters": letters}


def banner_part(rows: int, questions: int, awkward: bool) -> None:
    df, codebook, kinds = banner_survey(rows, questions, awkward)
    nets = banner_nets(kinds)
    variables = list(BANNERS)

    def run() -> sk.report.Banner:
        return sk.report.banner(
            df,
            list(kinds),
            variables,
            top_box=2,
            nets=nets,
            codebook=codebook,
            test="columns",
            correction="bonferroni",
        )

    result = run()
    hand = banner_baseline(df, kinds, missing=99.0 if awkward else None)
    frame = result.frame
    banner_cells = frame[frame["banner"] != "Total"]
    # the Total column appears once in the banner and once per banner variable by hand
    mine = np.sort(
        np.concatenate(
            [
                banner_cells["estimate"].to_numpy(),
                np.repeat(
                    frame.loc[frame["banner"] == "Total", "estimate"].to_numpy(), len(BANNERS)
                ),
            ]
        )
    )
    mine = mine[np.isfinite(mine)]
    assert len(mine) == len(hand["estimates"]), (len(mine), len(hand["estimates"]))
    assert np.allclose(mine, hand["estimates"], rtol=1e-9), "banner and baseline differ"
    found = int(sum(len(x) for x in frame["letters"]))
    assert found == hand["letters"], (found, hand["letters"])
    floor = banner_baseline(df, kinds, missing=99.0 if awkward else None, counting="bincount")
    assert np.allclose(floor["estimates"], hand["estimates"], rtol=1e-9)
    assert floor["letters"] == hand["letters"]
    timed = best(run)
    code = 99.0 if awkward else None
    baseline = best(banner_baseline, df, kinds, 0.05, code)
    bincount = best(banner_baseline, df, kinds, 0.05, code, "bincount")
    columns = frame[["banner", "column"]].drop_duplicates().shape[0]
    print(
        f"banner: {rows:,} respondents x {len(kinds)} questions x {columns} columns "
        f"({'awkward' if awkward else 'plain'} data), {len(frame):,} cells, "
        f"{found:,} letters"
    )
    print("| step | seconds | ratio to baseline |")
    print("|---|---|---|")
    print(f"| hand-written pandas groupby + numpy tests | {baseline:.3f} | 1.00 |")
    print(
        f"| numpy floor: pd.factorize + np.bincount + numpy tests | {bincount:.3f} | "
        f"{bincount / baseline:.2f} |"
    )
    print(f"| sk.report.banner | {timed:.3f} | {timed / baseline:.2f} |")


DESIGN_PSUS = 2000
DESIGN_STRATA = 20


def design_frame(rows: int, questions: int, seed: int = 0) -> tuple[pd.DataFrame, Any, Any]:
    """The banner survey with a stratified cluster design: 2,000 PSUs in 20 strata."""
    df, codebook, kinds = banner_survey(rows, questions, False, seed)
    rng = np.random.default_rng(seed + 1)
    df["psu"] = rng.integers(0, DESIGN_PSUS, rows)
    df["stratum"] = df["psu"] % DESIGN_STRATA
    df["w"] = rng.lognormal(0, 0.5, rows)
    return df, codebook, kinds


def _rows_matrix(kind: str, labels: list[str]) -> tuple[Any, Any]:
    """Per answer code the banner rows it counts in (as banner_baseline), and its value."""
    if kind == "rating":
        values = np.array([float(v) for v in labels])
        order = np.argsort(values)
        matrix = np.eye(len(values))[:, order]
        top = (values >= 4).astype(float)[:, None]
        bottom = (values <= 2).astype(float)[:, None]
        return np.hstack([matrix, top, bottom]), values
    if kind == "choice":
        return np.hstack([np.eye(len(labels)), np.isin(labels, OPTIONS[:2])[:, None]]), None
    options = ["A", "B", "C"]
    return np.array([[o in x.split(";") for o in options] for x in labels], dtype=float), None


def design_baseline(df: pd.DataFrame, kinds: dict[str, str], alpha: float = 0.05) -> Any:
    """Design-based column letters by hand in numpy: each domain's PSU totals of its
    linearised influence (one ``np.bincount`` per question and banner variable), the
    stratified with-replacement variance of them (R's ``svyrecvar``), t statistics of every
    pair of columns on the pair's PSUs minus strata minus 1 degrees of freedom, and
    Bonferroni within each row. Returns the sorted |t| and the number of letters."""
    w = df["w"].to_numpy()
    psu = df["psu"].to_numpy()
    stratum_of = np.arange(DESIGN_PSUS) % DESIGN_STRATA
    n_h = np.bincount(stratum_of, minlength=DESIGN_STRATA).astype(float)
    t_all: list[Any] = []
    letters = 0
    for question, kind in kinds.items():
        codes, uniques = pd.factorize(df[question], use_na_sentinel=True)
        labels = [str(u) for u in uniques]
        if kind == "multi":  # an empty answer is "answered, no option"
            labels = ["" if x == "nan" else x for x in labels]
        matrix, values = _rows_matrix(kind, labels)
        if values is not None:
            matrix = np.hstack([matrix, values[:, None]])  # the mean's numerator
        k = len(labels)
        for name in BANNERS:
            groups, _ = pd.factorize(df[name])
            g = int(groups.max()) + 1
            ok = codes >= 0
            cell = (psu[ok] * g + groups[ok]) * k + codes[ok]
            table = np.bincount(cell, weights=w[ok], minlength=DESIGN_PSUS * g * k)
            table = table.reshape(DESIGN_PSUS, g, k)
            # psu x g x rows: weighted sums of each row's y (one 2-D product, not 2,000)
            sums = (table.reshape(-1, k) @ matrix).reshape(DESIGN_PSUS, g, -1)
            weight = table.sum(axis=2)  # psu x g: weights of the answered
            total_w = weight.sum(axis=0)
            estimate = sums.sum(axis=0) / total_w[:, None]
            z = (sums - weight[:, :, None] * estimate[None]) / total_w[None, :, None]
            z = z.reshape(DESIGN_PSUS, -1)
            means = np.eye(DESIGN_STRATA)[stratum_of].T @ z
            centred = z - (means / n_h[:, None])[stratum_of]
            scale = (n_h / (n_h - 1))[stratum_of][:, None]
            vcov = (centred * scale).T @ centred
            rows = matrix.shape[1]
            variance = np.diag(vcov).reshape(g, rows)
            seen = np.bincount(groups[ok] * DESIGN_PSUS + psu[ok], minlength=g * DESIGN_PSUS)
            present = (seen.reshape(g, DESIGN_PSUS) > 0).astype(float)
            strata = (present @ np.eye(DESIGN_STRATA)[stratum_of] > 0).astype(float)
            i, j = (np.array(side) for side in zip(*combinations(range(g), 2), strict=True))
            diagonal = np.einsum("arbr->abr", vcov.reshape(g, rows, g, rows))
            se = np.sqrt(variance[i] + variance[j] - 2 * diagonal[i, j])
            t = (estimate[i] - estimate[j]) / se
            union = np.maximum(present[i], present[j]).sum(axis=1)
            dof = union - np.maximum(strata[i], strata[j]).sum(axis=1) - 1
            p = 2 * stats.t.sf(np.abs(t), dof[:, None])
            t_all.append(np.abs(t).ravel())
            letters += int((np.minimum(p * len(i), 1) < alpha).sum())
    found = np.concatenate(t_all)
    return {"t": np.sort(found[np.isfinite(found)]), "letters": letters}


def banner_design_part(rows: int, questions: int) -> None:
    """``sk.report.banner`` on a design (column letters) against ``design_baseline``."""
    df, codebook, kinds = design_frame(rows, questions)
    design = sk.Design(df, weights="w", strata="stratum", psu="psu")
    nets = banner_nets(kinds)

    def run() -> sk.report.Banner:
        return sk.report.banner(
            design, list(kinds), list(BANNERS), top_box=2, nets=nets, codebook=codebook,
            test="columns", correction="bonferroni",
        )

    result = run()
    hand = design_baseline(df, kinds)
    tests = result.frame.attrs["tests"]
    mine = np.sort(np.abs(tests["statistic"].to_numpy(dtype=float)))
    mine = mine[np.isfinite(mine)]
    assert len(mine) == len(hand["t"]), (len(mine), len(hand["t"]))
    assert np.allclose(mine, hand["t"], rtol=1e-7), "banner and hand-written t differ"
    found = int(sum(len(x) for x in result.frame["letters"]))
    assert found == hand["letters"], (found, hand["letters"])
    timed = best(run)
    baseline = best(design_baseline, df, kinds)

    def against_total() -> sk.report.Banner:
        return sk.report.banner(
            design, list(kinds), list(BANNERS), top_box=2, nets=nets, codebook=codebook,
            test="total", correction="bonferroni",
        )

    total = best(against_total)
    print(
        f"banner on a design: {rows:,} respondents, {DESIGN_PSUS:,} PSUs in {DESIGN_STRATA} "
        f"strata, {len(kinds)} questions x 20 columns, column letters; {len(tests):,} tests, "
        f"{found:,} letters"
    )
    print("| step | seconds | ratio to baseline |")
    print("|---|---|---|")
    hand_name = "hand-written numpy (PSU totals, stratified variance, t tests)"
    print(f"| {hand_name} | {baseline:.3f} | 1.00 |")
    print(f"| sk.report.banner(design) | {timed:.3f} | {timed / baseline:.2f} |")
    print(f"| sk.report.banner(design, test='total') (no hand-written baseline) | {total:.3f} | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--workbook-rows", type=int, default=200_000)
    parser.add_argument(
        "--part", choices=["label", "banner", "workbook", "all"], default="all"
    )
    parser.add_argument("--banner-questions", type=int, default=40)
    parser.add_argument("--data", choices=["plain", "awkward"], default="plain")
    parser.add_argument(
        "--design-rows", type=int, default=100_000,
        help="respondents of the banner on a design (0: skip it)",
    )
    args = parser.parse_args()
    if args.part in ("banner", "all"):
        banner_part(args.rows, args.banner_questions, args.data == "awkward")
        if args.design_rows:
            banner_design_part(args.design_rows, args.banner_questions)
    if args.part == "workbook":
        workbook(args.workbook_rows, args.questions)
    if args.part in ("banner", "workbook"):
        return
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
