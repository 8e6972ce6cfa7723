"""The everyday commands of the ``surveykit`` command line (``sandbox serve`` is in cli.py).

Every command talks to the platform named by ``--base-url``/``--token`` (or
``SURVEYKIT_BASE_URL``/``SURVEYKIT_TOKEN``); with neither it runs on the embedded sandbox.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from surveykit._atomic import atomic_path, check_writable
from surveykit.callbacks import DEFAULT_MAX_BODY

BaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", envvar="SURVEYKIT_BASE_URL", help="The platform's address."),
]
Token = Annotated[
    str | None,
    typer.Option("--token", envvar="SURVEYKIT_TOKEN", help="The access token.", show_default=False),
]


def _client(base_url: str | None, token: str | None) -> Any:
    import surveykit as sk

    if base_url is None:
        typer.echo(
            "surveykit: no --base-url or SURVEYKIT_BASE_URL: using the embedded sandbox "
            "(simulated platform, no network)",
            err=True,
        )
        return sk.Client.sandbox()
    return sk.Client(base_url, token)


def _write(frame: pd.DataFrame, target: Path, *, index: bool = False) -> None:
    """Write a table by the file's suffix (.csv, .parquet, .json, .xlsx), whole or not at all."""
    suffix = target.suffix.lower()
    with atomic_path(target, mkdir=True) as path:
        if suffix == ".parquet":
            frame.to_parquet(path, index=index)
        elif suffix == ".json":
            frame.to_json(path, orient="records", date_format="iso", indent=1, force_ascii=False)
        elif suffix in (".xlsx", ".xls"):
            plain = frame.copy()
            for column in plain.select_dtypes(include=["datetimetz"]).columns:
                plain[column] = plain[column].dt.tz_localize(None)  # Excel has no time zones
            plain.to_excel(path, index=index)
        else:
            frame.to_csv(path, index=index)


def _check_writable(target: Path, option: str) -> None:
    """Fail now, before any request, if ``target`` could not be written afterwards."""
    try:
        check_writable(target)
    except OSError as exc:
        raise _fail(f"cannot write {option} {target}: {exc.strerror or exc}") from None


# .txt is tab-separated as Excel's "Text (Tab delimited)" saves it.
_TAB_SEPARATED = (".tsv", ".tab", ".txt")
_READABLE = (".csv", *_TAB_SEPARATED, ".xlsx", ".xls", ".parquet")


def _read(path: Path) -> pd.DataFrame:
    """Read a table by the file's suffix (any letter case), text columns as text.

    Raises:
        typer.BadParameter: no such file, or a suffix it does not read (guessing would
            read a tab-separated file as one column).
    """
    if not path.exists():
        raise typer.BadParameter(f"no file {path}")
    suffix = path.suffix.lower()
    if suffix not in _READABLE:
        raise typer.BadParameter(
            f"{path}: cannot tell how to read "
            + (f"a {suffix!r} file" if suffix else "a file without a suffix")
            + f"; supported: {', '.join(_READABLE)}"
        )
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix in (".xlsx", ".xls"):
        return pd.read_excel(path, dtype=str)
    # Every column as text, so phone numbers keep their leading zeros and + signs.
    sep = "\t" if suffix in _TAB_SEPARATED else ","
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""])


def _fail(message: str) -> typer.Exit:
    typer.echo(f"surveykit: {message}", err=True)
    return typer.Exit(code=1)


def results(
    survey: Annotated[str, typer.Argument(help="Survey reference, or * for every survey.")] = "*",
    format: Annotated[str, typer.Option(help="CSV, PIPE, TAB, XML or JSON.")] = "CSV",
    since: Annotated[
        datetime | None, typer.Option(help="Only results since (ISO time, UTC if no offset).")
    ] = None,
    sort_order: Annotated[
        int | None, typer.Option(help="Respondents who answered at least this many questions.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write the table (.csv .parquet .json .xlsx).")
    ] = None,
    chart: Annotated[
        Path | None, typer.Option(help="Write the response funnel chart (.png .svg).")
    ] = None,
    base_url: BaseUrl = None,
    token: Token = None,
) -> None:
    """Fetch survey results: print a summary and the funnel, write the table and a chart."""
    import surveykit as sk
    from surveykit import analysis
    from surveykit.models import ResultsFormat

    allowed = [choice.value for choice in ResultsFormat]
    if format.upper() not in allowed:
        raise typer.BadParameter(
            f"{format!r} is not one of {', '.join(allowed)}", param_hint="'--format'"
        )
    if since is not None and since.tzinfo is None:
        from datetime import UTC

        since = since.replace(tzinfo=UTC)
    client = _client(base_url, token)
    try:
        frame = client.surveys.results(survey, format=format, since=since, sort_order=sort_order)
    except sk.SurveykitError as exc:
        raise _fail(str(exc)) from None
    questions = analysis.question_columns(frame)
    name = "all surveys" if survey == "*" else f"survey {survey}"
    by = _survey_column(frame)
    # The files are written before anything is printed, so a reader that stops early
    # (`surveykit results --out x.csv | head`) still gets them.
    wrote: list[str] = []
    if out is not None:
        _write(frame, out)
        wrote.append(f"wrote {len(frame):,} rows to {out}")
    if chart is not None:
        from surveykit import plots

        if not len(frame):
            raise _fail("no results to chart")
        figure = plots.plot_funnel(frame, by=by, title=f"Response funnel: {name}")
        with atomic_path(chart, mkdir=True) as path:
            figure.savefig(path, dpi=120)
        wrote.append(f"wrote the funnel chart to {chart}")
    typer.echo(
        f"{name}: {len(frame):,} respondents, {len(frame.columns)} columns "
        f"({len(questions)} questions: {', '.join(questions)})"
    )
    if len(frame):
        typer.echo(analysis.response_funnel(frame, by=by).to_string(index=False))
        groups = list(frame.groupby(by, observed=True)) if by else [(survey, frame)]
        for group, part in groups:
            for question, kind in analysis.question_kinds(part).items():
                if kind != "rating" or not part[question].notna().any():
                    continue
                values = pd.to_numeric(part[question], errors="coerce").dropna()
                line = f"{group} {question}: {len(values)} ratings, mean {values.mean():.1f}"
                if analysis.is_nps_scale(part[question]):
                    line += f", NPS {analysis.nps(part, question).iloc[0]['nps']:+.0f}"
                typer.echo(line)
    for line in wrote:
        typer.echo(line)


def _survey_column(frame: pd.DataFrame) -> str | None:
    column = "surveyReference"
    if column in frame.columns and frame[column].nunique() > 1:
        return column
    return None


_UNFINISHED = ("not sent", "unknown", "failed")
"""Outcomes of rows the import did not get to (a network failure, a refused chunk)."""


def import_(
    reference: Annotated[str, typer.Argument(help="The survey's import definition reference.")],
    file: Annotated[
        Path,
        typer.Argument(
            help="File of respondents: .csv, .tsv/.tab/.txt (tab-separated), .xlsx/.xls, .parquet."
        ),
    ],
    map_: Annotated[
        list[str] | None, typer.Option("--map", help="Column=property, repeatable.")
    ] = None,
    region: Annotated[
        str | None, typer.Option(help="Region of national phone numbers (GB).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Per-row outcome file (.csv .parquet .json .xlsx); default FILE.import.csv "
            "beside FILE, after its full name (people.xlsx -> people.xlsx.import.csv)."
        ),
    ] = None,
    chunk_size: Annotated[int, typer.Option(help="Records per request.")] = 1000,
    dry_run: Annotated[bool, typer.Option(help="Build and show the plan; send nothing.")] = False,
    base_url: BaseUrl = None,
    token: Token = None,
) -> None:
    """Import respondents from a file; print the plan and write every row's outcome.

    The outcome (one row per input row, indexed like it: status, message, when, reason,
    and for rejected rows the column, value and duplicate_of, the first row with that
    number) goes to --out, by default FILE.import.csv beside FILE (people.csv ->
    people.csv.import.csv).

    Exits with status 1, after writing the outcome, when the platform does not know the
    reference, or when rows were not imported for another reason than their data (a
    network failure: "not sent" or "unknown"; a refused request: "failed"). Rows that were
    rejected, or that the platform answered with Error, are in the outcome with the reason.
    """
    import surveykit as sk

    mapping: dict[Any, str | None] = {}
    for item in map_ or []:
        column, sep, prop = item.partition("=")
        if not sep or not column:
            raise typer.BadParameter(f"--map {item!r}: expected COLUMN=property")
        mapping[column] = prop or None
    df = _read(file)
    try:
        plan = sk.build_import_list(df, mapping or None, default_region=region)
    except (sk.SurveykitError, ValueError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(repr(plan))
    if dry_run:
        return
    # After the full name: people.csv and people.xlsx get outcome files of their own.
    target: Path = out or file.with_name(f"{file.name}.import.csv")
    _check_writable(target, "the outcome file")
    client = _client(base_url, token)
    stopped: sk.ImportStoppedError | None = None
    try:
        outcome = sk.import_frame(
            client, reference, df, plan=plan, chunk_size=chunk_size, progress=False
        )
    except sk.ImportStoppedError as exc:
        stopped, outcome = exc, exc.result
    _write(outcome, target, index=True)
    counts = outcome["status"].value_counts()
    typer.echo("outcome: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    typer.echo(f"wrote the outcome of {len(outcome):,} rows to {target}")
    if stopped is not None:
        # The outcome file is written first: it says which rows were imported before the stop.
        raise _fail(f"import stopped: {stopped}")
    unfinished = {k: v for k, v in counts.items() if k in _UNFINISHED}
    if unfinished:
        raise _fail(
            f"{sum(unfinished.values()):,} of {len(outcome):,} rows not imported ("
            + ", ".join(f"{k} {v}" for k, v in unfinished.items())
            + f"); each row's reason is in {target}"
        )


def send(
    file: Annotated[
        Path,
        typer.Argument(help="File, one row a message: .csv .tsv .tab .txt .xlsx .xls .parquet."),
    ],
    message: Annotated[str, typer.Option(help="Template, e.g. 'Hi {firstName}: {link}'.")],
    source: Annotated[str, typer.Option(help="Sender: number, short code or brand.")],
    destination: Annotated[
        str | None, typer.Option(help="Column of numbers (or addresses).")
    ] = None,
    channel: Annotated[
        str, typer.Option(help="sms, whatsapp, facebook, whatsapp_template, email.")
    ] = "sms",
    subject: Annotated[str | None, typer.Option(help="Email subject template.")] = None,
    window: Annotated[
        list[str] | None, typer.Option(help="'Mon-Fri 09:00-18:00', repeatable.")
    ] = None,
    links: Annotated[
        str | None, typer.Option(help="Column of URLs to shorten into {link}.")
    ] = None,
    reply: Annotated[bool, typer.Option(help="Allow replies.")] = False,
    journal: Annotated[
        Path | None,
        typer.Option(
            help="SQLite journal: resume, never twice (default FILE.journal.sqlite beside FILE)."
        ),
    ] = None,
    no_journal: Annotated[
        bool, typer.Option("--no-journal", help="Keep no journal: a re-run sends again.")
    ] = False,
    journal_timeout: Annotated[
        float,
        typer.Option(
            min=0, metavar="SECONDS", help="Wait this long while another run holds the journal."
        ),
    ] = 0.0,
    test: Annotated[bool, typer.Option(help="Test routing only; nothing is sent.")] = False,
    preview: Annotated[bool, typer.Option(help="Render and check rows; send nothing.")] = False,
    concurrency: Annotated[int, typer.Option(help="Requests in flight.")] = 8,
    rate: Annotated[float | None, typer.Option(help="Most requests per second.")] = None,
    only_failed: Annotated[
        bool, typer.Option(help="With --journal: resend definite failures.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option(help="Per-row outcome file (default FILE.sent.csv).")
    ] = None,
    base_url: BaseUrl = None,
    token: Token = None,
) -> None:
    """Send one templated message per row of a file; write every row's outcome.

    Every send is journaled, by default in FILE.journal.sqlite beside FILE (people.csv ->
    people.csv.journal.sqlite): a re-run of the same command resends nothing, and goes on
    where an interrupted one stopped (--test sends nothing, so keeps no journal unless
    given one). The outcome file's folder is checked before sending.
    """
    import surveykit as sk

    if no_journal and journal is not None:
        raise typer.BadParameter("--journal and --no-journal: choose one")
    if only_failed and no_journal:
        raise typer.BadParameter("--only-failed needs the journal of the earlier run")
    df = _read(file)
    options: dict[str, Any] = {
        "source": source,
        "destination": destination,
        "channel": channel,
        "windows": window,
        "links": links,
        "reply": reply,
    }
    if channel == "email":
        options.update(subject=subject, content=message)
    else:
        options["message"] = message
    client = _client(base_url, token)
    try:
        if preview:
            options.pop("reply")
            shown = sk.preview_batch(client, df, **options)
            typer.echo(repr(shown))
            typer.echo(shown.frame.head(10).to_string())
            return
        target: Path = out or file.with_name(f"{file.stem}.sent.csv")
        _check_writable(target, "the outcome file")
        if journal is None and not no_journal and not test:  # a test send sends nothing
            journal = file.with_name(f"{file.name}.journal.sqlite")
            typer.echo(
                f"surveykit: journaling to {journal}: a re-run resends nothing "
                "(--no-journal to keep none)",
                err=True,
            )
        result = sk.send_batch(
            client,
            df,
            **options,
            test=test,
            journal=journal,
            journal_timeout=journal_timeout,
            concurrency=concurrency,
            rate=rate,
            only="failed" if only_failed else None,
            progress=True,
        )
    except (ValueError, sk.SurveykitError) as exc:
        hint = ""
        if isinstance(exc, sk.batch.JournalMismatchError):
            hint = " (--journal FILE for a new journal, or --no-journal for none)"
        raise _fail(f"{exc}{hint}") from None
    _write(result.frame, target, index=True)
    typer.echo(repr(result))
    typer.echo(f"wrote the outcome of {len(result.frame):,} rows to {target}")


def lookup(
    numbers: Annotated[list[str], typer.Argument(help="E.164 digits, e.g. 447911123456.")],
    base_url: BaseUrl = None,
    token: Token = None,
) -> None:
    """Look numbers up: status, carrier, reachable and number type."""
    import surveykit as sk

    frame = sk.lookup_frame(_client(base_url, token), pd.DataFrame({"mobileNumber": numbers}))
    typer.echo(frame.drop(columns=["cached"]).to_string(index=False))


def shorten(
    urls: Annotated[list[str], typer.Argument(help="URLs to shorten.")],
    reuse: Annotated[bool, typer.Option(help="Reuse an existing link for the same URL.")] = False,
    base_url: BaseUrl = None,
    token: Token = None,
) -> None:
    """Shorten URLs; print each short link next to its URL."""
    import surveykit as sk

    try:
        links = _client(base_url, token).tinyurl.register_list(urls, reuse=reuse)
    except (ValueError, sk.SurveykitError) as exc:
        raise _fail(str(exc)) from None
    for url, link in zip(urls, links, strict=True):
        typer.echo(f"{link}  {url}")


keywords_app = typer.Typer(help="The account's keywords.", no_args_is_help=True)


@keywords_app.command("list")
def keywords_list(base_url: BaseUrl = None, token: Token = None) -> None:
    """List the account's keywords."""
    rows = [k.model_dump() for k in _client(base_url, token).keywords.list()]
    typer.echo(pd.DataFrame(rows).to_string(index=False) if rows else "no keywords")


@keywords_app.command("create")
def keywords_create(
    keyword: Annotated[str, typer.Argument()],
    response: Annotated[str | None, typer.Option(help="Automatic response text.")] = None,
    type: Annotated[str | None, typer.Option(help="Keyword type.")] = None,
    base_url: BaseUrl = None,
    token: Token = None,
) -> None:
    """Register a keyword."""
    import surveykit as sk

    try:
        created = _client(base_url, token).keywords.create(keyword, response=response, type=type)
    except sk.SurveykitError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"created {created.keyword}")


@keywords_app.command("delete")
def keywords_delete(
    keyword: Annotated[str, typer.Argument()], base_url: BaseUrl = None, token: Token = None
) -> None:
    """Delete a keyword."""
    import surveykit as sk

    try:
        _client(base_url, token).keywords.delete(keyword)
    except sk.SurveykitError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"deleted {keyword}")


def webhooks(base_url: BaseUrl = None, token: Token = None) -> None:
    """List the webhooks of the user."""
    hooks = _client(base_url, token).webhooks.list()
    frame = pd.DataFrame(
        [
            {
                "name": h.name,
                "url": h.url,
                "active": h.is_active,
                "events": ",".join(h.events),
                "method": h.method,
            }
            for h in hooks
        ]
    )
    typer.echo(frame.to_string(index=False) if len(frame) else "no webhooks")


def listen(
    host: Annotated[str, typer.Option(help="Address to bind; loopback unless told.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port; 0 picks a free one.")] = 0,
    db: Annotated[Path | None, typer.Option(help="SQLite file of the events (kept).")] = None,
    secret: Annotated[
        str | None,
        typer.Option(
            envvar="SURVEYKIT_CALLBACK_SECRET",
            help="Shared secret to verify signatures.",
            show_default=False,
        ),
    ] = None,
    max_body: Annotated[
        int,
        typer.Option(
            min=1, metavar="BYTES", help="Largest callback body accepted; larger ones get 413."
        ),
    ] = DEFAULT_MAX_BODY,
) -> None:
    """Receive the platform's callbacks until interrupted; events go to SQLite."""
    from surveykit.callbacks import run_listener_cli

    run_listener_cli(
        host=host,
        port=port,
        db=None if db is None else str(db),
        secret=secret,
        max_body=max_body,
    )


def register(app: typer.Typer) -> None:
    """Add these commands to the ``surveykit`` app."""
    app.command("results")(results)
    app.command("import")(import_)
    app.command("send")(send)
    app.command("lookup")(lookup)
    app.command("shorten")(shorten)
    app.add_typer(keywords_app, name="keywords")
    app.command("webhooks")(webhooks)
    app.command("listen")(listen)
