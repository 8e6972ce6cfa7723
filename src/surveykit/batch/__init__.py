"""Batch messaging from DataFrames: templates, windows, lookups, short links, a journal."""

from surveykit.batch._batch import (
    BatchInterrupted,
    BatchPreview,
    BatchResult,
    preview_batch,
    send_batch,
)
from surveykit.batch._journal import Journal, JournalMismatchError
from surveykit.batch._lock import JournalLockedError
from surveykit.batch._lookup import lookup_frame
from surveykit.batch._plan import OUTCOMES, Skip, WindowLike, Windows
from surveykit.batch._segments import Segments, count_segments
from surveykit.batch._template import Template, TemplateError
from surveykit.batch._windows import next_allowed, parse_window

__all__ = [
    "OUTCOMES",
    "BatchInterrupted",
    "BatchPreview",
    "BatchResult",
    "Journal",
    "JournalLockedError",
    "JournalMismatchError",
    "Segments",
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
