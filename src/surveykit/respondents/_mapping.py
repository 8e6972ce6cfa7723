"""Which DataFrame column feeds which import property."""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Final

from surveykit.errors import ColumnMappingError
from surveykit.models.imports import RESPONDENT_FIELDS

__all__ = ["RESPONDENT_FIELDS", "ColumnMappingError", "infer_mapping", "resolve_mapping"]


# Keys are column names lower-cased with everything but letters and digits removed,
# so "First Name", "first_name", "first-name" and "FirstName" all read "firstname".
_ALIASES: Final[dict[str, str]] = {
    **dict.fromkeys(["title", "salutation", "honorific", "nametitle"], "title"),
    **dict.fromkeys(
        ["firstname", "givenname", "forename", "fname", "first", "givennames", "forenames"],
        "firstName",
    ),
    **dict.fromkeys(["lastname", "surname", "familyname", "lname", "last"], "lastName"),
    **dict.fromkeys(
        [
            "mobilenumber",
            "mobile",
            "mobileno",
            "mobilephone",
            "mobilephonenumber",
            "phone",
            "phonenumber",
            "phoneno",
            "msisdn",
            "cell",
            "cellphone",
            "cellnumber",
            "cellphonenumber",
            "tel",
            "telephone",
            "telephonenumber",
            "contactnumber",
        ],
        "mobileNumber",
    ),
    **dict.fromkeys(["emailaddress", "email", "mail", "emailaddr"], "emailAddress"),
    **dict.fromkeys(["website", "web", "url", "homepage", "websiteurl"], "website"),
    **dict.fromkeys(["dateofbirth", "dob", "birthdate", "birthday", "dateborn"], "dateOfBirth"),
}


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


def infer_field(column: Hashable) -> str | None:
    """The respondent property a column name commonly spells, or None.

    >>> infer_field("Given name"), infer_field("MSISDN"), infer_field("Store")
    ('firstName', 'mobileNumber', None)
    """
    return _ALIASES.get(_key(str(column)))


def infer_mapping(columns: list[Hashable]) -> dict[Hashable, str]:
    """Map the columns whose names spell a respondent property (only those)."""
    return {c: f for c in columns if (f := infer_field(c)) is not None}


def resolve_mapping(
    columns: list[Hashable],
    mapping: Mapping[Hashable, str | None] | None,
    *,
    infer: bool,
) -> tuple[dict[Hashable, str | None], tuple[Hashable, ...]]:
    """The full mapping (every column -> property name, or None to leave it out).

    Explicit entries win; inference only fills properties no explicit entry claims; every
    other column passes through under its own name. Returns the mapping and the columns
    whose property was inferred.
    """
    if len(set(columns)) != len(columns):
        dup = sorted({str(c) for c in columns if columns.count(c) > 1})
        raise ColumnMappingError(f"the DataFrame has duplicate column names: {dup}")
    explicit = dict(mapping or {})
    unknown = [c for c in explicit if c not in columns]
    if unknown:
        raise ColumnMappingError(
            f"mapping names columns the DataFrame does not have: {unknown!r}; "
            f"columns are {list(columns)!r}"
        )
    claimed = {v for v in explicit.values() if v is not None}
    out: dict[Hashable, str | None] = {}
    inferred: list[Hashable] = []
    for col in columns:
        if col in explicit:
            out[col] = explicit[col]
            continue
        field = infer_field(col) if infer else None
        if field is not None and field not in claimed:
            out[col] = field
            inferred.append(col)
        else:
            out[col] = str(col)
    seen: dict[str, Hashable] = {}
    for col, target in out.items():
        if target is None:
            continue
        if not isinstance(target, str) or not target:
            raise ColumnMappingError(f"column {col!r} maps to {target!r}: use a non-empty name")
        if target in seen:
            raise ColumnMappingError(
                f"columns {seen[target]!r} and {col!r} both map to {target!r}; "
                f"pass mapping={{{col!r}: None}} to leave one out, or map it elsewhere"
            )
        seen[target] = col
    return out, tuple(inferred)
