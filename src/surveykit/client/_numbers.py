"""Phone numbers given to the client, read as the import reads them.

``messages.send(destination=...)`` and ``messages.lookup(number)`` take numbers as people
write them (``+44 7911 123456``, ``(201) 555-0123``, ``07911 123456`` with a region) and
send the platform its E.164 digits. The reading is :mod:`surveykit.rules.numbers`, the code
the import uses; it is imported on first use (phonenumbers' metadata is not small).
"""

from __future__ import annotations

import os
from typing import Any, Final

from surveykit.errors import ConfigurationError, ValidationError

ENV_DEFAULT_REGION: Final = "SURVEYKIT_DEFAULT_REGION"

NUMBER_FORM: Final = (
    "E.164 digits (447911123456), an international number with + (+44 7911 123456), "
    "or a national number with region= or Client(default_region=...) (07911 123456)"
)


def resolve_default_region(default_region: str | None) -> str | None:
    """The argument, else ``SURVEYKIT_DEFAULT_REGION``, upper-cased and checked; or None.

    Raises:
        ConfigurationError: a region phonenumbers does not know, naming where it came from.
    """
    where = "default_region"
    if default_region is None:
        default_region = os.environ.get(ENV_DEFAULT_REGION) or None
        where = ENV_DEFAULT_REGION
    from surveykit.rules.numbers import check_region

    try:
        return check_region(default_region, where)
    except ValidationError as exc:
        raise ConfigurationError(str(exc)) from None


def read_number(value: Any, field: str, region: str | None, *, strict: bool) -> str:
    """E.164 digits of one number as written, or a :class:`ValidationError` naming ``field``.

    Args:
        value: text (or an integer) as a person wrote it.
        field: the argument's name, for the error (``destination``, ``number``).
        region: how national numbers are read (already checked), or None.
        strict: refuse a number phonenumbers finds possible but not valid.
    """
    from surveykit.rules.numbers import STRICT_NOTE, normalize_text

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
    from surveykit.rules.numbers import check_region

    return default if region is None else check_region(region, "region")
