"""``to_excel(tables, path)``: one formatted sheet per estimate table (openpyxl)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from copy import copy
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
"""Counts, ``n`` and bases; weighted counts too: shown rounded, stored exact."""
WEIGHTED: Final = "#,##0.0"
"""Effective sizes (``n_eff``)."""
DEFF: Final = "0.00"
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
LOW_BASE_MARK: Final = "*"
"""The mark on a crosstab column whose base is below its ``min_base`` (header and base)."""
_SHEET_BAD: Final = re.compile(r"[\[\]:*?/\\]")
_PROPORTION_COLUMNS: Final = frozenset(
    {"estimate", "se", "ci_low", "ci_high", "estimate_a", "estimate_b", "difference"}
)
_COUNT_COLUMNS: Final = frozenset(
    {"count", "n", "n_a", "n_b", "responses", "detractors", "passives", "promoters", "base"}
)
MISSING_GROUP: Final = "(missing)"
"""How a sheet shows the group of respondents with no value in a ``by`` column."""
WIDE: Final = 9
"""A sheet with more columns than this prints landscape (always one page wide)."""


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
        write_table(book.create_sheet(sheet_name), name, frame)
    with atomic_path(Path(path)) as temporary:
        save_workbook(book, temporary)  # text as text: an answer "=1+1" is no formula
    return {sheet: name for sheet, (name, _) in zip(names, items, strict=True)}


def write_table(sheet: Any, name: str, frame: pd.DataFrame) -> None:
    """Write one estimate table (or crosstab) on ``sheet``, set to print one page wide.

    Raises:
        ExportError: a text with a control character an .xlsx file cannot store.
    """
    from openpyxl.utils.exceptions import IllegalCharacterError

    try:
        if _is_crosstab(frame):
            _crosstab_sheet(sheet, frame)
        else:
            _table_sheet(sheet, frame)
    except IllegalCharacterError as exc:
        character = control_character(str(exc)) or "?"
        what = CANNOT_STORE.format(character)
        raise ExportError(f"tables[{name!r}]: a text holds {what}") from None
    wrap_notes(sheet)
    fit_width(sheet)


DEFAULT_WIDTH: Final = 8.43
"""A column's width when none is set (characters of the default font)."""
LINE_HEIGHT: Final = 15.0
"""The height of one line of 11-point text, in points."""


def text_height(text: str, width: float, *, line: float = LINE_HEIGHT) -> float:
    """The row height (points) that shows ``text`` wrapped in ``width`` characters."""
    per_line = max(int(width * 1.1), 10)  # prose is narrower than the digit "0"
    lines = sum(max(1, math.ceil(len(part) / per_line)) for part in text.split("\n"))
    return lines * line


def wrap_notes(sheet: Any) -> None:
    """Wrap every long text of column A with nothing beside it across the used columns.

    Titles, base lines and notes would otherwise run far to the right of the table, and a
    sheet printed one page wide would shrink to fit them.
    """
    from openpyxl.styles import Alignment

    last = max(sheet.max_column, 1)
    widths = [
        sheet.column_dimensions[_letter(c)].width or DEFAULT_WIDTH for c in range(1, last + 1)
    ]
    width = sum(widths)
    cells = sheet._cells  # the cells that exist (reading sheet.cell() would make the rest)
    beside = {row for (row, column), cell in cells.items() if column > 1 and cell.value is not None}
    for (row, column), cell in list(cells.items()):
        if column != 1 or row in beside:
            continue
        if not isinstance(cell.value, str) or len(cell.value) <= widths[0]:
            continue
        if last > 1:
            sheet.merge_cells(start_row=row, start_column=1, end_row=row, end_column=last)
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        size = cell.font.sz if cell.font is not None and cell.font.sz else 11
        sheet.row_dimensions[row].height = text_height(
            cell.value, width * 11 / size, line=LINE_HEIGHT * size / 11
        )


def fit_width(sheet: Any, *, landscape: bool | None = None) -> None:
    """Print ``sheet`` one page wide (as many pages down as it takes); landscape if wide."""
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0
    wide = sheet.max_column > WIDE if landscape is None else landscape
    sheet.page_setup.orientation = "landscape" if wide else "portrait"
    sheet.print_options.gridLines = False


def weighted_of(frame: pd.DataFrame) -> bool:
    """Whether a table's figures are weighted (design-based)."""
    attrs = frame.attrs
    test = attrs.get("test")
    if isinstance(test, Mapping) and test.get("weighted"):
        return True
    return bool(attrs.get("weights") or attrs.get("design"))


def base_line(frame: pd.DataFrame) -> str:
    """The line under a table's title: who it counts, and whether it is weighted.

    From ``attrs["base"]`` (:func:`surveykit.report.build_report` sets it), else from the
    table's own ``n``.
    """
    attrs = frame.attrs
    base = attrs.get("base")
    weighted = weighted_of(frame)
    if isinstance(base, Mapping):
        text = f"Base: {base.get('who') or 'respondents answering'}, n = {int(base['n']):,} "
        text += "(unweighted)"
        if base.get("weighted") is not None:
            text += f"; weighted base {float(base['weighted']):,.1f}"
    elif "n" in frame.columns and len(frame) and not _by_columns(frame):
        text = f"Base: respondents answering, n = {_whole(frame['n'].iloc[0])} (unweighted)"
    elif "n" in frame.columns:
        text = "Base: respondents answering, in each group (its n, unweighted)"
    else:
        test = attrs.get("test")
        n = test.get("n") if isinstance(test, Mapping) else None
        text = "Base: respondents answering" + (f", n = {_whole(n)} (unweighted)" if n else "")
    if _by_columns(frame) and isinstance(base, Mapping):
        text += "; each group's base is its n"
    if weighted:
        return text + ". Weighted figures, design-based."
    return text + ". Unweighted figures."


def _whole(value: Any) -> str:
    try:
        return f"{round(float(value)):,}"
    except (TypeError, ValueError):
        return str(value)


def _by_columns(frame: pd.DataFrame) -> list[str]:
    """The table's ``by`` columns (``attrs["by"]``, else the columns before ``question``)."""
    given = frame.attrs.get("by")
    if isinstance(given, list | tuple):
        return [str(c) for c in given if c in frame.columns]
    columns = [str(c) for c in frame.columns]
    return columns[: columns.index("question")] if "question" in columns else []


def _name_of(frame: pd.DataFrame, number: int) -> str:
    attrs = frame.attrs if isinstance(frame, pd.DataFrame) else {}
    parts = [str(attrs[k]) for k in ("estimate", "question") if attrs.get(k)]
    return " ".join(parts) or f"Table {number}"


def _is_crosstab(frame: pd.DataFrame) -> bool:
    return any(k in frame.attrs for k in ("letters", "column_letters", "test"))


def _title(sheet: Any, frame: pd.DataFrame) -> int:
    """Write the title line and the base line under it; return the row of the header."""
    from openpyxl.styles import Font

    text = frame.attrs.get("question_text") or frame.attrs.get("question")
    if text:
        cell = sheet.cell(1, 1, str(text))
        cell.font = Font(bold=True, size=12)
    if frame.attrs.get("estimate") != "design" and (text or frame.attrs.get("base")):
        sheet.cell(2, 1, base_line(frame)).font = Font(italic=True)
    return 3 if text or frame.attrs.get("base") else 1


def _header(sheet: Any, row: int, names: Sequence[str]) -> None:
    from openpyxl.styles import Font

    first = sheet.cell(row, 1, names[0] if names else None)
    first.font = Font(bold=True)
    for column, name in enumerate(names[1:], start=2):
        cell = sheet.cell(row, column, name)
        cell._style = copy(first._style)  # the same style, not registered once per cell
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


def _format(column: str, frame: pd.DataFrame, estimate: Any = None) -> str | None:
    estimate = frame.attrs.get("estimate") if estimate is None else estimate
    series = frame[column]
    proportions = estimate == "proportions" or (estimate == "compare" and "option" in frame)
    if column in _PROPORTION_COLUMNS and proportions:
        return PERCENT
    if column.startswith("percent"):
        return PERCENT_POINTS
    if column.startswith("share"):
        return PERCENT
    if column in ("p_value", "p"):
        return P_VALUE
    if column in _PROPORTION_COLUMNS or column in ("nps", "statistic"):
        return SCORE if estimate in ("nps", "compare") or column == "nps" else MEAN
    if column == "deff":
        return DEFF
    if column.startswith("n_eff"):
        return WEIGHTED
    if pd.api.types.is_integer_dtype(series.dtype):
        return COUNT
    counting = column in _COUNT_COLUMNS or column.startswith(("count", "n_", "base"))
    if pd.api.types.is_float_dtype(series.dtype) and (counting or "weighted" in column):
        return COUNT  # a weighted count shown whole; the cell keeps every digit
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
    # A frame without its attrs: pandas deep-copies attrs (crosstab letters, counts, bases)
    # on every column taken, which cost more than writing the cells.
    data = pd.DataFrame(frame)
    data.attrs = {}
    data = data if isinstance(data.index, pd.RangeIndex) else data.reset_index()
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
    formats = {c: _format(c, data, frame.attrs.get("estimate")) for c in columns}
    groups = set(_by_columns(frame)) if frame.attrs.get("estimate") != "design" else set()
    for r, row in enumerate(data.itertuples(index=False), start=top + 1):
        values = dict(zip(columns, row, strict=True))
        for c, name in enumerate(slots, start=1):
            if name == FLAG_MARK_COLUMN:
                sheet.cell(r, c, FLAG_MARKS.get(str(values["flag"])))
                continue
            value = _value(values[name])
            if value is None and name in groups:
                value = MISSING_GROUP
            cell = sheet.cell(r, c, value)
            if formats[name] and isinstance(cell.value, int | float):
                cell.number_format = formats[name]
        if interval:
            text = _interval(values["ci_low"], values["ci_high"], formats["ci_low"])
            sheet.cell(r, len(slots) + 1, text)
    for c, name in enumerate(names, start=1):
        if name == FLAG_MARK_COLUMN:
            sheet.column_dimensions[_letter(c)].width = 3
            continue
        longest = _longest_text(sheet, c, top + 1)
        width = min(max(len(name) + 2, longest + 2, 10 if name != ci_name else 18), TEXT_COLUMN)
        sheet.column_dimensions[_letter(c)].width = width
        if longest + 2 > TEXT_COLUMN:
            _wrap_column(sheet, c, top + 1, width)
    if flagged and data["flag"].astype(str).isin(list(FLAG_MARKS)).any():
        sheet.cell(top + len(data) + 2, 1, FLAG_LEGEND)


TEXT_COLUMN: Final = 60
"""The widest a table's column gets (characters); longer texts wrap."""
_SAMPLED_ROWS: Final = 500


def _longest_text(sheet: Any, column: int, first: int) -> int:
    """The longest text in ``column`` (its first rows), for the column's width."""
    last = min(sheet.max_row, first + _SAMPLED_ROWS)
    cells = sheet._cells  # the cells that exist: none made for the gaps
    lengths = [
        len(cell.value)
        for row in range(first, last + 1)
        if (cell := cells.get((row, column))) is not None and isinstance(cell.value, str)
    ]
    return max(lengths, default=0)


def _wrap_column(sheet: Any, column: int, first: int, width: float) -> None:
    from openpyxl.styles import Alignment

    cells = sheet._cells
    for row in range(first, sheet.max_row + 1):
        cell = cells.get((row, column))
        if cell is not None and isinstance(cell.value, str) and len(cell.value) > width:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            height = text_height(cell.value, width)
            current = sheet.row_dimensions[row].height or LINE_HEIGHT
            sheet.row_dimensions[row].height = max(height, current)


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
    low = _low_bases(frame)
    names = [str(frame.index.name or "")]
    for group in frame.columns:
        letter = column_letters.get(group, column_letters.get(str(group), ""))
        names += [f"{group} ({letter})" if letter else str(group), ""]
    _header(sheet, top, names)
    for g, group in enumerate(frame.columns):
        if low.get(group, False):
            sheet.cell(top, 3 + 2 * g, LOW_BASE_MARK)
    flags = _frame_of(attrs.get("flags"), frame)
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
            flag = FLAG_MARKS.get(str(flags.iat[r - top - 1, g]), "")
            mark = f"{mark} {flag}".strip()
            sheet.cell(r, 3 + 2 * g, mark or None)
    row = _column_bases(sheet, frame, top + len(frame) + 1) + 1
    row = _test_lines(sheet, frame, row)
    for note in _crosstab_notes(frame, column_letters):
        row += 1
        sheet.cell(row, 1, note)
    sheet.column_dimensions["A"].width = 24
    for g in range(len(frame.columns)):
        sheet.column_dimensions[_letter(2 + 2 * g)].width = max(12, len(names[1 + 2 * g]) + 2)
        sheet.column_dimensions[_letter(3 + 2 * g)].width = 6


def _low_bases(frame: pd.DataFrame) -> dict[Any, bool]:
    """Per crosstab column whether its base is below the table's ``min_base``."""
    low = frame.attrs.get("low_base")
    if low is None:
        return {}
    series = low if isinstance(low, pd.Series) else pd.Series(low)
    return {c: bool(v) for c, v in series.items()}


def _column_bases(sheet: Any, frame: pd.DataFrame, row: int) -> int:
    """Write each column's base under the table; return the next row.

    From ``attrs["base"]`` (``build_report``'s, with the weighted bases), else from the
    crosstab's own ``attrs["bases"]``; a low base carries its mark beside it.
    """
    from openpyxl.styles import Font

    base = frame.attrs.get("base")
    own = frame.attrs.get("bases")
    if isinstance(base, Mapping) and base.get("groups"):
        groups = base["groups"]
        column = frame.columns.name if frame.columns.name in groups else next(iter(groups))
        bases: Mapping[str, Any] = groups[column]
    elif own is not None:
        series = own if isinstance(own, pd.Series) else pd.Series(own)
        bases = {str(c): [v, None] for c, v in series.items()}
        base = {}
    else:
        return row
    low = _low_bases(frame)
    lines = [("Base (n, unweighted)", 0, COUNT)]
    if base.get("weighted") is not None:
        lines.append(("Weighted base", 1, COUNT))
    for label, position, number_format in lines:
        sheet.cell(row, 1, label).font = Font(italic=True)
        for g, group in enumerate(frame.columns):
            pair = bases.get(str(group))
            if pair is None or pair[position] is None:
                continue
            cell = sheet.cell(row, 2 + 2 * g, _value(pair[position]))
            cell.number_format = number_format
            if position == 0 and low.get(group, False):
                sheet.cell(row, 3 + 2 * g, LOW_BASE_MARK)
        row += 1
    return row


def _test_lines(sheet: Any, frame: pd.DataFrame, row: int) -> int:
    """Write the test of independence below the table; return the row after it."""
    test = frame.attrs.get("test") or {}
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
        if _value(value) is None:
            continue
        sheet.cell(row, 1, label)
        cell = sheet.cell(row, 2, _value(value))
        cell.number_format = number_format
        row += 1
    return row


def _crosstab_notes(frame: pd.DataFrame, column_letters: Mapping[Any, str]) -> list[str]:
    """Why there is no test (if so), and what the letters mean and where they are."""
    attrs = frame.attrs
    notes = []
    test = attrs.get("test")
    by = str(frame.columns.name or "the groups")
    if len(frame.columns) < 2:
        only = f" ({frame.columns[0]})" if len(frame.columns) else ""
        notes.append(
            f"No test: {by} has one group{only} among the respondents answering; a test "
            "of independence and the letters compare two groups or more."
        )
    elif isinstance(test, Mapping) and test.get("note"):
        notes.append(f"No test: {test['note']}")
    if isinstance(test, Mapping) and test.get("warning"):
        notes.append(f"Caution: {test['warning']}.")
    low = [str(c) for c, v in _low_bases(frame).items() if v]
    if low:
        notes.append(
            f"{LOW_BASE_MARK} low base: fewer than {attrs.get('min_base', 30)} respondents "
            f"answered in {', '.join(low)}; its percentages are shown but rest on few people."
        )
    flags = attrs.get("flags")
    if flags is not None and _frame_of(flags, frame).isin(list(FLAG_MARKS)).any().any():
        notes.append(FLAG_LEGEND.replace(" The flag_reason column names the rule.", ""))
    if column_letters and len(frame.columns) >= 2:
        alpha = attrs.get("alpha", 0.05)
        how = attrs.get("letters_test") or "column-proportion z-tests, Bonferroni-adjusted"
        notes.append(
            "Letters: a letter in the cell to the right of a column's percentage names a "
            "column whose percentage on that row is significantly lower "
            f"({how}, alpha = {alpha:g})."
        )
    return notes
