"""Survey results: CSV, PIPE, TAB, XML and JSON to typed DataFrames, and back.

The layout of every format is described in ``docs/results-format.md``.
"""

from surveykit.results._common import ResultsNotice
from surveykit.results._layouts import LAYOUTS
from surveykit.results._parquet import results_to_parquet
from surveykit.results._read import read_results
from surveykit.results._source import FORMATS, sniff
from surveykit.results._tidy import split_columns, tidy_results
from surveykit.results._types import (
    RESPONDENT_COLUMNS,
    infer_type,
    is_respondent_column,
    results_dtypes,
)
from surveykit.results._writers import write_results

__all__ = [
    "FORMATS",
    "LAYOUTS",
    "RESPONDENT_COLUMNS",
    "ResultsNotice",
    "infer_type",
    "is_respondent_column",
    "read_results",
    "results_dtypes",
    "results_to_parquet",
    "sniff",
    "split_columns",
    "tidy_results",
    "write_results",
]
