"""sk.to_excel and the report workbook: respondent text is written as text, never a formula."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook

import surveykit as sk
from surveykit import analysis
from surveykit.report import Question, build_report

ANSWERS = ["=1+1", '=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(A1)", "#N/A"]


def _cells(path: Path) -> list[tuple[object, str]]:
    book = load_workbook(path)
    return [
        (cell.value, cell.data_type)
        for sheet in book.worksheets
        for row in sheet.iter_rows()
        for cell in row
        if cell.value is not None
    ]


def _answers() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Q1": [answer for answer in ANSWERS for _ in range(3)],
            "group": ["=A1", "+B2", "@C3"] * len(ANSWERS),
        }
    )


def test_answers_in_estimate_tables_and_crosstabs_are_text(tmp_path: Path) -> None:
    df = _answers()
    table = analysis.proportions(df, "Q1")
    table.attrs["question_text"] = '=HYPERLINK("http://x","the question")'
    crosstab = analysis.crosstab(df, "Q1", "group")
    sk.to_excel({"=sheet": table, "crosstab": crosstab}, tmp_path / "t.xlsx")
    cells = _cells(tmp_path / "t.xlsx")
    assert not [cell for cell in cells if cell[1] in ("f", "e")]
    texts = {value for value, kind in cells if kind == "s"}
    assert set(ANSWERS) | {"=A1 (B)", '=HYPERLINK("http://x","the question")'} <= texts
    assert any(kind == "n" and isinstance(value, float) for value, kind in cells)


def test_the_report_workbook_writes_answers_as_text(tmp_path: Path) -> None:
    codes = [str(n) for n in range(1, len(ANSWERS) + 1)]
    df = _answers().assign(Q1=[code for code in codes for _ in range(3)])
    question = Question(
        "Q1", '=HYPERLINK("http://x","Q")', "choice", dict(zip(codes, ANSWERS, strict=True))
    )
    report = build_report(df, sk.Codebook([question]), by="group")
    report.to_excel(tmp_path / "report.xlsx")
    cells = _cells(tmp_path / "report.xlsx")
    assert not [cell for cell in cells if cell[1] in ("f", "e")]
    texts = {value for value, kind in cells if kind == "s"}
    assert set(ANSWERS) | {"=A1", "+B2", "@C3", '=HYPERLINK("http://x","Q")'} <= texts


def test_text_an_xlsx_file_cannot_hold_is_an_export_error(tmp_path: Path) -> None:
    table = analysis.proportions(pd.DataFrame({"Q1": ["ok", "a\x01b"]}), "Q1")
    with pytest.raises(sk.ExportError, match=r"U\+0001"):
        sk.to_excel({"t": table}, tmp_path / "t.xlsx")
    assert list(tmp_path.iterdir()) == []


def test_flagged_estimates_carry_a_mark_and_the_sheet_a_legend(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {
            "g": ["big"] * 400 + ["small"] * 20,
            "Q": ["a"] * 396 + ["b"] * 4 + ["a"] * 20,
        }
    )
    table = analysis.proportions(df, "Q", by="g")
    flags = table.set_index(["g", "option"])["flag"].to_dict()
    assert flags == {
        ("big", "a"): "",
        ("big", "b"): "",
        ("small", "a"): "unreliable",  # n = 20: effective sample size < 30
        ("small", "b"): "unreliable",
    }
    sk.to_excel({"shares": table}, tmp_path / "flags.xlsx")
    sheet = load_workbook(tmp_path / "flags.xlsx")["shares"]
    rows = [[cell.value for cell in row] for row in sheet.iter_rows()]
    header = rows[2]
    mark = header.index("estimate") + 1
    assert header[mark] is None  # the mark's own narrow column, right after the figure
    body = rows[3 : 3 + len(table)]
    assert [row[mark] for row in body] == [None, None, "\u2021", "\u2021"]
    assert [row[header.index("flag")] for row in body] == [None, None, "unreliable", "unreliable"]
    assert all(isinstance(row[header.index("estimate")], int | float) for row in body)  # a number
    legend = [value for row in rows[3 + len(table) :] for value in row if value]
    assert len(legend) == 1
    assert legend[0].startswith("\u2021 unreliable: effective sample size under 30")
    assert "NCHS" in legend[0] and "\u2020 review" in legend[0]


def test_a_table_without_flags_has_no_legend(tmp_path: Path) -> None:
    table = analysis.proportions(pd.DataFrame({"Q": ["a"] * 300 + ["b"] * 300}), "Q")
    assert (table["flag"] == "").all()
    sk.to_excel({"shares": table}, tmp_path / "plain.xlsx")
    sheet = load_workbook(tmp_path / "plain.xlsx")["shares"]
    values = [cell.value for row in sheet.iter_rows() for cell in row if cell.value]
    assert not [v for v in values if isinstance(v, str) and ("\u2021" in v or "\u2020" in v)]


def test_a_crosstab_marks_low_bases_flags_and_a_sparse_test(tmp_path: Path) -> None:
    from scipy.stats.contingency import expected_freq

    df = pd.DataFrame(
        {
            "g": ["big"] * 400 + ["small"] * 12,
            "Q": ["a"] * 300 + ["b"] * 99 + ["c"] + ["a"] * 11 + ["c"],
        }
    )
    table = analysis.crosstab(df, "Q", "g")
    observed = pd.crosstab(df["Q"], df["g"]).to_numpy()
    assert (expected_freq(observed) < 1).any()  # so Cochran's rule fires
    sk.to_excel({"crosstab": table}, tmp_path / "x.xlsx")
    sheet = load_workbook(tmp_path / "x.xlsx")["crosstab"]
    rows = [[cell.value for cell in row] for row in sheet.iter_rows()]
    header = rows[2]
    assert header[1:5] == ["big (A)", None, "small (B)", "*"]  # the low base's mark
    by_label = {row[0]: row for row in rows if row and isinstance(row[0], str)}
    base = by_label["Base (n, unweighted)"]
    assert base[1:5] == [400, None, 12, "*"]
    # the small column's cells are unreliable (n 12): the mark beside each percentage
    for answer in ("a", "b", "c"):
        assert "\u2021" in str(by_label[answer][4])
    assert by_label["a"][2] is None or "\u2021" not in str(by_label["a"][2])
    texts = [v for row in rows for v in row if isinstance(v, str)]
    caution = [t for t in texts if t.startswith("Caution: ")]
    assert len(caution) == 1 and "Cochran" in caution[0]
    low = "* low base: fewer than 30 respondents answered in small"
    assert any(t.startswith(low) for t in texts)
    assert any(t.startswith("\u2021 unreliable") for t in texts)


def test_a_crosstab_of_large_bases_has_no_marks(tmp_path: Path) -> None:
    df = pd.DataFrame({"g": ["x", "y"] * 300, "Q": ["a", "b", "b", "a"] * 150})
    sk.to_excel({"crosstab": analysis.crosstab(df, "Q", "g")}, tmp_path / "x.xlsx")
    texts = [
        v
        for row in load_workbook(tmp_path / "x.xlsx")["crosstab"].iter_rows(values_only=True)
        for v in row
        if isinstance(v, str)
    ]
    assert not [t for t in texts if t.startswith(("Caution", "* low base", "\u2021"))]
    assert "*" not in texts
