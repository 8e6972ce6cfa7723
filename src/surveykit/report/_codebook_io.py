"""Codebook files: JSON, and the spreadsheet layout as CSV or XLSX (one row per value label).

Spreadsheet rules (CSV and XLSX alike): a header row with ``key`` and ``code`` and
``label`` (and optionally ``text``, ``kind``, ``min``, ``max``, ``separator``,
``missing``), any column order; then one row per value label or missing code, rows of a
question in order (they need not be next to each other). The question fields may be given
on every row of a question or on one only (blank elsewhere), never two different values.
``missing`` is ``yes``/``true``/``1`` on the rows of missing codes (their ``label`` is the
reason). A question with no labels is one row with a blank ``code`` and ``label``. Errors
name the spreadsheet row (the header is row 1) and column.

Reading gives the questions and writing takes them: :meth:`Codebook.read
<surveykit.report.Codebook.read>` and :meth:`~surveykit.report.Codebook.write` are the
codebook's side, so this module knows questions only (``_question``), never a codebook.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

from surveykit._util.atomic import atomic_path
from surveykit._util.sheets import new_workbook, save_workbook
from surveykit.errors import CodebookError
from surveykit.report._question import (
    FRAME_COLUMNS,
    Question,
    code_text,
    questions_from_dict,
    questions_to_dict,
)

SUFFIXES: Final = (".json", ".csv", ".xlsx")
SHEET: Final = "codebook"
_TRUE: Final = frozenset({"yes", "y", "true", "1", "x"})
_FALSE: Final = frozenset({"", "no", "n", "false", "0"})
_QUESTION_FIELDS: Final = ("text", "kind", "min", "max", "separator")


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise CodebookError(
            f"{path.name}: a codebook file is {', '.join(SUFFIXES)}, not {suffix or 'no suffix'!r}"
        )
    return suffix


def read_codebook(path: Path) -> list[Question]:
    """The questions of a codebook file (:meth:`Codebook.read`), in order."""
    suffix = _suffix(path)
    if suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CodebookError(
                f"{path.name}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
        try:
            return questions_from_dict(data)
        except CodebookError as exc:
            raise CodebookError(f"{path.name}: {exc}") from None
    rows = _csv_rows(path) if suffix == ".csv" else _xlsx_rows(path)
    try:
        return questions_from_rows(rows)
    except CodebookError as exc:
        raise CodebookError(f"{path.name}: {exc}") from None


def write_codebook(questions: Iterable[Question], path: Path) -> None:
    """Write a codebook's questions to ``path`` (:meth:`Codebook.write`), atomically."""
    suffix = _suffix(path)
    questions = list(questions)
    with atomic_path(path) as temporary:
        if suffix == ".json":
            text = json.dumps(questions_to_dict(questions), ensure_ascii=False, indent=2)
            temporary.write_text(text + "\n", encoding="utf-8")
        elif suffix == ".csv":
            with temporary.open("w", encoding="utf-8-sig", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(FRAME_COLUMNS)
                writer.writerows(_text_rows(questions))
        else:
            _write_xlsx(questions, temporary)


# ----------------------------------------------------------------- writing


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if value.is_integer() else repr(value)


def _text_rows(questions: list[Question]) -> list[list[str]]:
    rows = []
    for q in questions:
        head = [q.key, q.text, q.kind, _number(q.min), _number(q.max), q.separator]
        values = [(c, t, "") for c, t in q.labels.items()]
        values += [(c, t, "yes") for c, t in q.missing.items()]
        for code, label, missing in values or [("", "", "")]:
            rows.append([*head, code, label, missing])
    return rows


def _write_xlsx(questions: list[Question], path: Path) -> None:
    from openpyxl.styles import Font
    from openpyxl.utils.exceptions import IllegalCharacterError

    book = new_workbook()
    sheet = book.create_sheet(SHEET)
    sheet.append(list(FRAME_COLUMNS))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for number, row in enumerate(_text_rows(questions), start=2):
        for column, value in enumerate(row, start=1):
            name = FRAME_COLUMNS[column - 1]
            try:
                cell = sheet.cell(number, column, value or None)
                # Text, always: "=1" is no formula, "007" keeps its zeros, and a bound
                # keeps every digit (openpyxl's numbers are not shortest round-trip).
                cell.data_type = "s"
            except IllegalCharacterError:
                raise CodebookError(
                    f"{row[0]}.{name}: {value!r} holds a control character XLSX cannot store"
                ) from None
    sheet.freeze_panes = "A2"
    for letter, width in zip("ABCDEFGHI", (12, 50, 9, 6, 6, 9, 10, 30, 8), strict=True):
        sheet.column_dimensions[letter].width = width
    save_workbook(book, path)


# ----------------------------------------------------------------- reading


def _csv_rows(path: Path) -> list[list[str]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return list(csv.reader(handle))
    except UnicodeDecodeError as exc:
        raise CodebookError(f"{path.name}: not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise CodebookError(f"{path.name}: not CSV ({exc})") from None


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    return code_text(value)


def _xlsx_rows(path: Path) -> list[list[str]]:
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile, KeyError and its own errors
        raise CodebookError(f"{path.name}: not an XLSX workbook ({exc})") from None
    try:
        sheet = book[SHEET] if SHEET in book.sheetnames else book.worksheets[0]
        return [[_cell_text(v) for v in row] for row in sheet.iter_rows(values_only=True)]
    finally:
        book.close()


@dataclass
class _Draft:
    key: str
    first_row: int
    fields: dict[str, tuple[str, int]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    code_rows: dict[str, int] = field(default_factory=dict)


def _header(rows: list[list[str]]) -> dict[str, int]:
    if not rows:
        raise CodebookError("row 1: no header row (an empty file)")
    columns: dict[str, int] = {}
    for index, name in enumerate(rows[0]):
        name = name.strip().lower()
        if not name:
            continue
        if name not in FRAME_COLUMNS:
            raise CodebookError(
                f"row 1: unknown column {name!r} (known: {', '.join(FRAME_COLUMNS)})"
            )
        if name in columns:
            raise CodebookError(f"row 1: column {name!r} appears twice")
        columns[name] = index
    absent = [name for name in ("key", "code", "label") if name not in columns]
    if absent:
        raise CodebookError(f"row 1: required columns missing: {', '.join(absent)}")
    return columns


def _flag(value: str, number: int) -> bool:
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise CodebookError(f"row {number} (missing): expected yes or no, got {value!r}")


def questions_from_rows(rows: list[list[str]]) -> list[Question]:
    """The questions of spreadsheet rows of text (the header first), in order."""
    columns = _header(rows)
    drafts: dict[str, _Draft] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = {name: (row[i] if i < len(row) else "") for name, i in columns.items()}
        if not any(cells.values()):
            continue  # a blank line between questions
        key = cells["key"]
        if not key:
            raise CodebookError(f"row {number} (key): empty")
        draft = drafts.setdefault(key, _Draft(key, number))
        for name in _QUESTION_FIELDS:
            value = cells.get(name, "")
            if not value:
                continue
            seen = draft.fields.get(name)
            if seen is not None and seen[0] != value:
                raise CodebookError(
                    f"row {number} ({name}): {value!r} differs from row {seen[1]} "
                    f"of {key} ({seen[0]!r})"
                )
            draft.fields.setdefault(name, (value, number))
        code, label = cells["code"], cells["label"]
        missing = _flag(cells.get("missing", ""), number)
        if not code:
            if label or missing:
                raise CodebookError(f"row {number} (code): empty, but the row has a label")
            continue
        if not label:
            what = "a missing code needs its reason" if missing else "a code needs its label"
            raise CodebookError(f"row {number} (label): empty ({what})")
        if code in draft.code_rows:
            raise CodebookError(
                f"row {number} (code): {code!r} of {key} is already on row {draft.code_rows[code]}"
            )
        draft.code_rows[code] = number
        (draft.missing if missing else draft.labels)[code] = label
    return [_question(draft) for draft in drafts.values()]


def _question(draft: _Draft) -> Question:
    values: dict[str, Any] = {}
    for name in ("min", "max"):
        if name in draft.fields:
            text, number = draft.fields[name]
            try:
                values[name] = float(text)
            except ValueError:
                raise CodebookError(
                    f"row {number} ({name}): expected a number, got {text!r}"
                ) from None
    try:
        return Question(
            key=draft.key,
            text=draft.fields.get("text", ("", 0))[0],
            kind=draft.fields.get("kind", ("text", 0))[0].strip().lower(),  # type: ignore[arg-type]
            labels=draft.labels,
            missing=draft.missing,
            separator=draft.fields.get("separator", (";", 0))[0],
            **values,
        )
    except CodebookError as exc:
        raise CodebookError(f"row {draft.first_row}: {exc}") from None
