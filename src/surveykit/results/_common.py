"""What every format's parser hands to the typing step."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from surveykit.results._types import TypeName


@dataclass
class RawChunk:
    """Rows of text columns: ``null`` = missing, ``""`` = empty string.

    ``predicted`` maps the position of a column the reader parsed into a predicted type
    (see ``_types.predict_types``) to that type; every other column is text.
    """

    names: list[str]
    columns: Sequence[pa.Array | pa.ChunkedArray]
    nrows: int
    predicted: dict[int, TypeName] = field(default_factory=dict)


_PACKAGE = os.path.dirname(os.path.dirname(__file__))


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside surveykit (the caller's code)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


class ResultsNotice(UserWarning):
    """Something a reader decided for the caller, e.g. names for headerless columns."""


def generated_names(count: int) -> list[str]:
    """Names of columns read with ``header=False`` and no ``names``: column_1, column_2, ..."""
    warnings.warn(
        f"the results have no header and no names were given: the {count} columns are "
        "named column_1, column_2, ...; pass names= (a list of names, or a codebook)",
        ResultsNotice,
        stacklevel=_caller_level(),
    )
    return [f"column_{i}" for i in range(1, count + 1)]


_NAME_KEYS = ("name", "column", "key", "question_key", "questionKey")


def column_names(names: Any) -> list[str] | None:
    """Column names from a list of names, or from a codebook-like list of entries.

    An entry is a name, a mapping with one of the keys ``name``, ``column``, ``key``,
    ``question_key`` (e.g. rows of a codebook), or an object with such an attribute. A
    DataFrame gives its ``name`` (or ``column``, ``key``) column.
    """
    if names is None:
        return None
    if isinstance(names, str):
        raise TypeError("names must be a list of column names, not one string")
    columns = getattr(names, "columns", None)
    if columns is not None:  # a DataFrame codebook
        key = next((k for k in _NAME_KEYS if k in columns), None)
        if key is None:
            raise ValueError(f"a codebook needs one of the columns {_NAME_KEYS}")
        names = names[key].tolist()
    out = []
    for entry in names:
        if isinstance(entry, str):
            out.append(entry)
            continue
        if isinstance(entry, Mapping):
            key = next((k for k in _NAME_KEYS if k in entry), None)
            value = entry[key] if key is not None else None
        else:
            value = next((getattr(entry, k) for k in _NAME_KEYS if hasattr(entry, k)), None)
        if not isinstance(value, str):
            raise ValueError(f"cannot take a column name from {entry!r}")
        out.append(value)
    return out


def line_of(data: bytes | memoryview, offset: int) -> int:
    """The 1-based line number of a byte offset."""
    return bytes(data[:offset]).count(b"\n") + 1
