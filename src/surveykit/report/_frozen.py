"""Read-only per-row records for ``attrs`` that pandas can copy for free.

pandas deep-copies ``attrs`` on nearly every operation (``df["Q1"]``, a filter, a
groupby). A plain dict of 500,000 row -> reason made each of those take over a second on a
1,000,000-row frame; these immutable views copy as themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Self, overload

import numpy as np
import pandas as pd


class RowReasons(Mapping[Any, str]):
    """Row label -> missing reason, for the rows whose answer was a missing code.

    Behaves as a read-only dict (``reasons[row]``, ``.items()``, ``== {...}``);
    :meth:`to_dict` gives a plain one.
    """

    def __init__(self, rows: pd.Index, reasons: np.ndarray[Any, Any]) -> None:
        self._rows = rows
        self._reasons = reasons
        self._lookup: dict[Any, str] | None = None

    def _dict(self) -> dict[Any, str]:
        if self._lookup is None:
            self._lookup = dict(zip(self._rows.tolist(), self._reasons.tolist(), strict=True))
        return self._lookup

    def __getitem__(self, row: Any) -> str:
        return self._dict()[row]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __repr__(self) -> str:
        return f"RowReasons({len(self)} rows)"

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

    def to_dict(self) -> dict[Any, str]:
        """A plain ``{row: reason}`` dict."""
        return dict(self._dict())


class CoercedAnswers(Sequence[dict[str, Any]]):
    """``[{"column", "row", "value"}, ...]``: the answers ``errors="coerce"`` made missing."""

    def __init__(self, items: list[tuple[str, Any, Any]]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._record(item) for item in self._items[index]]
        return self._record(self._items[index])

    @staticmethod
    def _record(item: tuple[str, Any, Any]) -> dict[str, Any]:
        return {"column": item[0], "row": item[1], "value": item[2]}

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CoercedAnswers({len(self)} answers)"

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self
