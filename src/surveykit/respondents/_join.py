"""Per-record import results joined back to the rows of the DataFrame they came from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

if TYPE_CHECKING:
    from surveykit.respondents._plan import ImportPlan

__all__ = ["join_import_results"]

_STATUSES = {"success": "Success", "error": "Error"}


def _field(result: object, name: str) -> Any:
    if isinstance(result, Mapping):
        for key in (name, name.capitalize(), name.upper()):
            if key in result:
                return result[key]
        lowered = {str(k).lower(): v for k, v in result.items()}
        return lowered.get(name)
    for attr in (name, name.capitalize()):
        if hasattr(result, attr):
            return getattr(result, attr)
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return str(value)


def _texts(values: pd.Series[Any]) -> npt.NDArray[np.object_]:
    """Values as text, None where missing."""
    # Column labels and raw values of any type then fit one text column: an outcome file
    # (Parquet included) needs one type per column.
    out: npt.NDArray[np.object_] = np.array(
        [None if _missing(v) else str(v) for v in values.to_numpy(dtype=object)], dtype=object
    )
    return out


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # list-like cells
        return False


def join_import_results(
    plan: ImportPlan,
    results: Sequence[Mapping[str, Any] | object | None],
    df_index: pd.Index | None = None,
) -> pd.DataFrame:
    """Outcome of every DataFrame row of an import, indexed like the DataFrame.

    ``results[i]`` is the platform's result for ``plan.records[i]`` (a dict, in any letter
    case, or an object with ``status``, ``message`` and ``when``), or None when that record
    was not sent; records past the end of ``results`` were not sent either.

    Returns a DataFrame with columns ``status`` (the platform's ``Success`` / ``Error``,
    ``rejected`` for rows :func:`build_import_list` left out, ``not sent``), ``message``,
    ``when``, ``reason`` (why a row was rejected), and, from ``plan.rejected`` for rejected
    rows (missing elsewhere): ``column`` (the DataFrame column at fault, as text),
    ``value`` (the value as given, as text) and ``duplicate_of`` (for a duplicate, the index
    label of the first row with that number; nullable integers, ``Int64``, when the index is
    made of integers); and ``number_check``, how the row's mobile number was checked
    (``valid``, ``unverified``, missing where there is none: see ``plan.number_check``).

    Raises:
        ValueError: more results than records, or ``df_index`` is not the index the plan
            was built from.
    """
    index = plan.source_index if df_index is None else df_index
    if df_index is not None and not df_index.equals(plan.source_index):
        raise ValueError(
            "df_index is not the index of the DataFrame the plan was built from "
            f"({len(df_index)} vs {len(plan.source_index)} labels, or different labels/order)"
        )
    if len(results) > len(plan.records):
        raise ValueError(f"{len(results)} results for {len(plan.records)} records")
    n = len(index)
    status = np.full(n, "not sent", dtype=object)
    message = np.full(n, None, dtype=object)
    when = np.full(n, None, dtype=object)
    reason = np.full(n, None, dtype=object)
    column = np.full(n, None, dtype=object)
    value = np.full(n, None, dtype=object)
    duplicate_of = np.full(n, None, dtype=object)
    rejected = plan.rejected_positions
    status[rejected] = "rejected"
    reason[rejected] = plan.rejected["reason"].to_numpy(dtype=object)
    column[rejected] = _texts(plan.rejected["column"])
    value[rejected] = _texts(plan.rejected["value"])
    duplicate_of[rejected] = plan.rejected["duplicate_of"].to_numpy(dtype=object)
    for pos, result in zip(plan.positions[: len(results)].tolist(), results, strict=True):
        if result is None:
            continue
        raw = _text(_field(result, "status"))
        status[pos] = _STATUSES.get(raw.lower(), raw) if raw else "unknown"
        message[pos] = _text(_field(result, "message"))
        when[pos] = _text(_field(result, "when"))
    return pd.DataFrame(
        {
            "status": pd.Series(status, dtype="str"),
            "message": pd.Series(message, dtype="str"),
            "when": pd.Series(when, dtype="str"),
            "reason": pd.Series(reason, dtype="str"),
            "column": pd.Series(column, dtype="str"),
            "value": pd.Series(value, dtype="str"),
            "duplicate_of": label_series(duplicate_of, index),
            "number_check": pd.Series(_number_check(plan, n), dtype="str"),
        }
    ).set_axis(index)


def _number_check(plan: ImportPlan, n: int) -> npt.NDArray[np.object_]:
    check = plan.number_check
    if len(check) != n:  # a plan made without checks (by hand, or an older pickle)
        return np.full(n, None, dtype=object)
    out: npt.NDArray[np.object_] = check.to_numpy(dtype=object)
    return out


def label_series(labels: np.ndarray[Any, Any], index: pd.Index) -> pd.Series:
    """Index labels (or None) as a column: nullable integers when the index is integer."""
    if pd.api.types.is_integer_dtype(index.dtype):
        return pd.Series(pd.array(labels, dtype="Int64"))
    return pd.Series(labels, dtype=object)
