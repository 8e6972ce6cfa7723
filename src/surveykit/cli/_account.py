"""The account commands of the ``surveykit`` command line.

``lookup``, ``shorten``, ``keywords``, ``webhooks``, and ``listen`` (the callback receiver).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import surveykit as sk
from surveykit._util.serving import DEFAULT_IDLE_TIMEOUT
from surveykit.cli._support import (
    AllowInsecureHttp,
    BaseUrl,
    IdleTimeout,
    MaxConnections,
    Token,
    check_idle_timeout,
    check_sqlite_file,
    check_token,
    make_client,
    usage,
)

_LISTEN_MAX_BODY = 64 * 1024
"""``surveykit.callbacks.DEFAULT_MAX_BODY``, written out so that ``--help`` loads no server
(a test keeps the two equal)."""


def lookup(
    numbers: Annotated[
        list[str],
        typer.Argument(
            metavar="NUMBER...",
            help="Numbers as written: 447911123456, '+44 7911 123456', or national numbers "
            "with --region ('07911 123456').",
        ),
    ],
    region: Annotated[
        str | None,
        typer.Option(
            metavar="REGION",
            help="Region of national numbers (GB); default SURVEYKIT_DEFAULT_REGION.",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Refuse numbers that are possible but not valid for phonenumbers (looked up "
            "and marked unverified by default).",
        ),
    ] = False,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Look numbers up: status, carrier, reachable, number type and number check."""
    import pandas as pd

    from surveykit.rules.numbers import normalize_text, region_for

    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http)
    try:
        reading = region_for(region, client.default_region)
    except sk.ValidationError as exc:
        raise usage(str(exc).replace("region: ", "--region: ", 1)) from None
    for number in numbers:
        text = number.strip()
        digits, reason, _ = normalize_text(text, reading, strict) if text else (None, "empty", None)
        if digits is None:
            raise usage(
                f"NUMBER {number!r} cannot be read as a phone number ({reason}); expected "
                "E.164 digits (447911123456), an international number with + "
                "(+44 7911 123456), or a national number with --region (07911 123456)"
            )
    check_token(client)
    frame = sk.lookup_frame(
        client, pd.DataFrame({"mobileNumber": numbers}), region=reading, strict=strict
    )
    typer.echo(frame.drop(columns=["cached"]).to_string(index=False))


def shorten(
    urls: Annotated[list[str], typer.Argument(metavar="URL...", help="URLs to shorten.")],
    reuse: Annotated[
        bool, typer.Option("--reuse", help="Reuse an existing link for the same URL.")
    ] = False,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Shorten URLs; print each short link next to its URL."""
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http, writes=True)
    links = client.tinyurl.register_list(urls, reuse=reuse or None)
    for url, link in zip(urls, links, strict=True):
        typer.echo(f"{link}  {url}")


keywords_app = typer.Typer(help="The account's keywords.", no_args_is_help=True)


@keywords_app.command("list")
def keywords_list(
    base_url: BaseUrl = None, token: Token = None, allow_insecure_http: AllowInsecureHttp = False
) -> None:
    """List the account's keywords."""
    import pandas as pd

    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http)
    rows = [k.model_dump() for k in client.keywords.list()]
    typer.echo(pd.DataFrame(rows).to_string(index=False) if rows else "no keywords")


@keywords_app.command("create")
def keywords_create(
    keyword: Annotated[str, typer.Argument(metavar="KEYWORD", help="The keyword's text.")],
    response: Annotated[
        str | None, typer.Option(metavar="TEXT", help="Automatic response text.")
    ] = None,
    type: Annotated[str | None, typer.Option(metavar="TYPE", help="Keyword type.")] = None,
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Register a keyword."""
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http, writes=True)
    created = client.keywords.create(keyword, response=response, type=type)
    typer.echo(f"created {created.keyword}")


@keywords_app.command("delete")
def keywords_delete(
    keyword: Annotated[str, typer.Argument(metavar="KEYWORD", help="The keyword's text.")],
    base_url: BaseUrl = None,
    token: Token = None,
    allow_insecure_http: AllowInsecureHttp = False,
) -> None:
    """Delete a keyword."""
    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http, writes=True)
    client.keywords.delete(keyword)
    typer.echo(f"deleted {keyword}")


def webhooks(
    base_url: BaseUrl = None, token: Token = None, allow_insecure_http: AllowInsecureHttp = False
) -> None:
    """List the webhooks of the user."""
    import pandas as pd

    client = make_client(base_url, token, allow_insecure_http=allow_insecure_http)
    hooks = client.webhooks.list()
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
    host: Annotated[
        str, typer.Option(metavar="ADDRESS", help="Address to bind; loopback unless told.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, metavar="PORT", help="Port; 0 picks a free one.")
    ] = 0,
    db: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="SQLite file of the events (kept); its folder must exist."
        ),
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option(
            envvar="SURVEYKIT_CALLBACK_SECRET",
            metavar="SECRET",
            help="Shared secret to verify signatures.",
            show_default=False,
        ),
    ] = None,
    max_body: Annotated[
        int,
        typer.Option(
            min=1, metavar="BYTES", help="Largest callback body accepted; larger ones get 413."
        ),
    ] = _LISTEN_MAX_BODY,
    optouts: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Opt-out list (SQLite, created if missing) kept current: STOP and UNSTOP "
            "already in --db are applied at start, new ones before they are answered.",
        ),
    ] = None,
    opt_out_words: Annotated[
        bool | None,
        typer.Option(
            "--opt-out-words/--no-opt-out-words",
            help="With --optouts: whether replies such as 'please stop texting me' opt out "
            "(unsure ones are listed by 'surveykit optouts review'). On unless told.",
            show_default=False,
        ),
    ] = None,
    opt_out_wait: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="With --optouts: how long a STOP waits while another process holds the "
            "list's lock before it is answered (it is stored; applied when the lock is "
            "free). 0 to 20; default 5.",
            show_default=False,
        ),
    ] = None,
    idle_timeout: IdleTimeout = DEFAULT_IDLE_TIMEOUT,
    max_connections: MaxConnections = None,
) -> None:
    """Receive the platform's callbacks until interrupted; events go to SQLite."""
    check_idle_timeout(idle_timeout)
    if optouts is None:
        given = [
            name
            for name, value in (
                ("--opt-out-words/--no-opt-out-words", opt_out_words),
                ("--opt-out-wait", opt_out_wait),
            )
            if value is not None
        ]
        if given:
            raise usage(f"{', '.join(given)}: needs --optouts (the opt-out list to keep)")
    if opt_out_wait is not None and not 0 <= opt_out_wait <= 20:
        raise usage(
            f"--opt-out-wait: expected 0 to 20 seconds (the platform waits 30 s), "
            f"got {opt_out_wait:g}"
        )
    if db is not None:
        check_sqlite_file(db, "--db", "surveykit event store", ("events",), "events.sqlite")
    if optouts is not None:
        check_sqlite_file(optouts, "--optouts", "surveykit opt-out list", ("optouts",),
                          "optouts.sqlite")
    from surveykit.callbacks import run_listener_cli

    run_listener_cli(
        host=host,
        port=port,
        db=None if db is None else str(db),
        secret=secret,
        max_body=max_body,
        opt_outs=None if optouts is None else str(optouts),
        opt_out_words=True if opt_out_words is None else opt_out_words,
        opt_out_wait=opt_out_wait,
        idle_timeout=idle_timeout,
        max_connections=max_connections,
    )


def register(app: typer.Typer) -> None:
    """Add these commands to the ``surveykit`` app."""
    app.command("lookup")(lookup)
    app.command("shorten")(shorten)
    app.add_typer(keywords_app, name="keywords")
    app.command("webhooks")(webhooks)
    app.command("listen")(listen)
