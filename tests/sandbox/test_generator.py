"""The deterministic results generator."""

from __future__ import annotations

import pandas as pd

from surveykit.results import read_results, write_results
from surveykit.sandbox.generator import generate_results, generate_results_frame


def test_same_seed_same_data_whatever_the_chunking() -> None:
    a = pd.concat(list(generate_results(120_000, seed=7, chunk_rows=100_000)))
    b = pd.concat(list(generate_results(120_000, seed=7, chunk_rows=33_333)))
    pd.testing.assert_frame_equal(a, b)
    assert [len(c) for c in generate_results(120_000, seed=7, chunk_rows=50_000)] == [
        50_000,
        50_000,
        20_000,
    ]


def test_different_seed_different_data() -> None:
    a = generate_results_frame(200, seed=1)
    b = generate_results_frame(200, seed=2)
    assert not a.equals(b)


def test_nasty_values_are_present() -> None:
    df = generate_results_frame(5_000, seed=0)
    text = pd.concat([df[c] for c in df.columns]).dropna()
    for needle in [",", "|", '"', "\r\n", "\r", "\n", "😀"]:
        assert text.str.contains(needle, regex=False).any(), needle
    for answer in ["N/A", "null", "None", "NA"]:
        assert (text == answer).any(), answer
    assert df["mobileNumber"].str.startswith("0").any()
    assert df["started"].str.contains(r"[+-]\d\d:\d\d$").any()
    assert df["respondentId"].is_unique


def test_generated_results_read_back_typed() -> None:
    df = generate_results_frame(2_000, seed=3)
    back = read_results(b"".join(write_results(df, "JSON")))
    assert back["sortOrder"].dtype == "Int64"
    assert str(back["invited"].dtype) == "datetime64[us, UTC]"
    assert back["Q1"].dtype == "Int64"
    assert back["Q1"].dropna().between(0, 10).all()
    assert back["mobileNumber"].tolist() == df["mobileNumber"].tolist()


def test_plain_mode_has_no_hostile_text() -> None:
    df = generate_results_frame(1_000, seed=3, nasty=False)
    text = pd.concat([df[c] for c in df.columns if c.startswith("Q")]).dropna()
    assert not text.str.contains('\n|\r|"|\\|', regex=True).any()
