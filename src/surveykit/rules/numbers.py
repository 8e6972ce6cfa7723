"""One phone number as people write it to E.164 digits, with phonenumbers only.

The reading rules shared by the import (:mod:`surveykit.respondents._numbers`, which applies
them to a column's distinct values after a bulk check) and by the client, whose arguments
(``messages.send(destination=...)``, ``messages.lookup(number)``) are read by
:func:`read_number` and :func:`region_for`. No pandas here, so that a client that sends a
message does not load it.

Reading rules: text with ``+`` (or ``tel:+``) is international; bare digits with a default
region are read as that region's national number when that is valid, else as E.164 (so a US
list's ``2015550123`` is not the Egyptian +20 1555 0123, while ``447911123456`` stays
British); other text is national for the default region, or, without one, ``00`` + E.164.

Checks: a number phonenumbers finds valid is ``"valid"``. One it finds possible (a length
its country allows) and of its country's general shape, but not valid, is ``"unverified"``:
a range newer than the metadata, or a fictional one such as the UK's 07700 900xxx. It is
kept unless ``strict=True``, which refuses it with a reason that says so. For bare digits
with a default region a valid reading (national first) wins over an unverified one.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final, Literal

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat, ValidationResult

from surveykit.errors import ValidationError
from surveykit.models.messages import E164_DIGITS

__all__ = [
    "NON_GEO",
    "NUMBER_FORM",
    "PUNCTUATION",
    "STRICT_NOTE",
    "UNVERIFIED",
    "VALID",
    "Memo",
    "Parsed",
    "PhoneCheck",
    "check_region",
    "normalize_text",
    "read_number",
    "region_for",
]

PhoneCheck = Literal["valid", "unverified"]
VALID: Final = "valid"
UNVERIFIED: Final = "unverified"
STRICT_NOTE: Final = " (unverified, refused as strict=True)"
NON_GEO: Final = "001"
PUNCTUATION: Final = r"[\s().\-/]"

# (digits, reason, check): digits and check set for a kept number, reason for a refused one.
# An unverified parse carries both its digits and the reason strict=True gives it.
Parsed = tuple[str | None, str | None, PhoneCheck | None]
Memo = dict[tuple[str, str | None], Parsed]


def check_region(region: str | None, field: str = "default_region") -> str | None:
    """A region code upper-cased, or None; the one check every ``region=`` goes through.

    Raises:
        ValidationError: (a ``ValueError``) naming ``field`` when phonenumbers does not know
            the region.
    """
    if region is None:
        return None
    up = region.strip().upper() if isinstance(region, str) else None
    if up not in phonenumbers.SUPPORTED_REGIONS:
        raise ValidationError(
            f"{field}: {region!r} is not a region phonenumbers knows; expected an ISO 3166 "
            "alpha-2 code such as 'GB', 'US' or 'AU'."
        )
    return up


def _compact(text: str) -> str:
    return re.sub(PUNCTUATION, "", text)


def normalize_text(text: str, region: str | None, strict: bool, memo: Memo | None = None) -> Parsed:
    """Normalise one stripped, non-empty text with phonenumbers; strict applied.

    ``memo`` keeps the parses of one column, keyed by what was parsed (text, region).
    """
    memo = {} if memo is None else memo

    def parse(candidate: str, reg: str | None) -> Parsed:
        key = (candidate, reg)
        if key not in memo:
            memo[key] = _parse_one(candidate, reg)
        return memo[key]

    compact = _compact(text)
    bare = compact.lstrip("+")
    if E164_DIGITS.fullmatch(bare) and compact.count("+") <= 1:
        if region is None or compact.startswith("+"):
            return _decide(parse("+" + bare, None), strict)
        # Bare digits with a default region can be read both ways; the region's reading wins
        # when it is valid (a US list's 2015550123 is not the Egyptian +20 1555 0123), so it
        # is parsed first and the E.164 reading only when it is not. A valid reading beats
        # an unverified one; the national reading's reason explains a refusal.
        national = parse(text, region)
        if national[2] == VALID:
            return national
        as_e164 = parse("+" + bare, None)
        if as_e164[2] == VALID:
            return as_e164
        if not strict and national[2] is None and as_e164[2] == UNVERIFIED:
            return _decide(as_e164, strict)
        return _decide(national, strict)
    if compact.startswith("+") or compact.lower().startswith("tel:+"):
        return _decide(parse(text, None), strict)
    if compact.startswith("00") and region is None:
        # 00 is the international prefix in most of the world. Without a region
        # phonenumbers refuses any number without "+", so the text is parsed only that way.
        return _decide(parse("+" + compact[2:], None), strict)
    return _decide(parse(text, region), strict)


def _decide(parsed: Parsed, strict: bool) -> Parsed:
    """An unverified parse kept (no reason) or, under strict, refused (no digits)."""
    digits, reason, check = parsed
    if check != UNVERIFIED:
        return parsed
    if strict:
        return None, f"{reason}{STRICT_NOTE}", None
    return digits, None, check


_PARSE_REASONS = {
    NumberParseException.NOT_A_NUMBER: "not a phone number",
    NumberParseException.TOO_SHORT_AFTER_IDD: "too short",
    NumberParseException.TOO_SHORT_NSN: "too short",
    NumberParseException.TOO_LONG: "too long",
}


def _parse_one(text: str, region: str | None) -> Parsed:
    try:
        num = phonenumbers.parse(text, region)
    except NumberParseException as exc:
        if exc.error_type == NumberParseException.INVALID_COUNTRY_CODE:
            if region is None and not text.lstrip().startswith(("+", "tel:+")):
                return None, "no region given for a national number", None
            return None, "invalid country code", None
        return None, _PARSE_REASONS.get(exc.error_type, "not a phone number"), None
    if num.extension:
        return None, f"has an extension ({num.extension})", None
    digits = phonenumbers.format_number(num, PhoneNumberFormat.E164)[1:]
    if phonenumbers.is_valid_number(num):
        return digits, None, VALID
    where = _where(num)
    possible = phonenumbers.is_possible_number_with_reason(num)
    if (
        possible == ValidationResult.IS_POSSIBLE
        and E164_DIGITS.fullmatch(digits)
        and _fits_numbering_plan(num)
    ):
        return digits, f"not a valid number for {where}", UNVERIFIED
    return None, _impossible_reason(possible, where, num), None


def _fits_numbering_plan(num: phonenumbers.PhoneNumber) -> bool:
    """The number has the general shape of its country's numbers (no type need match).

    "Possible" alone only checks the length: a truncated ``0791112`` read in GB keeps its 0
    and has a possible length, but no British number starts with 0.
    """
    cc = num.country_code
    nsn = phonenumbers.national_significant_number(num)
    return any(p.fullmatch(nsn) for p in _general_patterns(cc)) if cc else False


@functools.cache
def _general_patterns(cc: int) -> tuple[re.Pattern[str], ...]:
    out = []
    for region in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(cc, ()):
        md = phonenumbers.PhoneMetadata.metadata_for_region_or_calling_code(cc, region)
        desc = md.general_desc if md is not None else None
        if desc is not None and desc.national_number_pattern:
            out.append(re.compile(desc.national_number_pattern))
    return tuple(out)


def _impossible_reason(possible: int, where: str, num: phonenumbers.PhoneNumber) -> str:
    if possible == ValidationResult.TOO_SHORT:
        return "too short"
    if possible == ValidationResult.TOO_LONG:
        return "too long"
    if possible == ValidationResult.INVALID_LENGTH:
        return f"invalid length for {where}"
    if possible == ValidationResult.IS_POSSIBLE_LOCAL_ONLY:
        return "too short (a local number without its area code)"
    if possible == ValidationResult.INVALID_COUNTRY_CODE:
        return f"invalid country code {num.country_code}"
    return f"not a valid number for {where}"


def _where(num: phonenumbers.PhoneNumber) -> str:
    if num.country_code is None:
        return "an unknown country code"
    region = phonenumbers.region_code_for_country_code(num.country_code)
    if region in (None, "ZZ", NON_GEO):
        return f"country code {num.country_code}"
    return f"region {region}"


# --------------------------------------------------------------------------- one argument

NUMBER_FORM: Final = (
    "E.164 digits (447911123456), an international number with + (+44 7911 123456), "
    "or a national number with region= or Client(default_region=...) (07911 123456)"
)


def read_number(value: Any, field: str, region: str | None, *, strict: bool) -> str:
    """E.164 digits of one number as written, or a :class:`ValidationError` naming ``field``.

    Args:
        value: text (or an integer) as a person wrote it.
        field: the argument's name, for the error (``destination``, ``number``).
        region: how national numbers are read (already checked), or None.
        strict: refuse a number phonenumbers finds possible but not valid.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValidationError(
            [(field, f"{field}: {value!r} is not a phone number; expected {NUMBER_FORM}.")]
        )
    text = str(value).strip()
    if not text:
        raise ValidationError([(field, f"{field}: is empty; expected {NUMBER_FORM}.")])
    digits, reason, _ = normalize_text(text, region, strict)
    if digits is None:
        if region is None and reason == "no region given for a national number":
            reason += ": pass region='GB' (for example) or Client(default_region=...)"
        problem = (
            "is refused as strict=True: phonenumbers finds it possible but not valid"
            if reason is not None and reason.endswith(STRICT_NOTE)
            else f"cannot be read as a phone number ({reason})"
        )
        raise ValidationError([(field, f"{field}: {value!r} {problem}; expected {NUMBER_FORM}.")])
    return digits


def region_for(region: str | None, default: str | None) -> str | None:
    """A call's ``region=`` checked, else the client's default."""
    return default if region is None else check_region(region, "region")
