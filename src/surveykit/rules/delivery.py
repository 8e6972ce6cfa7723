"""The platform's rules, written once for both sides: the client (batch, import) and the sandbox.

What the v3.2 platform decides, as pure functions with no I/O and no server library:

* **segments and encodings**: the GSM-7 tables and how many SMS parts a text takes;
* **send windows**: :func:`next_allowed`, the first moment a message may go out;
* **numbers and sources**: E.164 digits (:data:`E164_DIGITS`, the models' rule) and
  branded (alphanumeric) sources;
* **destination checks**: which Status a send is refused with, and whether a sent message
  is delivered;
* **outcomes of failed writes**: whether a send or import that ended in an error may have
  been acted on (``unknown``) or provably was not (``failed``).

The batch planner, the batch runner and ``import_frame`` call these on the client side;
the sandbox's state calls them to decide what the simulated platform does. A rule the
platform does not show and only the sandbox needs (its magic numbers, its size limits)
stays in :mod:`surveykit.sandbox._rules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from surveykit.errors import (
    APIConnectionError,
    APIStatusError,
    OutcomeUnknownError,
    ValidationError,
)
from surveykit.models import Window
from surveykit.models.messages import BRANDED_SOURCE_MAX, E164_DIGITS, is_branded

# --------------------------------------------------------------------------- segments

GSM7: Final = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
"""The GSM 03.38 basic character set: one septet each."""
GSM7_EXTENDED: Final = frozenset("^{}\\[~]|€\f")
"""The GSM 03.38 extension table: two septets each (an escape, then the character)."""


@dataclass(frozen=True)
class Segments:
    """How a text goes out as SMS: its encoding, length in units, and number of parts."""

    encoding: str
    units: int
    count: int


def count_segments(text: str) -> Segments:
    """Count the SMS parts of ``text``.

    GSM-7 texts fit 160 septets in one part, 153 per part when split (extension characters
    such as ``€`` or ``{`` take two). Any other character makes the whole text UCS-2: 70
    UTF-16 units in one part, 67 per part when split (an emoji takes two units).

    Example:
        >>> count_segments("Hi Zoë 👋")
        Segments(encoding='UCS-2', units=10, count=1)
    """
    septets = 0
    for char in text:
        if char in GSM7:
            septets += 1
        elif char in GSM7_EXTENDED:
            septets += 2
        else:
            # UTF-16 units, counted rather than encoded: a lone surrogate (JSON "\ud800")
            # counts one unit instead of failing to encode.
            units = sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)
            return Segments("UCS-2", units, 1 if units <= 70 else -(-units // 67))
    return Segments("GSM-7", septets, 1 if septets <= 160 else -(-septets // 153))


def segments(text: str) -> int:
    """How many SMS parts ``text`` takes (:func:`count_segments`'s ``count``)."""
    return count_segments(text).count


# --------------------------------------------------------------------------- windows


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


# --------------------------------------------------------------------------- destinations

BLOCKED: Final = "Blocked"
"""Send Status: the destination is on the stop list or blocked by the network."""
FAILED: Final = "Failed"
"""Send Status: the lookup the send asked for failed, or the platform could not send."""
REACHABLE: Final = "Reachable"
"""Send Status of a refused send to a landline: reachable, but not by text."""
LANDLINE: Final = "Landline"
"""The NumberType of a fixed line."""


def destination_refusal(
    *, stopped: bool, blocked: bool, lookup: bool, lookup_failed: bool, number_type: str
) -> str | None:
    """The Status a text message is refused with by the destination check, or None.

    In order: a destination on the stop list (``stopped``) or blocked by its network is
    refused ``Blocked``, with or without a lookup. When the send asked for a lookup, a
    failed lookup is refused ``Failed`` and a landline ``Reachable`` (the number is real,
    but a text cannot reach it). Without a lookup, a landline is accepted and its
    delivery fails later (:func:`delivered`).
    """
    if stopped or blocked:
        return BLOCKED
    if lookup and lookup_failed:
        return FAILED
    if lookup and number_type == LANDLINE:
        return REACHABLE
    return None


def delivered(channel: str, *, reachable: bool, number_type: str) -> bool:
    """Whether a message that went out is delivered (its second receipt, else ``Failed``).

    Email is not a mailbox check: it is delivered. A text to an unreachable number or a
    landline fails.
    """
    return channel == "Email" or (reachable and number_type != LANDLINE)


# --------------------------------------------------------------------------- outcomes

NOT_TAKEN_STATUS: Final = 503
"""The one server error status after which a write was provably not taken: "unable to
handle the request" (RFC 9110 section 15.6.4)."""

OUTCOME_UNKNOWN_STATUSES: Final = frozenset({500, 502, 504})
"""Statuses the client itself reports for a write as
:class:`~surveykit.ServerOutcomeUnknownError`: a 500 can come after the platform handed
the message on, a gateway's 502 or 504 after it forwarded the request."""


def outcome_unknown(error: BaseException) -> bool:
    """Whether a write (a send, an import) that ended in ``error`` may have been acted on.

    Not taken (False) only when that is proven: a connection that never reached the
    platform (:class:`~surveykit.APIConnectionError`), a 4xx refusal, a 503. Anything else
    is unknown (True): an :class:`~surveykit.OutcomeUnknownError` (an ambiguous transport
    failure, or a 500, 502 or 504 to a write), any other server error status, and any
    other error. The batch runner reports these as ``unknown`` or ``failed``,
    ``import_frame`` as ``unknown`` or ``failed`` / ``not sent``; neither ever sends an
    ``unknown`` again.
    """
    if isinstance(error, OutcomeUnknownError):
        return True
    if isinstance(error, APIStatusError):
        return error.status_code >= 500 and error.status_code != NOT_TAKEN_STATUS
    return not isinstance(error, APIConnectionError)


__all__ = [
    "BLOCKED",
    "BRANDED_SOURCE_MAX",
    "E164_DIGITS",
    "FAILED",
    "GSM7",
    "GSM7_EXTENDED",
    "LANDLINE",
    "NOT_TAKEN_STATUS",
    "OUTCOME_UNKNOWN_STATUSES",
    "REACHABLE",
    "Segments",
    "count_segments",
    "delivered",
    "destination_refusal",
    "is_branded",
    "next_allowed",
    "outcome_unknown",
    "segments",
    "zone",
    "zone_name",
]
