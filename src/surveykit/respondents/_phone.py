"""Phone numbers to the platform's E.164 digits, one parse per distinct value.

A column is first reduced to its distinct values, so a list with many repeats of a number
costs one check per number. Distinct values in the common shapes are turned into candidate
digits and proven valid in bulk (:mod:`surveykit.respondents._phone_bulk`). The bulk check only
ever accepts; every value it does not prove valid goes through ``phonenumbers.parse``, so
both paths give the same answer (tests compare them over every region).

The reading rules and the checks (``valid``, ``unverified``, ``strict``) are those of
:mod:`surveykit.rules.numbers`, which also serves the client's single numbers.

Parses: one per distinct value, except bare digits with a default region whose national
reading is not valid, whose E.164 reading is a second parse (no phonenumbers call gives
both). Within one column no (text, region) is handed to ``phonenumbers.parse`` twice: a
memo per column lets spellings that reduce to one candidate share a parse (without a
region, ``+44 7911 12345`` and ``0044 7911 12345`` both parse ``+44791112345``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.respondents._phone_bulk import bulk_candidates, fast_valid
from surveykit.respondents._values import _NONE, clean_text
from surveykit.rules.numbers import (
    UNVERIFIED,
    VALID,
    Memo,
    PhoneCheck,
    check_region,
    normalize_text,
)

__all__ = [
    "UNVERIFIED",
    "VALID",
    "PhoneCheck",
    "PhoneNormalization",
    "normalize_phone_number",
    "normalize_phone_numbers",
]

# A float written out as text by a spreadsheet or CSV export: "447911123456.0".
_FLOAT_TEXT = re.compile(r"^(\+?[0-9]+)\.0+$")

ObjArray = npt.NDArray[np.object_]


@dataclass(frozen=True)
class PhoneNormalization:
    """The outcome of :func:`normalize_phone_numbers`, aligned with the input rows.

    Attributes:
        digits: E.164 digits (no ``+``) per row, missing where the input is missing or the
            number was rejected; indexed like the input.
        reason: why the row's number was rejected, None where it is kept or missing.
        check: per row, ``"valid"`` (phonenumbers finds the number valid), ``"unverified"``
            (possible but not valid, kept because ``strict`` is False), or None where the
            input is missing or the number was rejected; indexed like the input.
        number_id: per row, an integer naming its normalised number (rows with the same
            digits share it, whatever their spelling); -1 where there is none.
        distinct: how many distinct non-missing values were checked.
        distinct_numbers: how many distinct kept numbers they spell.
    """

    digits: pd.Series[str]
    reason: pd.Series[Any]
    check: pd.Series[Any]
    number_id: npt.NDArray[np.intp]
    distinct: int
    distinct_numbers: int


@dataclass(frozen=True)
class _Phones:
    digits: pa.Array  # per row, null where missing or rejected
    reason: ObjArray  # per row
    check: ObjArray  # per row: "valid", "unverified" or None
    number_id: npt.NDArray[np.intp]
    distinct: int
    distinct_numbers: int


def normalize_phone_number(
    value: Any, default_region: str | None = None, *, strict: bool = False
) -> tuple[str | None, str | None]:
    """Normalise one phone number to E.164 digits.

    Args:
        value: the number as written: text in national, international, E.164 or RFC 3966
            form with any punctuation, an integer, or a spreadsheet float.
        default_region: how national numbers (``07911 123456``) are read (ISO 3166 alpha-2,
            such as ``"GB"``); without it only international numbers are accepted. The
            reading rules are in the module docstring.
        strict: refuse numbers that are possible but not valid instead of keeping them.

    Returns:
        ``(digits, None)`` for a valid number; ``(digits, "unverified")`` for a number kept
        although phonenumbers does not find it valid (possible length, unknown range); and
        ``(None, reason)`` for a refused one (the reason is ``"missing"`` for None, NaN or
        blank).

    Raises:
        ValueError: ``default_region`` is not a region phonenumbers knows.

    >>> normalize_phone_number("07911 123456", "GB")
    ('447911123456', None)
    >>> normalize_phone_number("447911123456.0")
    ('447911123456', None)
    >>> normalize_phone_number("+44 7700 900123")
    ('447700900123', 'unverified')
    >>> normalize_phone_number("+44 7700 900123", strict=True)[1]
    'not a valid number for region GB (unverified, refused as strict=True)'
    """
    region = check_region(default_region)
    text, reason = _to_text(value)
    if reason is not None:
        return None, reason
    if text is None:
        return None, "missing"
    digits, reason, check = normalize_text(text, region, strict)
    return digits, (UNVERIFIED if check == UNVERIFIED else reason)


def normalize_phone_numbers(
    values: pd.Series[Any], default_region: str | None = None, *, strict: bool = False
) -> PhoneNormalization:
    """Normalise a column of phone numbers to E.164 digits, checking each distinct value once.

    Accepts strings in national, international, E.164 or RFC 3966 form with any punctuation,
    integers, and floats written by spreadsheets (``447911123456.0``), read as
    :func:`normalize_phone_number` reads them.

    Args:
        values: the column.
        default_region: how national numbers are read (ISO 3166 alpha-2, such as ``"GB"``).
        strict: refuse numbers that are possible but not valid instead of keeping them
            (marked ``"unverified"`` in :attr:`PhoneNormalization.check`).

    Returns:
        Digits, reasons and checks per row (see :class:`PhoneNormalization`).

    Raises:
        ValueError: ``default_region`` is not a region phonenumbers knows.
    """
    res = _normalize_column(values, check_region(default_region), strict=strict)
    return PhoneNormalization(
        digits=pd.Series(res.digits.to_pandas(), dtype="str").set_axis(values.index),
        reason=pd.Series(res.reason, index=values.index, dtype=object),
        check=pd.Series(res.check, index=values.index, dtype=object),
        number_id=res.number_id,
        distinct=res.distinct,
        distinct_numbers=res.distinct_numbers,
    )


def _normalize_column(values: pd.Series[Any], region: str | None, *, strict: bool) -> _Phones:
    codes, texts, pre_reasons = _distinct_texts(values)
    n_uniques = len(texts)
    candidates = bulk_candidates(texts, region)
    has = np.asarray(candidates.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    ok = np.zeros(n_uniques, dtype=bool)
    if has.any():
        ok[has] = fast_valid(candidates.filter(pa.array(has)))
    u_reason: ObjArray = pre_reasons.copy()
    u_check: ObjArray = np.full(n_uniques, None, dtype=object)
    u_check[ok] = VALID
    slow_digits: ObjArray = np.full(n_uniques, None, dtype=object)
    present = np.asarray(texts.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    slow = np.flatnonzero(present & ~ok)
    memo: Memo = {}
    for i, text in zip(slow.tolist(), texts.take(pa.array(slow)).to_pylist(), strict=True):
        slow_digits[i], u_reason[i], u_check[i] = normalize_text(text, region, strict, memo)
    u_digits = pc.if_else(
        pa.array(ok), candidates, pa.array(slow_digits, type=pa.string(), from_pandas=True)
    )
    # One id per distinct kept number (spellings of one number share it), for dedupe.
    encoded = u_digits.dictionary_encode()
    num_codes = np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(), dtype=np.intp)
    slot_reason: ObjArray = np.concatenate([u_reason, _NONE])
    slot_check: ObjArray = np.concatenate([u_check, _NONE])
    slot_id = np.append(num_codes, -1)
    return _Phones(
        digits=u_digits.take(pa.array(codes, mask=codes < 0)),
        reason=slot_reason[codes],  # code -1 (missing) picks the last slot
        check=slot_check[codes],
        number_id=slot_id[codes],
        distinct=n_uniques,
        distinct_numbers=len(encoded.dictionary),
    )


def _to_text(value: Any) -> tuple[str | None, str | None]:
    """One raw cell to stripped text, or a reason it cannot be a phone number."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None, None
    if isinstance(value, bool | np.bool_):
        return None, "not a phone number (boolean)"
    if isinstance(value, float | np.floating):
        f = float(value)
        if math.isnan(f):
            return None, None
        # Spreadsheets store numbers as floats: 447911123456.0 is the integer it spells.
        if not math.isfinite(f) or not f.is_integer():
            return None, f"not a whole number ({value!r})"
        return str(int(f)), None
    if isinstance(value, int | np.integer):
        return str(int(value)), None
    text = _FLOAT_TEXT.sub(r"\1", str(value).strip())
    return (text or None), None


def _distinct_texts(values: pd.Series[Any]) -> tuple[npt.NDArray[np.intp], pa.Array, ObjArray]:
    """Codes per row (-1: missing), the distinct stripped texts, and per-distinct reasons.

    A distinct value with a reason (a fractional float, a boolean) has a null text.
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        values = values.astype(dtype.categories.dtype)
        dtype = values.dtype
    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        arr = clean_text(values)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        encoded = arr.dictionary_encode()
        codes = np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(), dtype=np.intp)
        texts = pc.replace_substring_regex(
            encoded.dictionary.cast(pa.string()), _FLOAT_TEXT.pattern, r"\1"
        )
        return codes, texts, np.full(len(texts), None, dtype=object)
    try:
        codes, uniques = pd.factorize(values)
    except TypeError:  # unhashable cells: convert every row
        return _refactorize([_to_text(v) for v in values.to_numpy(dtype=object)])
    pairs = [_to_text(v) for v in uniques.to_numpy(dtype=object)]
    # Two raw values can spell one number (447911123456.0 and "447911123456"): merge them.
    blank = [t is None and r is None for t, r in pairs]
    if any(blank) or len({t for t, _ in pairs}) != len(pairs):
        return _refactorize([pairs[c] if c >= 0 else (None, None) for c in codes.tolist()])
    texts = pa.array([p[0] for p in pairs], type=pa.string())
    return codes, texts, np.array([p[1] for p in pairs], dtype=object)


def _refactorize(
    pairs: list[tuple[str | None, str | None]],
) -> tuple[npt.NDArray[np.intp], pa.Array, ObjArray]:
    index: dict[tuple[str | None, str | None], int] = {}
    codes = np.empty(len(pairs), dtype=np.intp)
    for i, pair in enumerate(pairs):
        if pair == (None, None):
            codes[i] = -1
        else:
            codes[i] = index.setdefault(pair, len(index))
    texts = pa.array([p[0] for p in index], type=pa.string())
    reasons = np.array([p[1] for p in index], dtype=object)
    return codes, texts, reasons
