"""What every format's parser hands to the typing step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa


@dataclass
class RawChunk:
    """Rows of text columns: ``null`` = missing, ``""`` = empty string."""

    names: list[str]
    columns: Sequence[pa.Array | pa.ChunkedArray]
    nrows: int


def generated_names(count: int) -> list[str]:
    """The names of columns read with ``header=False`` and no ``names``: col1, col2, ..."""
    return [f"col{i}" for i in range(1, count + 1)]


def line_of(data: bytes | memoryview, offset: int) -> int:
    """The 1-based line number of a byte offset."""
    return bytes(data[:offset]).count(b"\n") + 1
