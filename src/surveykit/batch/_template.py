"""Message templates: ``"Hi {firstName}, your survey: {link}"`` filled from DataFrame columns."""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from surveykit.errors import TemplateError


@dataclass(frozen=True)
class Template:
    """A ``str.format``-style template whose fields are column names.

    Only plain field names are allowed (no indexing, attributes or conversions), so a
    template can never reach into objects. ``{{`` and ``}}`` stand for literal braces.
    """

    text: str
    fields: tuple[str, ...]

    @classmethod
    def parse(cls, text: str, *, name: str = "message") -> Template:
        """Parse ``text``, raising :class:`TemplateError` naming the template on bad syntax."""
        if not isinstance(text, str):
            raise TemplateError(f"{name}: expected a template string, got {type(text).__name__}")
        fields: list[str] = []
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise TemplateError(f"{name}: {exc} in template {text!r}") from None
        for _, field, spec, conversion in parsed:
            if field is None:
                continue
            if not field or any(ch in field for ch in ".[]") or conversion or spec:
                raise TemplateError(
                    f"{name}: {{{field}{'!' + conversion if conversion else ''}"
                    f"{':' + spec if spec else ''}}} is not a plain column name; "
                    "use {column} (and {{ }} for literal braces)"
                )
            if field not in fields:
                fields.append(field)
        return cls(text, tuple(fields))

    def check_columns(
        self, columns: Any, *, name: str = "message", extra: tuple[str, ...] = ()
    ) -> None:
        """Raise :class:`TemplateError` if a field is neither a column nor provided."""
        available = {str(column) for column in columns} | set(extra)
        missing = [field for field in self.fields if field not in available]
        if missing:
            raise TemplateError(
                f"{name}: no column for {', '.join('{' + m + '}' for m in missing)}; "
                f"columns are {sorted(available)}"
            )

    def render(self, values: Mapping[str, Any]) -> str:
        """Fill the template; a missing or blank value raises KeyError naming the field."""
        filled: dict[str, str] = {}
        for field in self.fields:
            value = values.get(field)
            if value is None or (not isinstance(value, str) and pd.isna(value)):
                raise KeyError(field)
            filled[field] = _text(value)
        return self.text.format_map(filled)


def _text(value: Any) -> str:
    # Integers stored as floats by pandas (NaN in the column) should read as integers.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return str(value)
