"""The sandbox's numbers: what a lookup finds for a number, mobile or landline, and why.

:func:`lookup_number` decides, for the sandbox's lookups and sends: first the magic numbers
(documented in ``docs/sandbox.md``: deterministic outcomes, like a payment sandbox's test
card numbers), then the fictional ranges reserved for drama (Ofcom's 07700 900xxx mobiles
and 020 7946 0xxx / 0113 496 0xxx landlines, France's 06 39 98 xx xx, NANP's 555-01xx),
then phonenumbers' number type: a fixed line is a ``Landline`` (reachable, but a text
cannot reach it: :mod:`surveykit.rules.delivery` refuses or fails it), anything else a
``Mobile``. The carrier is drawn from the number, so the same number always gets the same.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import phonenumbers
from phonenumbers import PhoneNumberType, carrier

from surveykit.models.messages import E164_DIGITS


@dataclass(frozen=True)
class NumberInfo:
    """What a lookup finds about a number (and what a send then does with it).

    ``outcome`` is ``ok``, ``lookup-error`` (the lookup itself fails with 400),
    ``blocked`` (a send is refused with Status Blocked) or ``send-error`` (a send is
    refused with Status Failed: "problem sending").
    """

    number_type: str
    carrier: str
    reachable: bool
    outcome: str = "ok"


# UK numbers reserved by Ofcom for drama: 07700 900000-900999 (mobile), 020 7946 0000-0999
# and 0113 496 0000-0999 (landlines). None can belong to a real person.
UK_FICTION_MOBILE: Final = re.compile(r"^447700900\d{3}$")
UK_FICTION_LANDLINE: Final = re.compile(r"^(442079460|441134960)\d{3}$")
# French numbers reserved by ARCEP for fiction: 06 39 98 xx xx (mobile).
FR_FICTION_MOBILE: Final = re.compile(r"^336399\d{5}$")
# North American 555-0100..0199 numbers are reserved for fiction in every area code.
NANP_FICTION: Final = re.compile(r"^1[2-9]\d{2}55501\d{2}$")

MAGIC_NUMBERS: Final[Mapping[str, NumberInfo]] = {
    "447700900900": NumberInfo("Mobile", "EE", reachable=False),
    "447700900901": NumberInfo("VoIP", "Northwind Voice", reachable=True),
    "447700900902": NumberInfo("Unknown", "Unknown", reachable=False, outcome="lookup-error"),
    "447700900903": NumberInfo("Mobile", "Vodafone UK", reachable=False, outcome="blocked"),
    "447700900904": NumberInfo("Mobile", "O2 UK", reachable=True, outcome="send-error"),
    "447700900905": NumberInfo("Unknown", "Unknown", reachable=True),
}
"""Numbers with a fixed outcome: unreachable, VoIP, lookup fails, blocked, problem sending,
unknown type. Every other number follows :func:`lookup_number`'s general rules."""

_CARRIERS: Final[Mapping[str, Sequence[str]]] = {
    "GB": (
        "EE",
        "EE",
        "EE",
        "Vodafone UK",
        "Vodafone UK",
        "O2 UK",
        "O2 UK",
        "Three UK",
        "Three UK",
        "Sky Mobile",
    ),
    "FR": (
        "Orange",
        "Orange",
        "Orange",
        "SFR",
        "SFR",
        "SFR",
        "Bouygues Telecom",
        "Bouygues Telecom",
        "Free Mobile",
        "Free Mobile",
    ),
    "US": (
        "Verizon",
        "Verizon",
        "Verizon",
        "AT&T",
        "AT&T",
        "AT&T",
        "T-Mobile US",
        "T-Mobile US",
        "T-Mobile US",
        "US Cellular",
    ),
    "CA": (
        "Rogers",
        "Rogers",
        "Rogers",
        "Bell",
        "Bell",
        "Bell",
        "Telus",
        "Telus",
        "Telus",
        "Freedom Mobile",
    ),
    "AU": (
        "Telstra",
        "Telstra",
        "Telstra",
        "Telstra",
        "Optus",
        "Optus",
        "Optus",
        "Vodafone AU",
        "Vodafone AU",
        "Vodafone AU",
    ),
}
_LANDLINE_CARRIERS: Final[Mapping[str, str]] = {
    "GB": "BT",
    "FR": "Orange",
    "US": "Verizon",
    "CA": "Bell",
    "AU": "Telstra",
    "DE": "Telekom",
}

_TYPES: Final[Mapping[int, str]] = {
    PhoneNumberType.MOBILE: "Mobile",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "Mobile",
    PhoneNumberType.PAGER: "Mobile",
    PhoneNumberType.FIXED_LINE: "Landline",
    PhoneNumberType.VOIP: "VoIP",
}


def is_possible_number(number: str) -> bool:
    r"""Whether ``number`` (E.164 digits, no ``+``) could be a telephone number.

    The pattern ``^[1-9]\\d{1,14}$`` first, then the country code and length (numbers in
    ranges reserved for fiction pass; their length is right).
    """
    if not E164_DIGITS.fullmatch(number):
        return False
    parsed = _parsed(number)
    return parsed is not None and bool(phonenumbers.is_possible_number(parsed))


@functools.lru_cache(maxsize=2**14)
def _parsed(number: str) -> phonenumbers.PhoneNumber | None:
    # A send checks its destination, then looks it up: one parse serves both.
    try:
        return phonenumbers.parse("+" + number)
    except phonenumbers.NumberParseException:
        return None


def _pick(choices: Sequence[str], number: str) -> str:
    return choices[int(number[-1])]


def lookup_number(number: str) -> NumberInfo:
    """Look up a number deterministically.

    Magic numbers first (:data:`MAGIC_NUMBERS`), then the reserved fiction ranges (UK
    mobiles and landlines, French mobiles, North American 555-01xx), then libphonenumber's
    number type. The carrier of a mobile is chosen by the last digit from the country's
    networks; of a landline, the country's incumbent.
    """
    if number in MAGIC_NUMBERS:
        return MAGIC_NUMBERS[number]
    if UK_FICTION_MOBILE.fullmatch(number):
        return NumberInfo("Mobile", _pick(_CARRIERS["GB"], number), reachable=True)
    if UK_FICTION_LANDLINE.fullmatch(number):
        return NumberInfo("Landline", _LANDLINE_CARRIERS["GB"], reachable=True)
    if FR_FICTION_MOBILE.fullmatch(number):
        return NumberInfo("Mobile", _pick(_CARRIERS["FR"], number), reachable=True)
    parsed = _parsed(number)
    if parsed is None:
        return NumberInfo("Unknown", "Unknown", reachable=False)
    region = phonenumbers.region_code_for_number(parsed) or ""
    if NANP_FICTION.fullmatch(number):
        kind = "Mobile"
    else:
        kind = _TYPES.get(phonenumbers.number_type(parsed), "Unknown")
    if kind == "Mobile":
        name = carrier.name_for_number(parsed, "en") or (
            _pick(_CARRIERS[region], number) if region in _CARRIERS else "Unknown"
        )
        return NumberInfo("Mobile", name, reachable=True)
    if kind == "Landline":
        return NumberInfo("Landline", _LANDLINE_CARRIERS.get(region, "Unknown"), reachable=True)
    if kind == "VoIP":
        return NumberInfo("VoIP", carrier.name_for_number(parsed, "en") or "Unknown", True)
    return NumberInfo("Unknown", "Unknown", reachable=True)


__all__ = [
    "FR_FICTION_MOBILE",
    "MAGIC_NUMBERS",
    "NANP_FICTION",
    "UK_FICTION_LANDLINE",
    "UK_FICTION_MOBILE",
    "NumberInfo",
    "is_possible_number",
    "lookup_number",
]
