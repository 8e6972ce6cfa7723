"""The report workbook says what it is: cover, contents, bases, formats, rates (openpyxl)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

import surveykit as sk
from surveykit.report import build_report
from surveykit.report._excel import COUNT, MISSING_GROUP, PERCENT, WEIGHTED

TARGETS = {"channel": {"SMS": 0.4, "WhatsApp": 0.3, "Email": 0.2, "Facebook": 0.1}}
CODES = ["1.1", "1.1", "1.2", "2.11", "2.20", "2.30", "3.19", "3.30", "4.70"]


@pytest.fixture(scope="module")
def results() -> tuple[pd.DataFrame, sk.Codebook]:
    with sk.Sandbox(seed=3) as sandbox:
        sandbox.add_generated_survey("TRACK", 900, questions=4, seed=21, wave=1)
        client = sk.Client.sandbox(sandbox)
        with client:
            df = client.surveys.results("TRACK")
            codebook = sandbox.codebook("TRACK")
    rng = np.random.default_rng(7)
    df["region"] = pd.Series(
        rng.choice(np.array(["North", "South", None], dtype=object), len(df), p=[0.5, 0.45, 0.05])
    )
    df["base"] = rng.lognormal(0, 0.3, len(df))
    df["stratum"] = rng.choice(["a", "b"], len(df))
    return df, codebook


@pytest.fixture(scope="module")
def dispositions(results: tuple[pd.DataFrame, sk.Codebook]) -> pd.DataFrame:
    df, _ = results
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {"disposition": rng.choice(CODES, len(df)), "wave": rng.choice(["w1", "w2"], len(df))}
    )


@pytest.fixture(scope="module")
def weighted(
    results: tuple[pd.DataFrame, sk.Codebook], dispositions: pd.DataFrame, tmp_path_factory: Any
) -> tuple[sk.report.Report, Path]:
    df, codebook = results
    report = build_report(
        df,
        codebook,
        weights="base",
        strata="stratum",
        targets=TARGETS,
        by=["channel", "region"],
        dispositions=dispositions,
    )
    path = tmp_path_factory.mktemp("wb") / "weighted.xlsx"
    report.to_excel(path)
    return report, path


@pytest.fixture(scope="module")
def plain(
    results: tuple[pd.DataFrame, sk.Codebook], tmp_path_factory: Any
) -> tuple[sk.report.Report, Path]:
    df, codebook = results
    report = build_report(df, codebook, by="region")
    path = tmp_path_factory.mktemp("wb") / "plain.xlsx"
    report.to_excel(path)
    return report, path


def _cover(path: Path) -> dict[str, str]:
    sheet = load_workbook(path)["Cover"]
    return {
        str(sheet.cell(r, 1).value): str(sheet.cell(r, 2).value)
        for r in range(3, sheet.max_row + 1)
        if sheet.cell(r, 2).value is not None
    }


def _header_row(sheet: Any) -> int:
    return 3 if sheet["A2"].value else 1


# ------------------------------------------------------------------ the cover


def test_the_cover_says_what_the_report_is(
    weighted: tuple[sk.report.Report, Path], results: tuple[pd.DataFrame, sk.Codebook]
) -> None:
    report, path = weighted
    df, _ = results
    book = load_workbook(path)
    assert book.sheetnames[:2] == ["Cover", "Contents"]
    assert book["Cover"]["A1"].value == "Survey report: TRACK"
    cover = _cover(path)
    assert cover["Survey"] == "TRACK"
    times = pd.concat([df[c].dropna() for c in ("invited", "started", "completed")])
    assert cover["Fieldwork"].startswith(f"{times.min():%Y-%m-%d} to {times.max():%Y-%m-%d}")
    completed = int(df["completed"].notna().sum())
    assert cover["Respondents"] == f"{len(df):,} in the results; {completed:,} completed"
    assert cover["Design variables"] == "weights 'base', strata 'stratum'"
    assert cover["Raking targets"] == (
        "channel: SMS 40.0%, WhatsApp 30.0%, Email 20.0%, Facebook 10.0%"
    )
    assert cover["Variance method"].startswith("Taylor linearisation")
    assert "svyrecvar" in cover["Variance method"]
    w = report.weights.to_numpy()
    kish = len(w) * (w**2).sum() / w.sum() ** 2
    assert cover["Design effect (Kish)"].startswith(f"{kish:.2f} from the weights")
    assert f"{w.sum() ** 2 / (w**2).sum():,.1f} of {len(w):,}" in cover["Design effect (Kish)"]
    assert cover["Confidence level"] == "95%"
    assert "Rao-Scott F" in cover["Tests"] and "Bonferroni" in cover["Tests"]
    assert "logit" in cover["Intervals"]
    answers = df["Q4"].astype("string").str.strip().fillna("").ne("").sum()
    assert cover["Not tabulated"] == f"Q4 (free text, {answers:,} answers)"
    assert "weighted" in cover["Methods"] and "raked to channel" in cover["Methods"]
    assert cover["Groups (by)"] == "channel, region"


def test_the_cover_quotes_the_aapor_rates_computed_from_the_formulas(
    weighted: tuple[sk.report.Report, Path], dispositions: pd.DataFrame
) -> None:
    _, path = weighted
    codes = dispositions["disposition"]
    i = (codes == "1.1").sum()
    p = (codes == "1.2").sum()
    r = (codes == "2.11").sum()
    nc = (codes == "2.20").sum()
    o = (codes == "2.30").sum()
    unknown = codes.isin(["3.19", "3.30"]).sum()
    ne = (codes == "4.70").sum()
    e = (i + p + r + nc + o) / (i + p + r + nc + o + ne)
    rr1 = i / (i + p + r + nc + o + unknown)
    rr3 = i / (i + p + r + nc + o + e * unknown)
    coop1 = i / (i + p + r + o)
    cover = _cover(path)
    rates = cover["Outcome rates (AAPOR)"]
    assert rates.startswith(f"RR1 {rr1:.1%}, RR3 {rr3:.1%}, COOP1 {coop1:.1%}")
    assert f"(e = {e:.3f})" in rates
    assert f"RR1 {rr1:.1%}" in cover["Methods"]


def test_an_unweighted_report_says_so(plain: tuple[sk.report.Report, Path]) -> None:
    _, path = plain
    cover = _cover(path)
    assert cover["Weighting"].startswith("none")
    assert cover["Variance method"] == "simple random sampling (textbook formulas)"
    assert "Pearson chi-square" in cover["Tests"] and "z-test" in cover["Tests"]
    assert "Outcome rates (AAPOR)" not in cover
    assert "Outcome rates" not in load_workbook(path).sheetnames


# ------------------------------------------------------------------ contents, printing


def test_contents_links_every_other_sheet(weighted: tuple[sk.report.Report, Path]) -> None:
    report, path = weighted
    book = load_workbook(path)
    sheet = book["Contents"]
    links = {}
    for row in range(4, sheet.max_row + 1):
        cell = sheet.cell(row, 1)
        if cell.value is not None:
            links[cell.value] = cell.hyperlink.location
    others = [name for name in book.sheetnames if name != "Contents"]
    assert list(links) == others
    for name, location in links.items():
        assert location == "'" + name.replace("'", "''") + "'!A1"
    assert set(report.tables) <= set(links)
    assert {"Outcome rates", "Not tabulated"} <= set(links)
    assert book["Cover"].cell(book["Cover"].max_row, 1).hyperlink.location == "'Contents'!A1"


def test_every_sheet_prints_one_page_wide(weighted: tuple[sk.report.Report, Path]) -> None:
    _, path = weighted
    book = load_workbook(path)
    for sheet in book.worksheets:
        assert sheet.sheet_properties.pageSetUpPr.fitToPage, sheet.title
        assert sheet.page_setup.fitToWidth == 1, sheet.title
        assert sheet.page_setup.fitToHeight == 0, sheet.title
        expected = "landscape" if sheet.max_column > 9 else "portrait"
        if sheet.title not in ("Cover", "Contents"):
            assert sheet.page_setup.orientation == expected, sheet.title
    assert book["Q1 NPS"].page_setup.orientation == "landscape"


# ------------------------------------------------------------------ tables


def _answered_weights(report: sk.report.Report, key: str) -> tuple[int, float]:
    labelled = report.labelled
    answered = labelled[key].notna().to_numpy()
    weights = report.weights.to_numpy() if report.weights is not None else np.ones(len(answered))
    return int(answered.sum()), float(weights[answered].sum())


@pytest.mark.parametrize("table", ["Q1 NPS", "Q2 %", "Q2 % by channel, region"])
def test_tables_name_their_base_and_say_weighted(
    weighted: tuple[sk.report.Report, Path], plain: tuple[sk.report.Report, Path], table: str
) -> None:
    for report, path in (weighted, plain):
        name = table.replace("channel, region", "region") if report.by == ["region"] else table
        line = load_workbook(path)[name]["A2"].value
        key = name.split()[0]
        n, total = _answered_weights(report, key)
        assert n == report.tables[name]["n"].max() or "by" in name
        assert line.startswith(f"Base: all respondents answering {key}, n = {n:,} (unweighted)")
        if report.weights is not None:
            assert f"; weighted base {total:,.1f}" in line
            assert line.endswith("Weighted figures, design-based.")
        else:
            assert "weighted base" not in line and line.endswith("Unweighted figures.")


def test_counts_are_rounded_by_format_only(weighted: tuple[sk.report.Report, Path]) -> None:
    report, path = weighted
    frame = report.tables["Q1 NPS"]
    sheet = load_workbook(path)["Q1 NPS"]
    header = [c.value for c in sheet[3]]
    row = {h: c for h, c in zip(header, sheet[4], strict=False)}
    for column in ("detractors_weighted", "passives_weighted", "promoters_weighted"):
        # every digit openpyxl stores (15 significant), not the rounded figure shown
        assert row[column].value == pytest.approx(frame[column].iloc[0], rel=1e-14)
        assert row[column].value != round(row[column].value)
        assert row[column].number_format == COUNT
    assert row["n"].number_format == COUNT and isinstance(row["n"].value, int)
    assert row["n_eff"].number_format == WEIGHTED
    shares = load_workbook(path)["Q2 %"]
    header = [c.value for c in shares[3]]
    cells = {h: c for h, c in zip(header, shares[4], strict=False)}
    assert cells["estimate"].number_format == PERCENT
    assert cells["count"].number_format == COUNT
    assert cells["count"].value == pytest.approx(report.tables["Q2 %"]["count"].iloc[0], rel=1e-14)


def test_a_missing_group_is_labelled(weighted: tuple[sk.report.Report, Path]) -> None:
    report, path = weighted
    sheet = load_workbook(path)["Q2 % by channel, region"]
    header = [c.value for c in sheet[3]]
    column = header.index("region") + 1
    frame = report.tables["Q2 % by channel, region"]
    values = [sheet.cell(r, column).value for r in range(4, 4 + len(frame))]
    assert values.count(MISSING_GROUP) == int(frame["region"].isna().sum()) > 0
    assert None not in values and set(values) == {"North", "South", MISSING_GROUP}


def test_crosstabs_show_column_bases(weighted: tuple[sk.report.Report, Path]) -> None:
    report, path = weighted
    sheet = load_workbook(path)["Q2 x region"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    labelled = report.labelled
    answered = labelled[labelled["Q2"].notna() & labelled["region"].notna()]
    header = [c.value for c in sheet[3]]
    for group in ("North", "South"):
        column = next(i for i, h in enumerate(header, start=1) if str(h).startswith(group))
        n = sheet.cell(rows["Base (n, unweighted)"], column)
        assert n.value == int((answered["region"] == group).sum()) and n.number_format == COUNT
        w = sheet.cell(rows["Weighted base"], column)
        expected = answered.loc[answered["region"] == group, "weight"].sum()
        assert w.value == pytest.approx(expected, rel=1e-12) and w.number_format == COUNT
    assert sheet["A2"].value.startswith("Base: all respondents answering Q2 with a region value")
    legend = next(v for v in rows if isinstance(v, str) and v.startswith("Letters:"))
    assert "in the cell to the right of a column's percentage" in legend
    assert "significantly lower" in legend


def test_a_one_group_by_says_why_there_is_no_test(tmp_path: Path) -> None:
    df = pd.DataFrame({"Q": ["a", "b", "a", "b", "a"], "g": ["only"] * 5})
    codebook = sk.Codebook([sk.report.Question("Q", "Pick one", "choice", {"a": "A", "b": "B"})])
    build_report(df, codebook, by="g").to_excel(tmp_path / "one.xlsx")
    sheet = load_workbook(tmp_path / "one.xlsx")["Q x g"]
    texts = [c.value for row in sheet.iter_rows() for c in row if isinstance(c.value, str)]
    assert any(t.startswith("No test: g has one group (only)") for t in texts)
    assert not any(t.startswith("Letters:") for t in texts)
    assert "Pearson chi-square" not in texts
    cover = _cover(tmp_path / "one.xlsx")  # results without timestamps or a reference
    assert cover["Survey"] == "(not given)"
    assert cover["Fieldwork"] == "not known (the results hold no timestamps)"


def test_an_extra_flag_column_is_written_as_it_is(
    weighted: tuple[sk.report.Report, Path], tmp_path: Path
) -> None:
    """A reliability ``flag`` column (text) beside the figures changes nothing else."""
    report, _ = weighted
    table = report.tables["Q2 %"].copy()
    table["flag"] = ["", "*", ""]
    sk.to_excel({"Q2": table}, tmp_path / "flag.xlsx")
    sheet = load_workbook(tmp_path / "flag.xlsx")["Q2"]
    header = [c.value for c in sheet[3]]
    assert "flag" in header
    assert sheet.cell(5, header.index("flag") + 1).value == "*"
    assert sheet["A2"].value.startswith("Base: all respondents answering Q2")
    assert sheet.cell(4, header.index("estimate") + 1).number_format == PERCENT


# ------------------------------------------------------------------ outcome rates


def test_the_rates_sheet_has_every_rate_overall_and_per_wave(
    weighted: tuple[sk.report.Report, Path], dispositions: pd.DataFrame
) -> None:
    report, path = weighted
    sheet = load_workbook(path)["Outcome rates"]
    assert [c.value for c in sheet[3]][:5] == ["rate", "definition", "All", "w1", "w2"]
    cells = {sheet.cell(r, 1).value: r for r in range(4, sheet.max_row + 1)}
    assert list(cells)[:16] == list(sk.campaign.RATES)
    for column, wave in ((3, None), (4, "w1"), (5, "w2")):
        codes = dispositions["disposition"]
        if wave is not None:
            codes = codes[dispositions["wave"] == wave]
        i, all_cases = (codes == "1.1").sum(), len(codes[codes != "4.70"])
        rr1 = sheet.cell(cells["RR1"], column)
        assert rr1.value == pytest.approx(i / all_cases, rel=1e-12)
        assert rr1.number_format == PERCENT
        assert sheet.cell(cells["cases (all dispositions)"], column).value == all_cases
    assert report.outcome_rates is not None
    assert set(report.outcome_rates["wave"]) == {"All", "w1", "w2"}


def test_rates_given_ready_made_and_refusing_both(
    results: tuple[pd.DataFrame, sk.Codebook], dispositions: pd.DataFrame
) -> None:
    df, codebook = results
    rates = sk.outcome_rates(dispositions, e=0.5)
    report = build_report(df, codebook, questions=["Q2"], outcome_rates=rates)
    assert report.outcome_rates is not None
    assert (report.outcome_rates["wave"] == "All").all()
    pd.testing.assert_series_equal(
        report.outcome_rates["value"], rates["value"], check_names=False
    )
    with pytest.raises(sk.ExportError, match="not both"):
        build_report(df, codebook, dispositions=dispositions, outcome_rates=rates)
    with pytest.raises(sk.DispositionError):
        build_report(df, codebook, dispositions=pd.DataFrame({"disposition": ["9.9"]}))


def test_long_lines_wrap_within_the_table_width(weighted: tuple[sk.report.Report, Path]) -> None:
    """Titles, bases and notes wrap across the table's columns: printing stays one page
    wide without shrinking the table to fit a line running far to its right."""
    _, path = weighted
    book = load_workbook(path)
    sheet = book["Q2 x region"]
    merged = {str(r) for r in sheet.merged_cells.ranges}
    last = sheet.cell(3, sheet.max_column).column_letter
    legend = next(
        r for r in range(1, sheet.max_row + 1) if str(sheet.cell(r, 1).value).startswith("Letters:")
    )
    for row in (2, legend):
        assert f"A{row}:{last}{row}" in merged
        assert sheet.cell(row, 1).alignment.wrap_text
        assert sheet.row_dimensions[row].height >= 15
    design = book["Design"]
    widths = [design.column_dimensions[c].width for c in ("A", "B")]
    assert max(widths) <= 60
    tests = next(r for r in range(1, design.max_row + 1) if design.cell(r, 1).value == "tests")
    assert design.cell(tests, 2).alignment.wrap_text


# ------------------------------------------------------------------ banner and verbatims


@pytest.fixture(scope="module")
def bannered(
    results: tuple[pd.DataFrame, sk.Codebook], tmp_path_factory: Any
) -> tuple[sk.report.Report, Path]:
    df, codebook = results
    report = build_report(
        df,
        codebook,
        weights="base",
        strata="stratum",
        banner=["channel", "region"],
        top_box=2,
        verbatims=True,
    )
    path = tmp_path_factory.mktemp("wb") / "bannered.xlsx"
    report.to_excel(path)
    return report, path


def test_the_banner_sheet_holds_the_designs_banner(
    results: tuple[pd.DataFrame, sk.Codebook], bannered: tuple[sk.report.Report, Path]
) -> None:
    df, codebook = results
    report, path = bannered
    assert report.banner is not None
    # the same banner straight from sk.report.banner on the same design and labels
    design = sk.Design(sk.label(df, codebook), weights="base", strata="stratum")
    expected = sk.report.banner(
        design, ["Q1", "Q2", "Q3"], ["channel", "region"], top_box=2, codebook=codebook
    ).frame
    frame = report.banner.frame
    assert frame.attrs["questions"] == ["Q1", "Q2", "Q3"]  # the free-text Q4 is no row
    pd.testing.assert_frame_equal(frame, expected, rtol=1e-12)
    assert frame.attrs["weights"]  # design-based, not the unweighted figures
    book = load_workbook(path)
    assert "Banner" in book.sheetnames
    sheet = book["Banner"]
    shares = sorted(
        cell.value
        for row in sheet.iter_rows()
        for cell in row
        if isinstance(cell.value, int | float) and cell.number_format == "0.0%"
    )
    shown = frame.loc[(frame["row"] != "Mean") & frame["estimate"].notna(), "estimate"]
    np.testing.assert_allclose(shares, np.sort(shown.to_numpy()), rtol=1e-12)
    headers = {cell.value for cell in sheet[5] if cell.value}
    assert "North (A)" in headers and "Total" in headers
    contents = book["Contents"]
    listed = {contents.cell(r, 1).value: r for r in range(4, contents.max_row + 1)}
    assert "Banner" in listed
    link = contents.cell(listed["Banner"], 1).hyperlink
    assert link is not None and link.location == "'Banner'!A1"
    assert contents.cell(listed["Banner"], 2).value.startswith("Banner table: 3 questions by")
    assert "Banner table" in _cover(path)


def test_the_verbatims_sheet_keeps_every_answer_as_text(tmp_path: Path) -> None:
    answers = ["=1+1", '=HYPERLINK("http://x","y")', "#N/A", "+1", "fine", "", None, "@SUM(A1)"]
    df = pd.DataFrame(
        {
            "respondentId": [f"=R{i}" for i in range(len(answers))],
            "Q1": [1, 2, 3, 4, 5, 1, 2, 3],
            "Q2": answers,
        }
    )
    codebook = sk.Codebook(
        [
            sk.report.Question("Q1", "Rate us", "rating", min=1, max=5),
            sk.report.Question("Q2", "Anything else?", "text"),
        ]
    )
    report = build_report(df, codebook, verbatims=True)
    given = [a for a in answers if a]  # the empty and missing answers are no verbatim
    assert report.verbatims is not None
    assert report.verbatims["answer"].tolist() == given
    path = tmp_path / "v.xlsx"
    report.to_excel(path)
    book = load_workbook(path)
    sheet = book["Verbatims"]
    assert [c.value for c in sheet[3]] == ["respondentId", "question", "answer"]
    body = [[cell for cell in row] for row in sheet.iter_rows(min_row=4)]
    assert [row[2].value for row in body] == given
    assert [row[0].value for row in body] == [f"=R{i}" for i, a in enumerate(answers) if a]
    assert all(cell.data_type == "s" for row in body for cell in row)  # text, no formula
    assert "Verbatims" in _cover(path)["Not tabulated"]
    without = build_report(df, codebook)
    assert without.verbatims is None
    without.to_excel(tmp_path / "w.xlsx")
    assert "Verbatims" not in load_workbook(tmp_path / "w.xlsx").sheetnames


def test_banner_mistakes_are_export_errors(results: tuple[pd.DataFrame, sk.Codebook]) -> None:
    df, codebook = results
    with pytest.raises(sk.ExportError, match="banner: 'nope' is not a column of the results"):
        build_report(df, codebook, banner=["channel", "nope"])
    with pytest.raises(sk.ExportError, match="top_box goes with banner="):
        build_report(df, codebook, top_box=2)
    with pytest.raises(sk.ExportError, match="no question a banner table shows"):
        build_report(df, codebook, questions=["Q2", "Q4"], banner="Q2")
