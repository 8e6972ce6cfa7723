"""Typed pandas frames from the readers' text columns: the one place a frame is built.

:func:`build_frame` types each column by the rules of ``_types.py`` (or in bulk for wide,
short payloads, ``_bulk.py``), in a thread pool for long columns, and names the first value
that breaks a given or predicted type.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import pandas as pd
import pyarrow as pa

from surveykit.errors import ResultsParseError
from surveykit.results._types import (
    _PARSERS,
    _UTC,
    Column,
    ColumnPlan,
    TypeName,
    _from_reader,
    _infer,
    _large,
    _pandas,
    _parser,
    blank_to_null,
    normalize_type_name,
)


def _one_column(
    name: str,
    arr: Column,
    plan: ColumnPlan | None,
    given: TypeName | None,
    infer: bool,
    format: str,
    first_record: int,
    predicted: TypeName | None = None,
) -> tuple[ColumnPlan, Any]:
    if predicted is not None:
        # A column the reader parsed as predict_types asked (never with a plan or dtype).
        assert plan is None and given is None and infer
        done = _from_reader(name, arr, predicted)
        if done is not None:
            return done
        # Wrong after all: the column's text, typed by the whole-column rules.
        arr = arr.cast(pa.large_string()) if pa.types.is_dictionary(arr.type) else arr
    arr = _large(arr)
    typed = None
    if plan is None and given is None:
        kind: TypeName = "string"
        if infer:
            kind, typed = _infer(name, arr)
        plan = ColumnPlan(name, kind, forced=False)
    elif plan is None:
        plan = ColumnPlan(name, given or "string", forced=True)
    if typed is None and plan.type in _PARSERS:
        arr = blank_to_null(arr)  # an empty value is missing in a typed column
        typed = (
            _parser(plan)(arr) if arr.null_count < len(arr) else _typed_nulls(plan.type, len(arr))
        )
        if typed is None:
            raise _type_error(plan, arr, format, first_record)
    return plan, _pandas(plan.type, arr, typed)


def _typed_nulls(kind: str, n: int) -> Any:
    target = {"boolean": pa.bool_(), "Int64": pa.int64(), "float64": pa.float64()}
    return pa.chunked_array([pa.nulls(n, target.get(kind, _UTC))])


def _first_failure(arr: Column, parse: Callable[[Column], Any]) -> int:
    # Bisection: about two passes of the parser, even over millions of values.
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        part = arr.slice(lo, mid - lo)
        if part.null_count < len(part) and parse(part) is None:
            hi = mid
        else:
            lo = mid
    return lo


def _type_error(plan: ColumnPlan, arr: Column, format: str, first_record: int) -> ResultsParseError:
    index = _first_failure(arr, _parser(plan))
    value = arr[index].as_py()
    origin = "the type given in dtypes" if plan.forced else "the type decided from the first chunk"
    return ResultsParseError(
        f"column {plan.name!r}: value {value!r} does not fit {origin} ({plan.type}); "
        "pass dtypes={...: 'string'} to read it as text",
        format=format,
        record=first_record + index,
    )


_POOL: ThreadPoolExecutor | None = None
_PARALLEL_ROWS: Final = 4096


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:  # pyarrow compute releases the GIL: columns are typed in parallel
        _POOL = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1))
    return _POOL


def build_frame(
    names: Sequence[str],
    columns: Sequence[Column],
    *,
    dtypes: Mapping[str, Any] | None,
    infer: bool,
    plans: Sequence[ColumnPlan] | None,
    format: str,
    first_record: int = 0,
    nrows: int,
    predicted: Mapping[int, TypeName] | None = None,
) -> tuple[pd.DataFrame, list[ColumnPlan]]:
    """Type one chunk of text columns into a DataFrame; decide the plans if not given.

    ``predicted`` names the columns a reader already parsed into
    :func:`reader_type` of a type from :func:`predict_types`.
    """
    given = {k: normalize_type_name(v) for k, v in (dtypes or {}).items()}
    kinds = predicted or {}
    jobs = [
        (name, arr, plans[j] if plans is not None else None, given.get(name), kinds.get(j))
        for j, (name, arr) in enumerate(zip(names, columns, strict=True))
    ]

    def one(job: tuple[Any, ...]) -> tuple[ColumnPlan, Any]:
        return _one_column(job[0], job[1], job[2], job[3], infer, format, first_record, job[4])

    from surveykit.results import _bulk

    free = [j for j, job in enumerate(jobs) if job[2] is None and job[3] is None and job[4] is None]
    if nrows <= _bulk.MAX_ROWS and len(free) >= _bulk.MIN_COLUMNS:
        # Very many short columns: typed together rather than one by one.
        done: list[Any] = [None] * len(jobs)
        typed = _bulk.type_columns(
            [names[j] for j in free], [columns[j] for j in free], nrows, infer
        )
        for j, result in zip(free, typed, strict=True):
            done[j] = result
        for j, job in enumerate(jobs):
            if done[j] is None:
                done[j] = one(job)
    else:
        # Short columns are typed in this thread: handing each to the pool costs more than
        # typing it.
        done = list(_pool().map(one, jobs) if nrows >= _PARALLEL_ROWS else map(one, jobs))
    index = pd.RangeIndex(first_record, first_record + nrows)
    new_plans = [plan for plan, _ in done]
    if not done:
        return pd.DataFrame(index=index), new_plans
    frame = pd.DataFrame(
        {str(j): values for j, (_, values) in enumerate(done)}, index=index, copy=False
    )
    frame.columns = pd.Index(list(names))
    return frame, new_plans


def check_names(names: Sequence[str], *, format: str) -> None:
    """Refuse duplicate column names (a frame cannot hold them unambiguously)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ResultsParseError(f"duplicate column name {name!r}", format=format, line=1)
        seen.add(name)
