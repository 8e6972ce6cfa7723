"""SMS segments: the GSM-7 tables, and how many parts a text goes out as.

A text in the GSM 03.38 alphabet is sent in septets: 160 in one part, 153 per part when
split (the extension table's characters take two). Any other character makes the whole
text UCS-2: 70 UTF-16 units in one part, 67 per part. The batch preview, the batch plan and
the sandbox (which bills and refuses by it) all count with :func:`count_segments`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

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


__all__ = ["GSM7", "GSM7_EXTENDED", "Segments", "count_segments", "segments"]
