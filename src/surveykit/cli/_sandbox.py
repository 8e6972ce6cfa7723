"""``surveykit sandbox serve``: the embedded sandbox on a port, for any HTTP client."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from surveykit._util.serving import DEFAULT_IDLE_TIMEOUT
from surveykit.cli._support import (
    IdleTimeout,
    MaxConnections,
    check_idle_timeout,
    check_sqlite_file,
)

sandbox_app = typer.Typer(
    help="The embedded sandbox: a simulated platform, no account needed.", no_args_is_help=True
)

DEFAULT_PORT = 8765
"""The sandbox's port unless told; ``--port 0`` picks a free one."""


@sandbox_app.command("serve")
def sandbox_serve(
    context: typer.Context,
    host: Annotated[
        str, typer.Option(metavar="ADDRESS", help="Address to bind; loopback unless told.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, metavar="PORT", help="Port; 0 picks a free one.")
    ] = DEFAULT_PORT,
    db: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="SQLite file that keeps the state across restarts; its folder must exist.",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(metavar="N", help="Seed of tokens, MessageIDs and generated data.")
    ] = 0,
    no_sample_data: Annotated[
        bool, typer.Option("--no-sample-data", help="Start without the sample surveys.")
    ] = False,
    log_level: Annotated[
        str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")
    ] = "warning",
    idle_timeout: IdleTimeout = DEFAULT_IDLE_TIMEOUT,
    max_connections: MaxConnections = None,
    results_layout: Annotated[
        str,
        typer.Option(
            metavar="LAYOUT",
            help="Layout of GetResults answers: documented, or one a platform may send "
            "(bom, crlf, trailing-delimiter, aspnet, namespaced, attributes, wrapped, "
            "ndjson, typed, nested); see docs/results-format.md.",
        ),
    ] = "documented",
    callback_url: Annotated[
        list[str] | None,
        typer.Option(
            metavar="URL",
            help="Account callback URL events are delivered to; repeat the option "
            "for fallback URLs, tried in order."
        ),
    ] = None,
    callback_method: Annotated[
        str | None,
        typer.Option(
            metavar="METHOD", help="POST (JSON body, the default) or GET (query string)."
        ),
    ] = None,
    callback_timeout: Annotated[
        int | None,
        typer.Option(
            metavar="MS",
            help="Longest one delivery attempt may take, in ms (Timeout; default 30000).",
        ),
    ] = None,
    callback_total_timeout: Annotated[
        int | None,
        typer.Option(
            metavar="MS",
            help="Longest all attempts of one event take, in ms (TotalTimeout; default 90000).",
        ),
    ] = None,
    callback_retries: Annotated[
        int | None,
        typer.Option(metavar="N", help="Attempts per URL; 0 counts as 1 (Retries; default 3)."),
    ] = None,
    callback_action: Annotated[
        list[str] | None,
        typer.Option(
            metavar="ACTION",
            help="Failure alert when every attempt failed: Email or Sms (Action); repeat "
            "the option or give Email,Sms for both (default: no alert)."
        ),
    ] = None,
    callback_secret: Annotated[
        str | None,
        typer.Option(
            envvar="SURVEYKIT_CALLBACK_SECRET",
            metavar="SECRET",
            help="Sign every callback with this shared secret (X-Surveykit-Signature), as "
            "'surveykit listen --secret' verifies; read from the environment when not given.",
            show_default=False,
        ),
    ] = None,
    generate: Annotated[
        list[str] | None,
        typer.Option(
            metavar="REF:ROWS",
            help="Add a generated benchmark survey of ROWS respondents under the reference "
            "REF (survey ids 9001, 9002... in order); repeat the option for more.",
        ),
    ] = None,
    generate_design: Annotated[
        bool,
        typer.Option(
            "--generate-design",
            help="Draw the --generate surveys as a panel's stratified, clustered sample: "
            "their results get the columns region (strata), household (PSUs) and "
            "baseWeight (base weights).",
        ),
    ] = False,
    respondents: Annotated[
        str | None,
        typer.Option(
            metavar="SPEC",
            help="Simulate respondents over the clock: 'default', or proportions such as "
            "answer_first=0.45,answer_after_reminder=0.2,never=0.25,stop=0.05,"
            "undeliverable=0.05 (and min_delay=, max_delay= in seconds).",
        ),
    ] = None,
    campaign: Annotated[
        list[str] | None,
        typer.Option(
            metavar="REF:ROWS",
            help="Add a campaign survey of ROWS respondents nobody invited yet, with UK, "
            "Australian and US numbers (survey ids 9101, 9102... in order); repeatable.",
        ),
    ] = None,
) -> None:
    """Serve the sandbox over HTTP (uvicorn) until interrupted.

    Prints two lines and flushes: ``base_url=<URL>`` and ``token=<admin token>``
    (``restricted_token=<token>`` follows, for the account without email roles).
    With ``--callback-url`` the account callback is set, so events are delivered there;
    the other ``--callback-*`` options are its settings and need ``--callback-url``
    (``SURVEYKIT_CALLBACK_SECRET`` is only used when there is one).
    """
    check_idle_timeout(idle_timeout)
    generated, campaigns = _specs(generate, campaign)
    from surveykit.cli import _sandbox_serve as serving  # the sandbox: starlette, uvicorn

    model = serving.respondent_model(respondents)
    if db is not None:
        check_sqlite_file(db, "--db", "sandbox state file", ("records",), "sandbox.sqlite")
    settings = serving.callback_settings(
        context,
        callback_url,
        {
            "method": callback_method,
            "timeout_ms": callback_timeout,
            "total_timeout_ms": callback_total_timeout,
            "retries": callback_retries,
            "action": callback_action,
            "secret": callback_secret,
        },
    )
    serving.serve_sandbox(
        host=host,
        port=port,
        db=db,
        seed=seed,
        sample_data=not no_sample_data,
        results_layout=results_layout,
        model=model,
        callback_url=callback_url,
        settings=settings,
        generated=generated,
        campaigns=campaigns,
        design=generate_design,
        log_level=log_level,
        idle_timeout=idle_timeout,
        max_connections=max_connections,
    )


def _specs(
    generate: list[str] | None, campaign: list[str] | None
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """``--generate`` and ``--campaign`` read; a usage error (2) names one."""
    try:
        generated = [_generated_spec(value) for value in generate or []]
    except ValueError as exc:
        typer.echo(f"surveykit: --generate: {exc}", err=True)
        raise typer.Exit(code=2) from None
    try:
        campaigns = [_generated_spec(value) for value in campaign or []]
    except ValueError as exc:
        typer.echo(f"surveykit: --campaign: {exc}", err=True)
        raise typer.Exit(code=2) from None
    return generated, campaigns


def _generated_spec(value: str) -> tuple[str, int]:
    """``REF:ROWS`` as a reference and a row count (the reference may hold colons)."""
    reference, sep, rows = value.rpartition(":")
    rows = rows.strip()
    if not sep or not reference.strip() or not (rows.isascii() and rows.isdigit()):
        raise ValueError(f"expected REF:ROWS (a survey reference and a row count), got {value!r}")
    return reference.strip(), int(rows)


def register(app: typer.Typer) -> None:
    """Add the ``sandbox`` group to the ``surveykit`` app."""
    app.add_typer(sandbox_app, name="sandbox")
