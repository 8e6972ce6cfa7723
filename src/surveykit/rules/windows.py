"""Send windows: when a window next opens, time zones, and a readable shorthand.

When a window next opens (:func:`next_allowed`) is the platform's rule: the batch preview
and plan, and the sandbox (which holds a message until its window opens), all ask it here.
``surveykit.batch.next_allowed`` is the same function. The shorthand (``"mon-fri
09:00-17:00"``) is :func:`parse_window`; named presets (``"us-tcpa"``, ``"legal"``) are
:data:`PRESETS`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from surveykit.errors import ValidationError
from surveykit.models.messages import Window


def next_allowed(windows: Sequence[Window] | None, moment: datetime) -> datetime | None:
    """The first moment at or after ``moment`` inside one of ``windows``.

    Days are ISO numbers (1 is Monday); ``from`` is inclusive, ``to`` exclusive.
    ``moment``'s own clock is the windows' clock (the reference does not say whether the
    platform uses the account's or the recipient's zone; the sandbox's clock is UTC).

    ``None`` means **no windows**: any moment is allowed, and ``moment`` itself is
    returned. An **empty list** means no window at all, so none ever opens: the answer is
    ``None``. A request whose ``Window`` property is present but empty is a different,
    wire-level question: the sandbox reads it as absent and passes ``None``.

    Example:
        >>> from datetime import UTC
        >>> monday_8 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
        >>> next_allowed([Window(from_="09:00", to="17:00")], monday_8).hour
        9
        >>> next_allowed(None, monday_8) == monday_8, next_allowed([], monday_8)
        (True, None)
    """
    if windows is None:
        return moment
    # Candidates on an earlier day always come before any on a later day, so the first day
    # with one holds the answer; a window on that weekday opens again within 7 days.
    best: datetime | None = None
    for offset in range(8):
        day = (moment + timedelta(days=offset)).date()
        for window in windows:
            if day.isoweekday() not in window.days:
                continue
            start = datetime.combine(day, window.from_, tzinfo=moment.tzinfo)
            end = datetime.combine(day, window.to, tzinfo=moment.tzinfo)
            if end <= moment:
                continue
            candidate = max(start, moment)
            if best is None or candidate < best:
                best = candidate
        if best is not None:
            return best
    return best


def zone(name: str, *, field: str = "timezone") -> tzinfo:
    """The zone called ``name`` (an IANA name such as ``Europe/London``, or ``UTC``).

    Raises:
        ValidationError: naming ``field`` and the value when no such zone exists.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValidationError(f"{field}: {name!r} is not a time zone name (like 'Europe/London')")
    if name.strip().upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            f"{field}: {name!r} is not a known time zone; expected an IANA name such as "
            "'Europe/London' or 'America/New_York'"
        ) from None


def zone_name(tz: tzinfo) -> str:
    """The IANA name of a zone (``UTC`` for :data:`datetime.UTC`)."""
    return str(getattr(tz, "key", None) or tz.tzname(None) or "UTC")


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


PRESETS: Final = {
    "us-tcpa": ("daily 08:00-21:00",),
    "legal": ("daily 08:00-21:00",),
}
"""Named windows, read in each respondent's local time (``send_batch`` sets ``timezone="auto"``
unless told otherwise).

* ``us-tcpa``: 8:00 to 21:00 every day, the calling hours of the US TCPA rules
  (47 CFR 64.1200(c)(1): no solicitation before 8 a.m. or after 9 p.m. at the called
  party's location);
* ``legal``: the same hours, under a name that says what it is for.

A convenience, not legal advice: some US states allow less (Florida, Oklahoma, Maryland
and Washington, for example, end at 20:00 and some restrict weekends or holidays), other
countries have their own rules, and whether a survey message counts as a solicitation is
a question for counsel. Narrower hours are a shorthand away (``"Mon-Sat 09:00-20:00"``).
"""


def preset(value: Any) -> str | None:
    """The name of the preset ``value`` names (any letter case, or alone in a list), or None."""
    if isinstance(value, list | tuple) and len(value) == 1:
        value = value[0]
    if isinstance(value, str) and value.strip().lower() in PRESETS:
        return value.strip().lower()
    return None


def windows_from(value: Any) -> list[Window] | None:
    """Normalise ``windows=``: None, a preset name, a shorthand, a Window, a dict, or a list.

    Example:
        >>> [w.to_wire() for w in windows_from("us-tcpa")]
        [{'from': '08:00', 'to': '21:00', 'days': '1,2,3,4,5,6,7'}]
    """
    if value is None:
        return None
    if (name := preset(value)) is not None:
        return [parse_window(text) for text in PRESETS[name]]
    items: Iterable[Any] = [value] if isinstance(value, str | Window | Mapping) else value
    result: list[Window] = []
    for item in items:
        if isinstance(item, Window):
            result.append(item)
        elif isinstance(item, str):
            name = preset(item)
            texts = PRESETS[name] if name is not None else (item,)
            result.extend(parse_window(text) for text in texts)
        elif isinstance(item, Mapping):
            result.append(Window.model_validate(dict(item)))
        else:
            raise ValueError(f"windows: cannot read {item!r} as a window")
    return result


__all__ = [
    "PRESETS",
    "next_allowed",
    "parse_window",
    "preset",
    "windows_from",
    "zone",
    "zone_name",
]
