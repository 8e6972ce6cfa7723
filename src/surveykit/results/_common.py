"""What every format's parser hands to the typing step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

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


def generated_names(count: int) -> list[str]:
    """The names of columns read with ``header=False`` and no ``names``: col1, col2, ..."""
    return [f"col{i}" for i in range(1, count + 1)]


def line_of(data: bytes | memoryview, offset: int) -> int:
    """The 1-based line number of a byte offset."""
    return bytes(data[:offset]).count(b"\n") + 1
