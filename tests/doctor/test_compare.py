"""``first_deviation``: where two readings of the same results first differ, in words."""

from __future__ import annotations

import numpy as np
import pandas as pd

from surveykit._doctor._compare import first_deviation, plain


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "respondentId": pd.array(["r1", "r2", "r3"], dtype="string"),
        "Q1": pd.array([7, None, 3], dtype="Int64"),
        "Q2": pd.array(["a", None, "c"], dtype="string"),
        "completed": pd.to_datetime(["2026-03-02T09:00:00Z", None, "2026-03-02T10:00:00Z"]),
    })


def test_equal_frames_agree_whatever_the_row_and_column_order() -> None:
    other = frame().iloc[[2, 0, 1]][["Q2", "completed", "respondentId", "Q1"]]
    assert first_deviation("CSV", frame(), "XML", other) is None


def test_a_missing_and_an_extra_column() -> None:
    assert first_deviation("CSV", frame(), "XML", frame().drop(columns="Q2")) == (
        "XML lacks column 'Q2' that CSV has")
    assert first_deviation("CSV", frame(), "XML", frame().assign(Q9="x")) == (
        "XML has a column 'Q9' that CSV lacks")


def test_row_count_and_a_missing_respondent() -> None:
    assert first_deviation("CSV", frame(), "JSON", frame().iloc[:2]) == "JSON has 2 rows, CSV 3"
    other = frame()
    other.loc[1, "respondentId"] = "r9"
    assert first_deviation("CSV", frame(), "JSON", other) == (
        "JSON lacks respondentId r2 (CSV has it, row 2)")


def test_a_value_names_column_row_respondent_and_both_values() -> None:
    other = frame()
    other.loc[2, "Q2"] = "C"
    assert first_deviation("CSV", frame(), "PIPE", other) == (
        "PIPE differs from CSV in column 'Q2', row 3 (respondentId r3): PIPE 'C', CSV 'c'")
    missing = frame()
    missing.loc[0, "Q1"] = pd.NA
    assert first_deviation("CSV", frame(), "TAB", missing) == (
        "TAB differs from CSV in column 'Q1', row 1 (respondentId r1): TAB None, CSV 7")


def test_a_type_read_differently_is_a_deviation() -> None:
    other = frame().assign(Q1=frame()["Q1"].astype("string"))
    assert first_deviation("CSV", frame(), "XML", other) == (
        "XML column 'Q1' is read as text (string), CSV as integer (Int64)")


def test_without_a_respondent_id_rows_are_compared_by_position() -> None:
    base = pd.DataFrame({"x": [1.0, 2.0]})
    assert first_deviation("CSV", base, "XML", pd.DataFrame({"x": [1.0, 2.5]})) == (
        "XML differs from CSV in column 'x', row 2: XML 2.5, CSV 2")


def test_plain_values() -> None:
    assert [plain(v) for v in (None, np.nan, pd.NA, pd.NaT)] == [None] * 4
    assert plain(np.int64(3)) == 3 and plain(3.0) == 3 and plain(np.float64(2.5)) == 2.5
    stamp = pd.Timestamp("2026-03-02T10:00:00+01:00")
    assert plain(stamp) == "2026-03-02T09:00:00+00:00"
