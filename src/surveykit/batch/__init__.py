"""Batch messaging from DataFrames: templates, windows, lookups, short links, a journal."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.batch._batch import send_batch
    from surveykit.batch._journal import Journal
    from surveykit.batch._lookup import lookup_frame
    from surveykit.batch._options import OPTIONS, BatchOptions, PreviewOptions, SendOptions
    from surveykit.batch._plan import OUTCOMES
    from surveykit.batch._preview import preview_batch
    from surveykit.batch._result import BatchPreview, BatchResult
    from surveykit.batch._spec import Skip, WindowLike, Windows
    from surveykit.batch._template import Template
    from surveykit.errors import (
        BatchInterrupted,
        JournalError,
        JournalLockedError,
        JournalMismatchError,
        TemplateError,
    )
    from surveykit.rules.sms import Segments, count_segments
    from surveykit.rules.windows import next_allowed, parse_window

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "OPTIONS": "surveykit.batch._options",
    "BatchOptions": "surveykit.batch._options",
    "PreviewOptions": "surveykit.batch._options",
    "SendOptions": "surveykit.batch._options",
    "send_batch": "surveykit.batch._batch",
    "Journal": "surveykit.batch._journal",
    "JournalError": "surveykit.errors",
    "JournalMismatchError": "surveykit.errors",
    "JournalLockedError": "surveykit.errors",
    "lookup_frame": "surveykit.batch._lookup",
    "OUTCOMES": "surveykit.batch._plan",
    "preview_batch": "surveykit.batch._preview",
    "BatchInterrupted": "surveykit.errors",
    "BatchPreview": "surveykit.batch._result",
    "BatchResult": "surveykit.batch._result",
    "Segments": "surveykit.rules.sms",
    "count_segments": "surveykit.rules.sms",
    "Skip": "surveykit.batch._spec",
    "WindowLike": "surveykit.batch._spec",
    "Windows": "surveykit.batch._spec",
    "Template": "surveykit.batch._template",
    "TemplateError": "surveykit.errors",
    "next_allowed": "surveykit.rules.windows",
    "parse_window": "surveykit.rules.windows",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(_importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later uses find it without calling back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "OPTIONS",
    "OUTCOMES",
    "BatchInterrupted",
    "BatchOptions",
    "BatchPreview",
    "BatchResult",
    "Journal",
    "JournalError",
    "JournalLockedError",
    "JournalMismatchError",
    "PreviewOptions",
    "Segments",
    "SendOptions",
    "Skip",
    "Template",
    "TemplateError",
    "WindowLike",
    "Windows",
    "count_segments",
    "lookup_frame",
    "next_allowed",
    "parse_window",
    "preview_batch",
    "send_batch",
]
