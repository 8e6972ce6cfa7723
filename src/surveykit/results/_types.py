"""Column types: the text every format carries, the safe inference that types it, the frame.

Every reader first produces one pyarrow string array per column (``null`` = missing,
``""`` = empty string); :func:`build_frame` then types the columns the same way whatever
the format (by the rules below, or in bulk for wide, short payloads: ``_bulk.py``; the
names, spellings and types both share are ``_columns.py``), in a
thread pool for long columns, names the first value that breaks a given or predicted
type, and builds the one DataFrame; so CSV, PIPE, TAB, XML and JSON give equal
DataFrames. Writers do the reverse with ``_text.to_text``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.errors import ResultsParseError
from surveykit.results import _bulk
from surveykit.results._columns import (
    ALWAYS_CATEGORY,
    ALWAYS_TEXT,
    CATEGORY_MAX_DISTINCT,
    DATETIME_DTYPE,
    FLOAT_RE,
    STRING_DTYPE,
    TEXT_SUFFIXES,
    TYPE_NAMES,
    UTC,
    Column,
    ColumnPlan,
    TypeName,
    blank_to_null,
    is_respondent_column,
)

_SAMPLE: Final = 4096


def _is_text_name(name: str) -> bool:
    low = name.lower()
    return low in ALWAYS_TEXT or low.endswith(TEXT_SUFFIXES)


def normalize_type_name(value: Any) -> TypeName:
    """Map a type name or a pandas dtype to one of :data:`TYPE_NAMES`."""
    if isinstance(value, str):
        low = value.lower()
        aliases: dict[str, TypeName] = {
            "string": "string",
            "str": "string",
            "int64": "Int64",
            "int": "Int64",
            "float64": "float64",
            "float": "float64",
            "boolean": "boolean",
            "bool": "boolean",
            "datetime": "datetime",
            "category": "category",
        }
        if low in aliases:
            return aliases[low]
    try:
        dtype = pd.api.types.pandas_dtype(value)
    except TypeError:
        dtype = None
    if dtype is not None:
        if isinstance(dtype, pd.CategoricalDtype):
            return "category"
        if isinstance(dtype, pd.DatetimeTZDtype):
            return "datetime"
        if pd.api.types.is_bool_dtype(dtype):
            return "boolean"
        if pd.api.types.is_integer_dtype(dtype):
            return "Int64"
        if pd.api.types.is_float_dtype(dtype):
            return "float64"
        if pd.api.types.is_string_dtype(dtype):
            return "string"
    raise ValueError(f"unknown results column type {value!r}; use one of {TYPE_NAMES}")


def results_dtypes(df: pd.DataFrame) -> dict[str, TypeName]:
    """The column types of a results frame, as accepted by ``read_results(dtypes=...)``.

    ``read_results(write_results(df, f), dtypes=results_dtypes(df))`` gives ``df`` back
    exactly, with no inference involved.
    """
    out: dict[str, TypeName] = {}
    for name in df.columns:
        dtype = df[name].dtype
        if pd.api.types.is_object_dtype(dtype):
            out[str(name)] = "string"
        else:
            out[str(name)] = normalize_type_name(dtype)
    return out


# --------------------------------------------------------------------------- inference


def _all_true(mask: Column) -> bool:
    return pc.all(mask, min_count=0).as_py() is not False


def _cast(arr: Column, target: pa.DataType) -> Any:
    try:
        return pc.cast(arr, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _parse_int(arr: Column) -> Any:
    ints = _cast(arr, pa.int64())
    if ints is None or not _canonical_ints(arr, ints):
        return None
    return ints


def _canonical_ints(arr: Column, ints: Any) -> bool:
    """Whether every text is the canonical spelling of its integer.

    The cast also takes "007", "-0" and "0x7" (not "+7" or spaces), and every such
    spelling is longer than the canonical one: the texts are canonical exactly when
    their total length is the total of the canonical lengths.
    """
    low, high = (v.as_py() for v in pc.min_max(ints).values())
    if low is None:
        return True
    biggest = max(abs(low), abs(high))
    text_length = pc.sum(pc.binary_length(arr)).as_py() or 0
    if biggest >= 10**4:
        # Many digits: cheaper to look for the few bad first characters directly.
        zero_first = pc.and_(pc.starts_with(arr, "0"), pc.greater(pc.binary_length(arr), 1))
        return not pc.any(pc.or_(zero_first, pc.starts_with(arr, "-0"))).as_py()

    def count(mask: Any) -> int:
        return int(pc.sum(mask).as_py() or 0)

    needed = len(ints) - ints.null_count + count(pc.less(ints, 0))
    power = 10
    while power <= biggest:
        needed += count(pc.greater_equal(ints, power)) + count(pc.less_equal(ints, -power))
        power *= 10
    return bool(text_length == needed)


def _parse_bool(arr: Column) -> Any:
    if not _all_true(pc.or_kleene(pc.equal(arr, "true"), pc.equal(arr, "false"))):
        return None
    return pc.equal(arr, "true")


def _float_values(arr: Column) -> list[float] | None:
    """The distinct values, if every text is exactly the writer's text of a float."""
    if not _all_true(pc.match_substring_regex(arr, FLOAT_RE)):
        return None
    values = []
    for text in pc.unique(arr).to_pylist():
        if text is None:
            continue
        value = float(text)
        if math.isnan(value) or repr(value) != text:
            return None
        values.append(value)
    return values


def _parse_float(arr: Column) -> Any:
    # Inference: at least one finite value too (a column of "inf" alone is more likely
    # text than numbers).
    values = _float_values(arr)
    if values is None or not any(map(math.isfinite, values)):
        return None
    return arr.cast(pa.float64())


def _parse_datetime(arr: Column) -> Any:
    return _cast(arr, UTC)


_PARSERS: Final = {
    "boolean": _parse_bool,
    "Int64": _parse_int,
    "float64": _parse_float,
    "datetime": _parse_datetime,
}


def _parse_given_float(arr: Column) -> Any:
    # A caller who declares float64 gets any decimal spelling, "inf" and "nan" included.
    return _cast(arr, pa.float64())


def _parser(plan: ColumnPlan) -> Callable[[Column], Any]:
    if plan.forced and plan.type == "float64":
        return _parse_given_float
    return _PARSERS[plan.type]


def _blanks_may_hide_a_type(arr: Column, head: list[str]) -> bool:
    """Whether a column that failed every type might pass one with its blanks missing.

    Cheap: a first value that fits no type's rules the column out.
    """
    if len(arr) <= _HEAD:
        return "" in head  # head is the whole column
    first = head[0] if head else ""
    return first == "" or any(quick(first) for quick in _QUICK.values())


def _try(kind: str, arr: Column, head: list[str]) -> Any:
    """The typed column, or None when a value does not fit (a sample is tried first).

    ``head`` holds the column's first values (see :func:`_head_values`).
    """
    if arr.null_count == len(arr):
        return None
    quick = _QUICK[kind]
    if not all(map(quick, head)):
        return None  # a value already fails: no need to run the parser
    parse = _PARSERS[kind]
    if len(arr) > _SAMPLE and parse(arr.slice(0, _SAMPLE)) is None:
        return None
    return parse(arr)


def _head_values(arr: Column) -> list[str]:
    """Values to check before parsing: all of a short column, else the first one.

    Checking every value of a short column costs less than one failed cast (a payload
    of 100,000 columns and 2 rows types 100,000 such columns).
    """
    values = [str(v) for v in arr.slice(0, _HEAD).to_pylist() if v is not None]
    return values if len(arr) <= _HEAD else values[:1]


_HEAD: Final = 64


_INT_TEXT: Final = re.compile(r"-?[0-9]+")
_FLOAT_TEXT: Final = re.compile(FLOAT_RE)
# A necessary condition per kind, on one value (pyarrow's ISO 8601 parser needs YYYY-MM-DD).
_QUICK: Final[dict[str, Callable[[str], bool]]] = {
    "boolean": lambda v: v in ("true", "false"),
    "Int64": lambda v: _INT_TEXT.fullmatch(v) is not None,
    "float64": lambda v: _FLOAT_TEXT.match(v) is not None,
    "datetime": lambda v: len(v) >= 10 and v[4] == "-" and v[7] == "-",
}


def _encode(arr: Column) -> Any:
    flat = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    return pc.dictionary_encode(flat)


def _few_distinct(arr: Column, head: list[str]) -> Any:
    """The dictionary-encoded column when it has few distinct values, else None."""
    valid = len(arr) - arr.null_count
    if valid == 0:
        return None
    if len(arr) <= _HEAD and len(set(head)) * 2 > valid:
        return None  # a short column (``head`` is all of it) with too many values
    if pc.count_distinct(arr.slice(0, _SAMPLE)).as_py() > CATEGORY_MAX_DISTINCT:
        return None
    encoded = _encode(arr)
    n = len(encoded.dictionary)
    return encoded if n <= CATEGORY_MAX_DISTINCT and n * 2 <= valid else None


def _infer(name: str, arr: Column) -> tuple[TypeName, Any]:
    """The inferred type, and the typed arrow array when inference had to build it."""
    if _is_always_category(name):
        return "category", None
    if _is_text_name(name):
        return "string", None
    kind: TypeName
    head = _head_values(arr)
    for kind in ("boolean", "Int64", "float64", "datetime"):
        typed = _try(kind, arr, head)
        if typed is not None:
            return kind, typed
    if _blanks_may_hide_a_type(arr, head):
        # Empty strings are missing in a typed column: type the other values.
        blank = blank_to_null(arr)
        if blank is not arr:
            head = _head_values(blank)
            for kind in ("boolean", "Int64", "float64", "datetime"):
                typed = _try(kind, blank, head)
                if typed is not None:
                    return kind, typed
    if not is_respondent_column(name):
        encoded = _few_distinct(arr, head)
        if encoded is not None:
            return "category", encoded
    return "string", None


_DICTIONARY: Final = pa.dictionary(pa.int32(), pa.large_string())


def reader_type(kind: TypeName) -> pa.DataType:
    """The arrow type a delimited reader parses a column predicted as ``kind`` into.

    Booleans and datetimes are converted by the reader (a value that does not convert
    fails the read, and the caller reads text instead); categories and integers are
    dictionary-encoded text, checked on the whole column afterwards.
    """
    return {"boolean": pa.bool_(), "datetime": UTC}.get(kind, _DICTIONARY)


def predict_types(
    names: Sequence[str],
    sample: Sequence[Column],
    *,
    dtypes: Mapping[str, Any] | None,
    infer: bool,
) -> dict[int, TypeName]:
    """Column types (by position) predicted from the first rows, for a reader to parse into.

    The whole column still decides: :func:`build_frame` checks every value of a
    predicted column against the rules of :func:`infer_type` and falls back to them
    when the prediction was wrong, so a prediction changes the speed, never the frame.
    Predicted: ``boolean``, ``datetime``, ``category``, and ``Int64`` with few distinct
    values. A sample that fails the boolean, integer and float rules means the whole
    column fails them (the sample is the column's first rows).
    """
    if not infer:
        return {}
    out: dict[int, TypeName] = {}
    for j, (name, arr) in enumerate(zip(names, sample, strict=True)):
        if name in (dtypes or {}):
            continue
        arr = _large(arr)
        kind, _ = _infer(name, arr)
        # A sample of "inf" alone fails the float rule only for want of a finite value,
        # which later rows may have: then the sample says nothing about the column.
        if not _is_always_category(name) and kind == "category" and _float_values(arr) is not None:
            continue
        if kind == "Int64" and pc.count_distinct(arr).as_py() > CATEGORY_MAX_DISTINCT:
            continue
        if kind in ("boolean", "datetime", "category", "Int64"):
            out[j] = kind
    return out


def _is_always_category(name: str) -> bool:
    return name.lower() in ALWAYS_CATEGORY


def _from_reader(name: str, arr: Column, kind: TypeName) -> tuple[ColumnPlan, Any] | None:
    """Finish a column the reader parsed as predicted; None if the prediction was wrong."""
    if kind in ("boolean", "datetime"):
        return ColumnPlan(name, kind, forced=False), _pandas(kind, arr, arr)
    encoded = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    n, valid = len(encoded.dictionary), len(encoded) - encoded.null_count
    if kind == "category":
        if _is_always_category(name) or (n <= CATEGORY_MAX_DISTINCT and n * 2 <= valid):
            return ColumnPlan(name, "category", forced=False), _pandas("category", arr, encoded)
        return None
    # Int64: each distinct text is checked once; every row then looks its value up.
    values = _parse_int(encoded.dictionary) if n else None
    if values is None:
        return None
    lookup = np.append(values.to_numpy(), 0)
    indices = pc.fill_null(encoded.indices, n).to_numpy(zero_copy_only=False)
    return ColumnPlan(name, "Int64", forced=False), pd.arrays.IntegerArray(
        lookup[indices], indices == n
    )


def infer_type(name: str, arr: Column) -> TypeName:
    """Decide a column's type from its text.

    The rules (whole column, missing values ignored; an all-missing column is text):

    - respondent identity fields (ids, names, numbers, emails) and any column whose name
      ends with ``id``, ``number``, ``reference``, ``phone`` or ``code`` stay text;
      ``channel`` is a category;
    - ``true``/``false`` only -> ``boolean``;
    - integers written canonically (no sign ``+``, no leading zero, no ``-0``, at most 19
      digits, within the int64 range) -> ``Int64``; so ``"007"`` stays text;
    - floats whose text is exactly Python's ``repr`` of the value (``1.5``, ``1e+16``,
      ``-0.25``; not ``1.50`` or ``nan``) -> ``float64``;
    - ISO 8601 date-times with a zone (``Z``, ``+hh:mm``, ``+hhmm``, ``+hh``; ``T`` or a
      space between date and time; at most 6 decimals) -> UTC ``datetime``; naive ones
      and dates alone stay text;
    - other text: a question column with at most 64 distinct values, each seen twice on
      average, is a ``category``; everything else is ``string``.

    Text such as ``"N/A"``, ``"null"``, ``"None"``, ``"NA"`` is never a missing value.
    """
    return _infer(name, _large(arr))[0]


def _large(arr: Column) -> Any:
    if isinstance(arr, pa.Array):
        arr = pa.chunked_array([arr], type=arr.type)
    return arr if arr.type == pa.large_string() else arr.cast(pa.large_string())


def _pandas(kind: TypeName, arr: Any, typed: Any) -> Any:
    """A pandas array from text (``arr``) and, for non-text kinds, its typed version."""
    if kind == "string":
        return pd.arrays.ArrowStringArray(arr)
    if kind == "category":
        encoded = typed if typed is not None else _encode(arr)
        cats = encoded.dictionary
        # Categories sorted by code point, so every format gives the same codes.
        order = pc.sort_indices(cats).to_numpy()
        n = len(order)
        # Missing values point one past the end, where the lookup table holds -1.
        indices = pc.fill_null(encoded.indices, n).to_numpy(zero_copy_only=False)
        rank = np.empty(n + 1, dtype=np.int32)
        rank[order] = np.arange(n, dtype=np.int32)
        rank[n] = -1
        codes = rank[indices]  # a fresh, writable array, so the frame can be edited later
        sorted_cats = cats.take(pa.array(order)).cast(pa.large_string())
        dtype = pd.CategoricalDtype(
            pd.Index(
                pd.arrays.ArrowStringArray(pa.chunked_array([sorted_cats])), dtype=STRING_DTYPE
            )
        )
        return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
    if kind == "Int64":
        return pd.arrays.IntegerArray(
            pc.fill_null(typed, 0).to_numpy(), pc.is_null(typed).to_numpy()
        )
    if kind == "float64":
        return typed.to_numpy()
    if kind == "boolean":
        return pd.arrays.BooleanArray(
            pc.fill_null(typed, False).to_numpy(), pc.is_null(typed).to_numpy()
        )
    return typed.to_pandas().array.astype(DATETIME_DTYPE)


# --------------------------------------------------------------------------- frames


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
    return pa.chunked_array([pa.nulls(n, target.get(kind, UTC))])


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
