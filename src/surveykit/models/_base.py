"""Shared building blocks of the wire models.

Two kinds of model:

* :class:`RequestModel` (what we send): strict, unknown fields refused with their name,
  serialised with the reference's wire names and without the fields left as ``None``.
* :class:`ResponseModel` (what the platform sends): tolerant, whichever letter case the server
  uses for a field name (``MessageID`` or ``messageID``), unknown fields kept, unknown enum
  values kept as plain strings.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

# ``[0-9]``, not ``\d``: ``\d`` matches any Unicode digit, and int("１２") is 12.
INT_STRING = re.compile(r"^-?(?:0|[1-9][0-9]*)$")
"""The reference's integer-as-string rule; match with ``fullmatch``, never after stripping."""


def _wire_int(value: Any) -> Any:
    # The reference: integers may also be written as strings matching this pattern, and
    # nothing looser (no "1.0", " 1", "+1", "01", and no booleans).
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if INT_STRING.fullmatch(value):
            return int(value)
        raise ValueError(
            f"expected an integer or a string matching -?(0|[1-9][0-9]*), got {value!r}"
        )
    raise ValueError(f"expected an integer, got {type(value).__name__}")


WireInt = Annotated[int, BeforeValidator(_wire_int)]
"""An integer that also accepts its decimal string form, strictly."""


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            "a timezone-aware datetime is required (for example datetime(..., tzinfo=UTC))"
        )
    return value


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]
"""A datetime that must carry a UTC offset: a naive time would be ambiguous on the wire."""


def _to_utc(value: datetime) -> datetime:
    return _aware(value).astimezone(UTC)


UTCDatetime = Annotated[datetime, AfterValidator(_to_utc)]
"""An aware datetime, normalised to UTC."""

E = TypeVar("E", bound=Enum)


def tolerant(enum: type[E]) -> BeforeValidator:
    """Build the validator of a tolerant enum field, used as ``Annotated[E | str, ...]``.

    Known values (in any letter case) become members of ``enum``; unknown values stay the
    string the server sent, so a new status never breaks reading a response.
    """
    lookup = {str(member.value).lower(): member for member in enum}

    def convert(value: Any) -> Any:
        if isinstance(value, str):
            return lookup.get(value.lower(), value)
        return value

    return BeforeValidator(convert)


class RequestModel(BaseModel):
    """Base of request bodies: camelCase wire names, strict about unknown fields."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=False,
        validate_assignment=True,
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON body as the platform expects it: wire names, ``None`` fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ResponseModel(BaseModel):
    """Base of response bodies: any letter case, unknown fields kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        defer_build=True,
    )

    _folded: ClassVar[dict[str, str]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._folded = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        folded: dict[str, str] = {}
        for name, field in cls.model_fields.items():
            folded[name.lower()] = name
            folded[name.replace("_", "").lower()] = name
            if field.alias:
                folded[field.alias.lower()] = name
        cls._folded = folded

    @model_validator(mode="before")
    @classmethod
    def _fold_case(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out: dict[str, Any] = {}
        for key, value in data.items():
            name = cls._folded.get(key.lower()) if isinstance(key, str) else None
            # First spelling wins if a server sends both MessageID and messageID.
            if name is not None:
                out.setdefault(name, value)
            else:
                out[key] = value
        return out

    @property
    def extra_fields(self) -> dict[str, Any]:
        """Fields the server sent that this model does not know, as sent."""
        return dict(self.__pydantic_extra__ or {})

    def _repr_html_(self) -> str:
        """A two-column table for notebooks (fields marked ``repr=False`` stay hidden)."""
        rows = [
            (name, getattr(self, name))
            for name, field in type(self).model_fields.items()
            if field.repr
        ] + sorted(self.extra_fields.items())
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(name))}</th>"
            f"<td style='text-align:left'>{html.escape(_shown(value))}</td></tr>"
            for name, value in rows
        )
        return f"<table><caption>{type(self).__name__}</caption>{cells}</table>"


def _shown(value: Any) -> str:
    if isinstance(value, Enum):
        return str(value.value)
    return "" if value is None else str(value)
