"""``surveykit doctor``: check a configured platform, one line per check.

Registered on the app by :func:`register`; the checks are :func:`surveykit.doctor`.
Exit status 0 when every check passes, 1 when one fails, 2 for a usage error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import surveykit as sk
from surveykit.cli._support import AllowInsecureHttp, BaseUrl, Token, make_client

_NUMBER_HELP = "E.164 digits without '+', e.g. 447911123456."


def doctor(
    survey: Annotated[
        str | None,
        typer.Option(help="Survey reference for GetResults; * (every survey) if not given."),
    ] = None,
    lookup: Annotated[
        str | None, typer.Option(metavar="NUMBER", help=f"Look this number up. {_NUMBER_HELP}")
    ] = None,
    test_send: Annotated[
        str | None,
        typer.Option(
            metavar="NUMBER",
            help=f"Send a test: true message to this number (routed, not sent). {_NUMBER_HELP}",
        ),
    ] = None,
    bundle: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Write a bug-report bundle here (a folder, or a .zip file): each answer's "
            "headers and first 4 KiB, without the Authorization header or the token.",
        ),
    ] = None,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Check the platform: address and TLS, token, results in every format, lookup, test send.

    Read-only calls (a test: true send only with --test-send). Prints one line per check:
    ok, or FAIL and the first problem found. Exit status 0 only when every check passes.
    """
    if bundle is not None and bundle.suffix.lower() != ".zip" and bundle.is_file():
        raise typer.BadParameter(f"{bundle} exists and is not a folder", param_hint="'--bundle'")
    for name, value in (("--lookup", lookup), ("--test-send", test_send)):
        if value is not None and not sk.models.E164_DIGITS.fullmatch(value):
            raise typer.BadParameter(
                f"{value!r} is not E.164 digits ({_NUMBER_HELP})", param_hint=f"'{name}'"
            )
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http)
    try:
        with client:
            report = sk.doctor(
                client, survey=survey, lookup=lookup, test_send=test_send, bundle=bundle
            )
    except OSError as exc:
        typer.echo(f"surveykit: --bundle: cannot write {bundle}: {exc}", err=True)
        raise typer.Exit(code=1) from None
    for line in report.lines():
        typer.echo(line)
    if report.bundle is not None:
        typer.echo(f"bundle written to {report.bundle}")
    raise typer.Exit(code=0 if report.ok else 1)


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the ``surveykit`` app."""
    app.command("doctor")(doctor)


__all__ = ["doctor"]
