"""The report layer's exceptions (all :class:`~surveykit.errors.SurveykitError` and ValueError).

::

    SurveykitError, ValueError
    ├── CodebookError   a codebook that cannot be built or read (names the row / field)
    ├── LabelError      an answer the codebook does not know (names column, row, value)
    └── ExportError     a frame that cannot be written as SPSS, Stata or Excel
"""

from __future__ import annotations

from surveykit.errors import SurveykitError


class CodebookError(SurveykitError, ValueError):
    """A codebook, or a codebook file, that is not valid; the message names the row or field."""


class LabelError(SurveykitError, ValueError):
    """An answer the codebook does not know.

    Attributes:
        column: the question (column) holding the answer.
        row: the row label of the first such answer.
        value: the answer.
    """

    def __init__(self, message: str, *, column: str, row: object, value: object) -> None:
        super().__init__(message)
        self.column = column
        self.row = row
        self.value = value


class ExportError(SurveykitError, ValueError):
    """A frame (or its codebook) that cannot be written in the asked format."""
