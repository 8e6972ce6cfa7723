"""Batch messaging from DataFrames: templates, windows, lookups, short links, a journal."""

from surveykit._batch_options import OPTIONS, BatchOptions, PreviewOptions, SendOptions
from surveykit.batch._batch import send_batch
from surveykit.batch._journal import Journal, JournalMismatchError
from surveykit.batch._lock import JournalLockedError
from surveykit.batch._lookup import lookup_frame
from surveykit.batch._plan import OUTCOMES
from surveykit.batch._preview import preview_batch
from surveykit.batch._result import BatchInterrupted, BatchPreview, BatchResult
from surveykit.batch._segments import Segments, count_segments
from surveykit.batch._spec import Skip, WindowLike, Windows
from surveykit.batch._template import Template, TemplateError
from surveykit.batch._windows import next_allowed, parse_window

__all__ = [
    "OPTIONS",
    "OUTCOMES",
    "BatchInterrupted",
    "BatchOptions",
    "BatchPreview",
    "BatchResult",
    "Journal",
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
