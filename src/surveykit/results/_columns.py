"""The rules both typing paths share: names, spellings and types of a results column.

:mod:`~surveykit.results._types` types a column at a time (and builds the frame) and
:mod:`~surveykit.results._bulk` types very many short columns at once; both decide by
these: the type names and their pandas and arrow types, the respondent and design fields
(never questions), the fields that stay text or are a category whatever they hold, the
float spelling, a column's plan, and blanks as missing. ``_bulk`` takes them from here,
never from ``_types``, so ``_types`` imports ``_bulk`` at its top without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

TypeName = Literal["string", "Int64", "float64", "boolean", "datetime", "category"]

TYPE_NAMES: Final[tuple[TypeName, ...]] = (
    "string",
    "Int64",
    "float64",
    "boolean",
    "datetime",
    "category",
)

#: The pandas dtype of text: pyarrow-backed, with ``pd.NA`` for missing.
STRING_DTYPE: Final = pd.StringDtype("pyarrow")
#: The pandas dtype of timestamps: UTC, microseconds.
DATETIME_DTYPE: Final = pd.DatetimeTZDtype("us", "UTC")

#: Respondent fields of the results layout, in their documented order.
RESPONDENT_COLUMNS: Final[tuple[str, ...]] = (
    "respondentId",
    "surveyReference",
    "title",
    "firstName",
    "lastName",
    "mobileNumber",
    "emailAddress",
    "channel",
    "invited",
    "started",
    "completed",
    "sortOrder",
)
#: Sample design fields a panel's results carry after the respondent fields: the stratum,
#: the primary sampling unit (a household) and the base weight (the inverse of the
#: selection probability), as the sandbox's generated ``design=True`` surveys give them
#: (``sk.Design(df, weights="baseWeight", strata="region", psu="household")``). They are
#: respondent fields, never questions.
DESIGN_COLUMNS: Final[tuple[str, ...]] = ("region", "household", "baseWeight")
_RESPONDENT_LOWER: Final = frozenset(c.lower() for c in (*RESPONDENT_COLUMNS, *DESIGN_COLUMNS))
#: Fields that are text whatever they look like (ids, numbers with meaning, names).
ALWAYS_TEXT: Final = frozenset(
    c.lower()
    for c in (
        "respondentId",
        "surveyReference",
        "title",
        "firstName",
        "lastName",
        "mobileNumber",
        "emailAddress",
        "household",  # the design's PSU: an id, never a number that could round
    )
)
#: Fields that are a category whatever they hold.
ALWAYS_CATEGORY: Final = frozenset({"channel"})
#: A column whose name ends with one of these stays text.
TEXT_SUFFIXES: Final = ("id", "number", "reference", "phone", "code")

#: Largest number of distinct values for a question column to become a category.
CATEGORY_MAX_DISTINCT: Final = 64

#: The writer's text of a float (Python's ``repr``), as a regular expression.
FLOAT_RE: Final = r"^-?(([0-9]+\.[0-9]+)|([0-9](\.[0-9]+)?e[+-][0-9]{2,3})|inf)$"

#: The arrow type of timestamps: UTC, microseconds.
UTC: Final = pa.timestamp("us", tz="UTC")


def is_respondent_column(name: str) -> bool:
    """Tell a respondent column from a question column.

    The rule: a column is a respondent column when its name is one of
    :data:`RESPONDENT_COLUMNS` or :data:`DESIGN_COLUMNS`, compared without regard to
    letter case. Every other column is a question (keyed by the question key, e.g. ``Q1``).
    """
    return name.lower() in _RESPONDENT_LOWER


Column: TypeAlias = "pa.Array | pa.ChunkedArray"


@dataclass(frozen=True)
class ColumnPlan:
    """The decided type of one column (kept across chunks)."""

    name: str
    type: TypeName
    forced: bool  # given by the caller: a value that does not fit is an error


def blank_to_null(arr: Column) -> Any:
    """The column with its empty strings missing.

    In a typed column an empty value is missing, whatever the format (an XML service
    may write ``<Q1/>`` for no answer).
    """
    empty = pc.equal(arr, "")
    if not pc.any(empty).as_py():
        return arr
    return pc.if_else(empty, pa.scalar(None, arr.type), arr)
