"""Checks of the control API's JSON fields: each refusal is a ``ValueError`` naming the field.

The control routes turn a ``ValueError`` into a 400 ProblemDetails whose ``detail`` is its
message (``latency: expected a number from 0 to 600, got 'abc'``), so a bad setting is
refused when it is given, not when a later request trips over it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any


def known(body: Mapping[str, Any], names: Iterable[str]) -> None:
    """Refuse fields the route does not take, naming them and the ones it takes."""
    allowed = list(names)
    unknown = sorted(str(key) for key in body if key not in allowed)
    if unknown:
        raise ValueError(f"unknown fields: {unknown} (known: {', '.join(allowed)})")


def number(
    name: str, value: Any, *, low: float, high: float, optional: bool = False
) -> float | None:
    """A JSON number from ``low`` to ``high`` (finite; not a string or a boolean)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name}: expected a number from {low:g} to {high:g}, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name}: expected a number from {low:g} to {high:g}, got {value!r}")
    return float(value)


def whole(name: str, value: Any, *, low: int, high: int, optional: bool = False) -> int | None:
    """A JSON integer from ``low`` to ``high`` (``2.0`` counts; ``2.5``, ``"2"`` do not)."""
    if value is None and optional:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: expected a whole number from {low} to {high}, got {value!r}")
    return value


def text(name: str, value: Any, *, optional: bool = False, max_length: int = 2048) -> str | None:
    """A non-empty JSON string (None allowed when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        shown = repr(value) if not isinstance(value, str) else f"{value[:40]!r}"
        raise ValueError(
            f"{name}: expected a non-empty string of at most {max_length} characters, got {shown}"
        )
    return value


def required(body: Mapping[str, Any], name: str) -> Any:
    """The field's value; ``ValueError`` when it is missing."""
    if name not in body:
        raise ValueError(f"{name}: required")
    return body[name]


__all__ = ["known", "number", "required", "text", "whole"]
