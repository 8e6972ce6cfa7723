"""Tests of surveykit.respondents' phone numbers: normalisation, checks, bulk against one by one."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from surveykit.respondents import (
    ImportPlan,
    PhoneNormalization,
    build_import_list,
    normalize_phone_number,
    normalize_phone_numbers,
)

GB_MOBILE = "447911123456"


def plan_of(rows: dict[str, list[Any]], index: Any = None, **kwargs: Any) -> ImportPlan:
    return build_import_list(pd.DataFrame(rows, index=index), **kwargs)


def reasons(plan: ImportPlan) -> dict[Any, str]:
    return dict(zip(plan.rejected.index, plan.rejected["reason"], strict=True))


def as_triples(column: PhoneNormalization) -> list[tuple[str | None, str | None, str | None]]:
    """(digits, reason, check) per row of a column's normalisation."""
    return [
        (None if pd.isna(d) else d, r, c)
        for d, r, c in zip(column.digits, column.reason, column.check, strict=True)
    ]


def one_by_one(
    values: list[Any], region: str | None, strict: bool = False
) -> list[tuple[str | None, str | None, str | None]]:
    """What normalize_phone_number says of each value, in the column's (digits, reason, check)."""
    out: list[tuple[str | None, str | None, str | None]] = []
    for v in values:
        digits, note = normalize_phone_number(v, region, strict=strict)
        if digits is None:
            out.append((None, note, None))
        else:
            out.append((digits, None, "unverified" if note == "unverified" else "valid"))
    return out


# --- phone numbers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "region", "digits"),
    [
        ("07911 123456", "GB", GB_MOBILE),
        ("+44 7911 123456", "GB", GB_MOBILE),
        ("+44 7911 123456", None, GB_MOBILE),
        ("0044 7911 123456", "GB", GB_MOBILE),
        ("0044 7911 123456", None, GB_MOBILE),
        ("(020) 7946 0018", "GB", "442079460018"),
        ("07911.123.456", "GB", GB_MOBILE),
        ("07911-123-456", "GB", GB_MOBILE),
        (" 07911  123456 ", "GB", GB_MOBILE),
        ("+44 (0) 7911 123456", None, GB_MOBILE),
        ("tel:+44-7911-123456", None, GB_MOBILE),
        ("447911123456", None, GB_MOBILE),
        ("447911123456", "GB", GB_MOBILE),
        (447911123456.0, None, GB_MOBILE),
        ("447911123456.0", None, GB_MOBILE),
        ("7911123456.0", "GB", GB_MOBILE),
        (447911123456, None, GB_MOBILE),
        (np.int64(447911123456), None, GB_MOBILE),
        # Excel ate the leading 0: the region reads what is left.
        (7911123456.0, "GB", GB_MOBILE),
        ("2015550123", "US", "12015550123"),
        ("+1 (201) 555-0123", "GB", "12015550123"),
        ("33612345678", "GB", "33612345678"),
    ],
    ids=lambda v: repr(v),
)
def test_phone_numbers_normalise_to_e164_digits(
    value: Any, region: str | None, digits: str
) -> None:
    assert normalize_phone_number(value, region) == (digits, None)
    assert normalize_phone_number(value, region, strict=True) == (digits, None)
    column = normalize_phone_numbers(pd.Series([value], dtype=object), region)
    assert column.digits.tolist() == [digits]
    assert column.check.tolist() == ["valid"]
    assert re.fullmatch(r"[1-9]\d{1,14}", digits)


@pytest.mark.parametrize(
    ("value", "region", "reason"),
    [
        ("0791112", "GB", "not a valid number for region GB"),
        ("+44 791198765", None, "not a valid number for region GB"),
        ("123", "GB", "too short"),
        ("07911 1234567890", "GB", "too long"),
        ("07911 123456", None, "no region given for a national number"),
        ("hello", "GB", "not a phone number"),
        ("+999 123456", None, "invalid country code"),
        (447911123456.5, None, "not a whole number (447911123456.5)"),
        (float("inf"), None, "not a whole number (inf)"),
        (True, None, "not a phone number (boolean)"),
        ("07911 123456 ext. 12", "GB", "has an extension (12)"),
    ],
    ids=lambda v: repr(v),
)
def test_bad_phone_numbers_are_rejected_with_a_reason(
    value: Any, region: str | None, reason: str
) -> None:
    assert normalize_phone_number(value, region) == (None, reason)
    assert normalize_phone_number(value, region, strict=True) == (None, reason)
    column = normalize_phone_numbers(pd.Series([value, None], dtype=object), region)
    assert column.check.tolist() == [None, None]
    assert column.reason.tolist() == [reason, None]
    plan = plan_of(
        {"Mobile": [value, "+447911123457"]}, index=["bad", "good"], default_region=region
    )
    assert reasons(plan) == {"bad": reason}
    assert plan.rejected.loc["bad", "column"] == "Mobile"
    assert plan.rejected.loc["bad", "value"] == value
    assert plan.summary.rejected_by_reason == {reason: 1}


def test_unknown_default_region_is_an_error() -> None:
    with pytest.raises(ValueError, match="XX"):
        plan_of({"Mobile": ["07911 123456"]}, default_region="XX")


def test_lower_case_default_region_is_accepted() -> None:
    assert normalize_phone_number("07911 123456", "gb") == (GB_MOBILE, None)


def test_float_column_from_a_spreadsheet_with_blanks() -> None:
    df = pd.DataFrame(
        {"Mobile": [447911123456.0, np.nan, 447911123457.0], "Email": [None, "a@b.co", None]}
    )
    plan = build_import_list(df)
    assert list(plan.records) == [
        {"mobileNumber": GB_MOBILE},
        {"emailAddress": "a@b.co"},
        {"mobileNumber": "447911123457"},
    ]


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    """Every (text, region) handed to phonenumbers.parse while the test runs."""
    calls: list[tuple[str, str | None]] = []
    real_parse = phonenumbers.parse

    def counting_parse(number: str, region: str | None = None, *a: Any, **k: Any) -> Any:
        calls.append((number, region))
        return real_parse(number, region, *a, **k)

    monkeypatch.setattr(phonenumbers, "parse", counting_parse)
    return calls


def test_each_distinct_value_is_parsed_exactly_once(
    parse_calls: list[tuple[str, str | None]],
) -> None:
    national = [f"07911 12345{i}" for i in range(5)] + ["(020) 7946 001", "0791 1"]
    # Bare digits that are valid both as GB national numbers and as E.164 (+7: Russia):
    # the bulk check leaves them to phonenumbers, which reads them nationally, once.
    both_ways = ["7911123456", "7911123457"]
    e164 = [f"4479111234{i:02d}" for i in range(40)]
    values = (national * 200) + (both_ways * 30) + (e164 * 50)
    result = normalize_phone_numbers(pd.Series(values), "GB")
    assert result.distinct == len(national) + len(both_ways) + len(e164)
    # Valid national and E.164 spellings were proven valid in bulk; every distinct value
    # left to phonenumbers (invalid ones, both-ways ones) is parsed exactly once.
    slow = ["(020) 7946 001", "0791 1", *both_ways]
    assert sorted(parse_calls) == sorted((v, "GB") for v in slow)
    assert result.digits.iloc[200 * len(national)] == "447911123456"


def test_00_numbers_without_a_region_are_parsed_once_and_shared_spellings_share_it(
    parse_calls: list[tuple[str, str | None]],
) -> None:
    values = ["0044 7911 123456", "0044 7911 12345", "+44 7911 12345", "00 1 201 555 0123"] * 3
    result = normalize_phone_numbers(pd.Series(values))
    assert parse_calls == [("+447911123456", None), ("+44791112345", None), ("+12015550123", None)]
    assert result.digits.iloc[:4].tolist()[::3] == ["447911123456", "12015550123"]
    assert result.reason.iloc[1] == result.reason.iloc[2] == "not a valid number for region GB"


def test_bulk_check_agrees_with_phonenumbers_for_every_region() -> None:
    values: list[str] = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in (PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE, PhoneNumberType.TOLL_FREE):
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            digits = phonenumbers.format_number(example, PhoneNumberFormat.E164)[1:]
            values += [
                digits,
                digits[:-1],
                digits + "1",
                digits[:-1] + str((int(digits[-1]) + 5) % 10),
            ]
            # Another number of the same length: often possible but not valid.
            values.append(digits[:-4] + "0000")
    checks: set[str | None] = set()
    for strict in (False, True):
        column = normalize_phone_numbers(pd.Series(values, dtype="str"), strict=strict)
        got = as_triples(column)
        assert got == one_by_one(values, None, strict)
        checks |= set(column.check)
    # The comparison covered all three outcomes.
    assert checks == {"valid", "unverified", None}


def test_bulk_check_agrees_with_phonenumbers_on_national_spellings_of_every_region() -> None:
    # Each region read with its own default region: national prefixes, 00 and other
    # international prefixes, bare digits, punctuation.
    seen: set[str | None] = set()
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        values: list[str] = []
        for kind in (PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE):
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            e164 = phonenumbers.format_number(example, PhoneNumberFormat.E164)
            national = phonenumbers.format_number(example, PhoneNumberFormat.NATIONAL)
            nsn = phonenumbers.national_significant_number(example)
            values += [national, national.replace(" ", ""), "00" + e164[1:], "011" + e164[1:]]
            values += [nsn, "0" + nsn, e164[1:], e164.replace("+", "+ "), "0" + nsn[:-1]]
            values += ["0" + nsn[:-4] + "0000", nsn[:-4] + "0000"]
        if not values:
            continue
        for strict in (False, True):
            column = normalize_phone_numbers(pd.Series(values, dtype="str"), region, strict=strict)
            got = as_triples(column)
            assert got == one_by_one(values, region, strict), (region, strict)
            seen |= {c for _, _, c in got}
    assert seen == {"valid", "unverified", None}


@pytest.mark.parametrize(
    ("value", "region", "reason"),
    [
        ("0044 7911 123456", "US", "too long"),
        ("01919123456", "IL", "too short (a local number without its area code)"),
    ],
    ids=repr,
)
def test_international_prefix_is_the_regions_own(value: str, region: str, reason: str) -> None:
    column = normalize_phone_numbers(pd.Series([value]), region)
    assert column.reason.tolist() == [reason]


REGIONS = ["GB", "US", "FR", "DE", "IN", "BR", "AU", "IT", "NG", "IL", "RU", "JP"]
FORMATS = [
    PhoneNumberFormat.NATIONAL,
    PhoneNumberFormat.INTERNATIONAL,
    PhoneNumberFormat.E164,
    PhoneNumberFormat.RFC3966,
]


@st.composite
def valid_numbers(draw: st.DrawFn) -> tuple[str, phonenumbers.PhoneNumber]:
    region = draw(st.sampled_from(REGIONS))
    kind = draw(st.sampled_from([PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE]))
    example = phonenumbers.example_number_for_type(region, kind)
    assume(example is not None)
    nsn = phonenumbers.national_significant_number(example)
    keep = draw(st.integers(min_value=max(len(nsn) - 4, 1), max_value=len(nsn)))
    tail = draw(st.text("0123456789", min_size=len(nsn) - keep, max_size=len(nsn) - keep))
    number = phonenumbers.parse("+" + str(example.country_code) + nsn[:keep] + tail)
    assume(phonenumbers.is_valid_number(number))
    return region, number


def with_junk(text: str, draw: st.DrawFn) -> str:
    """Swap the separators of a formatted number for other punctuation."""
    out = []
    for ch in text:
        if ch in " -":
            out.append(draw(st.sampled_from([" ", "-", ".", "  ", " - ", ""])))
        else:
            out.append(ch)
    lead = draw(st.sampled_from(["", " ", "\t"]))
    trail = draw(st.sampled_from(["", " ", "  "]))
    return lead + "".join(out) + trail


@given(data=st.data(), number=valid_numbers(), fmt=st.sampled_from(FORMATS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_every_spelling_of_a_valid_number_normalises_to_its_e164_digits(
    data: st.DataObject, number: tuple[str, phonenumbers.PhoneNumber], fmt: int
) -> None:
    region, num = number
    expected = phonenumbers.format_number(num, PhoneNumberFormat.E164)[1:]
    spelled = with_junk(phonenumbers.format_number(num, fmt), data.draw)
    # A national spelling needs its region; the others carry their country code.
    read_region = (
        region
        if fmt == PhoneNumberFormat.NATIONAL
        else data.draw(st.sampled_from([None, region, "GB"]))
    )
    assert normalize_phone_number(spelled, read_region) == (expected, None)
    column = normalize_phone_numbers(pd.Series([spelled, spelled.strip()]), read_region)
    assert column.digits.tolist() == [expected, expected]
    assert column.number_id[0] == column.number_id[1] >= 0


@given(
    values=st.lists(st.text("0123456789 +-.()", min_size=1, max_size=18), min_size=1, max_size=30),
    region=st.sampled_from([None, *REGIONS]),
    strict=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_bulk_and_one_by_one_agree_on_any_digits(
    values: list[str], region: str | None, strict: bool
) -> None:
    column = normalize_phone_numbers(pd.Series(values, dtype="str"), region, strict=strict)
    got = as_triples(column)
    blank = [not v.strip() for v in values]
    assert [g for g, b in zip(got, blank, strict=True) if b] == [(None, None, None)] * sum(blank)
    kept = [v for v, b in zip(values, blank, strict=True) if not b]
    assert [g for g, b in zip(got, blank, strict=True) if not b] == one_by_one(kept, region, strict)


# --- possible but not valid: kept as "unverified" unless strict -------------------------

# The sandbox's UK mobiles are in Ofcom's drama range, which phonenumbers does not call valid.
SANDBOX_UK = [f"447700{n}" for n in range(900000, 901000)]


def test_the_whole_fictional_uk_range_is_kept_unverified() -> None:
    # The premise, checked on phonenumbers itself: possible, not valid.
    for digits in SANDBOX_UK:
        num = phonenumbers.parse("+" + digits)
        assert phonenumbers.is_possible_number(num)
        assert not phonenumbers.is_valid_number(num)
    national = pd.Series(["0" + d[2:] for d in SANDBOX_UK])
    column = normalize_phone_numbers(national, "GB")
    assert column.digits.tolist() == SANDBOX_UK
    assert set(column.check) == {"unverified"}
    assert normalize_phone_numbers(national, "GB", strict=True).digits.isna().all()


@pytest.mark.parametrize(
    ("spelled", "region"),
    [
        ("+44 7700 900123", None),
        ("+44 (0)7700-900123", None),
        ("0044 7700 900123", None),
        ("447700900123", None),
        ("447700900123", "GB"),
        ("07700 900123", "GB"),
        ("(07700) 900-123", "GB"),
        ("7700900123", "GB"),
        ("tel:+44-7700-900123", "US"),
        (447700900123, None),
        (447700900123.0, "GB"),
    ],
    ids=repr,
)
def test_possible_but_not_valid_numbers_are_kept_unverified(
    spelled: Any, region: str | None
) -> None:
    assert normalize_phone_number(spelled, region) == ("447700900123", "unverified")
    column = normalize_phone_numbers(pd.Series([spelled], dtype=object, index=["r"]), region)
    assert column.digits.to_dict() == {"r": "447700900123"}
    assert column.check.to_dict() == {"r": "unverified"}
    assert column.reason.to_dict() == {"r": None}


@pytest.mark.parametrize(
    ("spelled", "region", "where"),
    [
        ("+44 7700 900123", None, "region GB"),
        ("07700 900123", "GB", "region GB"),
        ("+1 555 555 0123", None, "region US"),
    ],
    ids=repr,
)
def test_strict_refuses_unverified_numbers_saying_so(
    spelled: str, region: str | None, where: str
) -> None:
    digits, reason = normalize_phone_number(spelled, region, strict=True)
    assert digits is None
    assert reason == f"not a valid number for {where} (unverified, refused as strict=True)"
    column = normalize_phone_numbers(pd.Series([spelled]), region, strict=True)
    assert column.digits.isna().all()
    assert column.reason.tolist() == [reason]
    assert column.check.tolist() == [None]
    assert column.number_id.tolist() == [-1]
    # Not strict: the same number is kept.
    kept = normalize_phone_numbers(pd.Series([spelled]), region)
    assert kept.check.tolist() == ["unverified"]
    expected = phonenumbers.format_number(
        phonenumbers.parse(spelled, region), PhoneNumberFormat.E164
    )[1:]
    assert kept.digits.tolist() == [expected]


def test_a_column_marks_each_row_valid_unverified_or_none() -> None:
    values = pd.Series(
        ["07911 123456", "+44 7700 900123", None, "0791112", "447700900123", "", GB_MOBILE],
        index=list("abcdefg"),
        dtype=object,
    )
    result = normalize_phone_numbers(values, "GB")
    assert result.check.to_dict() == {
        "a": "valid",
        "b": "unverified",
        "c": None,
        "d": None,
        "e": "unverified",
        "f": None,
        "g": "valid",
    }
    assert result.reason.to_dict() == {
        "a": None,
        "b": None,
        "c": None,
        "d": "not a valid number for region GB",
        "e": None,
        "f": None,
        "g": None,
    }
    # Two spellings of one unverified number share its id, like valid ones do.
    ids = dict(zip(values.index, result.number_id.tolist(), strict=True))
    assert ids["b"] == ids["e"] >= 0 and ids["a"] == ids["g"] >= 0 and ids["a"] != ids["b"]
    assert ids["c"] == ids["d"] == ids["f"] == -1
    assert result.distinct_numbers == 2


def test_a_valid_reading_of_bare_digits_beats_an_unverified_one() -> None:
    # 2015550123 is valid read in the US; read as E.164 it is the Egyptian +20 15550123.
    # 447700900123 with GB: both readings are +44 7700 900123, unverified.
    for value, region in [("2015550123", "US"), ("447700900123", "GB")]:
        national = phonenumbers.parse(value, region)
        as_e164 = phonenumbers.parse("+" + value)
        readings = {
            phonenumbers.format_number(n, PhoneNumberFormat.E164)[1:]: phonenumbers.is_valid_number(
                n
            )
            for n in (national, as_e164)
        }
        digits, note = normalize_phone_number(value, region)
        if any(readings.values()):
            assert readings[digits] and note is None
        else:
            assert digits in readings and note == "unverified"


def test_bulk_path_and_slow_path_agree_on_a_sandbox_like_list() -> None:
    # Many repeats of valid and unverified numbers in mixed spellings.
    rng = np.random.default_rng(3)
    pool = [f"07700 900{n:03d}" for n in range(200)] + [f"+44 7911 123{n:03d}" for n in range(200)]
    values = [pool[i] for i in rng.integers(0, len(pool), 3000)]
    for strict in (False, True):
        column = normalize_phone_numbers(pd.Series(values, dtype="str"), "GB", strict=strict)
        assert as_triples(column) == one_by_one(values, "GB", strict)
