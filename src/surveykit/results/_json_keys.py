"""Repeated keys in JSON: a cheap count that rules them out, and a parser that sees them.

JSON parsers keep the last value of a repeated key silently; results must not.
"""

from __future__ import annotations

from typing import Any


def key_count(raw: bytes) -> int | None:
    """At least as many as the object keys the text holds, or None when it cannot tell.

    A key is a string followed by ``:``. An unescaped ``"`` followed by ``:`` ends a key,
    or starts a string whose text starts with ``:`` (a ``"`` inside a string is
    escaped): counting ``":`` minus those after an odd number of backslashes counts every
    key, and those strings too (so a count above the parsed keys only means "look
    closer"); likewise with one space before the colon. Space anywhere else before a
    colon (``"a"  :``, or text such as ``"x :"``) gives None.
    """
    total = 0
    for space in (b"", b" ", b"\t", b"\n", b"\r"):
        end = b'"' + space + b":"
        if space and raw.count(space + b":") > raw.count(end):
            return None
        sign, slashes = 1, b""
        while found := raw.count(slashes + end):
            total += sign * found
            sign, slashes = -sign, slashes + b"\\"
    return total


def count_keys(value: Any) -> int:
    """How many keys the objects of a parsed value hold, nested ones included.

    Walked with a stack, not recursion, so a deep document cannot exhaust Python's.
    """
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            total += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


class _Pairs(dict[str, Any]):
    """An object that noted its first repeated key."""

    repeated: str | None = None


def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook`` for :func:`json.loads` that notes a repeated key."""
    out = _Pairs()
    for key, value in items:
        if key in out and out.repeated is None:
            out.repeated = key
        out[key] = value
    return out


def repeated(value: Any, *, deep: bool = True) -> str | None:
    """The first repeated key in a value parsed with :func:`pairs` (``deep``: nested too)."""
    if isinstance(value, dict):
        if isinstance(value, _Pairs) and value.repeated is not None:
            return value.repeated
        if not deep:
            return None
        return next((r for v in value.values() if (r := repeated(v)) is not None), None)
    return None
