"""What every format's parser hands to the typing step."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pyarrow as pa

from surveykit.errors import ResultsParseError
from surveykit.results._columns import TypeName


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


#: The shape budget (``docs/reliability.md``): at most this many columns,
MAX_COLUMNS: Final = 100_000
#: and at most this many cells (rows x columns) for every byte of the payload,
CELLS_PER_BYTE: Final = 8
#: or this many cells, whichever is more (a small payload may be sparse).
MIN_CELLS: Final = 4_000_000


def cell_budget(payload_bytes: int) -> int:
    """The most cells (rows x columns) a payload of this many bytes may be read into."""
    return max(MIN_CELLS, CELLS_PER_BYTE * payload_bytes)


def check_shape(
    rows: int, columns: int, payload_bytes: int, *, format: str, record: int | None = None
) -> None:
    """Refuse a table shape beyond the budget, before building it.

    A delimited payload holds at least one byte per cell, and JSON and XML about five,
    so the budget only refuses payloads whose records name many fields each other
    record lacks: a small document can name a table of billions of missing cells
    (25,000 records with one new field each are 25,000 x 25,000). ``rows`` and
    ``columns`` may be what was seen so far; the check is repeated as they grow.
    """
    if columns > MAX_COLUMNS:
        raise ResultsParseError(
            f"the results have more than {MAX_COLUMNS:,} columns ({columns:,} found): "
            "beyond the shape budget, so not read. Results this wide are "
            "not a survey's; ask the platform for the questions you need, or split the "
            "payload",
            format=format,
            record=record,
        )
    budget = cell_budget(payload_bytes)
    if rows * columns > budget:
        raise ResultsParseError(
            f"the results have at least {rows:,} rows x {columns:,} columns "
            f"({rows * columns:,} cells, nearly all missing) from {payload_bytes:,} "
            "bytes: beyond the shape "
            f"budget of {budget:,} cells ({CELLS_PER_BYTE} per payload byte, at least "
            f"{MIN_CELLS:,}), so not read. Records that each name fields the others lack "
            "are not a results table; ask the platform for the questions you need, or "
            "read the records yourself (for example into a long table of respondent, "
            "field, value)",
            format=format,
            record=record,
        )


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
