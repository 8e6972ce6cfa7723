"""results_to_parquet (row groups as it goes) and tidy_results (long form)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from surveykit import results
from surveykit.results import (
    read_results,
    results_to_parquet,
    split_columns,
    tidy_results,
    write_results,
)
from surveykit.sandbox.generator import generate_results_frame

STRING = pd.StringDtype("pyarrow")


def decategorize(df: pd.DataFrame) -> pd.DataFrame:
    cats = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]
    return df.astype(dict.fromkeys(cats, STRING))


@pytest.mark.parametrize("fmt", ["CSV", "TAB", "XML", "JSON"])
def test_parquet_row_groups_read_back_equal(fmt: str, tmp_path: Path) -> None:
    df = generate_results_frame(2_500, seed=9)
    payload = b"".join(write_results(df, fmt))
    path = tmp_path / "r.parquet"
    pieces = (payload[i : i + 65536] for i in range(0, len(payload), 65536))
    assert results_to_parquet(pieces, path, chunksize=1_000) == 2_500
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 3
    assert [meta.row_group(i).num_rows for i in range(3)] == [1000, 1000, 500]
    back = pd.read_parquet(path)
    expected = read_results(payload)
    pd.testing.assert_frame_equal(decategorize(back), decategorize(expected))
    for column in expected.columns:
        assert isinstance(back[column].dtype, pd.CategoricalDtype) == isinstance(
            expected[column].dtype, pd.CategoricalDtype
        ), column


def test_parquet_empty_results(tmp_path: Path) -> None:
    path = tmp_path / "e.parquet"
    assert results_to_parquet(b"", path) == 0
    assert pd.read_parquet(path).shape == (0, 0)


def test_split_columns_rule() -> None:
    respondent, questions = split_columns(
        ["respondentId", "RESPONDENTID2", "firstName", "Q1", "channel", "Q2", "extra"],
        respondent_columns=["extra"],
    )
    assert respondent == ["respondentId", "firstName", "channel", "extra"]
    assert questions == ["RESPONDENTID2", "Q1", "Q2"]


def test_tidy_long_form() -> None:
    wide = read_results(b'respondentId,firstName,Q1,Q2,Q3\nR1,Ann,7,"N/A",""\nR2,Bob,,yes,"a;b"\n')
    long = tidy_results(wide)
    assert list(long.columns) == ["respondentId", "question", "answer"]
    assert long.to_dict("records") == [
        {"respondentId": "R1", "question": "Q1", "answer": "7"},
        {"respondentId": "R1", "question": "Q2", "answer": "N/A"},
        {"respondentId": "R1", "question": "Q3", "answer": ""},
        {"respondentId": "R2", "question": "Q2", "answer": "yes"},
        {"respondentId": "R2", "question": "Q3", "answer": "a;b"},
    ]
    assert (long.dtypes == STRING).all()
    everything = tidy_results(wide, dropna=False)
    assert len(everything) == 6
    assert everything["answer"].isna().sum() == 1


def test_tidy_of_generated_results_counts_answers() -> None:
    wide = read_results(b"".join(write_results(generate_results_frame(300, seed=2), "CSV")))
    long = tidy_results(wide)
    _, questions = split_columns(wide.columns)
    assert len(long) == int(wide[questions].notna().sum().sum())


def test_tidy_needs_an_id_column() -> None:
    with pytest.raises(ValueError, match="respondentId"):
        tidy_results(pd.DataFrame({"Q1": [1]}))


def test_public_names_importable() -> None:
    for name in results.__all__:
        assert getattr(results, name).__doc__, name
    assert set(results.__all__) == {
        n
        for n in dir(results)
        if not n.startswith("_") and not isinstance(getattr(results, n), type(results))
    }
