"""Workbooks surveykit writes: strings come back as the same text, never formulas."""

from __future__ import annotations

import ast
import io
from datetime import datetime
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import surveykit
from surveykit._util.sheets import CELL_CHARACTERS, new_workbook, save_workbook, write_frame
from surveykit.errors import ExportError
from tests.helpers.files import FORMULA_ANSWERS

TEXTS = [*FORMULA_ANSWERS, "=", "plain"]


def cells(path: Path | io.BytesIO) -> list[tuple[object, str]]:
    sheet = openpyxl.load_workbook(path).worksheets[0]
    return [(c.value, c.data_type) for row in sheet.iter_rows() for c in row]


def test_a_saved_workbooks_strings_are_text_exactly_as_they_were(tmp_path: Path) -> None:
    book = new_workbook()
    assert book.worksheets == []
    sheet = book.create_sheet("answers")
    for row, text in enumerate(TEXTS, start=1):
        sheet.cell(row, 1, text)
        sheet.cell(row, 2, row)
    save_workbook(book, tmp_path / "a.xlsx")
    read = cells(tmp_path / "a.xlsx")
    assert read[0::2] == [(text, "s") for text in TEXTS]
    assert read[1::2] == [(row, "n") for row in range(1, len(TEXTS) + 1)]


def test_a_frame_keeps_its_strings_as_text_and_its_numbers_and_dates(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "=answer": TEXTS,
            "n": range(len(TEXTS)),
            "x": [0.5] * len(TEXTS),
            "when": [datetime(2026, 1, 2, 3, 4, 5)] * len(TEXTS),
        }
    )
    frame.loc[1, "x"] = float("nan")
    stream = io.BytesIO()
    write_frame(frame, stream)
    read = cells(io.BytesIO(stream.getvalue()))
    assert read[:4] == [("=answer", "s"), ("n", "s"), ("x", "s"), ("when", "s")]
    rows = [read[i : i + 4] for i in range(4, len(read), 4)]
    assert [row[0] for row in rows] == [(text, "s") for text in TEXTS]
    assert [row[1] for row in rows] == [(n, "n") for n in range(len(TEXTS))]
    assert rows[0][2] == (0.5, "n") and rows[1][2][0] is None  # empty, as pandas writes it
    assert rows[0][3] == (datetime(2026, 1, 2, 3, 4, 5), "d")


SRC = Path(surveykit.__file__).parent
SURVEYKIT_TO_EXCEL = {"result", "report", "self"}
"""Receivers whose ``.to_excel`` is surveykit's own (``Report.to_excel``), not pandas'."""


def _makes_a_workbook(tree: ast.AST) -> list[int]:
    """Lines that make or save a workbook other than through ``surveykit._util.sheets``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("openpyxl"):
            if any(alias.name == "Workbook" for alias in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.Attribute | ast.Name) and (
            getattr(node, "attr", None) in ("Workbook", "ExcelWriter")
            or getattr(node, "id", None) == "ExcelWriter"
        ):
            lines.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "to_excel"
            and not (
                isinstance(node.func.value, ast.Name)
                and node.func.value.id in SURVEYKIT_TO_EXCEL
            )
        ):
            lines.append(node.lineno)  # pandas' DataFrame.to_excel writes "=1" as a formula
    return lines


def test_no_module_makes_a_workbook_but_through_the_helper() -> None:
    found = {
        f"{path.relative_to(SRC)}:{line}"
        for path in SRC.rglob("*.py")
        if path != SRC / "_util" / "sheets.py"
        for line in _makes_a_workbook(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert not found, "write workbooks with surveykit._util.sheets (text stays text)"


def test_the_guard_sees_each_way_to_make_a_workbook() -> None:
    for source in (
        "from openpyxl import Workbook",
        "import openpyxl\nopenpyxl.Workbook()",
        "import pandas as pd\npd.ExcelWriter('x.xlsx')",
        "frame.to_excel('x.xlsx', index=False)",
    ):
        assert _makes_a_workbook(ast.parse(source)), source
    assert not _makes_a_workbook(ast.parse("result.to_excel(out)"))


def test_a_frame_with_text_xlsx_cannot_store_is_refused_before_writing() -> None:
    stream = io.BytesIO()
    with pytest.raises(ExportError, match=r"'b', row 2 .*'x\\x1fy' .*U\+001F"):
        write_frame(pd.DataFrame({"a": [1, 2], "b": ["ok\ttab\r\n", "x\x1fy"]}), stream)
    with pytest.raises(ExportError, match=r"column 'a\\x00'"):
        write_frame(pd.DataFrame({"a\x00": [1]}), stream)
    assert stream.getvalue() == b""


def test_a_text_longer_than_a_cell_holds_is_refused_not_cut(tmp_path: Path) -> None:
    longest = "=" + "x" * (CELL_CHARACTERS - 1)
    write_frame(pd.DataFrame({"a": [longest]}), tmp_path / "ok.xlsx")
    assert cells(tmp_path / "ok.xlsx")[1] == (longest, "s")
    with pytest.raises(ExportError, match=r"'a', row 1 .*32,768 characters.*32,767"):
        write_frame(pd.DataFrame({"a": [longest + "y"]}), tmp_path / "long.xlsx")
