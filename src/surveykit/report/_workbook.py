"""The report workbook: a cover that says what the report is, contents, tables, rates.

:meth:`surveykit.report.Report.to_excel` writes it. The table sheets are those of
:func:`surveykit.to_excel`; this module adds the sheets around them:

- **Cover**: the survey, fieldwork dates, respondents, the questions not tabulated, the
  design and weighting (variables, targets, variance method, Kish design effect), the
  confidence level, the intervals, the tests and their correction, a methods statement and
  AAPOR's outcome rates;
- **Contents**: a link to every other sheet, with what it holds and its base;
- **Outcome rates**: RR1-RR6, COOP1-4, REF1-3 and CON1-3, every wave and each wave;
- **Not tabulated**: free-text and date questions with their number of answers;
- **Banner** (``build_report(banner=...)``): the banner table of every question it shows;
- **Verbatims** (``build_report(verbatims=True)``): every free-text answer, as text.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from surveykit._util.atomic import atomic_path
from surveykit._util.sheets import check_frame, new_workbook, save_workbook
from surveykit.analysis.weights import summary
from surveykit.errors import ExportError
from surveykit.report._banner import write_banner_sheet
from surveykit.report._excel import (
    COUNT,
    PERCENT,
    fit_width,
    sheet_names,
    text_height,
    wrap_notes,
    write_table,
)

if TYPE_CHECKING:
    from surveykit.report._build import Report

OVERALL: Final = "All"
"""The ``wave`` of the outcome rates over every wave."""

COVER: Final = "Cover"
CONTENTS: Final = "Contents"
RATES: Final = "Outcome rates"
SKIPPED: Final = "Not tabulated"
BANNER: Final = "Banner"
VERBATIMS: Final = "Verbatims"

RATE_TEXTS: Final = {
    "RR1": "Response rate 1: completes / (eligible + unknown eligibility)",
    "RR2": "Response rate 2: completes and partials / (eligible + unknown eligibility)",
    "RR3": "Response rate 3: completes / (eligible + e x unknown eligibility)",
    "RR4": "Response rate 4: completes and partials / (eligible + e x unknown eligibility)",
    "RR5": "Response rate 5: completes / eligible (unknowns left out)",
    "RR6": "Response rate 6: completes and partials / eligible (unknowns left out)",
    "COOP1": "Cooperation rate 1: completes / (completes, partials, refusals, other)",
    "COOP2": "Cooperation rate 2: completes and partials / (completes, partials, refusals, "
    "other)",
    "COOP3": "Cooperation rate 3: completes / (completes, partials, refusals)",
    "COOP4": "Cooperation rate 4: completes and partials / (completes, partials, refusals)",
    "REF1": "Refusal rate 1: refusals / (eligible + unknown eligibility)",
    "REF2": "Refusal rate 2: refusals / (eligible + e x unknown eligibility)",
    "REF3": "Refusal rate 3: refusals / eligible",
    "CON1": "Contact rate 1: contacted / (eligible + unknown eligibility)",
    "CON2": "Contact rate 2: contacted / (eligible + e x unknown eligibility)",
    "CON3": "Contact rate 3: contacted / eligible",
}
"""What each AAPOR outcome rate divides (Standard Definitions, 10th edition)."""

COVER_RATES: Final = ("RR1", "RR3", "COOP1", "REF1", "CON1")
"""The rates quoted on the cover (all of them are on their own sheet)."""

_TEXT_WIDTH: Final = 100


def write_report(report: Report, path: str | os.PathLike[str]) -> dict[str, str]:
    """Write ``report`` as a workbook: cover, contents, tables, outcome rates, skipped.

    Returns:
        ``{sheet name: table name}`` of every sheet, in workbook order.

    Raises:
        ExportError: a text an .xlsx file cannot store (naming the table); nothing is
            written.
    """
    rates = report.outcome_rates
    names = [COVER, CONTENTS, *report.tables]
    if report.banner is not None:
        names.append(BANNER)
    if rates is not None and len(rates):
        names.append(RATES)
    if len(report.skipped):
        names.append(SKIPPED)
    if report.verbatims is not None:
        names.append(VERBATIMS)
    sheets = dict(zip(sheet_names(names), names, strict=True))
    by_name = {name: sheet for sheet, name in sheets.items()}
    book = new_workbook()
    for sheet_name in sheets:
        book.create_sheet(sheet_name)
    for name, frame in report.tables.items():
        write_table(book[by_name[name]], name, frame)
    if RATES in by_name and rates is not None:
        _rates_sheet(book[by_name[RATES]], rates)
    if SKIPPED in by_name:
        _skipped_sheet(book[by_name[SKIPPED]], report.skipped)
    if report.banner is not None:
        write_banner_sheet(book[by_name[BANNER]], report.banner.frame)
    if report.verbatims is not None:
        _verbatims_sheet(book[by_name[VERBATIMS]], report.verbatims)
    _contents_sheet(book[by_name[CONTENTS]], report, sheets)
    _cover_sheet(book[by_name[COVER]], report, by_name)
    with atomic_path(Path(path)) as temporary:
        save_workbook(book, temporary)  # text as text: an answer "=1+1" is no formula
    return sheets


# ------------------------------------------------------------------ cover


def cover_lines(report: Report) -> list[tuple[str, str]]:
    """The cover's ``(item, text)`` lines: what the report is, in words."""
    lines: list[tuple[str, str]] = [("Survey", report.survey or "(not given)")]
    lines.append(("Fieldwork", _fieldwork(report)))
    lines.append(("Respondents", _respondents(report)))
    tabulated = sorted({str(t.attrs.get("question")) for t in _question_tables(report)})
    lines.append(("Questions tabulated", ", ".join(tabulated) or "none"))
    if len(report.skipped):
        listed = "; ".join(
            f"{row['question']} ({str(row['reason']).split(':')[0]}, {int(row['answers']):,} "
            "answers)"
            for row in report.skipped.to_dict("records")
        )
        if report.verbatims is not None:
            listed += f"; the free-text answers are on the sheet {VERBATIMS}"
        lines.append(("Not tabulated", listed))
    lines.append(("Groups (by)", ", ".join(report.by) or "none"))
    lines += _design_lines(report)
    lines.append(("Confidence level", f"{report.ci:.0%}"))
    lines.append(("Intervals", _intervals(report)))
    lines.append(("Tests", _tests(report)))
    if report.banner is not None:
        attrs = report.banner.frame.attrs
        lines.append(
            (
                "Banner table",
                f"{', '.join(attrs['questions'])} by {', '.join(attrs['banner'])} (sheet "
                f"{BANNER}): letters by {attrs['letters_test']}, alpha {attrs['alpha']:g}; "
                f"bases under {attrs['min_base']} flagged, under {attrs['suppress_below']} "
                "suppressed",
            )
        )
    lines.append(("Counts and bases", _counts_note(report)))
    rates = _cover_rates(report)
    if rates:
        lines.append(("Outcome rates (AAPOR)", rates))
    lines.append(("Methods", methods_statement(report)))
    lines.append(("Produced", f"surveykit {_version()}, {dt.date.today():%Y-%m-%d}"))
    return lines


def _version() -> str:
    """The installed version of surveykit (its package metadata, not the root module)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("surveykit")
    except PackageNotFoundError:
        return "(version unknown)"


def _cover_sheet(sheet: Any, report: Report, by_name: Mapping[str, str]) -> None:
    from openpyxl.styles import Alignment, Font

    title = f"Survey report: {report.survey}" if report.survey else "Survey report"
    sheet.cell(1, 1, title).font = Font(bold=True, size=14)
    row = 3
    for item, text in cover_lines(report):
        sheet.cell(row, 1, item).font = Font(bold=True)
        cell = sheet.cell(row, 2, text)
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        sheet.cell(row, 1).alignment = Alignment(vertical="top")
        sheet.row_dimensions[row].height = text_height(text, _TEXT_WIDTH)
        row += 1
    contents = sheet.cell(row + 1, 1, "Contents")
    _link(contents, by_name[CONTENTS])
    sheet.column_dimensions["A"].width = 24
    sheet.column_dimensions["B"].width = _TEXT_WIDTH
    fit_width(sheet, landscape=False)


def _fieldwork(report: Report) -> str:
    if report.fieldwork is None:
        return "not known (the results hold no timestamps)"
    first, last = report.fieldwork
    return (
        f"{first:%Y-%m-%d} to {last:%Y-%m-%d} (UTC; the first and last of the results' "
        "invitation, start and completion times)"
    )


def _respondents(report: Report) -> str:
    data = report.labelled
    text = f"{len(data):,} in the results"
    for column in data.columns:
        if str(column).lower() == "completed":
            done = data[column]
            if pd.api.types.is_bool_dtype(done.dtype):
                count = int(done.fillna(False).sum())
            else:
                count = int(done.notna().sum())
            text += f"; {count:,} completed"
            break
    return text


def _question_tables(report: Report) -> list[pd.DataFrame]:
    return [t for t in report.tables.values() if t.attrs.get("estimate") not in (None, "design")]


def _design_lines(report: Report) -> list[tuple[str, str]]:
    design = report.design
    if design is None or report.weights is None:
        return [
            ("Weighting", "none: every respondent counts once (unweighted figures)"),
            ("Variance method", "simple random sampling (textbook formulas)"),
        ]
    given = {k: v for k, v in report.variables.items() if v}
    variables = ", ".join(f"{k} {v!r}" for k, v in given.items()) or "equal base weights"
    lines = [("Design", design.describe()), ("Design variables", variables)]
    if report.targets:
        lines.append(("Raking targets", _targets(report.targets)))
    if design.calibration:
        lines.append(("Calibration", "; ".join(design.calibration)))
    lines.append(
        (
            "Variance method",
            f"{design.variance_method}: R survey's svyrecvar equivalent; "
            f"{design.degrees_of_freedom:,} degrees of freedom",
        )
    )
    figures = summary(report.weights)
    lines.append(
        (
            "Design effect (Kish)",
            f"{figures['design_effect']:.2f} from the weights: effective sample size "
            f"{figures['n_eff']:,.1f} of {int(figures['n']):,} (weights' cv "
            f"{figures['cv']:.2f}, from {figures['min']:.3g} to {figures['max']:.3g})",
        )
    )
    return lines


def _targets(targets: Mapping[str, Mapping[Any, float]]) -> str:
    parts = []
    for column, levels in targets.items():
        shares = ", ".join(f"{level} {float(share):.1%}" for level, share in levels.items())
        parts.append(f"{column}: {shares}")
    return "; ".join(parts)


def _intervals(report: Report) -> str:
    methods: dict[str, str] = {}
    for table in _question_tables(report):
        kind, method = table.attrs.get("estimate"), table.attrs.get("method")
        if kind in ("proportions", "means", "nps") and method and kind not in methods:
            methods[str(kind)] = str(method)
    if not methods:
        return "none"
    return "; ".join(f"{kind}: {method}" for kind, method in methods.items())


def _tests(report: Report) -> str:
    crosstab = next(
        (t for t in report.tables.values() if t.attrs.get("estimate") == "crosstab"), None
    )
    if crosstab is None:
        return "none (no groups to compare: give by=)"
    test = crosstab.attrs.get("test") or {}
    name = str(test.get("test") or "Pearson chi-square (no continuity correction)")
    letters = str(crosstab.attrs.get("letters_test") or "")
    alpha = crosstab.attrs.get("alpha", 0.05)
    text = f"Crosstabs: {name}, test of independence. Letters: {letters}"
    if "Bonferroni" in letters:
        text += " (the correction is applied within each row, over every pair of columns)"
    return text + f"; significance level {alpha:g}."


def _counts_note(report: Report) -> str:
    text = (
        "Every table names its base (respondents answering; n unweighted). Counts are "
        "shown rounded by the cell format only: the cells hold the exact figures."
    )
    if report.weights is not None:
        text += " Weighted counts and bases are sums of weights."
    return text


def _cover_rates(report: Report) -> str:
    rates = report.outcome_rates
    if rates is None or not len(rates):
        return ""
    overall = rates[rates["wave"].astype(str) == OVERALL] if "wave" in rates else rates
    values = dict(zip(overall["rate"], overall["value"], strict=True))
    parts = [f"{r} {values[r]:.1%}" for r in COVER_RATES if r in values and pd.notna(values[r])]
    e = overall.loc[overall["rate"] == "RR3", "e"]
    text = ", ".join(parts)
    if len(e) and pd.notna(e.iloc[0]):
        text += f" (e = {float(e.iloc[0]):.3f})"
    return text + "; every rate, overall and per wave, on the sheet Outcome rates"


def methods_statement(report: Report) -> str:
    """A short methods statement for the report, in words."""
    parts = []
    who = f"{len(report.labelled):,} respondents"
    if report.survey:
        who += f" to survey {report.survey}"
    if report.fieldwork is not None:
        first, last = report.fieldwork
        who += f", fieldwork {first:%d %B %Y} to {last:%d %B %Y}"
    parts.append(f"Results of {who}.")
    if report.design is None or report.weights is None:
        parts.append(
            "Figures are unweighted; intervals and tests assume a simple random sample."
        )
    else:
        weighted = "Figures are weighted"
        if report.targets:
            weighted += " (raked to " + ", ".join(report.targets) + ")"
        parts.append(
            f"{weighted} and design-based: standard errors by "
            f"{report.design.variance_method.split(' (')[0]}, as R's survey package "
            "computes them."
        )
    parts.append(
        f"Intervals are at the {report.ci:.0%} level; shares are of the respondents who "
        "answered each question."
    )
    if report.by:
        parts.append(
            f"Differences between groups of {', '.join(report.by)} are tested (see Tests)."
        )
    rates = _cover_rates(report)
    if rates:
        parts.append(
            "Outcome rates follow AAPOR's Standard Definitions (10th edition): "
            + rates.split(";")[0]
            + "."
        )
    return " ".join(parts)


# ------------------------------------------------------------------ contents


def _contents_sheet(sheet: Any, report: Report, sheets: Mapping[str, str]) -> None:
    from openpyxl.styles import Alignment, Font

    sheet.cell(1, 1, "Contents").font = Font(bold=True, size=14)
    for column, name in enumerate(("Sheet", "What it holds", "Base (n)"), start=1):
        sheet.cell(3, column, name).font = Font(bold=True)
    row = 4
    for sheet_name, name in sheets.items():
        if name == CONTENTS:
            continue
        _link(sheet.cell(row, 1, sheet_name), sheet_name)
        what = sheet.cell(row, 2, _what(report, name))
        what.alignment = Alignment(wrap_text=True, vertical="top")
        sheet.row_dimensions[row].height = text_height(str(what.value), 80)
        table = report.tables.get(name)
        base = table.attrs.get("base") if table is not None else None
        if isinstance(base, Mapping) and base.get("n") is not None:
            sheet.cell(row, 3, int(base["n"])).number_format = COUNT
        row += 1
    sheet.column_dimensions["A"].width = 32
    sheet.column_dimensions["B"].width = 80
    sheet.column_dimensions["C"].width = 10
    sheet.freeze_panes = "A4"
    fit_width(sheet, landscape=False)


def _what(report: Report, name: str) -> str:
    if name == COVER:
        return "What this report is: survey, fieldwork, design, weighting, tests, methods"
    if name == RATES:
        return "AAPOR outcome rates (response, cooperation, refusal, contact), per wave"
    if name == SKIPPED:
        return "Questions not tabulated (free text, dates) and their number of answers"
    if name == BANNER and report.banner is not None:
        attrs = report.banner.frame.attrs
        return (
            f"Banner table: {len(attrs['questions'])} questions by "
            f"{', '.join(attrs['banner']) or 'the total'}, with bases and significance letters"
        )
    if name == VERBATIMS and report.verbatims is not None:
        return f"Free-text answers, verbatim ({len(report.verbatims):,} answers)"
    table = report.tables[name]
    attrs = table.attrs
    if attrs.get("estimate") == "design":
        return "The survey design: variance method, degrees of freedom, calibration, tests"
    if name == "Weights":
        return "The weights' summary: Kish effective sample size and design effect"
    text = str(attrs.get("question_text") or attrs.get("question") or "")
    kind = {
        "proportions": "shares",
        "means": "mean",
        "nps": "Net Promoter Score",
        "crosstab": "crosstab",
    }.get(str(attrs.get("estimate")), str(attrs.get("estimate") or "table"))
    groups = attrs.get("by")
    if attrs.get("estimate") == "crosstab":
        kind += f" by {table.columns.name}"
    elif groups:
        kind += " by " + ", ".join(str(g) for g in groups)
    return f"{attrs.get('question')} {kind}: {text}" if text else f"{name}: {kind}"


def _link(cell: Any, sheet_name: str) -> None:
    """Make ``cell`` a link to cell A1 of ``sheet_name`` (in this workbook)."""
    from openpyxl.styles import Font
    from openpyxl.worksheet.hyperlink import Hyperlink

    quoted = sheet_name.replace("'", "''")
    cell.hyperlink = Hyperlink(ref=cell.coordinate, location=f"'{quoted}'!A1")
    cell.font = Font(color="0563C1", underline="single")


# ------------------------------------------------------------------ rates, skipped


def rates_table(rates: pd.DataFrame) -> pd.DataFrame:
    """The outcome rates wide: one row per rate, one column per wave (every wave first)."""
    frame = rates if "wave" in rates else rates.assign(wave=OVERALL)
    frame = frame.assign(wave=frame["wave"].astype(str))
    waves = [OVERALL, *sorted(w for w in frame["wave"].unique() if w != OVERALL)]
    waves = [w for w in waves if w in set(frame["wave"])]
    wide = frame.pivot_table(index="rate", columns="wave", values="value", dropna=False,
                             sort=False)
    order = [r for r in RATE_TEXTS if r in wide.index]
    return wide.reindex(index=order, columns=waves)


def _rates_sheet(sheet: Any, rates: pd.DataFrame) -> None:
    from openpyxl.styles import Font

    wide = rates_table(rates)
    sheet.cell(1, 1, "Outcome rates (AAPOR Standard Definitions, 10th edition)").font = Font(
        bold=True, size=12
    )
    sheet.cell(2, 1, "Every wave together (All), then each wave; rates as shares.").font = Font(
        italic=True
    )
    header = ["rate", "definition", *[f"{w}" for w in wide.columns]]
    for column, name in enumerate(header, start=1):
        sheet.cell(3, column, name).font = Font(bold=True)
    values = wide.to_numpy(dtype="float64")
    for row, rate in enumerate(wide.index, start=4):
        sheet.cell(row, 1, rate)
        sheet.cell(row, 2, RATE_TEXTS.get(rate, ""))
        for column, value in enumerate(values[row - 4].tolist(), start=3):
            if value == value:  # not NaN: a rate whose denominator is 0 stays blank
                sheet.cell(row, column, value).number_format = PERCENT
    row = 4 + len(wide) + 1
    frame = rates if "wave" in rates else rates.assign(wave="All")
    lines = (
        ("cases (all dispositions)", "RR1", "denominator"),
        ("completes (I)", "RR1", "numerator"),
        ("e (eligible share of unknowns)", "RR3", "e"),
    )
    for label, rate, field in lines:
        sheet.cell(row, 1, label)
        for c, wave in enumerate(wide.columns, start=3):
            found = frame[(frame["wave"].astype(str) == wave) & (frame["rate"] == rate)]
            value = float(found[field].iloc[0]) if len(found) else float("nan")
            if value == value:
                cell = sheet.cell(row, c, value)
                cell.number_format = "0.000" if field == "e" else COUNT
        row += 1
    sheet.column_dimensions["A"].width = 30
    sheet.column_dimensions["B"].width = 70
    sheet.freeze_panes = "C4"
    wrap_notes(sheet)
    fit_width(sheet)


def _skipped_sheet(sheet: Any, skipped: pd.DataFrame) -> None:
    from openpyxl.styles import Font

    sheet.cell(1, 1, "Questions not tabulated").font = Font(bold=True, size=12)
    sheet.cell(2, 1, "Free-text and date answers stay in the results; they are counted here.")
    for column, name in enumerate(skipped.columns, start=1):
        sheet.cell(3, column, str(name)).font = Font(bold=True)
    for row, values in enumerate(skipped.itertuples(index=False), start=4):
        for column, value in enumerate(values, start=1):
            cell = sheet.cell(row, column, value.item() if hasattr(value, "item") else value)
            if isinstance(cell.value, int):
                cell.number_format = COUNT
    sheet.column_dimensions["B"].width = 60
    sheet.column_dimensions["E"].width = 28
    wrap_notes(sheet)
    fit_width(sheet)


def _verbatims_sheet(sheet: Any, verbatims: pd.DataFrame) -> None:
    """Every free-text answer: respondent, question, answer, each a text cell."""
    from openpyxl.styles import Alignment, Font

    frame = verbatims.astype(object).where(verbatims.notna(), None)
    try:
        check_frame(frame)
    except ExportError as exc:
        raise ExportError(f"verbatims: {exc}") from None
    sheet.cell(1, 1, "Verbatims: free-text answers").font = Font(bold=True, size=12)
    sheet.cell(2, 1, "Every non-empty answer, exactly as given (text, never a formula).")
    for column, name in enumerate(frame.columns, start=1):
        sheet.cell(3, column, str(name)).font = Font(bold=True)
    wrap = Alignment(wrap_text=True, vertical="top")
    for row, values in enumerate(frame.itertuples(index=False), start=4):
        for column, value in enumerate(values, start=1):
            cell = sheet.cell(row, column, None if value is None else str(value))
            if column == 3:
                cell.alignment = wrap
    sheet.column_dimensions["A"].width = 16
    sheet.column_dimensions["B"].width = 12
    sheet.column_dimensions["C"].width = 80
    sheet.freeze_panes = "A4"
    fit_width(sheet, landscape=False)
