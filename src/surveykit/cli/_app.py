"""The ``surveykit`` command line.

One typer app; each command module registers its commands on it with ``register(app)``:
``results``, ``import`` and ``send`` (``_data``); ``lookup``, ``shorten``, ``keywords``,
``webhooks`` and ``listen`` (``_account``); ``report`` (``_report``); ``remind`` and
``optouts`` (``_campaign``); ``doctor`` (``_doctor``); ``sandbox serve`` (``_sandbox``).

No mistake of the person at the keyboard ends in a traceback: a usage problem (an option it
cannot take) prints one line and exits with 2; a configuration, input, output or platform
problem prints one line and exits with 1 (:class:`_Commands` turns the errors into lines).
Nothing heavy is imported before a command runs, so ``surveykit --help`` is quick.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import typer
from typer.core import TyperGroup

from surveykit.cli import _account, _campaign, _data, _doctor, _report, _sandbox
from surveykit.cli._support import (
    SANDBOX_NOTES,
    CommandError,
    describe_error,
    exit_code_of,
)
from surveykit.errors import SurveykitError


def _click_exceptions() -> ModuleType:
    # typer 0.2x carries its own copy of click; earlier versions use click itself.
    import importlib
    import importlib.util

    vendored = importlib.util.find_spec("typer._click") is not None
    return importlib.import_module("typer._click.exceptions" if vendored else "click.exceptions")


def _one_line(text: str) -> str:
    return " ".join(text.split())


class _Commands(TyperGroup):
    """The ``surveykit`` group: every problem a person can cause is one line, not a traceback."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command; print a problem as one line on stderr and exit with its status."""
        SANDBOX_NOTES.clear()
        try:
            code = super().main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        except Exception as exc:
            code = _print_problem(exc)
        else:
            for note in SANDBOX_NOTES:
                typer.echo(note, err=True)
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


def _print_problem(exc: Exception) -> int:
    """Print ``exc`` as one line on stderr and return the exit status; re-raise a bug."""
    click = _click_exceptions()
    no_args = getattr(click, "NoArgsIsHelpError", ())
    if no_args and isinstance(exc, no_args):
        help_text = exc.format_message()  # click renders the help (typer's rich one prints it)
        if help_text.strip():
            typer.echo(help_text)
        return int(exc.exit_code)
    if isinstance(exc, click.UsageError):
        where = exc.ctx.command_path if exc.ctx is not None else "surveykit"
        message = _one_line(exc.format_message()).rstrip(".")
        typer.echo(f"{where}: {message} (see '{where} --help')", err=True)
        return int(exc.exit_code)
    if isinstance(exc, click.ClickException):
        typer.echo(f"surveykit: {_one_line(exc.format_message())}", err=True)
        return int(exc.exit_code)
    if isinstance(exc, typer.Abort):
        typer.echo("surveykit: aborted", err=True)
        return 1
    if isinstance(exc, SurveykitError | CommandError):
        where = " (on the embedded sandbox)" if SANDBOX_NOTES else ""
        typer.echo(f"surveykit: {_one_line(describe_error(exc))}{where}", err=True)
        return exit_code_of(exc)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"surveykit: {where}{exc.strerror or _one_line(str(exc))}", err=True)
        return 1
    raise exc


app = typer.Typer(
    name="surveykit",
    help="Survey results, imports, messaging and the embedded sandbox of the v3.2 platform.",
    no_args_is_help=True,
    add_completion=False,
    cls=_Commands,
)

# One registration style: each command module adds its commands and groups with its own
# ``register(app)``. Commands are listed in --help in this order, then the groups
# (sandbox, keywords, optouts).
for _module in (_sandbox, _data, _account, _report, _campaign, _doctor):
    _module.register(app)


def main(args: Sequence[str] | None = None) -> None:
    """Entry point of the ``surveykit`` console script (``args``: the command line's)."""
    app(args, prog_name="surveykit")


if __name__ == "__main__":
    main()
