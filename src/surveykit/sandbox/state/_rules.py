"""The sandbox's own rules as pure functions: lookups, validation, classification.

Nothing here touches state; :mod:`surveykit.sandbox.state` calls these under its lock.
The magic numbers (documented in ``docs/sandbox.md``) give deterministic lookup outcomes,
like a payment sandbox's test card numbers: here the sandbox decides what a lookup finds for
a number (:func:`lookup_number`: mobile or landline, reachable, its carrier). The rules the client
applies too (segments, send windows, E.164 digits, branded sources, destination checks) are
the platform's, in :mod:`surveykit.rules`; the state imports them from there.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

import phonenumbers
from phonenumbers import PhoneNumberType, carrier

from surveykit.models.messages import E164_DIGITS
from surveykit.sandbox.state._records import ImportField, KeywordRecord

# --------------------------------------------------------------------------- lookups


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


# --------------------------------------------------------------------------- messages

SMS_MAX_SEGMENTS: Final = 10
"""The longest SMS the sandbox accepts, in concatenated segments (the reference: not shown)."""
CHAT_MAX_CHARS: Final = 4096
"""The longest WhatsApp or Facebook message the sandbox accepts (the reference: not shown)."""


# --------------------------------------------------------------------------- inbound

STOP_WORDS: Final = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
UNSTOP_WORDS: Final = frozenset({"UNSTOP", "START"})
HELP_WORDS: Final = frozenset({"HELP"})
INFO_WORDS: Final = frozenset({"INFO"})
RESERVED_KEYWORDS: Final = STOP_WORDS | UNSTOP_WORDS | HELP_WORDS | INFO_WORDS


def first_word(text: str) -> str:
    """The first word of a message, upper case, without surrounding punctuation."""
    words = text.strip().split()
    return words[0].strip(".,;:!?\"'()").upper() if words else ""


def classify(text: str, keywords: Sequence[KeywordRecord], now: datetime) -> tuple[str, str | None]:
    """Classify an inbound message: ``(callback type, matched keyword)``.

    The first word decides: STOP (or STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT) is ``Stop``,
    UNSTOP or START ``Unstop``, HELP ``Help``, INFO ``Info``; an active keyword of the
    account is ``Keyword``; anything else is ``Message`` (free text).
    """
    word = first_word(text)
    if word in STOP_WORDS:
        return "Stop", None
    if word in UNSTOP_WORDS:
        return "Unstop", None
    if word in HELP_WORDS:
        return "Help", None
    if word in INFO_WORDS:
        return "Info", None
    for keyword in keywords:
        if keyword.keyword.upper() == word and keyword.active(now):
            return "Keyword", keyword.keyword
    return "Message", None


KEYWORD_RE: Final = re.compile(r"^[A-Za-z0-9]{1,20}$")

# --------------------------------------------------------------------------- import

EMAIL_RE: Final = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+\.[A-Za-z]{2,}$")
URL_RE: Final = re.compile(r"^https?://[^\s/$.?#][^\s]*$", re.IGNORECASE)


def _check_value(spec: ImportField, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return f"{spec.name}: expected text, got {type(value).__name__}"
    text = str(value)
    if spec.max_length is not None and len(text) > spec.max_length:
        return f"{spec.name}: at most {spec.max_length} characters, got {len(text)}"
    if spec.kind == "phone" and not is_possible_number(text):
        return (
            f"{spec.name}: {text!r} is not a telephone number with country code, digits "
            "only, no leading zeros (for example 447700900123)"
        )
    if spec.kind == "email" and not EMAIL_RE.fullmatch(text):
        return f"{spec.name}: {text!r} is not an email address"
    if spec.kind == "url" and not URL_RE.fullmatch(text):
        return f"{spec.name}: {text!r} is not an http(s) URL"
    if spec.kind == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return f"{spec.name}: {text!r} is not a date as YYYY-MM-DD"
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return f"{spec.name}: {text!r} is not a date as YYYY-MM-DD"
    if spec.kind == "choice" and spec.choices and text not in spec.choices:
        return f"{spec.name}: {text!r} is not one of {', '.join(spec.choices)}"
    return None


def validate_record(
    fields: Sequence[ImportField], record: Any
) -> tuple[dict[str, str], list[str], list[str]]:
    """Check one import record against an import definition.

    Returns the record's values as strings (property names as the definition spells them),
    the problems found (empty when the record can be imported) and the properties the
    definition does not have. Property names match the definition's without regard to
    letter case. An unknown property does not fail the record: its value is not kept, and
    the record's message names it, so nothing is silently dropped. Empty strings count as
    missing.
    """
    if not isinstance(record, dict):
        return {}, [f"a record must be an object, got {type(record).__name__}"], []
    by_name = {spec.name.lower(): spec for spec in fields}
    values: dict[str, str] = {}
    problems: list[str] = []
    unknown: list[str] = []
    for key, value in record.items():
        spec = by_name.get(str(key).lower())
        if spec is None:
            unknown.append(str(key))
            continue
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        problem = _check_value(spec, value)
        if problem:
            problems.append(problem)
            values[spec.name] = str(value)
        else:
            values[spec.name] = str(value).strip()
    for spec in fields:
        if spec.required and spec.name not in values:
            problems.append(f"{spec.name}: required")
    return values, problems, unknown


def unknown_note(fields: Sequence[ImportField], unknown: Sequence[str]) -> str:
    """The part of a record's message that names the properties its definition lacks."""
    known = ", ".join(f.name for f in fields)
    names = ", ".join(unknown)
    return f"not imported: {names} (not a property of this import definition: {known})"


# --------------------------------------------------------------------------- links

SLASHTAG_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,49}$")
HOSTNAME_RE: Final = re.compile(
    r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"
)
RESERVED_PATHS: Final = frozenset({"v3.2", "_sandbox", "openapi.json", "favicon.ico"})
_BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def short_code(seed: int, counter: int, length: int = 7) -> str:
    """A short link code derived from the seed and a counter (same calls, same links)."""
    digest = int.from_bytes(hashlib.sha256(f"link:{seed}:{counter}".encode()).digest()[:8])
    out = []
    for _ in range(length):
        digest, rest = divmod(digest, 62)
        out.append(_BASE62[rest])
    return "".join(out)


def token_for(seed: int, who: str) -> str:
    """The access token of a sandbox user, derived from the seed (printable, not secret)."""
    digest = hashlib.sha256(f"token:{seed}:{who}".encode()).hexdigest()[:24]
    return f"sandbox-{who}-{digest}"


def message_id_prefix(seed: int) -> str:
    """Four digits from the seed that start every MessageID of a sandbox."""
    return f"{int(hashlib.sha256(f'ms:{seed}'.encode()).hexdigest(), 16) % 10_000:04d}"


__all__ = [
    "CHAT_MAX_CHARS",
    "EMAIL_RE",
    "FR_FICTION_MOBILE",
    "HELP_WORDS",
    "HOSTNAME_RE",
    "INFO_WORDS",
    "KEYWORD_RE",
    "MAGIC_NUMBERS",
    "NANP_FICTION",
    "RESERVED_KEYWORDS",
    "RESERVED_PATHS",
    "SLASHTAG_RE",
    "SMS_MAX_SEGMENTS",
    "STOP_WORDS",
    "UK_FICTION_LANDLINE",
    "UK_FICTION_MOBILE",
    "UNSTOP_WORDS",
    "URL_RE",
    "NumberInfo",
    "classify",
    "first_word",
    "is_possible_number",
    "lookup_number",
    "message_id_prefix",
    "short_code",
    "token_for",
    "unknown_note",
    "validate_record",
]
