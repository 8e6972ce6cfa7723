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
