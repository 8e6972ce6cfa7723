"""Tests of surveykit.respondents: DataFrames to import lists, and results joined back."""

from __future__ import annotations

import datetime as dt
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from surveykit.errors import SurveykitError
from surveykit.models.imports import ImportResult
from surveykit.respondents import (
    EMAIL_PATTERN,
    ColumnMappingError,
    ImportPlan,
    RecordSequence,
    build_import_list,
    infer_field,
    join_import_results,
    normalize_phone_number,
)

GB_MOBILE = "447911123456"


def plan_of(rows: dict[str, list[Any]], index: Any = None, **kwargs: Any) -> ImportPlan:
    return build_import_list(pd.DataFrame(rows, index=index), **kwargs)


def reasons(plan: ImportPlan) -> dict[Any, str]:
    return dict(zip(plan.rejected.index, plan.rejected["reason"], strict=True))


# --- mapping ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "field"),
    [
        ("First Name", "firstName"),
        ("first_name", "firstName"),
        ("firstname", "firstName"),
        ("Given name", "firstName"),
        ("FIRST-NAME", "firstName"),
        ("Forename", "firstName"),
        ("Surname", "lastName"),
        ("last name", "lastName"),
        ("Family Name", "lastName"),
        ("phone", "mobileNumber"),
        ("mobile", "mobileNumber"),
        ("MSISDN", "mobileNumber"),
        ("cell", "mobileNumber"),
        ("Mobile Number", "mobileNumber"),
        ("mobileNumber", "mobileNumber"),
        ("Telephone", "mobileNumber"),
        ("email", "emailAddress"),
        ("E-mail", "emailAddress"),
        ("Email Address", "emailAddress"),
        ("dob", "dateOfBirth"),
        ("Birth Date", "dateOfBirth"),
        ("Date of Birth", "dateOfBirth"),
        ("Title", "title"),
        ("Salutation", "title"),
        ("Website", "website"),
        ("URL", "website"),
    ],
    ids=lambda v: str(v),
)
def test_infer_field_reads_common_spellings(column: str, field: str) -> None:
    assert infer_field(column) == field


@pytest.mark.parametrize(
    "column", ["Store", "Notes", "Phone Type", "email_opt_in", "Segment", 3], ids=str
)
def test_infer_field_leaves_other_columns_alone(column: Any) -> None:
    assert infer_field(column) is None


def test_inferred_mapping_is_shown_in_plan_summary_and_reprs() -> None:
    plan = plan_of({"Given name": ["Ann"], "Cell": ["+44 7911 123456"], "Store": ["S1"]})
    assert plan.mapping == {"Given name": "firstName", "Cell": "mobileNumber", "Store": "Store"}
    assert plan.inferred == ("Given name", "Cell")
    assert plan.summary.inferred == {"Given name": "firstName", "Cell": "mobileNumber"}
    text = repr(plan)
    assert "'Given name' -> firstName (inferred)" in text
    assert "'Store' -> Store (passed through)" in text
    assert "'Cell' -> mobileNumber" in str(plan.summary)
    page = plan._repr_html_()
    assert "Given name" in page and "firstName" in page and "inferred" in page


def test_plan_html_escapes_every_cell_of_the_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_of({"<b>Store</b>": ["S1"], "Cell": ["+44 7911 123456"]})
    assert "&lt;b&gt;Store&lt;/b&gt;" in plan._repr_html_()
    # Today "how" is one of four plain words; it is text all the same, so it is escaped too.
    lines = [("'Cell'", "mobileNumber", "<script>alert(1)</script>")]
    monkeypatch.setattr(ImportPlan, "_mapping_lines", lambda self: lines)  # frozen instance
    page = plan._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_two_columns_for_one_field_is_an_error_naming_both() -> None:
    df = pd.DataFrame({"Phone": ["+447911123456"], "Mobile": ["+447911123457"]})
    with pytest.raises(ColumnMappingError, match=r"'Phone'.*'Mobile'.*mobileNumber"):
        build_import_list(df)


def test_explicit_mapping_to_a_taken_field_is_an_error_naming_both() -> None:
    df = pd.DataFrame({"Mobile": ["+447911123456"], "Other": ["x"]})
    with pytest.raises(ColumnMappingError, match=r"'Mobile'.*'Other'"):
        build_import_list(df, {"Other": "mobileNumber", "Mobile": "mobileNumber"})


def test_mapping_error_is_a_surveykit_value_error() -> None:
    assert issubclass(ColumnMappingError, SurveykitError)
    assert issubclass(ColumnMappingError, ValueError)


def test_explicit_mapping_wins_and_inference_fills_the_rest() -> None:
    df = pd.DataFrame({"Contact": ["+447911123456"], "Mobile": ["landline"], "First Name": ["Ann"]})
    plan = build_import_list(df, {"Contact": "mobileNumber"})
    # mobileNumber is claimed explicitly, so "Mobile" passes through as a dynamic property.
    assert plan.mapping == {
        "Contact": "mobileNumber",
        "Mobile": "Mobile",
        "First Name": "firstName",
    }
    assert plan.records[0] == {
        "mobileNumber": GB_MOBILE,
        "Mobile": "landline",
        "firstName": "Ann",
    }


def test_mapping_to_none_leaves_a_column_out() -> None:
    plan = plan_of({"Mobile": ["+447911123456"], "Internal id": [7]}, mapping={"Internal id": None})
    assert plan.records[0] == {"mobileNumber": GB_MOBILE}
    assert plan.mapping["Internal id"] is None
    assert "left out" in repr(plan)


def test_explicit_mapping_can_rename_a_dynamic_property() -> None:
    plan = plan_of({"Mobile": ["+447911123456"], "Store": ["S1"]}, mapping={"Store": "storeCode"})
    assert plan.records[0] == {"mobileNumber": GB_MOBILE, "storeCode": "S1"}


def test_mapping_naming_a_missing_column_is_an_error() -> None:
    with pytest.raises(ColumnMappingError, match="Phone"):
        plan_of({"Mobile": ["+447911123456"]}, mapping={"Phone": "mobileNumber"})


def test_no_contact_column_at_all_is_an_error() -> None:
    with pytest.raises(ColumnMappingError, match="mobileNumber or emailAddress"):
        plan_of({"First Name": ["Ann"], "Store": ["S1"]})


def test_infer_false_passes_every_column_through() -> None:
    plan = plan_of(
        {"Mobile": ["+447911123456"], "First Name": ["Ann"]},
        mapping={"Mobile": "mobileNumber"},
        infer=False,
    )
    assert plan.records[0] == {"mobileNumber": GB_MOBILE, "First Name": "Ann"}
    assert plan.inferred == ()


def test_duplicate_column_names_are_an_error() -> None:
    df = pd.DataFrame([["+447911123456", "a@b.co"]], columns=["x", "x"])
    with pytest.raises(ColumnMappingError, match="duplicate column"):
        build_import_list(df, {"x": "mobileNumber"})


def test_extra_columns_pass_through_unchanged() -> None:
    plan = plan_of(
        {"Mobile": ["+447911123456"], "Store": ["S1"], "Visits": [3], "VIP": [True]},
    )
    assert plan.records[0] == {"mobileNumber": GB_MOBILE, "Store": "S1", "Visits": 3, "VIP": True}
    assert type(plan.records[0]["Visits"]) is int


# --- emails ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "a@b.co",
        "first.last+tag@example.co.uk",
        "o'brien@example.ie",
        "user_name-1@sub.domain-x.com",
        "josé@exämple.es",
        "x@xn--80ak6aa92e.com",
        " padded@example.com ",
    ],
    ids=repr,
)
def test_valid_email_addresses_are_sent_trimmed(address: str) -> None:
    plan = plan_of({"Email": [address]})
    assert plan.records[0] == {"emailAddress": address.strip()}
    assert re.fullmatch(EMAIL_PATTERN, address.strip())


@pytest.mark.parametrize(
    "address",
    [
        "plainaddress",
        "a@b",
        "a@@b.com",
        ".a@b.com",
        "a.@b.com",
        "a..b@c.com",
        "a b@c.com",
        "a@-b.com",
        "a@b-.com",
        "a@b.c",
        "a@b..com",
        "a@b.com.",
        "@b.com",
        "a@b.c0m",
        '"quoted"@example.com',
        "a@[127.0.0.1]",
        "x" * 65 + "@example.com",
        "a@" + ("b" * 60 + ".") * 5 + "com",  # over 254 characters
    ],
    ids=lambda a: repr(a[:30]),
)
def test_invalid_email_addresses_are_rejected_by_default(address: str) -> None:
    plan = plan_of({"Email": [address, "ok@example.com"]}, index=["bad", "ok"])
    assert reasons(plan) == {"bad": "not a valid email address"}
    assert plan.rejected.loc["bad", "value"] == address


def test_email_policy_warn_sends_the_address_and_lists_it() -> None:
    with pytest.warns(UserWarning, match="1 email addresses look invalid"):
        plan = plan_of({"Email": ["bad@", "ok@example.com"]}, index=["b", "o"], email_policy="warn")
    assert list(plan.records) == [{"emailAddress": "bad@"}, {"emailAddress": "ok@example.com"}]
    assert plan.rejected.empty
    assert plan.warnings.index.tolist() == ["b"]
    assert plan.warnings.loc["b", "reason"] == "not a valid email address"
    assert plan.summary.warnings == 1


def test_email_policy_reject_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = plan_of({"Email": ["bad@", "ok@example.com"]})
    assert plan.warnings.empty


def test_unknown_email_policy_is_an_error() -> None:
    with pytest.raises(ValueError, match="email_policy"):
        plan_of({"Email": ["a@b.co"]}, email_policy="ignore")  # type: ignore[arg-type]


def test_invalid_number_rejects_the_row_even_with_a_good_email() -> None:
    plan = plan_of({"Mobile": ["123"], "Email": ["a@b.co"]}, default_region="GB")
    assert reasons(plan) == {0: "too short"}


def test_invalid_email_rejects_the_row_even_with_a_good_number() -> None:
    plan = plan_of({"Mobile": ["+447911123456"], "Email": ["a@b"]})
    assert reasons(plan) == {0: "not a valid email address"}


# --- no contact ------------------------------------------------------------------------


def test_row_without_number_or_email_is_rejected_as_no_contact() -> None:
    plan = plan_of(
        {
            "First Name": ["Ann", "Bob", "Cy"],
            "Mobile": [None, "+447911123456", ""],
            "Email": [np.nan, None, "  "],
        },
        index=["a", "b", "c"],
    )
    assert plan.index.tolist() == ["b"]
    assert reasons(plan) == {
        "a": "no contact: neither a valid mobileNumber nor an emailAddress",
        "c": "no contact: neither a valid mobileNumber nor an emailAddress",
    }
    assert plan.rejected.loc["a", "column"] is None


# --- dates -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "iso"),
    [
        ("1980-05-17", "1980-05-17"),
        ("1980/5/7", "1980-05-07"),
        ("19800517", "1980-05-17"),
        ("17/05/1980", "1980-05-17"),
        ("05/17/1980", "1980-05-17"),
        ("17.05.1980", "1980-05-17"),
        ("17 May 1980", "1980-05-17"),
        ("17 May, 1980", "1980-05-17"),
        ("May 17th, 1980", "1980-05-17"),
        ("17-May-1980", "1980-05-17"),
        ("1980-05-17T23:30:00", "1980-05-17"),
        ("1980-05-17 10:00:00+01:00", "1980-05-17"),
        (dt.date(1980, 5, 17), "1980-05-17"),
        (dt.datetime(1980, 5, 17, 8, 30), "1980-05-17"),
        (pd.Timestamp("1980-05-17"), "1980-05-17"),
        (np.datetime64("1980-05-17"), "1980-05-17"),
    ],
    ids=repr,
)
def test_dates_of_birth_become_iso_dates(value: Any, iso: str) -> None:
    plan = plan_of({"Mobile": ["+447911123456"], "DOB": pd.Series([value], dtype=object)})
    assert plan.records[0]["dateOfBirth"] == iso


def test_datetime64_columns_become_iso_dates() -> None:
    dob = pd.to_datetime(pd.Series(["1980-05-17 00:00", None, "2001-01-02 13:45"]))
    plan = plan_of({"Mobile": ["+447911123456", "+447911123457", "+447911123458"], "DOB": dob})
    assert [r.get("dateOfBirth") for r in plan.records] == ["1980-05-17", None, "2001-01-02"]
    assert "dateOfBirth" not in plan.records[1]


def test_tz_aware_datetime64_date_of_birth() -> None:
    dob = pd.Series(pd.to_datetime(["1980-05-17 23:00"]).tz_localize("Europe/London"))
    plan = plan_of({"Mobile": ["+447911123456"], "DOB": dob})
    assert plan.records[0]["dateOfBirth"] == "1980-05-17"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("yesterday", "not a date"),
        ("31/02/1980", "impossible date (1980-02-31)"),
        ("1980-13-01", "impossible date (1980-13-01)"),
        ("17/05/80", "two-digit year"),
        ("1980-05-17Tnonsense", "not a date"),
    ],
    ids=repr,
)
def test_unparseable_dates_are_rejected_with_a_reason(value: str, reason: str) -> None:
    plan = plan_of({"Mobile": ["+447911123456", "+447911123457"], "DOB": [value, "1980-01-01"]})
    assert reasons(plan) == {0: reason}
    assert plan.rejected.loc[0, "column"] == "DOB"


def test_numbers_in_a_date_column_are_rejected() -> None:
    plan = plan_of({"Mobile": ["+447911123456"], "DOB": [29358]})
    assert reasons(plan) == {0: "not a date (number 29358)"}


def test_ambiguous_dates_are_rejected_unless_the_order_is_known() -> None:
    rows = {"Mobile": ["+447911123456", "+447911123457"], "DOB": ["03/04/1980", "05/06/1990"]}
    plan = plan_of(rows)
    assert set(reasons(plan).values()) == {
        "ambiguous date: day/month order unknown (pass dayfirst=True or False)"
    }
    assert [r["dateOfBirth"] for r in plan_of(rows, dayfirst=True).records] == [
        "1980-04-03",
        "1990-06-05",
    ]
    assert [r["dateOfBirth"] for r in plan_of(rows, dayfirst=False).records] == [
        "1980-03-04",
        "1990-05-06",
    ]


def test_date_order_is_read_from_the_unambiguous_dates_of_the_column() -> None:
    day_first = plan_of(
        {"Mobile": ["+447911123456", "+447911123457"], "DOB": ["03/04/1980", "25/12/1990"]}
    )
    assert [r["dateOfBirth"] for r in day_first.records] == ["1980-04-03", "1990-12-25"]
    month_first = plan_of(
        {"Mobile": ["+447911123456", "+447911123457"], "DOB": ["03/04/1980", "12/25/1990"]}
    )
    assert [r["dateOfBirth"] for r in month_first.records] == ["1980-03-04", "1990-12-25"]


def test_dynamic_datetime_columns_are_iso_text() -> None:
    plan = plan_of(
        {
            "Mobile": ["+447911123456", "+447911123457"],
            "Joined": pd.to_datetime(["2024-01-02", "2024-03-04"]),
            "Seen": pd.to_datetime(["2024-01-02 10:11:12", "2024-03-04 00:00:00"]),
            "SeenUTC": pd.to_datetime(["2024-01-02 10:11:12", "2024-03-04 00:00:00"]).tz_localize(
                "UTC"
            ),
        }
    )
    assert plan.records[0]["Joined"] == "2024-01-02"
    assert plan.records[0]["Seen"] == "2024-01-02T10:11:12"
    assert plan.records[1]["Seen"] == "2024-03-04T00:00:00"
    assert plan.records[0]["SeenUTC"] == "2024-01-02T10:11:12+00:00"


# --- values ----------------------------------------------------------------------------


def test_missing_values_are_omitted_not_sent_as_null() -> None:
    plan = plan_of(
        {
            "Mobile": ["+447911123456"] * 5,
            "First Name": [None, np.nan, pd.NA, "", "  "],
            "Store": pd.Series([None, np.nan, pd.NA, "", " "], dtype=object),
            "Visits": pd.array([None, 1, None, 2, None], dtype="Int64"),
        },
        dedupe=False,
    )
    assert [sorted(r) for r in plan.records] == [
        ["mobileNumber"],
        ["Visits", "mobileNumber"],
        ["mobileNumber"],
        ["Visits", "mobileNumber"],
        ["mobileNumber"],
    ]
    assert all(None not in r.values() for r in plan.records)


def test_whitespace_is_trimmed_everywhere() -> None:
    plan = plan_of(
        {
            "Mobile": ["  +447911123456 "],
            "First Name": ["  Ann\t"],
            "Title": [" Dr "],
            "Store": ["  S1  "],
            "Note": pd.Series([" x "], dtype=object),
        }
    )
    assert plan.records[0] == {
        "mobileNumber": GB_MOBILE,
        "firstName": "Ann",
        "title": "Dr",
        "Store": "S1",
        "Note": "x",
    }


def test_numbers_are_serialised_sensibly() -> None:
    plan = plan_of(
        {
            "Mobile": ["+447911123456", "+447911123457"],
            "Store": [1.0, np.nan],  # ints with blanks, as read from a spreadsheet
            "Score": [1.5, 2.0],
            "Visits": [3, 4],
            "Mixed": pd.Series([5.0, "x"], dtype=object),
            "First Name": [1.0, 2.5],  # respondent text fields are text
        }
    )
    first, second = plan.records
    assert first["Store"] == 1 and type(first["Store"]) is int
    assert "Store" not in second
    assert first["Score"] == 1.5 and second["Score"] == 2 and type(second["Score"]) is int
    assert type(first["Visits"]) is int
    assert first["Mixed"] == 5 and type(first["Mixed"]) is int and second["Mixed"] == "x"
    assert first["firstName"] == "1" and second["firstName"] == "2.5"


def test_infinite_numbers_are_rejected() -> None:
    plan = plan_of({"Mobile": ["+447911123456", "+447911123457"], "Score": [np.inf, 1.0]})
    assert reasons(plan) == {0: "not a finite number"}
    assert plan.rejected.loc[0, "column"] == "Score"


def test_categorical_and_bool_columns() -> None:
    plan = plan_of(
        {
            "Mobile": pd.Categorical(["+447911123456", "07911 123457"]),
            "Tier": pd.Categorical(["gold", None]),
            "VIP": [True, False],
        },
        default_region="GB",
    )
    assert list(plan.records) == [
        {"mobileNumber": GB_MOBILE, "Tier": "gold", "VIP": True},
        {"mobileNumber": "447911123457", "VIP": False},
    ]


# --- duplicates ------------------------------------------------------------------------


def test_duplicates_point_at_the_first_row_with_that_number() -> None:
    plan = plan_of(
        {"Mobile": ["07911 123456", "+44 7911 123456", 447911123456.0, "07911 123457"]},
        index=["first", "again", "float", "other"],
        default_region="GB",
    )
    assert plan.index.tolist() == ["first", "other"]
    assert reasons(plan) == {"again": "duplicate", "float": "duplicate"}
    assert plan.rejected["duplicate_of"].tolist() == ["first", "first"]
    assert plan.rejected.loc["again", "value"] == "+44 7911 123456"


def test_duplicate_pointer_skips_rows_rejected_for_something_else() -> None:
    plan = plan_of(
        {
            "Mobile": ["+447911123456", "+447911123456", "+447911123456"],
            "Email": ["bad@", None, None],
        },
        index=[10, 20, 30],
    )
    assert reasons(plan) == {10: "not a valid email address", 30: "duplicate"}
    assert plan.rejected.loc[30, "duplicate_of"] == 20
    assert pd.isna(plan.rejected.loc[10, "duplicate_of"])


def test_dedupe_false_keeps_repeated_numbers() -> None:
    plan = plan_of({"Mobile": ["+447911123456", "447911123456"]}, dedupe=False)
    assert len(plan.records) == 2
    assert plan.rejected.empty


# --- order, index, invariant -----------------------------------------------------------


def test_order_and_index_are_kept_with_string_labels() -> None:
    plan = plan_of(
        {"Mobile": ["+447911123459", "bad", "+447911123451", "+447911123452"]},
        index=["z", "y", "a", "m"],
    )
    assert plan.index.tolist() == ["z", "a", "m"]
    assert plan.positions.tolist() == [0, 2, 3]
    assert [r["mobileNumber"] for r in plan.records] == [
        "447911123459",
        "447911123451",
        "447911123452",
    ]
    assert plan.rejected.index.tolist() == ["y"]


def test_order_and_index_are_kept_with_non_monotonic_int_labels() -> None:
    plan = plan_of(
        {"Mobile": ["+447911123453", "+447911123451", None, "+447911123452"]},
        index=[42, 7, 99, 3],
    )
    assert plan.index.tolist() == [42, 7, 3]
    assert [r["mobileNumber"] for r in plan.records] == [
        "447911123453",
        "447911123451",
        "447911123452",
    ]
    assert plan.rejected.index.tolist() == [99]


PHONE_POOL = [
    "07911 123456",
    "+44 7911 123457",
    "447911123458",
    447911123456.0,
    "07911 987654",
    "123",
    None,
    np.nan,
    "",
    "(020) 7946 0018",
    "+33 6 12 34 56 78",
    "not a number",
]
EMAIL_POOL = ["a@example.com", "b@example.org", "bad@", None, "  ", "c@ex.co.uk"]
DOB_POOL = ["1980-05-17", "17/05/1980", "03/04/1980", "garbage", None, dt.date(1990, 1, 2)]


@st.composite
def respondent_frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(min_value=0, max_value=40))
    rows = {
        "Mobile": draw(st.lists(st.sampled_from(PHONE_POOL), min_size=n, max_size=n)),
        "Email": draw(st.lists(st.sampled_from(EMAIL_POOL), min_size=n, max_size=n)),
        "DOB": draw(st.lists(st.sampled_from(DOB_POOL), min_size=n, max_size=n)),
        "Score": draw(
            st.lists(st.sampled_from([1.0, 2.5, np.nan, np.inf]), min_size=n, max_size=n)
        ),
    }
    kind = draw(st.sampled_from(["range", "strings", "shuffled"]))
    if kind == "strings":
        labels = draw(
            st.lists(st.text(min_size=1, max_size=5), min_size=n, max_size=n, unique=True)
        )
        index = pd.Index(labels, dtype=object)
    elif kind == "shuffled":
        index = pd.Index(draw(st.permutations(list(range(0, 3 * n, 3)))))
    else:
        index = pd.RangeIndex(n)
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in rows.items()}).set_axis(index)


@given(
    df=respondent_frames(),
    region=st.sampled_from([None, "GB"]),
    dedupe=st.booleans(),
    email_policy=st.sampled_from(["reject", "warn"]),
)
@settings(max_examples=150, deadline=None)
def test_every_row_is_a_record_or_a_rejection(
    df: pd.DataFrame, region: str | None, dedupe: bool, email_policy: Any
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plan = build_import_list(
            df, default_region=region, dedupe=dedupe, email_policy=email_policy
        )
    kept, dropped = list(plan.index), list(plan.rejected.index)
    assert len(plan.records) == len(kept) == plan.summary.records
    assert len(kept) + len(dropped) == len(df) == plan.summary.rows
    assert set(kept).isdisjoint(dropped)
    assert set(kept) | set(dropped) == set(df.index)
    assert sum(plan.summary.rejected_by_reason.values()) == len(dropped)
    assert plan.rejected["reason"].notna().all()
    # records keep DataFrame order, and each is built from its own row
    assert list(plan.positions) == sorted(plan.positions)
    assert kept == [df.index[p] for p in plan.positions]
    for record, label in zip(plan.records, kept, strict=True):
        raw = df.loc[label, "Mobile"]
        expected = (
            normalize_phone_number(raw, region)[0] if not pd.isna(raw) and raw != "" else None
        )
        assert record.get("mobileNumber") == expected
        assert "mobileNumber" in record or "emailAddress" in record
        assert None not in record.values()
    if dedupe:
        numbers = [r["mobileNumber"] for r in plan.records if "mobileNumber" in r]
        assert len(numbers) == len(set(numbers))
        dups = plan.rejected[plan.rejected["reason"] == "duplicate"]
        assert set(dups["duplicate_of"]) <= set(kept)


def test_empty_frame_gives_an_empty_plan() -> None:
    plan = build_import_list(pd.DataFrame({"Mobile": pd.Series([], dtype="str")}))
    assert len(plan.records) == 0 and plan.rejected.empty
    assert plan.summary.rows == 0


def test_not_a_dataframe_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="DataFrame"):
        build_import_list([{"Mobile": "+447911123456"}])  # type: ignore[arg-type]


# --- records ---------------------------------------------------------------------------


def test_record_sequence_behaves_like_a_list() -> None:
    numbers = [f"+4479111234{i:02d}" for i in range(25)]
    plan = plan_of({"Mobile": numbers})
    records = plan.records
    assert isinstance(records, RecordSequence)
    expected = [{"mobileNumber": n[1:]} for n in numbers]
    assert len(records) == 25
    assert records[0] == expected[0] and records[-1] == expected[-1]
    assert records[3:6] == expected[3:6]
    assert records[::10] == expected[::10]
    assert records == expected
    assert [len(c) for c in records.chunks(10)] == [10, 10, 5]
    assert [r for c in records.chunks(10) for r in c] == expected
    assert records.columns == ["mobileNumber"]
    assert "25 records" in repr(records)
    with pytest.raises(IndexError):
        records[25]
    with pytest.raises(ValueError, match="size"):
        next(records.chunks(0))


# --- join-back -------------------------------------------------------------------------


@pytest.fixture
def joined_plan() -> tuple[pd.DataFrame, ImportPlan]:
    df = pd.DataFrame(
        {"Mobile": ["+447911123451", "bad", "+447911123452", "+447911123451", "+447911123453"]},
        index=["e", "d", "c", "b", "a"],
    )
    return df, build_import_list(df)


def test_join_results_covers_every_row(joined_plan: tuple[pd.DataFrame, ImportPlan]) -> None:
    df, plan = joined_plan
    results = [
        {"status": "Success", "message": "added", "when": "2024-08-07T21:51:26+01:00"},
        ImportResult.model_validate({"status": "Error", "message": "exists"}),
    ]
    out = join_import_results(plan, results, df.index)
    assert out.index.equals(df.index)
    assert out["status"].tolist() == ["Success", "rejected", "Error", "rejected", "not sent"]
    assert out.loc["e", "when"] == "2024-08-07T21:51:26+01:00"
    assert out.loc["c", "message"] == "exists"
    assert out.loc["d", "reason"] == "not a phone number"
    assert out.loc["b", "reason"] == "duplicate"
    assert pd.isna(out.loc["a", "reason"]) and pd.isna(out.loc["a", "message"])


def test_join_results_carry_the_rejections_column_value_and_first_row(
    joined_plan: tuple[pd.DataFrame, ImportPlan],
) -> None:
    df, plan = joined_plan
    out = join_import_results(plan, [{"status": "Success"}] * 3, df.index)
    assert list(out.columns) == [
        "status",
        "message",
        "when",
        "reason",
        "column",
        "value",
        "duplicate_of",
        "number_check",
    ]
    assert out.loc["b", ["column", "value", "duplicate_of"]].tolist() == [
        "Mobile",
        "+447911123451",
        "e",  # the first row with that number
    ]
    assert out.loc["d", ["column", "value"]].tolist() == ["Mobile", "bad"]
    assert pd.isna(out.loc["d", "duplicate_of"])
    sent = out.loc[["e", "c", "a"], ["column", "value", "duplicate_of"]]
    assert sent.isna().all().all()


def test_join_results_write_to_parquet_whatever_the_rejected_values_types(
    tmp_path: Path,
) -> None:
    df = pd.DataFrame(
        {
            "Mobile": [447911123451, 12, 447911123452, 447911123451],
            "Email": ["a@b.org", "x@y.org", "no", "z@y.org"],
        },
        index=[10, 20, 30, 40],
    )
    plan = build_import_list(df)
    out = join_import_results(plan, [{"status": "Success"}])
    assert out["column"].tolist()[1:] == ["Mobile", "Email", "Mobile"]
    assert out["value"].tolist()[1:] == ["12", "no", "447911123451"]  # int, str: all text
    assert out.loc[40, "duplicate_of"] == 10
    out.to_parquet(tmp_path / "outcome.parquet")
    back = pd.read_parquet(tmp_path / "outcome.parquet")
    assert back.loc[30, "value"] == "no" and back.loc[40, "duplicate_of"] == 10


def test_join_results_accepts_none_for_unsent_and_any_letter_case(
    joined_plan: tuple[pd.DataFrame, ImportPlan],
) -> None:
    _, plan = joined_plan
    results = [None, {"Status": "success", "Message": "ok", "When": "t"}, {"STATUS": "Pending"}]
    out = join_import_results(plan, results)
    assert out.loc["e", "status"] == "not sent"
    assert out.loc["c", "status"] == "Success" and out.loc["c", "message"] == "ok"
    assert out.loc["a", "status"] == "Pending"  # unknown statuses are kept as given


def test_join_results_refuses_too_many_results(
    joined_plan: tuple[pd.DataFrame, ImportPlan],
) -> None:
    _, plan = joined_plan
    with pytest.raises(ValueError, match="4 results for 3 records"):
        join_import_results(plan, [{"status": "Success"}] * 4)


def test_join_results_refuses_another_frames_index(
    joined_plan: tuple[pd.DataFrame, ImportPlan],
) -> None:
    df, plan = joined_plan
    with pytest.raises(ValueError, match="df_index"):
        join_import_results(plan, [], df.index[::-1])


def test_join_results_with_duplicate_index_labels_is_positional() -> None:
    df = pd.DataFrame({"Mobile": ["+447911123451", "x", "+447911123452"]}, index=[1, 1, 2])
    plan = build_import_list(df)
    out = join_import_results(plan, [{"status": "Success"}, {"status": "Error"}])
    assert out["status"].tolist() == ["Success", "rejected", "Error"]
