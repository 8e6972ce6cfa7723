"""Send windows: the reference's Window objects and a readable shorthand.

When a window next opens is the platform's rule, :func:`surveykit.rules.delivery.next_allowed`
(re-exported here and as ``surveykit.batch.next_allowed``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from surveykit.models import Window
from surveykit.rules.delivery import next_allowed

_DAYS = {"mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 7}
_GROUPS = {
    "daily": [1, 2, 3, 4, 5, 6, 7],
    "everyday": [1, 2, 3, 4, 5, 6, 7],
    "weekdays": [1, 2, 3, 4, 5],
    "weekends": [6, 7],
    "weekend": [6, 7],
}
_SHORTHAND = re.compile(
    r"^\s*(?P<days>[A-Za-z][A-Za-z ,\-]*?)?\s*"
    r"(?P<from>\d{1,2}:\d{2})\s*-\s*(?P<to>\d{1,2}:\d{2})\s*$"
)


def _day(token: str, text: str) -> int:
    key = token.strip().lower()[:3]
    if key not in _DAYS or not token.strip().isalpha():
        raise ValueError(f"window {text!r}: {token.strip()!r} is not a day (Mon..Sun)")
    return _DAYS[key]


def _days(spec: str, text: str) -> list[int]:
    spec = spec.strip().lower()
    if spec in _GROUPS:
        return list(_GROUPS[spec])
    days: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            first, last = (_day(token, text) for token in part.split("-", 1))
            span = (
                range(first, last + 1) if first <= last else [*range(first, 8), *range(1, last + 1)]
            )
            days.extend(span)
        else:
            days.append(_day(part, text))
    return sorted(set(days))


def parse_window(text: str) -> Window:
    """Read ``"Mon-Fri 09:00-18:00"``, ``"Sat,Sun 10:00-14:00"``, ``"daily 8:00-20:00"``.

    Days are English day names or their first three letters, ranges (``Fri-Mon`` wraps
    around the week) and lists; ``daily``, ``weekdays`` and ``weekends`` are accepted; with
    no days the window holds every day. Times are 24-hour ``H:MM`` or ``HH:MM``.
    """
    match = _SHORTHAND.fullmatch(text)
    if not match:
        raise ValueError(
            f"window {text!r}: expected something like 'Mon-Fri 09:00-18:00' or '09:00-18:00'"
        )
    days = _days(match["days"], text) if match["days"] else [1, 2, 3, 4, 5, 6, 7]
    start, end = (
        f"{int(t.split(':')[0]):02d}:{t.split(':')[1]}" for t in (match["from"], match["to"])
    )
    try:
        return Window(from_=start, to=end, days=days)
    except ValueError as exc:
        raise ValueError(f"window {text!r}: {exc}") from None


def windows_from(value: Any) -> list[Window] | None:
    """Normalise ``windows=``: None, a shorthand string, a Window, a dict, or a list of them."""
    if value is None:
        return None
    items: Iterable[Any] = [value] if isinstance(value, str | Window | Mapping) else value
    result: list[Window] = []
    for item in items:
        if isinstance(item, Window):
            result.append(item)
        elif isinstance(item, str):
            result.append(parse_window(item))
        elif isinstance(item, Mapping):
            result.append(Window.model_validate(dict(item)))
        else:
            raise ValueError(f"windows: cannot read {item!r} as a window")
    return result


__all__ = ["next_allowed", "parse_window", "windows_from"]
