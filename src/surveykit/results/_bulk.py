"""Typing many short columns at once: a payload of very many columns and few rows.

Typing column by column costs a few dozen pyarrow and pandas calls per column, which a
payload of 100,000 columns and 2 rows pays 100,000 times. Here every value of every
column is taken to Python once, each column's type is decided by the rules of
:func:`surveykit.results._types.infer_type` written for a list of a few values, and the
typed arrays are built with one vectorised conversion per type, then sliced per column.
The frame is the one the column-by-column path builds (property-tested).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.results._columns import (
    ALWAYS_CATEGORY,
    ALWAYS_TEXT,
    CATEGORY_MAX_DISTINCT,
    DATETIME_DTYPE,
    FLOAT_RE,
    STRING_DTYPE,
    TEXT_SUFFIXES,
    UTC,
    Column,
    ColumnPlan,
    blank_to_null,
    is_respondent_column,
)

#: At most this many rows: short columns (the rules look at every value in Python). Up to
#: the inference sample (4,096 rows) the rules below are exactly the whole-column ones.
MAX_ROWS: Final = 512
#: At least this many columns to type in bulk (a module attribute, so tests can lower it).
MIN_COLUMNS = 256
#: About this many values are taken to Python at once (columns are typed in groups).
GROUP_VALUES = 1 << 20

_INT: Final = re.compile(r"-?[0-9]+")
_FLOAT: Final = re.compile(FLOAT_RE.removeprefix("^").removesuffix("$"))
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_BOOL_TEXT: Final = frozenset({"true", "false"})


def _is_int(v: str) -> bool:
    # The canonical spelling of an int64: what the cast accepts and _canonical_ints keeps.
    if len(v) > 20 or _INT.fullmatch(v) is None:
        return False
    value = int(v)
    return str(value) == v and _INT64_MIN <= value <= _INT64_MAX


def _is_float(v: str) -> bool:
    return _FLOAT.fullmatch(v) is not None and repr(float(v)) == v


def _maybe_datetime(v: str) -> bool:
    return len(v) >= 10 and v[4] == "-" and v[7] == "-"


def _decide(name: str, values: list[str | None]) -> str:
    """The type of one short column, or ``"datetime?"`` when only a cast can tell."""
    low = name.lower()
    if low in ALWAYS_CATEGORY:
        return "category"
    if low in ALWAYS_TEXT or low.endswith(TEXT_SUFFIXES):
        return "string"
    valid = [v for v in values if v is not None]
    if not valid:
        return "string"
    # Empty strings are missing in a typed column (and text in a text column).
    filled = [v for v in valid if v != ""] if "" in valid else valid
    if filled:
        if all(v in _BOOL_TEXT for v in filled):
            return "boolean"
        if all(map(_is_int, filled)):
            return "Int64"
        if all(map(_is_float, filled)) and any(v not in ("inf", "-inf") for v in filled):
            return "float64"
        if all(map(_maybe_datetime, filled)):
            return "datetime?"
    return _category_or_string(name, valid)


def _category_or_string(name: str, valid: list[str]) -> str:
    distinct = len(set(valid))
    if is_respondent_column(name) or distinct > CATEGORY_MAX_DISTINCT:
        return "string"
    if distinct * 2 > len(valid):
        return "string"
    return "category"


def _flat(columns: Sequence[Column]) -> pa.Array:
    """Every column's values, one column after the other, as one ``large_string`` array."""
    pieces = list(
        chain.from_iterable(c.chunks if isinstance(c, pa.ChunkedArray) else (c,) for c in columns)
    )
    if not pieces:
        return pa.array([], type=pa.large_string())
    try:
        flat = pa.concat_arrays(pieces)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # types differ: each made large_string first
        flat = pa.concat_arrays([p.cast(pa.large_string()) for p in pieces])
    return flat if flat.type == pa.large_string() else flat.cast(pa.large_string())


def _take(flat: pa.Array, cols: list[int], n: int) -> pa.Array:
    """The values of columns ``cols`` (positions in ``flat``), one after the other."""
    starts = np.asarray(cols, dtype=np.int64) * n
    index = (starts[:, None] + np.arange(n, dtype=np.int64)[None, :]).ravel()
    return flat.take(pa.array(index))


def _datetimes(flat: pa.Array, cols: list[int], n: int) -> list[int]:
    """The columns among ``cols`` whose every value converts to a UTC timestamp."""
    if not cols:
        return []
    try:
        pc.cast(blank_to_null(_take(flat, cols, n)), UTC)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if len(cols) == 1:
            return []
        half = len(cols) // 2  # halves, so a few bad columns cost a few casts each
        return _datetimes(flat, cols[:half], n) + _datetimes(flat, cols[half:], n)
    return cols


def _slices(whole: Any, count: int, n: int) -> list[Any]:
    return [whole[i * n : (i + 1) * n] for i in range(count)]


def _typed(kind: str, texts: pa.Array, count: int, n: int) -> list[Any]:
    """Pandas arrays of ``count`` columns of ``n`` rows whose texts follow each other."""
    texts = blank_to_null(texts)
    if kind == "Int64":
        ints = pc.cast(texts, pa.int64())
        values = pc.fill_null(ints, 0).to_numpy(zero_copy_only=False).copy()
        whole: Any = pd.arrays.IntegerArray(values, pc.is_null(ints).to_numpy(zero_copy_only=False))
    elif kind == "boolean":
        truth = pc.equal(texts, "true")
        whole = pd.arrays.BooleanArray(
            pc.fill_null(truth, False).to_numpy(zero_copy_only=False),
            pc.is_null(truth).to_numpy(zero_copy_only=False),
        )
    elif kind == "float64":
        floats = pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False).copy()
        return list(floats.reshape(count, n)) if count else []
    else:  # datetime
        whole = pc.cast(texts, UTC).to_pandas().array.astype(DATETIME_DTYPE)
    return _slices(whole, count, n)


class _Categories:
    """Categorical columns, sharing one dtype per set of categories (answer scales repeat)."""

    def __init__(self) -> None:
        self.dtypes: dict[tuple[str, ...], pd.CategoricalDtype] = {}

    def make(self, values: list[str | None]) -> pd.Categorical:
        cats = tuple(sorted({v for v in values if v is not None}))
        dtype = self.dtypes.get(cats)
        if dtype is None:
            text = pa.chunked_array([pa.array(cats, type=pa.large_string())])
            index = pd.Index(pd.arrays.ArrowStringArray(text), dtype=STRING_DTYPE)
            dtype = self.dtypes[cats] = pd.CategoricalDtype(index)
        rank = {v: i for i, v in enumerate(cats)}
        codes = np.array([-1 if v is None else rank[v] for v in values], dtype=np.int32)
        return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def type_columns(
    names: Sequence[str], columns: Sequence[Column], nrows: int, infer: bool
) -> list[tuple[ColumnPlan, Any]]:
    """Plans and pandas arrays of short text columns, as ``_one_column`` would type them."""
    # In groups of columns, so that the values held in Python at once stay bounded.
    step = max(1, GROUP_VALUES // max(nrows, 1))
    categories = _Categories()
    out: list[tuple[ColumnPlan, Any]] = []
    for start in range(0, len(names), step):
        part = slice(start, start + step)
        out += _type_group(names[part], columns[part], nrows, infer, categories)
    return out


def _type_group(
    names: Sequence[str],
    columns: Sequence[Column],
    nrows: int,
    infer: bool,
    categories: _Categories,
) -> list[tuple[ColumnPlan, Any]]:
    n = nrows
    flat = _flat(columns)
    values: list[str | None] = flat.to_pylist()
    kinds = [
        _decide(name, values[j * n : (j + 1) * n]) if infer else "string"
        for j, name in enumerate(names)
    ]
    maybe = [j for j, k in enumerate(kinds) if k == "datetime?"]
    if maybe:
        sure = set(_datetimes(flat, maybe, n))
        for j in maybe:
            valid = [v for v in values[j * n : (j + 1) * n] if v is not None]
            kinds[j] = "datetime" if j in sure else _category_or_string(names[j], valid)
    out: list[Any] = [None] * len(names)
    by_kind: dict[str, list[int]] = {}
    for j, kind in enumerate(kinds):
        by_kind.setdefault(kind, []).append(j)
    for kind, cols in by_kind.items():
        if kind in ("Int64", "boolean", "float64", "datetime"):
            arrays = _typed(kind, _take(flat, cols, n), len(cols), n)
        elif kind == "category":
            make: Callable[[list[str | None]], Any] = categories.make
            arrays = [make(values[j * n : (j + 1) * n]) for j in cols]
        else:
            arrays = [
                pd.arrays.ArrowStringArray(pa.chunked_array([flat.slice(j * n, n)])) for j in cols
            ]
        for j, array in zip(cols, arrays, strict=True):
            out[j] = (ColumnPlan(names[j], kind, forced=False), array)  # type: ignore[arg-type]
    return out
