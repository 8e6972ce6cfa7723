"""``surveykit sandbox serve``: the embedded sandbox on a port, for any HTTP client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from surveykit._util.serving import DEFAULT_IDLE_TIMEOUT
from surveykit.cli._support import (
    CommandError,
    IdleTimeout,
    MaxConnections,
    check_idle_timeout,
    check_sqlite_file,
)

if TYPE_CHECKING:
    import socket

    from surveykit.sandbox import Sandbox
    from surveykit.sandbox.data._behaviour import RespondentModel

sandbox_app = typer.Typer(
    help="The embedded sandbox: a simulated platform, no account needed.", no_args_is_help=True
)

DEFAULT_PORT = 8765
"""The sandbox's port unless told; ``--port 0`` picks a free one."""


_CALLBACK_OPTIONS: Final = {
    "url": "--callback-url",
    "method": "--callback-method",
    "timeout": "--callback-timeout",
    "totaltimeout": "--callback-total-timeout",
    "retries": "--callback-retries",
    "action": "--callback-action",
    "secret": "--callback-secret",
}
"""The ``sandbox serve`` option of each account callback setting (by its lower-case name)."""
_OPTION_FIELDS: Final = {
    "method": "method",
    "timeout_ms": "timeout",
    "total_timeout_ms": "totaltimeout",
    "retries": "retries",
    "action": "action",
    "secret": "secret",
}


def _from_environment(context: typer.Context, parameter: str) -> bool:
    """Whether the command's ``parameter`` came from its environment variable."""
    source = context.get_parameter_source(parameter)
    return source is not None and source.name == "ENVIRONMENT"


def _callback_problems(exc: ValueError) -> list[str]:
    """The sandbox's refusal of callback settings, one line per option named."""
    from surveykit.sandbox.state._errors import errors_of

    lines = []
    for field, messages in errors_of(exc).items():
        for message in messages:
            name = field or message.partition(":")[0]
            option = _CALLBACK_OPTIONS.get(name.split(".")[0].lower())
            if option is None:
                lines.append(f"--callback-*: {message}")
                continue
            prefix = f"{name}: "
            lines.append(f"{option}: {message.removeprefix(prefix)}")
    return lines


@sandbox_app.command("serve")
def sandbox_serve(
    context: typer.Context,
    host: Annotated[
        str, typer.Option(metavar="ADDRESS", help="Address to bind; loopback unless told.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(metavar="PORT", help="Port; 0 picks a free one.")
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
    generated, campaigns, model = _specs(generate, campaign, respondents)
    if db is not None:
        check_sqlite_file(db, "--db", "sandbox state file", ("records",), "sandbox.sqlite")
    from surveykit._util.net import bind, url_of
    from surveykit.sandbox import Sandbox

    settings = _callback_settings(
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
    # Bind first, so the printed URL is the real one even with --port 0.
    try:
        sock = bind(host, port)
    except OSError as exc:
        typer.echo(f"surveykit: cannot bind {host}:{port}: {exc}", err=True)
        raise typer.Exit(code=1) from None
    base_url = url_of(sock, host)
    try:
        sandbox = Sandbox(
            seed=seed,
            db=db,
            sample_data=not no_sample_data,
            base_url=base_url,
            results_layout=results_layout,
            respondents=model,
        )
    except ValueError as exc:
        sock.close()
        typer.echo(f"surveykit: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if callback_url:
        try:
            sandbox.set_account_callback(callback_url, **settings)
        except ValueError as exc:
            sock.close()
            sandbox.close()
            raise CommandError("; ".join(_callback_problems(exc)), code=2) from None
    if host not in ("127.0.0.1", "::1", "localhost"):
        typer.echo(
            f"surveykit: warning: serving on {host}, reachable from other machines", err=True
        )
    _add_surveys(sandbox, sock, generated, campaigns, design=generate_design, kept=db is not None)
    sys.stdout.write(
        f"base_url={base_url}\ntoken={sandbox.admin_token}\n"
        f"restricted_token={sandbox.restricted_token}\n"
    )
    sys.stdout.flush()
    from surveykit.sandbox.runtime._serve import serve

    try:
        # Stops within seconds of SIGTERM; strangers are held to the listener's limits.
        serve(
            sandbox,
            sock,
            log_level=log_level,
            idle_timeout=idle_timeout,
            max_connections=max_connections,
        )
    finally:
        sandbox.close()


def _add_surveys(
    sandbox: Sandbox,
    sock: socket.socket,
    generated: list[tuple[str, int]],
    campaigns: list[tuple[str, int]],
    *,
    design: bool,
    kept: bool,
) -> None:
    """Add the ``--generate`` and ``--campaign`` surveys (a campaign a ``--db`` kept is kept)."""
    from surveykit.sandbox.data._campaign import CAMPAIGN_SURVEY_ID
    from surveykit.sandbox.data._seed import GENERATED_SURVEY_ID

    for number, (reference, rows) in enumerate(generated):
        sandbox.add_generated_survey(
            reference, rows, survey_id=GENERATED_SURVEY_ID + number, design=design
        )
    for number, (reference, rows) in enumerate(campaigns):
        if kept and sandbox.state.find_survey(reference) is not None:
            continue  # kept in the --db file from an earlier run
        try:
            sandbox.add_campaign_survey(reference, rows, survey_id=CAMPAIGN_SURVEY_ID + number)
        except ValueError as exc:
            sock.close()
            sandbox.close()
            typer.echo(f"surveykit: --campaign: {exc}", err=True)
            raise typer.Exit(code=2) from None


def _specs(
    generate: list[str] | None, campaign: list[str] | None, respondents: str | None
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], RespondentModel | None]:
    """``--generate``, ``--campaign`` and ``--respondents`` read; a usage error (2) names one."""
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
    from surveykit.sandbox.data._behaviour import RespondentModel

    try:
        model = RespondentModel.from_spec(respondents) if respondents is not None else None
    except ValueError as exc:
        typer.echo(f"surveykit: --respondents: {exc}", err=True)
        raise typer.Exit(code=2) from None
    return generated, campaigns, model


def _callback_settings(
    context: typer.Context, callback_url: list[str] | None, given: dict[str, Any]
) -> dict[str, Any]:
    """The account callback's settings given; a usage error (2) when they lack a URL."""
    settings = {name: value for name, value in given.items() if value is not None}
    if not callback_url and "secret" in settings and _from_environment(context, "callback_secret"):
        # SURVEYKIT_CALLBACK_SECRET is shared with `surveykit listen`: without a callback
        # URL there is nothing to sign, which is no mistake of this command.
        del settings["secret"]
    if settings and not callback_url:
        names = ", ".join(_CALLBACK_OPTIONS[_OPTION_FIELDS[name]] for name in settings)
        typer.echo(f"surveykit: {names}: needs --callback-url", err=True)
        raise typer.Exit(code=2)
    return settings


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
