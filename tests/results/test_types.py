"""The traps that silently corrupt results: each test fails if its trap bites."""

from __future__ import annotations

import pandas as pd
import pytest

from surveykit.results import infer_type, read_results, write_results

STRING = pd.StringDtype("pyarrow")
FORMATS = ["CSV", "PIPE", "TAB", "XML", "JSON"]


def encode(df: pd.DataFrame, fmt: str) -> bytes:
    return b"".join(write_results(df, fmt))


def text_frame(**columns: list[str | None]) -> pd.DataFrame:
    return pd.DataFrame({k: pd.array(v, dtype=STRING) for k, v in columns.items()})


@pytest.mark.parametrize("fmt", FORMATS)
def test_na_like_answers_stay_text(fmt: str) -> None:
    values = ["N/A", "null", "None", "NA", "NaN", "nan", "#N/A", "-", "n/a"]
    back = read_results(encode(text_frame(Q7=values), fmt))
    assert back["Q7"].notna().all()
    assert back["Q7"].astype(str).tolist() == values


def test_unquoted_na_in_csv_stays_text() -> None:
    back = read_results(b"Q1,Q2\nN/A,null\nNone,NA\n")
    assert back["Q1"].tolist() == ["N/A", "None"]
    assert back["Q2"].tolist() == ["null", "NA"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_leading_zeros_stay_text(fmt: str) -> None:
    df = text_frame(
        respondentId=["007", "012"],
        mobileNumber=["07700900123", "447700900123"],
        Q1=["007", "12"],
        Q2=["1.50", "2.0"],
        customerCode=["12", "13"],
    )
    back = read_results(encode(df, fmt))
    assert back["respondentId"].tolist() == ["007", "012"]
    assert back["mobileNumber"].tolist() == ["07700900123", "447700900123"]
    assert back["Q1"].tolist() == ["007", "12"]
    assert back["Q2"].tolist() == ["1.50", "2.0"]  # "1.50" is not a lossless float
    assert back["customerCode"].dtype == STRING  # identifier-like names stay text


@pytest.mark.parametrize("fmt", FORMATS)
def test_blank_and_empty_string_stay_apart(fmt: str) -> None:
    df = text_frame(firstName=["", None, "x"], Q1=["", None, "a"])
    back = read_results(encode(df, fmt))
    for column in ("firstName", "Q1"):
        values = back[column].astype(object).tolist()
        assert values[0] == ""
        assert values[1] is pd.NA
        assert values[2] == "x" or values[2] == "a"


def test_blank_and_empty_raw_payloads() -> None:
    csv = read_results(b'a,b\n"",\n,""\n')
    assert csv["a"].astype(object).tolist() == ["", pd.NA]
    assert csv["b"].astype(object).tolist() == [pd.NA, ""]
    js = read_results(b'[{"a":"","b":null},{"a":null}]')
    assert js["a"].astype(object).tolist() == ["", pd.NA]
    assert js["b"].astype(object).tolist() == [pd.NA, pd.NA]
    xml = read_results(
        b'<Results xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        b'<Result><a/><b xsi:nil="true"/></Result><Result><a></a></Result></Results>'
    )
    assert xml["a"].astype(object).tolist() == ["", ""]
    assert xml["b"].astype(object).tolist() == [pd.NA, pd.NA]


@pytest.mark.parametrize("fmt", FORMATS)
def test_offsets_become_utc(fmt: str) -> None:
    df = text_frame(
        started=[
            "2024-08-07T21:51:26+01:00",
            "2024-08-07T21:51:26.25-05:30",
            "2024-08-07T21:51:26Z",
            None,
        ]
    )
    back = read_results(encode(df, fmt))
    assert str(back["started"].dtype) == "datetime64[us, UTC]"
    assert back["started"].tolist()[:3] == [
        pd.Timestamp("2024-08-07 20:51:26", tz="UTC"),
        pd.Timestamp("2024-08-08 03:21:26.25", tz="UTC"),
        pd.Timestamp("2024-08-07 21:51:26", tz="UTC"),
    ]
    assert back["started"].isna().tolist() == [False, False, False, True]


def test_naive_timestamps_stay_text() -> None:
    back = read_results(b"started\n2024-08-07T21:51:26\n")
    assert back["started"].tolist() == ["2024-08-07T21:51:26"]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "0", "-3", None], "Int64"),
        (["1", "007"], "string"),
        (["1", "+1"], "string"),
        (["-0"], "string"),
        (["0", "00"], "string"),
        (["1", "0x7"], "string"),  # pyarrow's cast reads hexadecimal
        (["-0x7"], "string"),
        (["-007", "5"], "string"),
        (["0", "-9223372036854775808", "9223372036854775807"], "Int64"),
        (["10", "-10", "99", "-100", "9999", None], "Int64"),
        (["10", "010"], "string"),
        (["-9", "09"], "string"),
        (["0x10", "5"], "string"),
        (["12345", "00012"], "string"),
        (["12345", "-0"], "string"),
        (["99999999999999999999"], "string"),  # beyond int64: no silent overflow
        (["1.5", "-0.25", "1e+16", None], "float64"),
        (["1.50"], "string"),
        (["nan", "1.5"], "string"),
        (["true", "false", None], "boolean"),
        (["True"], "string"),
        (["2024-08-07T21:51:26+01:00"], "datetime"),
        (["2024-02-30T21:51:26Z"], "string"),  # not a real date
        (["x", "y", "x", "y"], "category"),
        ([None, None], "string"),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_inference_rules(values: list[str | None], expected: str) -> None:
    import pyarrow as pa

    assert infer_type("Q9", pa.array(values, pa.large_string())) == expected


def test_dtypes_override_and_bad_value_error() -> None:
    back = read_results(b"Q1\n1\n2\n", dtypes={"Q1": "string"})
    assert back["Q1"].tolist() == ["1", "2"]
    from surveykit import ResultsParseError

    with pytest.raises(ResultsParseError, match="record 1"):
        read_results(b"Q1\n1\nN/A\n", dtypes={"Q1": "Int64"})


def test_infer_types_off_keeps_text() -> None:
    back = read_results(b"Q1,started\n1,2024-08-07T21:51:26Z\n", infer_types=False)
    assert (back.dtypes == STRING).all()


def test_channel_is_category_and_respondent_fields_text() -> None:
    back = read_results(b"respondentId,channel,firstName\n1,SMS,Ann\n2,Email,Bob\n")
    assert back["respondentId"].dtype == STRING
    assert isinstance(back["channel"].dtype, pd.CategoricalDtype)
    assert back["firstName"].dtype == STRING


def test_declared_float_reads_infinity_and_any_decimal_spelling() -> None:
    # Found by the round-trip property: a float column holding only infinity.
    back = read_results(b"Q1\ninf\n-inf\n", dtypes={"Q1": "float64"})
    assert back["Q1"].tolist() == [float("inf"), float("-inf")]
    back = read_results(b"Q1\n1.50\n2\n", dtypes={"Q1": "float64"})
    assert back["Q1"].tolist() == [1.5, 2.0]
    # Without a declared type an all-infinity column stays text; "1.50" too.
    assert read_results(b"Q1\ninf\n")["Q1"].dtype == STRING
    from surveykit import ResultsParseError

    with pytest.raises(ResultsParseError, match=r"'abc'.*record 1"):
        read_results(b"Q1\n1.5\nabc\n", dtypes={"Q1": "float64"})


def test_round_trip_of_a_float_column_of_only_infinity() -> None:
    df = pd.DataFrame({"Q1": pd.array([float("inf")], dtype="float64")})
    from surveykit.results import results_dtypes, write_results

    for fmt in ("CSV", "PIPE", "TAB", "XML", "JSON"):
        payload = b"".join(write_results(df, fmt))
        back = read_results(payload, fmt, dtypes=results_dtypes(df))
        pd.testing.assert_frame_equal(back, df, obj=fmt)


@pytest.mark.parametrize("piece", [7, 10_000])
def test_xml_nil_and_empty_elements_in_any_batch(piece: int) -> None:
    rows = [b"<Result><a>x</a><b></b></Result>"] * 50 + [
        b'<Result><a/><b xsi:nil="true"/></Result>',
        b'<Result><a nil="1"/><b nil="false"/></Result>',
        b'<Result><a other:nil="true"/><b/></Result>',
    ]
    payload = (
        b'<Results xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:other="urn:o">'
        + b"".join(rows)
        + b"</Results>"
    )
    pieces = [payload[i : i + piece] for i in range(0, len(payload), piece)]
    xml = read_results(iter(pieces), "XML")
    assert xml["a"].astype(object).tolist() == ["x"] * 50 + ["", pd.NA, pd.NA]
    assert xml["b"].astype(object).tolist() == [""] * 50 + [pd.NA, "", ""]


def test_xml_base64_may_name_an_empty_element_but_not_a_nil_one() -> None:
    from surveykit import ResultsParseError

    ok = read_results(b'<Results><Result base64="a"><a></a></Result></Results>', "XML")
    assert ok["a"].tolist() == [""]
    with pytest.raises(ResultsParseError, match="base64 names <a>"):
        read_results(b'<Results><Result base64="a"><a nil="true"/></Result></Results>', "XML")


@pytest.mark.parametrize("piece", [5, 64, 100_000])
def test_xml_base64_rows_anywhere_in_a_stream(piece: int) -> None:
    from surveykit.results import write_results

    texts = ["plain"] * 30 + ["tab\x0bbed", "nul\x00"] + ["plain"] * 30 + ["\x1f"]
    df = pd.DataFrame(
        {"Q1": pd.array(texts, dtype=STRING), "Q2": pd.array(texts[::-1], dtype=STRING)}
    )
    payload = b"".join(write_results(df, "XML"))
    assert b"base64=" in payload
    pieces = [payload[i : i + piece] for i in range(0, len(payload), piece)]
    back = read_results(iter(pieces), "XML", dtypes={"Q1": "string", "Q2": "string"})
    pd.testing.assert_frame_equal(back, df)
