"""The campaign commands of the ``surveykit`` command line: ``remind`` and ``optouts``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

import surveykit as sk
from surveykit.cli._support import (
    AllowInsecureHttp,
    BaseUrl,
    CommandError,
    ForSpreadsheets,
    Token,
    check_for_spreadsheets,
    make_client,
    read_table,
    usage,
    write_table,
)
from surveykit.errors import OptOutError

OptOutsPath = Annotated[
    Path,
    typer.Option(
        "--db",
        envvar="SURVEYKIT_OPTOUTS",
        help="SQLite file of the opt-out list (created if missing).",
    ),
]

optouts_app = typer.Typer(
    help="The opt-out list: numbers never to message (fed by STOP/UNSTOP).",
    no_args_is_help=True,
)


def _open(db: Path, region: str | None = None) -> Any:
    from surveykit.campaign import OptOutList

    if db.exists() and db.is_dir():
        raise CommandError(f"--db: {db} is a directory")
    try:
        return OptOutList(db, region=region)
    except Exception as exc:  # sqlite3 errors on a file that is not a database
        raise CommandError(f"--db: cannot open {db} as an opt-out list ({exc})") from None


def _change(db: Path, numbers: list[str], reason: str | None, region: str | None, add: bool) -> int:
    optouts = _open(db, region)
    try:
        return int(
            optouts.add(numbers, reason=reason) if add else optouts.remove(numbers, reason=reason)
        )
    except OptOutError as exc:
        raise CommandError(str(exc)) from None
    finally:
        optouts.close()


@optouts_app.command("add")
def optouts_add(
    numbers: Annotated[list[str], typer.Argument(help="Numbers or email addresses.")],
    reason: Annotated[str | None, typer.Option(help="Why (kept with each number).")] = None,
    region: Annotated[str | None, typer.Option(help="Region of national numbers (GB).")] = None,
    db: OptOutsPath = Path("optouts.sqlite"),
) -> None:
    """Put numbers on the opt-out list."""
    changed = _change(db, numbers, reason, region, add=True)
    typer.echo(f"added {changed} of {len(numbers)} to {db}")


@optouts_app.command("remove")
def optouts_remove(
    numbers: Annotated[list[str], typer.Argument(help="Numbers or email addresses.")],
    reason: Annotated[str | None, typer.Option(help="Why (kept with each number).")] = None,
    region: Annotated[str | None, typer.Option(help="Region of national numbers (GB).")] = None,
    db: OptOutsPath = Path("optouts.sqlite"),
) -> None:
    """Take numbers off the opt-out list."""
    changed = _change(db, numbers, reason, region, add=False)
    typer.echo(f"removed {changed} of {len(numbers)} from {db}")


@optouts_app.command("list")
def optouts_list(
    out: Annotated[
        Path | None, typer.Option(help="Write the list (.csv .parquet .json .xlsx).")
    ] = None,
    db: OptOutsPath = Path("optouts.sqlite"),
    spreadsheets: ForSpreadsheets = False,
) -> None:
    """Print the numbers on the opt-out list (number, reason, since, source)."""
    _show(db, out, spreadsheets, lambda optouts: optouts.frame, "numbers",
          "the opt-out list is empty")  # fmt: skip


@optouts_app.command("review")
def optouts_review(
    out: Annotated[
        Path | None, typer.Option(help="Write the replies (.csv .parquet .json .xlsx).")
    ] = None,
    db: OptOutsPath = Path("optouts.sqlite"),
    spreadsheets: ForSpreadsheets = False,
) -> None:
    """Print the replies that may be opt-outs in other words, for a person to decide.

    Nothing listed is opted out by the rule: 'optouts add' the numbers that are.
    """
    _show(db, out, spreadsheets, lambda optouts: optouts.review(), "replies",
          "no replies to review")  # fmt: skip


def _show(
    db: Path,
    out: Path | None,
    spreadsheets: bool,
    table: Callable[[Any], Any],
    what: str,
    empty: str,
) -> None:
    """Print a table of the opt-out list, or write it to ``out``."""
    if out is None and spreadsheets:
        raise usage("--for-spreadsheets: give the --out file it is for")
    if out is not None:
        check_for_spreadsheets(out, spreadsheets)
    if not db.exists():
        raise CommandError(f"--db: no opt-out list {db}")
    optouts = _open(db)
    try:
        frame = table(optouts)
    finally:
        optouts.close()
    if out is not None:
        write_table(frame, out, for_spreadsheets=spreadsheets)
        typer.echo(f"wrote {len(frame):,} {what} to {out}")
        return
    typer.echo(frame.to_string(index=False) if len(frame) else empty)


@optouts_app.command("import")
def optouts_import(
    file: Annotated[Path, typer.Argument(help="File: .csv .tsv .tab .txt .xlsx .xls .parquet.")],
    column: Annotated[
        str | None, typer.Option(help="Column of numbers (default: the first column).")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why (kept with each number).")] = None,
    region: Annotated[str | None, typer.Option(help="Region of national numbers (GB).")] = None,
    db: OptOutsPath = Path("optouts.sqlite"),
) -> None:
    """Add every number of a file's column to the opt-out list (all or nothing)."""
    frame = read_table(file)
    if not len(frame.columns):
        raise CommandError(f"{file}: no columns")
    name = column if column is not None else str(frame.columns[0])
    if name not in frame.columns:
        raise CommandError(
            f"--column: no column {name!r} in {file}; columns are {list(frame.columns)}"
        )
    values = frame[name].dropna()
    changed = _change(
        db, values.astype(str).tolist(), reason or f"imported from {file.name}", region, add=True
    )
    typer.echo(f"imported {len(values):,} numbers from {file} ({changed:,} changed) into {db}")


def _next_journal(journals: list[Path]) -> Path:
    """``wave{N+1}.sqlite`` beside the last journal, N the number of journals given."""
    return journals[-1].with_name(f"wave{len(journals) + 1}.sqlite")


def remind(
    survey: Annotated[str, typer.Argument(help="Survey reference.")],
    journal: Annotated[
        list[Path],
        typer.Option(help="Journal of an earlier wave (repeat for every wave, in order)."),
    ],
    message: Annotated[str, typer.Option(help="Template, e.g. 'Hi {firstName}, a reminder'.")],
    source: Annotated[str, typer.Option(help="Sender: number, short code or brand.")],
    events: Annotated[
        Path | None, typer.Option(help="The listener's event store (SQLite).")
    ] = None,
    max_contacts: Annotated[int, typer.Option(min=1, help="Most messages per person.")] = 3,
    min_gap: Annotated[str, typer.Option(help="Least time since the last message.")] = "48h",
    optouts: Annotated[
        Path | None, typer.Option(help="Opt-out list (SQLite); its numbers are never sent.")
    ] = None,
    wave_journal: Annotated[
        Path | None,
        typer.Option(
            help="Journal of this reminder wave (default: waveN.sqlite beside the last "
            "--journal, N = journals + 1). Re-run with it to resume; nothing is sent twice."
        ),
    ] = None,
    channel: Annotated[str, typer.Option(help="sms, whatsapp, facebook, email...")] = "sms",
    test: Annotated[bool, typer.Option(help="Test routing only; nothing is sent.")] = False,
    out: Annotated[
        Path | None, typer.Option(help="Per-row outcome file (default: beside the journal).")
    ] = None,
    spreadsheets: ForSpreadsheets = False,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Remind the respondents of earlier waves who have not answered (one wave, journaled)."""
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*[a-zA-Z]+\s*", min_gap) and min_gap.strip() != "0":
        raise typer.BadParameter(
            f"{min_gap!r} is not a duration such as 48h", param_hint="'--min-gap'"
        )
    for option, path in [*(("--journal", p) for p in journal), ("--events", events)]:
        if path is not None and not path.is_file():
            raise CommandError(f"{option} {path}: no such file")
    target = wave_journal or _next_journal(journal)
    check_for_spreadsheets(out or target.with_suffix(".sent.csv"), spreadsheets)
    if target.resolve() in {p.resolve() for p in journal}:
        raise CommandError(
            f"--wave-journal: {target} is one of the --journal files; give a new file"
        )
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http, writes=True)
    try:
        results = client.surveys.results(survey)
        status = sk.campaign_status(results, sends=list(journal), events=events, opt_outs=optouts)
        from surveykit.batch._result import platform_now

        reminders = sk.plan_reminders(
            status,
            max_contacts=max_contacts,
            min_gap=min_gap,
            channel=channel,
            results=results,
            now=platform_now(client),  # the sandbox's clock, which timed its journals
        )
        typer.echo(
            f"{survey}: {len(status):,} respondents; "
            + ", ".join(f"{k} {v}" for k, v in reminders.summary.items() if v or k == "remind")
        )
        options: dict[str, Any] = {"source": source, "channel": channel}
        if channel == "email":
            options.update(subject=message, content=message)
        else:
            options["message"] = message
        result = sk.send_batch(
            client,
            reminders,
            **options,
            test=test,
            journal=target,
            opt_outs=optouts,
            progress=False,
        )
    except (ValueError, TypeError, OSError, sk.SurveykitError) as exc:
        raise CommandError(str(exc)) from None
    written = out or target.with_suffix(".sent.csv")
    write_table(result.frame, written, for_spreadsheets=spreadsheets)
    typer.echo(repr(result))
    typer.echo(f"journal {target}; wrote the outcome of {len(result.frame):,} rows to {written}")


def register(app: typer.Typer) -> None:
    """Add ``remind`` and ``optouts`` to the ``surveykit`` app."""
    app.command("remind")(remind)
    app.add_typer(optouts_app, name="optouts")
