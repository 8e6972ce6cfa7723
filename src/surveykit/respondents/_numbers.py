"""Phone numbers in columns: E.164 digits per row, one parse per distinct value; address keys.

The single-number reading rules and checks (``valid``, ``unverified``, ``strict``) are
:mod:`surveykit.rules.numbers`, which also serves the client's single numbers. This module
applies them to a column, in three parts:

* **normalisation** (:func:`normalize_phone_numbers`): a column is first reduced to its
  distinct values, so a list with many repeats of a number costs one check per number;
* **the bulk check** (:func:`bulk_candidates`, :func:`fast_valid`): distinct values in the
  common shapes are turned into candidate digits and proven valid in pyarrow;
* **address keys** (:func:`address_keys`): one key per respondent address (E.164 digits or
  a lower-case email address), for the campaign's joins and the opt-out list.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.respondents._values import _NONE, clean_text
from surveykit.rules.numbers import (
    NON_GEO,
    PUNCTUATION,
    UNVERIFIED,
    VALID,
    Memo,
    PhoneCheck,
    check_region,
    normalize_text,
)

# --------------------------------------------------------------------------- normalisation

# Phone numbers to the platform's E.164 digits, one parse per distinct value.
#
# A column is first reduced to its distinct values, so a list with many repeats of a number
# costs one check per number. Distinct values in the common shapes are turned into candidate
# digits and proven valid in bulk (the bulk check, below). The bulk check only
# ever accepts; every value it does not prove valid goes through ``phonenumbers.parse``, so
# both paths give the same answer (tests compare them over every region).
#
# Parses: one per distinct value, except bare digits with a default region whose national
# reading is not valid, whose E.164 reading is a second parse (no phonenumbers call gives
# both). Within one column no (text, region) is handed to ``phonenumbers.parse`` twice: a
# memo per column lets spellings that reduce to one candidate share a parse (without a
# region, ``+44 7911 12345`` and ``0044 7911 12345`` both parse ``+44791112345``).

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


# --------------------------------------------------------------------------- the bulk check

# The bulk half of phone normalisation: candidate E.164 digits and their validity, in pyarrow.
#
# Distinct values in the common shapes (E.164 digits with or without ``+``; with a default
# region whose international prefix is ``00``, ``00`` + E.164 and national numbers with a
# ``0`` trunk prefix; any of these with spaces, dots, dashes, slashes or parentheses) are
# turned into candidate digits (:func:`bulk_candidates`) and validated against phonenumbers'
# own metadata and rules (patterns, possible lengths, number types, the region choice for
# shared calling codes) as regex kernels per calling code (:func:`fast_valid`). Only ever a
# proof of validity: whatever is not proven goes through ``phonenumbers.parse`` (the
# normalisation, above).

_E164_CANDIDATE = r"^\+?[1-9][0-9]{1,14}$"


@functools.cache
def _national_rule(region: str | None) -> tuple[bool, str | None]:
    """(IDD is plain 00, country code when a leading 0 is a plain national prefix) of a region.

    Only these simple shapes are turned into E.164 in bulk; everything else (Italy's kept
    zero, Brazil's carrier codes, US 011...) is left to ``phonenumbers.parse``.
    """
    if region is None:
        return False, None
    md = phonenumbers.PhoneMetadata.metadata_for_region(region, None)
    if md is None:
        return False, None
    idd00 = md.international_prefix == "00"
    npfp = md.national_prefix_for_parsing
    # With an IDD other than 00 a leading 0 may start an international number (IL: 019...).
    simple_prefix = (
        idd00
        and md.national_prefix == "0"
        and not md.national_prefix_transform_rule
        and (npfp is None or re.fullmatch(r"(?:[1-9]\d*\|)*0(?:\|[1-9]\d*)*", npfp) is not None)
    )
    return idd00, (str(md.country_code) if simple_prefix else None)


def bulk_candidates(texts: pa.Array, region: str | None) -> pa.Array:
    """E.164 digits that each text spells, for the shapes read without phonenumbers.parse.

    Null where the text needs the full parse. These candidates are only accepted when
    :func:`fast_valid` proves them valid; the rest go through ``phonenumbers.parse``.
    """
    null = pa.scalar(None, pa.string())
    e164 = pc.match_substring_regex(texts, _E164_CANDIDATE)
    out = pc.if_else(e164, pc.utf8_ltrim(texts, "+"), null)
    if region is not None:
        out = _drop_ambiguous_bare(out, pc.match_substring_regex(texts, r"^[1-9]"), region)
    rest = pc.and_(pc.invert(pc.fill_null(e164, True)), texts.is_valid())
    if not pc.any(rest).as_py():
        return out
    # Punctuated spellings: compact only the values that need it.
    compact = pc.replace_substring_regex(texts.filter(rest), PUNCTUATION, "")
    found = pc.if_else(
        pc.match_substring_regex(compact, _E164_CANDIDATE), pc.utf8_ltrim(compact, "+"), null
    )
    if region is not None:
        found = _drop_ambiguous_bare(found, pc.match_substring_regex(compact, r"^[1-9]"), region)
    idd00, cc = _national_rule(region)
    if idd00:
        intl = pc.match_substring_regex(compact, r"^00[1-9][0-9]{1,14}$")
        found = pc.if_else(intl, pc.utf8_slice_codeunits(compact, 2), found)
    if cc is not None:
        national = pc.binary_join_element_wise(cc, pc.utf8_slice_codeunits(compact, 1), "")
        nat = pc.and_(
            pc.match_substring_regex(compact, r"^0[1-9][0-9]+$"),
            pc.match_substring_regex(national, r"^[1-9][0-9]{1,14}$"),
        )
        found = pc.if_else(nat, national, found)
    return pc.replace_with_mask(out, rest, found)


@dataclass(frozen=True)
class _BareRules:
    cc: str
    national_prefix: str | None
    idd: str | None
    lengths: pa.Array  # national number lengths the country code's regions allow


@functools.cache
def _bare_rules(region: str) -> _BareRules | None:
    """What reading bare digits in bulk needs to know of a region.

    None when the region's own numbers cannot be checked in bulk.
    """
    md = phonenumbers.PhoneMetadata.metadata_for_region(region, None)
    if md is None or md.country_code is None or _regions_for(md.country_code) is None:
        return None
    npfp = md.national_prefix_for_parsing or md.national_prefix or None
    idd = md.international_prefix or None
    try:
        for pattern in (npfp, idd):
            if pattern:
                pc.match_substring_regex(pa.array(["0"]), f"^(?:{pattern})")
    except pa.ArrowInvalid:
        return None
    lengths: set[int] = set()
    for region_code in phonenumbers.COUNTRY_CODE_TO_REGION_CODE[md.country_code]:
        rmd = phonenumbers.PhoneMetadata.metadata_for_region(region_code, None)
        if rmd is None or not rmd.general_desc or not rmd.general_desc.possible_length:
            return None
        lengths.update(rmd.general_desc.possible_length)
    return _BareRules(
        cc=str(md.country_code),
        national_prefix=f"^(?:{npfp})" if npfp else None,
        idd=f"^(?:{idd})" if idd else None,
        lengths=pa.array(sorted(lengths), type=pa.int32()),
    )


def _drop_ambiguous_bare(candidates: pa.Array, bare: pa.Array, region: str) -> pa.Array:
    """Null out bare-digit candidates that the region might read as a national number.

    Bare digits (no ``+``) with a default region are read nationally first (see
    :func:`normalize_phone_numbers`). Their E.164 reading is accepted in bulk only when the
    region's reading is provably different and invalid: the digits do not start with its
    national or international prefix, and country code + digits is not a valid number.
    """
    bare = pc.and_(pc.fill_null(bare, False), candidates.is_valid())
    if not pc.any(bare).as_py():
        return candidates
    rules = _bare_rules(region)
    null = pa.scalar(None, pa.string())
    if rules is None:
        return pc.if_else(bare, null, candidates)
    unsure = pa.array(np.zeros(len(candidates), dtype=bool))
    for pattern in (rules.national_prefix, rules.idd):
        if pattern:
            unsure = pc.or_(
                unsure,
                pc.and_(bare, pc.fill_null(pc.match_substring_regex(candidates, pattern), False)),
            )
    # Read nationally, the digits are the national number: only lengths the region allows.
    check = pc.and_(
        pc.and_(bare, pc.invert(unsure)),
        pc.is_in(pc.utf8_length(candidates), value_set=rules.lengths),
    )
    idx = np.flatnonzero(np.asarray(check.to_numpy(zero_copy_only=False), dtype=bool))
    if len(idx):
        national = pc.binary_join_element_wise(rules.cc, candidates.take(pa.array(idx)), "")
        valid_national = fast_valid(national)
        mask = np.zeros(len(candidates), dtype=bool)
        mask[idx[valid_national]] = True
        unsure = pc.or_(unsure, pa.array(mask))
    return pc.if_else(unsure, null, candidates)


# --- bulk validation of E.164 digits against phonenumbers' metadata -------------------

# Valid means "some type matches", so the order only matters for speed: commonest first.
_TYPE_DESCS = (
    "mobile",
    "fixed_line",
    "toll_free",
    "premium_rate",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
)


@dataclass(frozen=True)
class _Desc:
    lengths: pa.Array | None  # possible lengths, None when any length passes
    pattern: str


@dataclass(frozen=True)
class _Region:
    leading_digits: str | None
    general: _Desc
    types: tuple[_Desc, ...]


def _desc(desc: Any) -> _Desc | None:
    if desc is None or not desc.national_number_pattern:
        return None
    lengths = (
        pa.array(list(desc.possible_length), type=pa.int32()) if desc.possible_length else None
    )
    return _Desc(lengths=lengths, pattern=f"^(?:{desc.national_number_pattern})$")


@functools.cache
def _regions_for(cc: int) -> tuple[_Region, ...] | None:
    """Validation rules for a calling code, or None to leave it to the slow path."""
    region_codes = phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(cc)
    if not region_codes or NON_GEO in region_codes:
        return None
    out: list[_Region] = []
    for code in region_codes:
        md = phonenumbers.PhoneMetadata.metadata_for_region(code.upper(), None)
        if md is None:
            continue
        general = _desc(md.general_desc)
        if general is None:
            continue
        types = tuple(
            d for d in (_desc(getattr(md, name)) for name in _TYPE_DESCS) if d is not None
        )
        ld = f"^(?:{md.leading_digits})" if md.leading_digits else None
        out.append(_Region(leading_digits=ld, general=general, types=types))
    try:  # every pattern must compile under RE2, or the code goes to the slow path
        probe = pa.array(["0"])
        for r in out:
            for d in (r.general, *r.types):
                pc.match_substring_regex(probe, d.pattern)
            if r.leading_digits:
                pc.match_substring_regex(probe, r.leading_digits)
    except pa.ArrowInvalid:
        return None
    return tuple(out)


def _matches(nsn: pa.Array, lengths: pa.Array, desc: _Desc) -> npt.NDArray[np.bool_]:
    ok = pc.match_substring_regex(nsn, desc.pattern)
    if desc.lengths is not None:
        ok = pc.and_(ok, pc.is_in(lengths, value_set=desc.lengths))
    return np.asarray(ok.to_numpy(zero_copy_only=False), dtype=bool)


def _subset(arr: pa.Array, idx: npt.NDArray[np.intp]) -> pa.Array:
    return arr if len(idx) == len(arr) else arr.take(pa.array(idx))


def _type_known(region: _Region, nsn: pa.Array, lengths: pa.Array) -> npt.NDArray[np.bool_]:
    """Phonenumbers' number type is not UNKNOWN: general pattern and some type's pattern."""
    ok = _matches(nsn, lengths, region.general)
    if not ok.any():
        return ok
    typed = np.zeros(len(ok), dtype=bool)
    for desc in region.types:
        idx = np.flatnonzero(ok & ~typed)
        if not len(idx):
            break
        typed[idx] = _matches(_subset(nsn, idx), _subset(lengths, idx), desc)
    return ok & typed


def fast_valid(digits: pa.Array) -> npt.NDArray[np.bool_]:
    """For E.164 digit strings: True where phonenumbers would call the number valid as written.

    False means "not proven here"; those values go to the full parse.
    """
    n = len(digits)
    valid = np.zeros(n, dtype=bool)
    cc = np.zeros(n, dtype=np.int64)
    known = phonenumbers.COUNTRY_CODE_TO_REGION_CODE
    for k in (1, 2, 3):
        prefix = pc.utf8_slice_codeunits(digits, 0, k)
        codes = pa.array([str(c) for c in known if len(str(c)) == k], type=pa.string())
        hit = np.asarray(
            pc.is_in(prefix, value_set=codes).to_numpy(zero_copy_only=False), dtype=bool
        )
        # Calling codes form a prefix code: at most one length matches.
        new = hit & (cc == 0)
        if new.any():
            cc[new] = np.asarray(pc.cast(prefix.filter(pa.array(new)), pa.int64()))
    # Group by calling code once, so that each group is a zero-copy slice.
    order = np.argsort(cc, kind="stable")
    sorted_cc = cc[order]
    by_cc = digits.take(pa.array(order))
    group_codes, starts = np.unique(sorted_cc, return_index=True)
    ends = np.append(starts[1:], n)
    for code, start, end in zip(group_codes.tolist(), starts.tolist(), ends.tolist(), strict=True):
        regions = _regions_for(code) if code > 0 else None
        if not regions:
            continue
        nsn = pc.utf8_slice_codeunits(by_cc.slice(start, end - start), len(str(code)))
        lengths = pc.utf8_length(nsn)
        ok = np.zeros(end - start, dtype=bool)
        undecided = np.ones(end - start, dtype=bool)
        # Same order and rule as phonenumbers' region_code_for_number: the first region whose
        # leading digits match wins, else the first whose type is known.
        for region in regions:
            sub = np.flatnonzero(undecided)
            if not len(sub):
                break
            s_nsn, s_len = _subset(nsn, sub), _subset(lengths, sub)
            if region.leading_digits is not None:
                chosen = np.asarray(
                    pc.match_substring_regex(s_nsn, region.leading_digits).to_numpy(
                        zero_copy_only=False
                    ),
                    dtype=bool,
                )
                if chosen.any():
                    c_idx = np.flatnonzero(chosen)
                    ok[sub[c_idx]] = _type_known(
                        region, _subset(s_nsn, c_idx), _subset(s_len, c_idx)
                    )
                    undecided[sub[c_idx]] = False
            else:
                known_type = _type_known(region, s_nsn, s_len)
                ok[sub[known_type]] = True
                undecided[sub[known_type]] = False
        valid[order[start:end]] = ok
    return valid


# --------------------------------------------------------------------------- address keys

# Addresses as one key: E.164 digits for numbers, lower case for email addresses.
#
# Campaign sources spell a respondent's number differently (``+44 7700 900123`` in a file,
# ``447700900123`` in a send frame, ``+447700900123`` in a callback), so every join and every
# opt-out check goes through :func:`address_keys`. Text that is already E.164 digits (with or
# without ``+``, with spaces, dashes, dots, slashes or parentheses) is read in bulk with
# pyarrow; anything else (national numbers with a region, ``00`` prefixes) goes through the
# project's phone normalisation (:func:`surveykit.normalize_phone_numbers`). A number that
# phonenumbers finds possible but not valid (a range newer than its metadata, or a fictional
# one such as 07700 900xxx) still gets its key: suppressing a message needs the number, not
# proof that the range is assigned.

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


__all__ = [
    "UNVERIFIED",
    "VALID",
    "PhoneCheck",
    "PhoneNormalization",
    "address_key",
    "address_keys",
    "bulk_candidates",
    "fast_valid",
    "normalize_phone_number",
    "normalize_phone_numbers",
]
