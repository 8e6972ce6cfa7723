"""``surveykit sandbox serve`` once its options are read: the sandbox, its surveys, uvicorn.

The command (``_sandbox``) imports this module when it runs: it loads the sandbox
(starlette) and its data, which ``surveykit --help`` never needs.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any, Final

import typer

from surveykit._util.net import bind, url_of
from surveykit.cli._support import CommandError
from surveykit.sandbox import Sandbox
from surveykit.sandbox.data._behaviour import RespondentModel
from surveykit.sandbox.data._campaign import CAMPAIGN_SURVEY_ID
from surveykit.sandbox.data._seed import GENERATED_SURVEY_ID
from surveykit.sandbox.runtime._serve import serve
from surveykit.sandbox.state._errors import errors_of

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


def respondent_model(respondents: str | None) -> RespondentModel | None:
    """``--respondents`` read; a usage error (2) names it."""
    try:
        return RespondentModel.from_spec(respondents) if respondents is not None else None
    except ValueError as exc:
        typer.echo(f"surveykit: --respondents: {exc}", err=True)
        raise typer.Exit(code=2) from None


def callback_settings(
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


def serve_sandbox(
    *,
    host: str,
    port: int,
    db: Path | None,
    seed: int,
    sample_data: bool,
    results_layout: str,
    model: RespondentModel | None,
    callback_url: list[str] | None,
    settings: dict[str, Any],
    generated: list[tuple[str, int]],
    campaigns: list[tuple[str, int]],
    design: bool,
    log_level: str,
    idle_timeout: float,
    max_connections: int | None,
) -> None:
    """Bind, start the sandbox with its callback and surveys, print its URL and tokens, serve."""
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
            sample_data=sample_data,
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
    _add_surveys(sandbox, sock, generated, campaigns, design=design, kept=db is not None)
    sys.stdout.write(
        f"base_url={base_url}\ntoken={sandbox.admin_token}\n"
        f"restricted_token={sandbox.restricted_token}\n"
    )
    sys.stdout.flush()
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
