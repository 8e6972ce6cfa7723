"""Sending in the respondent's local hours: time zones per row, windows moved to the platform's.

The reference does not say in which zone the platform reads a Window; surveykit assumes
UTC unless ``Client(window_timezone=...)`` names another. Local windows
(``send_batch(..., windows=..., timezone=...)``) are worked out per row in absolute time:

1. every window of the row's zone (or of each of its zones) over the days around the
   send, each day converted with that day's own offset (so a daylight-saving change is
   honoured to the minute);
2. for a number whose country spans several zones, only the times inside the window in
   every one of them;
3. those spans cut at the platform's midnights, giving the row's ``when`` (the first
   moment at or after its submission) and the Windows of the seven platform days from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import lru_cache

from surveykit.models import Window
from surveykit.rules.windows import zone, zone_name

SEVERAL_ZONES = "several time zones: give a timezone column"
"""The reason of a row refused because its zones share no time inside the windows."""
UNKNOWN_ZONE = "no time zone known for the number: give a timezone column"
"""The reason of a row whose number tells no time zone (``timezone="auto"``)."""

_LAST_MINUTE = time(23, 59)  # a Window's `to` is HH:MM, at most 23:59
_HORIZON_BEFORE, _HORIZON_AFTER = 2, 10  # days of spans worked out around a submission

Span = tuple[datetime, datetime]


@lru_cache(maxsize=4096)
def number_zones(digits: str) -> tuple[str, ...]:
    """The time zones of an E.164 number, from phonenumbers' metadata (empty if unknown).

    A number phonenumbers cannot place (a fictional range such as the UK's 07700 900xxx)
    gets its country's zones.
    """
    import phonenumbers
    from phonenumbers import timezone as pn_timezone

    try:
        parsed = phonenumbers.parse("+" + digits)
    except phonenumbers.NumberParseException:
        return ()
    unknown = pn_timezone.UNKNOWN_TIMEZONE
    zones = tuple(pn_timezone.time_zones_for_number(parsed))
    if not zones or zones == (unknown,):
        zones = tuple(pn_timezone.time_zones_for_geographical_number(parsed))
    known = [name for name in zones if name != unknown]
    # phonenumbers lists zones alphabetically; the row's local time is shown in the first, so
    # the number's own country's zones go first (a UK mobile: London before Guernsey).
    home = _country_zones(phonenumbers.region_code_for_number(parsed) or "")
    return tuple(sorted(known, key=lambda name: name not in home))


@lru_cache(maxsize=256)
def _country_zones(region: str) -> frozenset[str]:
    """The zones tzdata's ``zone.tab`` gives a country (ISO 3166 code); empty if none."""
    from importlib import resources

    try:
        table = (resources.files("tzdata") / "zoneinfo" / "zone.tab").read_text("utf-8")
    except (ModuleNotFoundError, OSError):  # no tzdata package: keep phonenumbers' order
        return frozenset()
    return frozenset(
        fields[2]
        for line in table.splitlines()
        if not line.startswith("#") and len(fields := line.split("\t")) >= 3
        if fields[0] == region
    )


def _merge(spans: list[Span]) -> list[Span]:
    spans.sort()
    merged: list[Span] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _intersect(left: list[Span], right: list[Span]) -> list[Span]:
    out: list[Span] = []
    i = j = 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        if start < end:
            out.append((start, end))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def local_spans(windows: Sequence[Window], tz: tzinfo, first: date, last: date) -> list[Span]:
    """The UTC spans inside ``windows`` read in ``tz``, for the local days first..last."""
    spans: list[Span] = []
    day = first
    while day <= last:
        for window in windows:
            if day.isoweekday() in window.days:
                start = datetime.combine(day, window.from_, tzinfo=tz).astimezone(UTC)
                end = datetime.combine(day, window.to, tzinfo=tz).astimezone(UTC)
                if start < end:
                    spans.append((start, end))
        day += timedelta(days=1)
    return _merge(spans)


@dataclass(frozen=True)
class _Piece:
    """A span inside one platform day: absolute bounds and the Window fields it becomes."""

    start: datetime
    end: datetime
    day: date
    from_: time
    to: time


def _pieces(spans: list[Span], platform: tzinfo) -> list[_Piece]:
    """Cut spans at the platform's midnights; a piece ending at midnight ends at 23:59."""
    pieces: list[_Piece] = []
    for start, end in spans:
        cursor = start
        while cursor < end:
            local = cursor.astimezone(platform)
            midnight = datetime.combine(
                local.date() + timedelta(days=1), time(0), tzinfo=platform
            ).astimezone(UTC)
            stop = min(end, midnight)
            from_ = local.time().replace(second=0, microsecond=0, tzinfo=None)
            if stop == midnight:
                to = _LAST_MINUTE
                stop = datetime.combine(local.date(), to, tzinfo=platform).astimezone(UTC)
            else:
                to = stop.astimezone(platform).time().replace(second=0, microsecond=0)
            if from_ < to:
                pieces.append(_Piece(cursor, stop, local.date(), from_, to))
            cursor = midnight
    return pieces


@dataclass(frozen=True)
class LocalSend:
    """One row's send in local hours.

    Attributes:
        when: the first allowed moment (UTC) at or after the row's submission.
        windows: the row's windows in the platform's zone, for the seven days from ``when``.
    """

    when: datetime
    windows: list[Window]


class LocalHours:
    """Works out :class:`LocalSend` for rows, caching per zone set and day."""

    def __init__(self, windows: Sequence[Window], platform: tzinfo) -> None:
        self.windows = list(windows)
        self.platform = platform
        self._pieces: dict[Hashable, list[_Piece]] = {}
        self._windows: dict[Hashable, list[Window]] = {}

    def _allowed(self, zones: tuple[str, ...], around: date) -> list[_Piece]:
        key = (zones, around)
        found = self._pieces.get(key)
        if found is None:
            first = around - timedelta(days=_HORIZON_BEFORE)
            last = around + timedelta(days=_HORIZON_AFTER)
            spans: list[Span] | None = None
            for name in zones:
                mine = local_spans(self.windows, zone(name), first, last)
                spans = mine if spans is None else _intersect(spans, mine)
            found = _pieces(spans or [], self.platform)
            self._pieces[key] = found
        return found

    def plan(self, zones: tuple[str, ...], submit: datetime) -> LocalSend | None:
        """The row's send at or after ``submit``, or None when no time is allowed."""
        submit = submit.astimezone(UTC)
        pieces = self._allowed(zones, submit.date())
        when: datetime | None = None
        for piece in pieces:
            if piece.end > submit:
                when = max(piece.start, submit)
                break
        if when is None:
            return None
        first_day = when.astimezone(self.platform).date()
        windows = self._windows.get((zones, first_day))
        if windows is None:
            windows = self._week(zones, first_day, submit, pieces)
            self._windows[(zones, first_day)] = windows
        return LocalSend(when, windows)

    def _week(
        self, zones: tuple[str, ...], first_day: date, submit: datetime, pieces: list[_Piece]
    ) -> list[Window]:
        """The Windows of the seven platform days from ``first_day``."""
        last_day = first_day + timedelta(days=6)
        if last_day > submit.date() + timedelta(days=_HORIZON_AFTER - 1):
            pieces = self._allowed(zones, first_day)
        days: dict[tuple[time, time], list[int]] = {}
        for piece in pieces:
            if first_day <= piece.day <= last_day:
                days.setdefault((piece.from_, piece.to), []).append(piece.day.isoweekday())
        return [
            Window(from_=from_, to=to, days=sorted(weekdays))
            for (from_, to), weekdays in sorted(days.items())
        ]


__all__ = [
    "SEVERAL_ZONES",
    "UNKNOWN_ZONE",
    "LocalHours",
    "LocalSend",
    "local_spans",
    "number_zones",
    "zone",
    "zone_name",
]
