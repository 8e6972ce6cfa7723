"""Addresses as one key: E.164 digits for numbers, lower case for email addresses.

Campaign sources spell a respondent's number differently (``+44 7700 900123`` in a file,
``447700900123`` in a send frame, ``+447700900123`` in a callback), so every join and every
opt-out check goes through :func:`address_keys`. Text that is already E.164 digits (with or
without ``+``, with spaces, dashes, dots, slashes or parentheses) is read in bulk with
pyarrow; anything else (national numbers with a region, ``00`` prefixes) goes through the
project's phone normalisation (:func:`surveykit.normalize_phone_numbers`). A number that
phonenumbers finds possible but not valid (a range newer than its metadata, or a fictional
one such as 07700 900xxx) still gets its key: suppressing a message needs the number, not
proof that the range is assigned.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.respondents._phone import normalize_phone_numbers

_E164 = r"^\+?[1-9][0-9]{1,14}$"
_PUNCTUATION = r"[\s\-./()]"


def _as_arrow(values: pd.Series) -> pa.ChunkedArray:
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(values.dtype.categories.dtype)
    if isinstance(values.dtype, pd.ArrowDtype | pd.StringDtype) or values.dtype == object:
        try:
            return pa.chunked_array([pa.array(values, type=pa.string(), from_pandas=True)])
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return pa.chunked_array(
        [pa.array(values.map(_text, na_action="ignore"), type=pa.string(), from_pandas=True)]
    )


def _text(value: Any) -> str | None:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _lenient(text: str, region: str | None) -> str | None:
    """A possible (not necessarily valid) number as E.164 digits, else None."""
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_possible_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)[1:]


def address_keys(values: pd.Series, region: str | None = None) -> pd.Series:
    """One key per value: E.164 digits for a phone number, the lower-cased address for email.

    Args:
        values: numbers or email addresses as people write them.
        region: how national numbers (``07700 900123``) are read (ISO code such as ``GB``);
            without it only international numbers and bare E.164 digits have a key.

    Returns:
        A ``string`` Series indexed like ``values``; missing where the value is missing or
        is neither an email address nor a possible phone number.
    """
    arr = pc.utf8_trim_whitespace(_as_arrow(values))
    plain = pc.fill_null(pc.match_substring_regex(arr, _E164), False)
    keys = pc.if_else(plain, pc.utf8_ltrim(arr, "+"), pa.scalar(None, pa.string()))
    if pc.all(pc.or_(plain, pc.is_null(arr))).as_py() is not False:
        # The common case (send frames, results, callbacks): digits as they are.
        return pd.Series(
            keys.to_pandas(types_mapper=pd.ArrowDtype).array, index=values.index
        ).astype("string")
    email = pc.fill_null(pc.match_substring(arr, "@"), False)
    keys = pc.if_else(email, pc.utf8_lower(arr), keys)
    squeezed = pc.replace_substring_regex(
        pc.replace_substring_regex(arr, "^tel:", ""), _PUNCTUATION, ""
    )
    squeezed_plain = pc.fill_null(pc.match_substring_regex(squeezed, _E164), False)
    # Bare digits with a region may be national; the + form is international whatever it is.
    take = pc.and_(squeezed_plain, pc.invert(email))
    if region is not None:
        take = pc.and_(take, pc.fill_null(pc.starts_with(squeezed, "+"), False))
    keys = pc.if_else(take, pc.utf8_ltrim(squeezed, "+"), keys)
    result = pd.Series(keys.to_pandas(types_mapper=pd.ArrowDtype).array, index=values.index).astype(
        "string"
    )
    rest = result.isna() & pd.Series(
        pc.is_valid(arr).to_numpy(zero_copy_only=False), index=values.index
    )
    if rest.any():
        texts = pd.Series(arr.to_pandas().to_numpy(), index=values.index)[rest]
        distinct = pd.Series(texts.unique())
        strict = normalize_phone_numbers(distinct, region)
        found = [
            digits if isinstance(digits, str) else _lenient(text, region)
            for text, digits in zip(distinct.tolist(), strict.digits.tolist(), strict=True)
        ]
        lookup = pd.Series(found, index=distinct.tolist(), dtype="string")
        result[rest] = texts.map(lookup).astype("string")
    return result


def address_key(value: Any, region: str | None = None) -> str | None:
    """The key of one value (see :func:`address_keys`), None when it has none."""
    key = address_keys(pd.Series([value], dtype=object), region).iloc[0]
    return None if pd.isna(key) else str(key)
