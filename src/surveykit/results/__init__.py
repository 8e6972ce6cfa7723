"""Survey results: CSV, PIPE, TAB, XML and JSON to typed DataFrames, and back.

The layout of every format is described in ``docs/results-format.md``.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.results._columns import (
        DESIGN_COLUMNS,
        RESPONDENT_COLUMNS,
        is_respondent_column,
    )
    from surveykit.results._common import ResultsNotice
    from surveykit.results._layouts import LAYOUTS
    from surveykit.results._parquet import results_to_parquet
    from surveykit.results._read import read_results
    from surveykit.results._source import FORMATS, sniff
    from surveykit.results._sync import SyncReport, sync_results
    from surveykit.results._tidy import split_columns, tidy_results
    from surveykit.results._types import infer_type, results_dtypes
    from surveykit.results._writers import write_results

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "ResultsNotice": "surveykit.results._common",
    "LAYOUTS": "surveykit.results._layouts",
    "results_to_parquet": "surveykit.results._parquet",
    "read_results": "surveykit.results._read",
    "FORMATS": "surveykit.results._source",
    "sniff": "surveykit.results._source",
    "SyncReport": "surveykit.results._sync",
    "sync_results": "surveykit.results._sync",
    "split_columns": "surveykit.results._tidy",
    "tidy_results": "surveykit.results._tidy",
    "DESIGN_COLUMNS": "surveykit.results._columns",
    "RESPONDENT_COLUMNS": "surveykit.results._columns",
    "infer_type": "surveykit.results._types",
    "is_respondent_column": "surveykit.results._columns",
    "results_dtypes": "surveykit.results._types",
    "write_results": "surveykit.results._writers",
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
    "DESIGN_COLUMNS",
    "FORMATS",
    "LAYOUTS",
    "RESPONDENT_COLUMNS",
    "ResultsNotice",
    "SyncReport",
    "infer_type",
    "is_respondent_column",
    "read_results",
    "results_dtypes",
    "results_to_parquet",
    "sniff",
    "split_columns",
    "sync_results",
    "tidy_results",
    "write_results",
]
