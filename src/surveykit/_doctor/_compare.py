"""Compare the results of one survey read from several formats: the first deviation.

:func:`first_deviation` answers, in words, where two frames of the same results differ:
a column one lacks, a row count, a respondent missing, a column typed differently, or the
first value that differs (its column, its row and respondent, both values).
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any, Final

import numpy as np
import pandas as pd

KEY_COLUMNS: Final = ("respondentId", "respondentid", "RespondentId", "id")
"""Columns that identify a respondent, used to align rows when present in both frames."""


def _key(frame: pd.DataFrame) -> str | None:
    for name in KEY_COLUMNS:
        if name in frame.columns:
            return name
    return None


def plain(value: Any) -> Any:
    """A cell as a comparable Python value: missing is None, numbers and times in one form."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(value, pd.Timestamp | datetime):
        stamp = pd.Timestamp(value)
        if stamp.tzinfo is not None:
            stamp = stamp.tz_convert("UTC")
        return stamp.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _kind(series: pd.Series) -> str:
    """The family of a column's dtype (text, integer, float, boolean, datetime, category)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    return "text"


def _row_name(position: int, key: str | None, value: Any) -> str:
    where = f"row {position + 1}"
    return f"{where} ({key} {value})" if key is not None else where


def first_deviation(
    base_name: str, base: pd.DataFrame, other_name: str, other: pd.DataFrame
) -> str | None:
    """Where ``other`` first differs from ``base``, in words; None when they agree.

    Columns are compared as sets (their order aside), then the row count, then rows are
    aligned by respondent id (``respondentId``) when both have it, else by position;
    then each column's type family, then each value (missing values are equal; numbers
    and times compared by value, not by spelling).
    """
    missing = [c for c in base.columns if c not in other.columns]
    if missing:
        return f"{other_name} lacks column {missing[0]!r} that {base_name} has"
    extra = [c for c in other.columns if c not in base.columns]
    if extra:
        return f"{other_name} has a column {extra[0]!r} that {base_name} lacks"
    if len(base) != len(other):
        return f"{other_name} has {len(other)} rows, {base_name} {len(base)}"
    key = _key(base)
    base_rows = base.reset_index(drop=True)
    other_rows = other.reset_index(drop=True)
    if key is not None:
        base_ids = [plain(v) for v in base_rows[key]]
        other_ids = [plain(v) for v in other_rows[key]]
        where = {str(v): i for i, v in enumerate(other_ids)}
        for position, value in enumerate(base_ids):
            if str(value) not in where:
                return f"{other_name} lacks {key} {value} ({base_name} has it, row {position + 1})"
        order = [where[str(v)] for v in base_ids]
        other_rows = other_rows.iloc[order].reset_index(drop=True)
    for column in base.columns:
        base_kind, other_kind = _kind(base_rows[column]), _kind(other_rows[column])
        if base_kind != other_kind:
            return (
                f"{other_name} column {column!r} is read as {other_kind} "
                f"({other_rows[column].dtype}), {base_name} as {base_kind} "
                f"({base_rows[column].dtype})"
            )
        for position, (left, right) in enumerate(
            zip(base_rows[column].tolist(), other_rows[column].tolist(), strict=True)
        ):
            a, b = plain(left), plain(right)
            if a != b:
                ident = plain(base_rows[key].iloc[position]) if key is not None else None
                return (
                    f"{other_name} differs from {base_name} in column {column!r}, "
                    f"{_row_name(position, key, ident)}: {other_name} {b!r}, "
                    f"{base_name} {a!r}"
                )
    return None


__all__ = ["first_deviation", "plain"]
