"""``surveykit report``: survey results to an Excel report (and SPSS/Stata files).

One command group, one module (as every group of ``surveykit.cli``); registered on the
app by :func:`register`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

import surveykit as sk
from surveykit.cli._support import (
    AllowInsecureHttp,
    BaseUrl,
    CommandError,
    Token,
    make_client,
    read_table,
    usage,
)

DISPOSITION_COLUMN = "disposition"
WAVE_COLUMN = "wave"


def read_targets(path: Path) -> dict[str, dict[str, float]]:
    """Population shares from a file: ``.json`` ``{column: {level: share}}`` or ``.csv``.

    A CSV has the columns ``column``, ``level`` and ``share`` (one row per level). Shares
    are fractions; :func:`surveykit.analysis.weights.rake` checks that each column's sum to 1.

    Raises:
        typer.BadParameter: the file is missing, of another type, or not in that shape
            (naming the row or key).
    """
    if not path.is_file():
        raise typer.BadParameter(f"no file {path}", param_hint="'--targets'")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(
            f"{path}: cannot read it ({exc})", param_hint="'--targets'"
        ) from None
    if suffix == ".json":
        return _targets_from_json(path, text)
    if suffix == ".csv":
        return _targets_from_csv(path, text)
    raise typer.BadParameter(
        f"{path}: targets are read from .json or .csv, not {suffix or 'a file without a suffix'}",
        param_hint="'--targets'",
    )


def _share(where: str, value: Any) -> float:
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = math.nan
    if not math.isfinite(share):
        raise typer.BadParameter(f"{where}: {value!r} is not a number", param_hint="'--targets'")
    return share


def _targets_from_json(path: Path, text: str) -> dict[str, dict[str, float]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"{path}: not JSON ({exc})", param_hint="'--targets'") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise typer.BadParameter(
            f"{path}: expected {{column: {{level: share}}}}", param_hint="'--targets'"
        )
    return {
        str(column): {
            str(level): _share(f"{path}: {column}.{level}", share)
            for level, share in levels.items()
        }
        for column, levels in data.items()
    }


def _targets_from_csv(path: Path, text: str) -> dict[str, dict[str, float]]:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if header[:3] != ["column", "level", "share"]:
        raise typer.BadParameter(
            f"{path}: row 1 must be the header column,level,share", param_hint="'--targets'"
        )
    targets: dict[str, dict[str, float]] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < 3:
            raise typer.BadParameter(
                f"{path}: row {number} has {len(row)} values, expected 3", param_hint="'--targets'"
            )
        column, level, share = row[0].strip(), row[1].strip(), row[2]
        levels = targets.setdefault(column, {})
        if level in levels:
            raise typer.BadParameter(
                f"{path}: row {number} repeats level {level!r} of {column!r}",
                param_hint="'--targets'",
            )
        levels[level] = _share(f"{path}: row {number}", share)
    return targets


def report(
    survey: Annotated[str, typer.Argument(help="Survey reference.", metavar="SURVEY")],
    out: Annotated[
        Path, typer.Option("--out", help="The Excel report to write (.xlsx).", metavar="FILE")
    ],
    codebook: Annotated[
        Path | None,
        typer.Option(
            help="Codebook (.json .csv .xlsx); else the sandbox's, or a draft.", metavar="FILE"
        ),
    ] = None,
    targets: Annotated[
        Path | None,
        typer.Option(help="Population shares to rake to (.json or .csv).", metavar="FILE"),
    ] = None,
    weights: Annotated[
        str | None,
        typer.Option(
            help="Column of base (sampling) weights; raking with --targets starts from them.",
            metavar="COLUMN",
        ),
    ] = None,
    strata: Annotated[
        str | None, typer.Option(help="Column of the design's strata.", metavar="COLUMN")
    ] = None,
    psu: Annotated[
        str | None,
        typer.Option(
            help="Column of the design's primary sampling units (clusters, households).",
            metavar="COLUMN",
        ),
    ] = None,
    fpc: Annotated[
        str | None,
        typer.Option(
            help="Column of the strata's population sizes (or sampling fractions).",
            metavar="COLUMN",
        ),
    ] = None,
    by: Annotated[
        list[str] | None,
        typer.Option(
            help="Group estimates and crosstabs by this column (repeatable).", metavar="COLUMN"
        ),
    ] = None,
    banner: Annotated[
        list[str] | None,
        typer.Option(
            help="Add a banner table by these columns (comma-separated or repeated): every "
            "question down, their levels across, with bases and significance letters.",
            metavar="COLUMNS",
        ),
    ] = None,
    top_box: Annotated[
        int | None,
        typer.Option(
            "--top-box",
            help="With --banner: 'Top k' and 'Bottom k' nets on every rating question.",
            metavar="K",
            min=1,
        ),
    ] = None,
    verbatims: Annotated[
        bool,
        typer.Option(
            "--verbatims", help="Add a sheet of every free-text answer (written as text)."
        ),
    ] = False,
    spss: Annotated[
        Path | None, typer.Option(help="Also write the labelled results (.sav).", metavar="FILE")
    ] = None,
    stata: Annotated[
        Path | None, typer.Option(help="Also write the labelled results (.dta).", metavar="FILE")
    ] = None,
    ci: Annotated[float, typer.Option(help="Confidence level of every interval.")] = 0.95,
    dispositions: Annotated[
        Path | None,
        typer.Option(
            help="AAPOR final dispositions (.csv .xlsx ...): a 'disposition' column of codes "
            "(1.1, 2.11, 3.19...), optionally 'wave'; the report carries the outcome rates.",
            metavar="FILE",
        ),
    ] = None,
    journal: Annotated[
        list[Path] | None,
        typer.Option(
            help="Journal of a wave of invitations (repeat per wave): the outcome rates come "
            "from the campaign's dispositions (sk.dispositions), per last wave sent.",
            metavar="FILE",
        ),
    ] = None,
    events: Annotated[
        Path | None,
        typer.Option(help="The listener's event store, with --journal.", metavar="FILE"),
    ] = None,
    optouts: Annotated[
        Path | None,
        typer.Option(help="The opt-out list (SQLite), with --journal.", metavar="FILE"),
    ] = None,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Estimate every question of a survey, with intervals, weights and significance."""
    from surveykit.report._build import build_report

    _check_outputs(out, spss, stata)
    if not 0 < ci < 1:
        raise typer.BadParameter(f"{ci} is not between 0 and 1", param_hint="'--ci'")
    shares = read_targets(targets) if targets is not None else None
    banners = [c.strip() for given in banner or [] for c in given.split(",") if c.strip()]
    if banner and not banners:
        raise typer.BadParameter("no column named", param_hint="'--banner'")
    if top_box is not None and not banners:
        raise usage("--top-box goes with --banner (the banner table's nets)")
    _check_campaign_files(dispositions, journal, events, optouts)
    codes = read_dispositions(dispositions) if dispositions is not None else None
    questions = _read_codebook(codebook) if codebook is not None else None
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http)
    try:
        frame = client.surveys.results(survey)
        if questions is None and client.embedded is not None:
            questions = client.embedded.codebook(survey)
        if questions is None:
            typer.echo("surveykit: no --codebook: drafting one from the answers", err=True)
        named = [("--weights", weights), ("--strata", strata), ("--psu", psu), ("--fpc", fpc),
                 *(("--banner", column) for column in banners)]  # fmt: skip
        for option, column in named:
            if column is not None and column not in frame.columns:
                raise typer.BadParameter(
                    f"no column {column!r} in the results of {survey}", param_hint=f"'{option}'"
                )
        if journal:
            status = sk.campaign_status(
                frame, sends=list(journal), events=events, opt_outs=optouts
            )
            codes = sk.dispositions(status)
            codes[WAVE_COLUMN] = codes["last_wave"]
        result = build_report(
            frame,
            questions,
            targets=shares,
            weights=weights,
            strata=strata,
            psu=psu,
            fpc=fpc,
            by=by or None,
            ci=ci,
            survey=survey,
            dispositions=codes,
            banner=banners or None,
            top_box=top_box,
            verbatims=verbatims,
        )
        result.to_excel(out)
        if spss is not None:
            sk.to_spss(result.labelled, spss, codebook=result.codebook)
        if stata is not None:
            sk.to_stata(result.labelled, stata, codebook=result.codebook)
    except (sk.SurveykitError, KeyError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write: {exc}") from None
    for line in _summary_lines(survey, len(frame), result, banners, out, spss, stata):
        typer.echo(line)



def _summary_lines(
    survey: str, respondents: int, result: Any, banners: list[str], out: Path,
    spss: Path | None, stata: Path | None,
) -> list[str]:  # fmt: skip
    """What the command prints: the survey and design, headline figures, rates, files."""
    lines: list[str] = []
    weighted = ""
    if result.weights is not None:
        summary = sk.weights.summary(result.weights)
        weighted = (
            f", weighted (n_eff {summary['n_eff']:,.1f}, design effect "
            f"{summary['design_effect']:.2f})"
        )
    if result.design is not None:
        weighted += f"\n{result.design.describe()}; variance: {result.design.variance_method}"
    lines.append(
        f"survey {survey}: {respondents:,} respondents, {len(result.codebook)} questions{weighted}"
    )
    lines += headlines(result.tables)
    lines += rate_lines(result.outcome_rates)
    extra = ""
    if result.banner is not None:
        extra += f", a banner table by {', '.join(banners)}"
    if result.verbatims is not None:
        extra += f", {len(result.verbatims):,} verbatim answers"
    written = [f"wrote {len(result.tables)} tables{extra} and a cover to {out}"]
    written += [f"wrote the labelled results to {p}" for p in (spss, stata) if p is not None]
    if spss is not None and any(
        q.kind == "multi" and q.labels and q.key in result.labelled.columns
        for q in result.codebook.values()
    ):
        from surveykit.report._export import syntax_path

        written.append(f"wrote the multiple-response sets (SPSS syntax) to {syntax_path(spss)}")
    return lines + written


def _check_outputs(out: Path, spss: Path | None, stata: Path | None) -> None:
    """Each output file has its suffix and a folder to go in (a usage error otherwise)."""
    for option, path, suffix in (
        ("--out", out, ".xlsx"),
        ("--spss", spss, ".sav"),
        ("--stata", stata, ".dta"),
    ):
        if path is None:
            continue
        if path.suffix.lower() != suffix:
            raise typer.BadParameter(f"{path}: expected a {suffix} file", param_hint=f"'{option}'")
        if path.is_dir():
            raise typer.BadParameter(f"{path} is a folder", param_hint=f"'{option}'")
        if not path.parent.is_dir():
            raise typer.BadParameter(f"no folder {path.parent}", param_hint=f"'{option}'")


def _check_campaign_files(
    dispositions: Path | None, journal: list[Path] | None, events: Path | None,
    optouts: Path | None,
) -> None:  # fmt: skip
    """The outcome rates come from one source, and its files exist."""
    if dispositions is not None and journal:
        raise usage("give --dispositions or --journal, not both")
    if (events is not None or optouts is not None) and not journal:
        raise usage("--events and --optouts go with --journal (the campaign's sends)")
    for option, path in [*(("--journal", p) for p in journal or []), ("--events", events),
                         ("--optouts", optouts)]:  # fmt: skip
        if path is not None and not path.is_file():
            raise usage(f"{option} {path}: no such file")


def _read_codebook(path: Path) -> Any:
    """The ``--codebook`` file, read (one line naming the file when it cannot be)."""
    if not path.is_file():
        raise typer.BadParameter(f"no file {path}", param_hint="'--codebook'")
    try:
        return sk.Codebook.read(path)
    except (sk.SurveykitError, ValueError, OSError) as exc:
        raise CommandError(f"--codebook {path}: {exc}") from None

def read_dispositions(path: Path) -> Any:
    """The ``--dispositions`` table: a ``disposition`` column (and ``wave``), codes as text.

    Raises:
        CommandError: the file cannot be read, or has no ``disposition`` column (usage).
    """
    frame = read_table(path)
    names = {str(c).strip().lower(): c for c in frame.columns}
    if DISPOSITION_COLUMN not in names:
        raise usage(
            f"--dispositions {path}: no column {DISPOSITION_COLUMN!r}; columns are "
            f"{[str(c) for c in frame.columns]}"
        )
    keep = {names[DISPOSITION_COLUMN]: DISPOSITION_COLUMN}
    if WAVE_COLUMN in names:
        keep[names[WAVE_COLUMN]] = WAVE_COLUMN
    out = frame[list(keep)].rename(columns=keep)
    out[DISPOSITION_COLUMN] = out[DISPOSITION_COLUMN].astype("string").str.strip()
    return out


def rate_lines(rates: Any) -> list[str]:
    """One line of AAPOR rates (RR1, RR3, COOP1, REF1, CON1) for every wave, then each."""
    if rates is None or not len(rates):
        return []
    lines = []
    for wave, part in rates.groupby("wave", sort=False):
        values = dict(zip(part["rate"], part["value"], strict=True))
        shown = ", ".join(
            f"{rate} {values[rate]:.1%}"
            for rate in ("RR1", "RR3", "COOP1", "REF1", "CON1")
            if rate in values and values[rate] == values[rate]
        )
        where = "all waves" if wave == "All" else f"wave {wave}"
        lines.append(f"AAPOR outcome rates, {where}: {shown}")
    return lines


def headlines(tables: dict[str, Any]) -> list[str]:
    """One line per overall (ungrouped) mean or NPS, and per crosstab's test (and caution)."""
    lines = []
    for name, table in tables.items():
        attrs = table.attrs
        kind, question = attrs.get("estimate"), attrs.get("question")
        if kind in ("means", "nps") and not attrs.get("by") and len(table) == 1:
            row = table.iloc[0]
            figure = "NPS" if kind == "nps" else "mean"
            lines.append(
                f"{question}: {figure} {row['estimate']:.2f} "
                f"[{row['ci_low']:.2f}, {row['ci_high']:.2f}], n {int(row['n'])}"
            )
        elif "test" in attrs and isinstance(attrs["test"], dict):
            test = attrs["test"]
            if test.get("chi2") != test.get("chi2"):  # NaN: no test, and the table says why
                why = str(test.get("note") or "nothing to compare").removesuffix(": no test")
                lines.append(f"{name}: no test ({why})")
                continue
            line = (
                f"{name}: chi2 {test['chi2']:.2f}, df {test['dof']}, p {test['p_value']:.4f}, "
                f"Cramér's V {test['cramers_v']:.3f}"
            )
            if test.get("warning"):
                line += f"; caution: {test['warning']}"
            lines.append(line)
    return lines


def register(app: typer.Typer) -> None:
    """Add ``report`` to the ``surveykit`` app."""
    app.command("report")(report)
