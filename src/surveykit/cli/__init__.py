"""The ``surveykit`` command line: one typer app, one module per command group.

The console script ``surveykit`` calls :func:`main`. Nothing heavy is imported before a
command runs, so ``surveykit --help`` is quick.
"""

from surveykit.cli._app import app, main

__all__ = ["app", "main"]
