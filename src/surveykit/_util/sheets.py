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
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import pandas as pd


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


def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes]) -> None:
    """Write ``frame`` as a one-sheet workbook (pandas' layout), its strings as text.

    The index is not written; the header is the column names.
    """
    import pandas as pd

    with pd.ExcelWriter(cast(Any, target), engine="openpyxl") as writer:
        frame.to_excel(writer, index=False)
        as_text(writer.book)  # before the writer saves the book, as it closes
