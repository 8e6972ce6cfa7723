"""A column's canonical text, as the writers and the tidy form spell values.

Integers in decimal, floats by ``repr`` (NaN = missing), booleans ``true``/``false``,
timestamps as ISO 8601 in UTC. The readers' typing rules (``_types.py``) read this text back
to the same values.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def _float_text(x: float) -> str | None:
    if math.isnan(x):
        return None
    return repr(float(x))


def _datetime_text(ts: dt.datetime) -> str:
    return ts.astimezone(dt.UTC).isoformat()


def _object_text(value: Any, column: str) -> str | None:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return _float_text(float(value))
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ValueError(f"column {column!r}: naive datetime {value!r}; localize it first")
        return _datetime_text(value)
    raise ValueError(f"column {column!r}: cannot write a value of type {type(value).__name__}")


def to_text(series: pd.Series, column: str) -> pa.Array:
    """The canonical text of a column: a ``large_string`` array, null where missing.

    Integers in decimal, floats by ``repr`` (NaN = missing), booleans ``true``/``false``,
    timestamps as ISO 8601 in UTC with ``+00:00`` (and ``.ffffff`` when not whole seconds).
    """
    arr = _to_text(series, column)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _to_text(series: pd.Series, column: str) -> pa.Array:
    """The canonical text of a column: a ``large_string`` array, null where missing.

    Integers in decimal, floats by ``repr`` (NaN = missing), booleans ``true``/``false``,
    timestamps as ISO 8601 in UTC with ``+00:00`` (and ``.ffffff`` when not whole seconds).
    """
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = to_text(pd.Series(dtype.categories), column)
        codes = pa.array(series.cat.codes.to_numpy(), mask=series.isna().to_numpy())
        return cats.take(codes)
    if isinstance(dtype, pd.DatetimeTZDtype):
        values = [None if x is pd.NaT else _datetime_text(x) for x in series.dt.tz_convert("UTC")]
        return pa.array(values, type=pa.large_string())
    if pd.api.types.is_datetime64_dtype(dtype):
        raise ValueError(f"column {column!r}: naive datetimes; localize them first")
    if pd.api.types.is_bool_dtype(dtype):
        arr = pa.array(series, from_pandas=True)
        text = pc.if_else(arr, "true", "false")
        return text.cast(pa.large_string())
    if pd.api.types.is_integer_dtype(dtype):
        return pa.array(series, from_pandas=True).cast(pa.large_string())
    if pd.api.types.is_float_dtype(dtype):
        values = [None if x is pd.NA else _float_text(x) for x in series.tolist()]
        return pa.array(values, type=pa.large_string())
    if isinstance(dtype, pd.StringDtype):
        arr = pa.array(series.array, from_pandas=True)
        return arr.cast(pa.large_string())
    return pa.array([_object_text(v, column) for v in series.tolist()], type=pa.large_string())
