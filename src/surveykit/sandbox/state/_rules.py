"""The sandbox's own rules as pure functions: lookups, validation, classification.

Nothing here touches state; :mod:`surveykit.sandbox.state` calls these under its lock.
The magic numbers (documented in ``docs/sandbox.md``) give deterministic lookup outcomes,
like a payment sandbox's test card numbers; what a lookup finds for a number (mobile or
landline) is decided in :mod:`surveykit.sandbox.state._numbers`. The rules the client
applies too (segments, send windows, E.164 digits, branded sources, destination checks) are
the platform's, in :mod:`surveykit.rules`; the state imports them from there.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, Final

from surveykit.sandbox.state._numbers import is_possible_number
from surveykit.sandbox.state._records import ImportField, KeywordRecord

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
    "HELP_WORDS",
    "HOSTNAME_RE",
    "INFO_WORDS",
    "KEYWORD_RE",
    "RESERVED_KEYWORDS",
    "RESERVED_PATHS",
    "SLASHTAG_RE",
    "SMS_MAX_SEGMENTS",
    "STOP_WORDS",
    "UNSTOP_WORDS",
    "URL_RE",
    "classify",
    "first_word",
    "message_id_prefix",
    "short_code",
    "token_for",
    "unknown_note",
    "validate_record",
]
