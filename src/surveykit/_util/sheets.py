"""Workbooks surveykit writes: every string is a text cell, never a formula.

openpyxl stores a string that starts with ``=`` as a formula (Excel and LibreOffice then
compute it: ``=HYPERLINK(...)`` becomes a link) and one that is an error code (``#N/A``)
as an error. Respondent answers, names and message texts are data, so every workbook
surveykit writes is made here (:func:`new_workbook`, :func:`write_frame`) and saved
through :func:`save_workbook`, which stores every string cell as text, exactly as it is
(no quote added). Numbers, dates and booleans stay what they are. A test keeps every
other module from making or saving a workbook itself.
"""

from __future__ import annotations

import os
import re
from typing import IO, TYPE_CHECKING, Any, Final, cast

from surveykit.errors import ExportError

if TYPE_CHECKING:
    import pandas as pd

CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""The characters an .xlsx file cannot store (XML 1.0): control characters but tab, LF, CR."""

CANNOT_STORE: Final = "a control character ({}) that an .xlsx file cannot store"

CELL_CHARACTERS: Final = 32_767
"""The most characters an .xlsx cell holds (openpyxl cuts a longer text without a word)."""


def new_workbook() -> Any:
    """An empty openpyxl workbook (no sheet): add sheets, then :func:`save_workbook` it."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    return book


def as_text(book: Any) -> None:
    """Store every string cell of every sheet of ``book`` as text (data type ``"s"``)."""
    for sheet in book.worksheets:
        for cell in sheet._cells.values():  # the cells that exist: none made for the gaps
            if isinstance(cell.value, str):
                cell.data_type = "s"


def save_workbook(book: Any, target: str | os.PathLike[str] | IO[bytes]) -> None:
    """Save ``book`` with every string cell as text (:func:`as_text`)."""
    as_text(book)
    book.save(target)


def control_character(text: str) -> str | None:
    """The first character of ``text`` an .xlsx file cannot store, as ``U+000B``; else None."""
    found = CONTROL.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


def check_frame(frame: pd.DataFrame) -> None:
    """Refuse a frame with text an .xlsx file cannot store, naming its column and row.

    A text cannot hold a control character other than tab, LF and CR, nor be longer than
    :data:`CELL_CHARACTERS`: it would be refused, or cut, by openpyxl.

    Raises:
        ExportError: ``'text', row 2 (1 = the first row under the header): ...``.
    """
    for label in frame.columns:
        if isinstance(label, str) and (character := control_character(label)):
            raise ExportError(f"column {label!r}: its name holds {CANNOT_STORE.format(character)}")
    for name, column in frame.items():
        if column.dtype.kind in "biufcmM":  # numbers, booleans, datetimes: no text
            continue
        for row, value in enumerate(column.tolist(), start=1):
            if not isinstance(value, str):
                continue
            where = f"{name!r}, row {row} (1 = the first row under the header)"
            if character := control_character(value):
                raise ExportError(f"{where}: {value!r} holds {CANNOT_STORE.format(character)}")
            if len(value) > CELL_CHARACTERS:
                raise ExportError(
                    f"{where}: a text of {len(value):,} characters; an .xlsx cell holds at "
                    f"most {CELL_CHARACTERS:,}"
                )


def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes]) -> None:
    """Write ``frame`` as a one-sheet workbook (pandas' layout), its strings as text.

    The index is not written; the header is the column names.

    Raises:
        ExportError: a text an .xlsx file cannot store (:func:`check_frame`); nothing
            is written.
    """
    import pandas as pd

    check_frame(frame)

    with pd.ExcelWriter(cast(Any, target), engine="openpyxl") as writer:
        frame.to_excel(writer, index=False)
        as_text(writer.book)  # before the writer saves the book, as it closes
