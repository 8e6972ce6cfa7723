"""The bulk half of phone normalisation: candidate E.164 digits and their validity, in pyarrow.

Distinct values in the common shapes (E.164 digits with or without ``+``; with a default
region whose international prefix is ``00``, ``00`` + E.164 and national numbers with a
``0`` trunk prefix; any of these with spaces, dots, dashes, slashes or parentheses) are
turned into candidate digits (:func:`bulk_candidates`) and validated against phonenumbers'
own metadata and rules (patterns, possible lengths, number types, the region choice for
shared calling codes) as regex kernels per calling code (:func:`fast_valid`). Only ever a
proof of validity: whatever is not proven goes through ``phonenumbers.parse`` in
:mod:`surveykit.respondents._phone`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.rules.numbers import NON_GEO, PUNCTUATION

__all__ = ["bulk_candidates", "fast_valid"]

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
    ``surveykit.respondents._phone``). Their E.164 reading is accepted in bulk only when the
    region's reading is provably different and invalid: the digits do not start with its national or
    international prefix, and country code + digits is not a valid number.
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
