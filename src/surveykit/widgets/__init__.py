"""Notebook widgets (ipywidgets): explore results, compose a batch, watch callbacks.

Needs ipywidgets: ``pip install 'surveykit[notebook]'``.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.widgets._widgets import BatchComposer, EventsMonitor, ResultsExplorer

# Each name is imported from its module on first use (PEP 562).
_LAZY: dict[str, str] = {
    "BatchComposer": "surveykit.widgets._widgets",
    "EventsMonitor": "surveykit.widgets._widgets",
    "ResultsExplorer": "surveykit.widgets._widgets",
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
    "BatchComposer",
    "EventsMonitor",
    "ResultsExplorer",
]
