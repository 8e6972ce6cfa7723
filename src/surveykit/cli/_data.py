"""The data commands of the ``surveykit`` command line: results, import and send.

Every command talks to the platform named by ``--base-url``/``--token`` (or
``SURVEYKIT_BASE_URL``/``SURVEYKIT_TOKEN``); with neither it runs on the embedded sandbox.
Files are checked before anything is sent (``_support``); the outcome files of
``import`` and ``send`` are named alike, after the input's full name, and start with the
input's ``row`` (1 = the first row under the header).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import surveykit as sk
from surveykit import plots
from surveykit.batch._options import OPTIONS
from surveykit.cli._support import (
    CHARTS,
    AllowInsecureHttp,
    BaseUrl,
    CommandError,
    ForSpreadsheets,
    Token,
    check_for_spreadsheets,
    check_output,
    check_sqlite_file,
    check_token,
    make_client,
    read_table,
    usage,
    write_file,
    write_table,
)
from surveykit.errors import JournalLockedError, JournalMismatchError, TemplateError

if TYPE_CHECKING:
    import pandas as pd

    from surveykit.batch import BatchResult


SEND_OPTIONS = {"window": "windows", "only_failed": "only"}
"""``surveykit send``'s parameters named apart from the batch option they give."""


def _help(option: str) -> str:
    """The command line's help of a batch option: the one definition's (``batch._options``)."""
    text = OPTIONS[option].cli
    assert text is not None, option
    return text


def outcome_path(file: Path, out: Path | None, kind: str) -> Path:
    """Where the per-row outcome of ``import`` (``kind`` "import") or ``send`` ("sent") goes."""
    return out if out is not None else file.with_name(f"{file.name}.{kind}.csv")


def results(
    survey: Annotated[
        str, typer.Argument(metavar="SURVEY", help="Survey reference, or * for every survey.")
    ] = "*",
    format: Annotated[
        str, typer.Option(metavar="FORMAT", help="CSV, PIPE, TAB, XML or JSON.")
    ] = "CSV",
    since: Annotated[
        datetime | None,
        typer.Option(metavar="TIME", help="Only results since (ISO time, UTC if no offset)."),
    ] = None,
    sort_order: Annotated[
        int | None,
        typer.Option(metavar="N", help="Respondents who answered at least N questions."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Write the table (.csv .parquet .json .xlsx); its folder must exist.",
        ),
    ] = None,
    chart: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Write the response funnel chart (.png .svg .pdf); its folder must exist.",
        ),
    ] = None,
    spreadsheets: ForSpreadsheets = False,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Fetch survey results: print a summary and the funnel, write the table and a chart."""
    from surveykit.models import ResultsFormat

    allowed = [choice.value for choice in ResultsFormat]
    if format.upper() not in allowed:
        raise usage(f"--format: {format!r} is not one of {', '.join(allowed)}")
    if out is not None:
        check_output(out, "--out")
        check_for_spreadsheets(out, spreadsheets)
    elif spreadsheets:
        raise usage("--for-spreadsheets: give the --out file it is for")
    if chart is not None:
        check_output(chart, "--chart", CHARTS)
    if since is not None and since.tzinfo is None:
        from datetime import UTC

        since = since.replace(tzinfo=UTC)
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http)
    frame = client.surveys.results(survey, format=format, since=since, sort_order=sort_order)
    name = "all surveys" if survey == "*" else f"survey {survey}"
    by = _survey_column(frame)
    # The files are written before anything is printed, so a reader that stops early
    # (`surveykit results --out x.csv | head`) still gets them.
    wrote: list[str] = []
    if out is not None:
        write_table(frame, out, for_spreadsheets=spreadsheets)
        wrote.append(f"wrote {len(frame):,} rows to {out}")
    if chart is not None:
        if not len(frame):
            raise CommandError(f"--chart {chart}: no results to chart")
        _write_chart(frame, by, f"Response funnel: {name}", chart)
        wrote.append(f"wrote the funnel chart to {chart}")
    _print_summary(frame, survey, name, by)
    for line in wrote:
        typer.echo(line)


def _write_chart(frame: pd.DataFrame, by: str | None, title: str, chart: Path) -> None:
    import io

    figure = plots.plot_funnel(frame, by=by, title=title)
    # Drawn into memory, then written whole: matplotlib's PNG writer does not report a
    # failed write (a full disk, /dev/full), so the file is written and checked here.
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=120, format=chart.suffix.lower().lstrip(".") or "png")
    write_file(chart, lambda stream: stream.write(buffer.getvalue()), option="--chart")


def _print_summary(frame: pd.DataFrame, survey: str, name: str, by: str | None) -> None:
    import pandas as pd

    from surveykit import analysis

    questions = analysis.question_columns(frame)
    typer.echo(
        f"{name}: {len(frame):,} respondents{_never_invited(frame)}, {len(frame.columns)} "
        f"columns ({len(questions)} questions: {', '.join(questions)})"
    )
    if not len(frame):
        return
    typer.echo(analysis.response_funnel(frame, by=by).round(1).to_string(index=False))
    groups = list(frame.groupby(by, observed=True)) if by else [(survey, frame)]
    for group, part in groups:
        for question, kind in analysis.question_kinds(part).items():
            if kind != "rating" or not part[question].notna().any():
                continue
            values = pd.to_numeric(part[question], errors="coerce").dropna()
            line = f"{group} {question}: {len(values)} ratings, mean {values.mean():.1f}"
            if analysis.is_nps_scale(part[question]):
                line += f", NPS {analysis.nps(part, question).iloc[0]['estimate']:+.0f}"
            typer.echo(line)


def _never_invited(frame: pd.DataFrame) -> str:
    """`` (28 invited, 3 never invited)`` when some rows have no invitation time, else ``""``.

    The funnel's first stage counts the invited; without this the two totals disagree.
    """
    if "invited" not in frame.columns:
        return ""
    invited = int(frame["invited"].notna().sum())
    never = len(frame) - invited
    return f" ({invited:,} invited, {never:,} never invited)" if never else ""


def _survey_column(frame: pd.DataFrame) -> str | None:
    column = "surveyReference"
    if column in frame.columns and frame[column].nunique() > 1:
        return column
    return None


_UNFINISHED = ("not sent", "unknown", "failed")
"""Outcomes of rows the import did not get to (a network failure, a refused chunk)."""


def import_(
    reference: Annotated[
        str,
        typer.Argument(metavar="REFERENCE", help="The survey's import definition reference."),
    ],
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="File of respondents: .csv, .tsv/.tab/.txt (tab-separated), .xlsx/.xls, "
            ".parquet; text files in UTF-8.",
        ),
    ],
    map_: Annotated[
        list[str] | None,
        typer.Option("--map", metavar="COLUMN=PROPERTY", help="Map a column; repeatable."),
    ] = None,
    region: Annotated[
        str | None,
        typer.Option(
            metavar="REGION",
            help="Region of national phone numbers (GB); default SURVEYKIT_DEFAULT_REGION.",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Refuse numbers that are possible but not valid for phonenumbers (kept and "
            "marked unverified by default).",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Per-row outcome file (.csv .parquet .json .xlsx); default FILE.import.csv "
            "beside FILE, after its full name (people.xlsx -> people.xlsx.import.csv). Its "
            "folder must exist.",
        ),
    ] = None,
    chunk_size: Annotated[
        int, typer.Option(metavar="N", min=1, help="Records per request.")
    ] = 1000,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Build and show the plan; send nothing.")
    ] = False,
    spreadsheets: ForSpreadsheets = False,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Import respondents from a file; print the plan and write every row's outcome.

    The outcome (one row per input row: row, status, message, when, reason, and for
    rejected rows the column, value and duplicate_of, the row with that number first; and
    number_check: valid, or unverified for a number phonenumbers finds possible but not
    valid, refused under --strict) goes to --out, by default FILE.import.csv beside FILE
    (people.csv -> people.csv.import.csv).

    Exits with status 1, after writing the outcome, when the platform does not know the
    reference, or when rows were not imported for another reason than their data (a
    network failure: "not sent" or "unknown"; a refused request: "failed"). Rows that were
    rejected, or that the platform answered with Error, are in the outcome with the reason.
    """
    mapping: dict[Any, str | None] = {}
    for item in map_ or []:
        column, sep, prop = item.partition("=")
        if not sep or not column:
            raise usage(f"--map {item!r}: expected COLUMN=property (COLUMN= leaves it out)")
        mapping[column] = prop or None
    target = outcome_path(file, out, "import")
    check_for_spreadsheets(target, spreadsheets)
    df = read_table(file)
    if not dry_run:
        check_output(target, "--out")
    from surveykit.client._config import resolve_default_region
    from surveykit.rules.numbers import check_region

    try:
        region = (
            resolve_default_region(None)  # SURVEYKIT_DEFAULT_REGION
            if region is None
            else check_region(region, "--region")
        )
    except (sk.ConfigurationError, sk.ValidationError) as exc:
        raise usage(str(exc)) from None
    try:
        plan = sk.build_import_list(df, mapping or None, default_region=region, strict=strict)
    except ValueError as exc:
        raise usage(str(exc)) from None
    typer.echo(repr(plan))
    if dry_run:
        return
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http, writes=True)
    check_token(client)
    stopped: sk.ImportStoppedError | None = None
    try:
        outcome = sk.import_frame(
            client, reference, df, plan=plan, chunk_size=chunk_size, progress=False
        )
    except sk.ImportStoppedError as exc:
        stopped, outcome = exc, exc.result
    write_table(outcome, target, for_spreadsheets=spreadsheets)
    counts = outcome["status"].value_counts()
    typer.echo("outcome: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    typer.echo(f"wrote the outcome of {len(outcome):,} rows to {target}")
    if stopped is not None:
        # The outcome file is written first: it says which rows were imported before the stop.
        raise CommandError(f"import stopped: {stopped}")
    unfinished = {k: v for k, v in counts.items() if k in _UNFINISHED}
    if unfinished:
        raise CommandError(
            f"{sum(unfinished.values()):,} of {len(outcome):,} rows not imported ("
            + ", ".join(f"{k} {v}" for k, v in unfinished.items())
            + f"); each row's reason is in {target}"
        )


def send(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="File, one row a message: .csv .tsv .tab .txt .xlsx .xls .parquet; text "
            "files in UTF-8.",
        ),
    ],
    message: Annotated[str, typer.Option(metavar="TEMPLATE", help=_help("message"))],
    source: Annotated[str, typer.Option(metavar="SENDER", help=_help("source"))],
    destination: Annotated[
        str | None, typer.Option(metavar="COLUMN", help=_help("destination"))
    ] = None,
    channel: Annotated[str, typer.Option(metavar="CHANNEL", help=_help("channel"))] = "sms",
    subject: Annotated[str | None, typer.Option(metavar="TEMPLATE", help=_help("subject"))] = None,
    window: Annotated[
        list[str] | None, typer.Option(metavar="WINDOW", help=_help("windows"))
    ] = None,
    timezone: Annotated[
        str | None, typer.Option(metavar="ZONE|COLUMN|auto", help=_help("timezone"))
    ] = None,
    when: Annotated[str | None, typer.Option(metavar="TIME|COLUMN", help=_help("when"))] = None,
    links: Annotated[str | None, typer.Option(metavar="COLUMN", help=_help("links"))] = None,
    region: Annotated[str | None, typer.Option(metavar="REGION", help=_help("region"))] = None,
    strict: Annotated[bool, typer.Option("--strict", help=_help("strict"))] = False,
    reply: Annotated[bool, typer.Option("--reply", help=_help("reply"))] = False,
    lookup: Annotated[bool, typer.Option("--lookup", help=_help("lookup"))] = False,
    journal: Annotated[Path | None, typer.Option(metavar="FILE", help=_help("journal"))] = None,
    no_journal: Annotated[
        bool, typer.Option("--no-journal", help="Keep no journal: a re-run sends again.")
    ] = False,
    journal_timeout: Annotated[
        float, typer.Option(min=0, metavar="SECONDS", help=_help("journal_timeout"))
    ] = 0.0,
    test: Annotated[bool, typer.Option("--test", help=_help("test"))] = False,
    preview: Annotated[
        bool, typer.Option("--preview", help="Render and check rows; send nothing.")
    ] = False,
    concurrency: Annotated[int, typer.Option(metavar="N", min=1, help=_help("concurrency"))] = 8,
    rate: Annotated[float | None, typer.Option(metavar="PER_SECOND", help=_help("rate"))] = None,
    only_failed: Annotated[bool, typer.Option("--only-failed", help=_help("only"))] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Per-row outcome file (.csv .parquet .json .xlsx); default FILE.sent.csv "
            "beside FILE, after its full name (people.xlsx -> people.xlsx.sent.csv). Its "
            "folder must exist.",
        ),
    ] = None,
    spreadsheets: ForSpreadsheets = False,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Send one templated message per row of a file; write every row's outcome.

    The outcome (row, destination, text, segments, outcome, message_id, status, ... error)
    goes to --out, by default FILE.sent.csv beside FILE (people.csv -> people.csv.sent.csv).
    Every send is journaled, by default in FILE.journal.sqlite beside FILE: a re-run of the
    same command resends nothing and goes on where an interrupted one stopped (--test sends
    nothing, so keeps no journal unless given one).
    """
    if no_journal and journal is not None:
        raise usage("--journal and --no-journal: choose one")
    if only_failed and no_journal:
        raise usage("--only-failed needs the journal of the earlier run")
    target = outcome_path(file, out, "sent")
    check_for_spreadsheets(target, spreadsheets)
    df = read_table(file)
    if not preview:
        check_output(target, "--out")
    default_journal = journal is None and not (no_journal or test or preview)
    if default_journal:
        journal = file.with_name(f"{file.name}.journal.sqlite")
    if journal is not None:
        check_sqlite_file(
            journal, "--journal", "surveykit journal", ("meta", "rows"), "batch.journal"
        )
    options: dict[str, Any] = {
        "source": source,
        "destination": destination,
        "channel": channel,
        "windows": window,
        "timezone": timezone,
        "when": when,
        "links": links,
        "reply": reply,
        "lookup": lookup,
        "rate": rate,
        "region": region,
        "strict": strict,
    }
    if channel == "email":
        options.update(subject=subject, content=message)
    else:
        options["message"] = message
    client = make_client(
        base_url, token, allow_insecure_http=allow_insecure_http, writes=not (preview or test)
    )
    with _refusals_as_lines(options, journal, target, spreadsheets):
        if preview:
            shown = sk.preview_batch(client, df, **options)
            typer.echo(repr(shown))
            typer.echo(shown.frame.head(10).to_string())
            return
        check_token(client)
        result = sk.send_batch(
            client,
            df,
            **options,
            test=test,
            journal=journal,
            journal_timeout=journal_timeout,
            concurrency=concurrency,
            only="failed" if only_failed else None,
            progress=sys.stderr.isatty(),  # a bar on a terminal, not in a log
        )
    _write_sent(result, target, spreadsheets, journal, default_journal=default_journal)


@contextmanager
def _refusals_as_lines(
    options: dict[str, Any], journal: Path | None, target: Path, spreadsheets: bool
) -> Iterator[None]:
    """A batch's refusals and interruption as one line each, in the command line's words."""
    try:
        yield
    except sk.BatchInterrupted as stopped:
        write_table(stopped.result.frame, target, for_spreadsheets=spreadsheets)
        resume = f"; re-run with --journal {journal} to go on" if journal else ""
        raise CommandError(
            f"interrupted: {stopped.result.sent_now:,} rows sent; the outcome of every row is "
            f"in {target}{resume}",
            code=130,
        ) from None
    except JournalMismatchError as exc:
        raise CommandError(
            f"--journal {journal}: {exc.problem} (--journal FILE for a new journal, or "
            "--no-journal for none)"
        ) from None
    except JournalLockedError as exc:
        raise CommandError(str(exc)) from None
    except TemplateError as exc:
        raise usage(str(exc)) from None
    except sk.ValidationError as exc:
        raise usage(_as_flags(str(exc), options)) from None
    except sk.SurveykitError:
        raise
    except ValueError as exc:
        # Refused before anything was sent: a template, a window, a column, a channel.
        raise usage(str(exc)) from None


def _write_sent(
    result: BatchResult,
    target: Path,
    spreadsheets: bool,
    journal: Path | None,
    *,
    default_journal: bool,
) -> None:
    """Write every row's outcome to ``target`` and say what was done."""
    try:
        write_table(result.frame, target, for_spreadsheets=spreadsheets)
    except CommandError as exc:
        kept = f"; the journal {journal} has every row" if journal else ""
        sent = f"{result.sent_now:,} row{' was' if result.sent_now == 1 else 's were'} sent"
        raise CommandError(f"{sent}, but {exc}{kept}") from None
    typer.echo(repr(result))
    typer.echo(f"wrote the outcome of {len(result.frame):,} rows to {target}")
    if default_journal:  # after a failure, its one line names the journal instead
        typer.echo(
            f"surveykit: journaled every row in {journal}: a re-run resends nothing "
            "(--no-journal to keep none)",
            err=True,
        )


_FLAGS = {"windows": "--window"}


def _as_flags(message: str, options: dict[str, Any]) -> str:
    """A send option's refusal under its command-line name (``timezone:`` -> ``--timezone:``)."""
    field, colon, rest = message.partition(":")
    if colon and field in options:
        return _FLAGS.get(field, "--" + field.replace("_", "-")) + colon + rest
    return message


def register(app: typer.Typer) -> None:
    """Add ``results``, ``import`` and ``send`` to the ``surveykit`` app."""
    app.command("results")(results)
    app.command("import")(import_)
    app.command("send")(send)
