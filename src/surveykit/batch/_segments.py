"""SMS segment counting: GSM-7 (160 / 153 per part) or UCS-2 (70 / 67 per part)."""

from __future__ import annotations

from dataclasses import dataclass

# GSM 03.38 basic character set, and the extension table (each costs two septets).
_GSM_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
_GSM_EXTENDED = frozenset("^{}\\[~]|€\f")


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
        if char in _GSM_BASIC:
            septets += 1
        elif char in _GSM_EXTENDED:
            septets += 2
        else:
            units = len(text.encode("utf-16-le")) // 2
            return Segments("UCS-2", units, 1 if units <= 70 else -(-units // 67))
    return Segments("GSM-7", septets, 1 if septets <= 160 else -(-septets // 153))
