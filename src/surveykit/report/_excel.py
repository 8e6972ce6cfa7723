"""``to_excel(tables, path)``: one formatted sheet per estimate table (openpyxl)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from surveykit._util.atomic import atomic_path
from surveykit._util.sheets import CANNOT_STORE, control_character, new_workbook, save_workbook
from surveykit.errors import ExportError

PERCENT: Final = "0.0%"
"""Proportions (0..1) shown as percentages."""
PERCENT_POINTS: Final = '0.0"%"'
"""Percentages already in 0..100 (``percent_*`` columns, crosstab column percentages)."""
COUNT: Final = "#,##0"
WEIGHTED: Final = "#,##0.0"
MEAN: Final = "0.00"
SCORE: Final = "0.0"
P_VALUE: Final = "0.0000"
FLAG_MARKS: Final = {"unreliable": "\u2021", "review": "\u2020"}
"""The mark beside a flagged estimate (``flag`` column, see ``docs/analysis.md``)."""
FLAG_LEGEND: Final = (
    "\u2021 unreliable: effective sample size under 30, or too wide an interval (NCHS data "
    "presentation standards for proportions; for means and totals, n under 30 or a relative "
    "standard error of 30% or more); \u2020 review: fewer than 8 degrees of freedom, an "
    "estimate of 0% or 100%, or a complement that would be suppressed. The flag_reason "
    "column names the rule."
)
FLAG_MARK_COLUMN: Final = "\x00flag mark"
_SHEET_BAD: Final = re.compile(r"[\[\]:*?/\\]")
_PROPORTION_COLUMNS: Final = frozenset(
    {"estimate", "se", "ci_low", "ci_high", "estimate_a", "estimate_b", "difference"}
)


def sheet_names(names: Sequence[str]) -> list[str]:
    r"""Names made valid Excel sheet names (31 characters, no ``[]:*?/\``) and unique."""
    out: list[str] = []
    taken: set[str] = set()
    for name in names:
        text = _SHEET_BAD.sub("_", str(name)).strip().strip("'")[:31] or "Sheet"
        if text.lower() == "history":  # reserved by Excel
            text = "history_"
        candidate, n = text, 1
        while candidate.lower() in taken:
            n += 1
            suffix = f" ({n})"
            candidate = text[: 31 - len(suffix)] + suffix
        taken.add(candidate.lower())
        out.append(candidate)
    return out


def to_excel(
    tables: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame], path: str | os.PathLike[str]
) -> dict[str, str]:
    """Write estimate tables to an ``.xlsx`` workbook, one formatted sheet per table.

    Each sheet has the question text as a title line (when the table's ``attrs`` have
    ``question_text``), a bold header, proportions as percentages, the interval
    (``ci_low``..``ci_high``) also as one text column, p-values with four decimals. A
    crosstab (``attrs`` with ``letters`` / ``column_letters`` / ``test``) is written wide:
    each group's column percentage with its significance letters beside it, the group's
    own letter in the header, and the chi-square test (chi2, df, p-value, Cramér's V, n)
    below the table. An estimate table with a ``flag`` column (reliability, see
    ``docs/analysis.md``) gets a mark right after each flagged estimate (``\u2021``
    unreliable, ``\u2020`` review) and a legend under the table. Every text (answers,
    labels, question texts) is written as text, exactly as it is: one that starts with
    ``=`` is no formula.

    Args:
        tables: ``{sheet name: frame}``, or frames named from their ``attrs``
            (``"<estimate> <question>"``).
        path: the workbook to write (atomically).

    Returns:
        ``{sheet name: table name}``: the (valid, unique) sheet of each table.

    Raises:
        ExportError: a table that is not a DataFrame, or a text with a control character
            an .xlsx file cannot store (names the table); nothing is written.
    """
    from openpyxl.utils.exceptions import IllegalCharacterError

    if isinstance(tables, Mapping):
        items = list(tables.items())
    else:
        items = [(_name_of(frame, i), frame) for i, frame in enumerate(tables, start=1)]
    if not items:
        raise ExportError("tables: nothing to write")
    for name, frame in items:
        if not isinstance(frame, pd.DataFrame):
            raise ExportError(f"tables[{name!r}]: expected a DataFrame, got {type(frame).__name__}")
    names = sheet_names([name for name, _ in items])
    book = new_workbook()
    for sheet_name, (name, frame) in zip(names, items, strict=True):
        sheet = book.create_sheet(sheet_name)
        try:
            if _is_crosstab(frame):
                _crosstab_sheet(sheet, frame)
            else:
                _table_sheet(sheet, frame)
        except IllegalCharacterError as exc:
            character = control_character(str(exc)) or "?"
            what = CANNOT_STORE.format(character)
            raise ExportError(f"tables[{name!r}]: a text holds {what}") from None
    with atomic_path(Path(path)) as temporary:
        save_workbook(book, temporary)  # text as text: an answer "=1+1" is no formula
    return {sheet: name for sheet, (name, _) in zip(names, items, strict=True)}


def _name_of(frame: pd.DataFrame, number: int) -> str:
    attrs = frame.attrs if isinstance(frame, pd.DataFrame) else {}
    parts = [str(attrs[k]) for k in ("estimate", "question") if attrs.get(k)]
    return " ".join(parts) or f"Table {number}"


def _is_crosstab(frame: pd.DataFrame) -> bool:
    return any(k in frame.attrs for k in ("letters", "column_letters", "test"))


def _title(sheet: Any, frame: pd.DataFrame) -> int:
    """Write the title line (if any); return the row of the header."""
    from openpyxl.styles import Font

    text = frame.attrs.get("question_text") or frame.attrs.get("question")
    if not text:
        return 1
    cell = sheet.cell(1, 1, str(text))
    cell.font = Font(bold=True, size=12)
    return 3


def _header(sheet: Any, row: int, names: Sequence[str]) -> None:
    from openpyxl.styles import Font

    for column, name in enumerate(names, start=1):
        cell = sheet.cell(row, column, name)
        cell.font = Font(bold=True)
    sheet.freeze_panes = sheet.cell(row + 1, 1)


def _value(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.tz_convert("UTC").tz_localize(None) if value.tz else value.to_pydatetime()
    if hasattr(value, "item"):
        return value.item()
    return value if isinstance(value, int | float | str | bool) else str(value)


def _format(column: str, frame: pd.DataFrame) -> str | None:
    estimate = frame.attrs.get("estimate")
    series = frame[column]
    proportions = estimate == "proportions" or (estimate == "compare" and "option" in frame)
    if column in _PROPORTION_COLUMNS and proportions:
        return PERCENT
    if column.startswith("percent"):
        return PERCENT_POINTS
    if column in ("p_value", "p"):
        return P_VALUE
    if column in _PROPORTION_COLUMNS or column in ("nps", "statistic"):
        return SCORE if estimate in ("nps", "compare") or column == "nps" else MEAN
    if pd.api.types.is_integer_dtype(series.dtype):
        return COUNT
    counts = ("count", "n", "n_eff", "n_a", "n_b")
    weighted = column in counts or column.endswith("_weighted")
    if pd.api.types.is_float_dtype(series.dtype) and weighted:
        return WEIGHTED
    return None


def _interval(low: Any, high: Any, number_format: str | None) -> str | None:
    low, high = _value(low), _value(high)
    if low is None or high is None:
        return None
    return f"{_show(low, number_format)} to {_show(high, number_format)}"


def _show(value: float, number_format: str | None) -> str:
    if number_format == PERCENT:
        return f"{100 * value:.1f}%"
    if number_format == SCORE:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _table_sheet(sheet: Any, frame: pd.DataFrame) -> None:
    data = frame if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    columns = [str(c) for c in data.columns]
    interval = "ci_low" in columns and "ci_high" in columns
    level = frame.attrs.get("ci", 0.95)
    ci_name = f"{100 * float(level):g}% CI" if isinstance(level, int | float) else "CI"
    flagged = "flag" in columns and "estimate" in columns
    # a flagged estimate gets its mark in a narrow column right after the figure
    slots = [*columns]
    if flagged:
        slots.insert(columns.index("estimate") + 1, FLAG_MARK_COLUMN)
    names = [*slots, ci_name] if interval else slots
    top = _title(sheet, frame)
    _header(sheet, top, [n if n != FLAG_MARK_COLUMN else "" for n in names])
    formats = {c: _format(c, data) for c in columns}
    for r, row in enumerate(data.itertuples(index=False), start=top + 1):
        values = dict(zip(columns, row, strict=True))
        for c, name in enumerate(slots, start=1):
            if name == FLAG_MARK_COLUMN:
                sheet.cell(r, c, FLAG_MARKS.get(str(values["flag"])))
                continue
            cell = sheet.cell(r, c, _value(values[name]))
            if formats[name] and isinstance(cell.value, int | float):
                cell.number_format = formats[name]
        if interval:
            text = _interval(values["ci_low"], values["ci_high"], formats["ci_low"])
            sheet.cell(r, len(slots) + 1, text)
    for c, name in enumerate(names, start=1):
        width = 3 if name == FLAG_MARK_COLUMN else max(len(name) + 2, 10 if name != ci_name else 18)
        sheet.column_dimensions[_letter(c)].width = min(width, 40)
    if flagged and data["flag"].astype(str).isin(list(FLAG_MARKS)).any():
        sheet.cell(top + len(data) + 2, 1, FLAG_LEGEND)


def _letter(column: int) -> str:
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(column))


def _frame_of(value: Any, like: pd.DataFrame) -> pd.DataFrame:
    if value is None:
        return pd.DataFrame("", index=like.index, columns=like.columns)
    letters = value if isinstance(value, pd.DataFrame) else pd.DataFrame(value)
    return letters.reindex(index=like.index, columns=like.columns).fillna("")


def _are_counts(frame: pd.DataFrame, counts: Any) -> bool:
    """Whether a crosstab holds its counts (``normalize=False``) rather than percentages."""
    if frame.attrs.get("normalize") is False:
        return True
    if counts is None:
        return False
    table = counts if isinstance(counts, pd.DataFrame) else pd.DataFrame(counts)
    table = table.reindex(index=frame.index, columns=frame.columns)
    return bool(np.allclose(table.to_numpy(dtype="float64", na_value=np.nan),
                            frame.to_numpy(dtype="float64", na_value=np.nan), equal_nan=True))


def _crosstab_sheet(sheet: Any, frame: pd.DataFrame) -> None:
    attrs = frame.attrs
    letters = _frame_of(attrs.get("letters"), frame)
    column_letters: dict[Any, str] = dict(attrs.get("column_letters") or {})
    top = _title(sheet, frame)
    names = [str(frame.index.name or "")]
    for group in frame.columns:
        letter = column_letters.get(group, column_letters.get(str(group), ""))
        names += [f"{group} ({letter})" if letter else str(group), ""]
    _header(sheet, top, names)
    numbers = frame.to_numpy(dtype="float64", na_value=math.nan)
    finite = numbers[~pd.isna(numbers)]
    if _are_counts(frame, attrs.get("counts_weighted", attrs.get("counts"))):
        number_format = COUNT
    elif finite.size and float(finite.max()) <= 1.0:
        number_format = PERCENT
    else:
        number_format = PERCENT_POINTS
    for r, answer in enumerate(frame.index, start=top + 1):
        sheet.cell(r, 1, _value(answer) if not isinstance(answer, float) else answer)
        for g in range(len(frame.columns)):
            cell = sheet.cell(r, 2 + 2 * g, _value(frame.iat[r - top - 1, g]))
            cell.number_format = number_format
            mark = str(letters.iat[r - top - 1, g] or "")
            sheet.cell(r, 3 + 2 * g, mark or None)
    row = top + len(frame) + 2
    test = attrs.get("test") or {}
    name = str(test.get("test") or "")
    if name and not name.startswith("Pearson"):  # a design's test (Rao-Scott): R's figures
        ddf = test.get("ddf")
        lines = [
            (name, test.get("statistic"), "0.000"),
            ("numerator df", test.get("ndf"), "0.00"),
            ("denominator df", None if ddf is None or ddf != ddf else ddf, "0.00"),
            ("p-value", test.get("p_value"), P_VALUE),
            ("Cramér's V", test.get("cramers_v"), "0.000"),
            ("n", test.get("n"), COUNT),
        ]
    else:
        lines = [
            ("Pearson chi-square", test.get("chi2"), "0.000"),
            ("df", test.get("dof"), COUNT),
            ("p-value", test.get("p_value"), P_VALUE),
            ("Cramér's V", test.get("cramers_v"), "0.000"),
            ("n", test.get("n"), COUNT),
        ]
    if test.get("weighted"):
        lines.append(("n_eff", test.get("n_eff"), WEIGHTED))
    for label, value, number_format in lines:
        if value is None:
            continue
        sheet.cell(row, 1, label)
        cell = sheet.cell(row, 2, _value(value))
        cell.number_format = number_format
        row += 1
    if column_letters:
        alpha = attrs.get("alpha", 0.05)
        how = attrs.get("letters_test") or "column-proportion z-tests, Bonferroni-adjusted"
        sheet.cell(
            row + 1,
            1,
            "Letters: the column's proportion differs significantly from the column of that "
            f"letter ({how}, alpha = {alpha:g}).",
        )
    sheet.column_dimensions["A"].width = 24
