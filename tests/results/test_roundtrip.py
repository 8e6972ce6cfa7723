"""Writers and readers round-trip exactly, in every format, whole or streamed."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveykit.results import read_results, results_dtypes, write_results
from surveykit.sandbox.generator import generate_results_frame
from tests.helpers.results_strategies import FORMATS, tables

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decategorize(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype(
        {c: pd.StringDtype("pyarrow") for c in df.columns if df[c].dtype == "category"}
    )


def encode(df: pd.DataFrame, fmt: str, **kw: object) -> bytes:
    return b"".join(write_results(df, fmt, **kw))  # type: ignore[arg-type]


@SETTINGS
@given(df=tables(), fmt=st.sampled_from(FORMATS), chunk_rows=st.integers(1, 5))
def test_exact_round_trip_with_declared_types(df: pd.DataFrame, fmt: str, chunk_rows: int) -> None:
    payload = encode(df, fmt, chunk_rows=chunk_rows)
    back = read_results(payload, fmt, dtypes=results_dtypes(df))
    pd.testing.assert_frame_equal(back, df)


@SETTINGS
@given(df=tables())
def test_inferred_frames_equal_across_formats_and_stable(df: pd.DataFrame) -> None:
    frames = {fmt: read_results(encode(df, fmt)) for fmt in FORMATS}
    for fmt in FORMATS[1:]:
        pd.testing.assert_frame_equal(frames[fmt], frames["CSV"], obj=fmt)
    # Reading is a fixed point: what was read, written again, reads the same.
    for fmt in FORMATS:
        pd.testing.assert_frame_equal(read_results(encode(frames["CSV"], fmt)), frames["CSV"])


@pytest.fixture(scope="module")
def nasty() -> pd.DataFrame:
    return generate_results_frame(60, seed=3)


@pytest.fixture(scope="module")
def expected(nasty: pd.DataFrame) -> pd.DataFrame:
    return read_results(encode(nasty, "CSV"))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("size", [1, 7, 4096], ids=["1B", "7B", "4KiB"])
def test_streamed_chunks_equal_whole(
    nasty: pd.DataFrame, expected: pd.DataFrame, fmt: str, size: int
) -> None:
    payload = encode(nasty, fmt)
    pieces = (payload[i : i + size] for i in range(0, len(payload), size))
    pd.testing.assert_frame_equal(read_results(pieces, fmt), expected)
    pieces = (payload[i : i + size] for i in range(0, len(payload), size))
    chunks = list(read_results(pieces, fmt, chunksize=25, dtypes=results_dtypes(expected)))
    assert [len(c) for c in chunks] == [25, 25, 10]
    # Each chunk has its own categories: compare categories by their text.
    pd.testing.assert_frame_equal(decategorize(pd.concat(chunks)), decategorize(expected))


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_source_kind(
    nasty: pd.DataFrame, expected: pd.DataFrame, fmt: str, tmp_path: Path
) -> None:
    payload = encode(nasty, fmt)
    path = tmp_path / f"results.{fmt.lower()}"
    path.write_bytes(payload)
    sources: list[object] = [
        payload,
        bytearray(payload),
        memoryview(payload),
        payload.decode("utf-8"),
        path,
        io.BytesIO(payload),
        iter([payload]),
    ]
    for source in sources:
        pd.testing.assert_frame_equal(read_results(source), expected, obj=type(source).__name__)


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_survives_exactly(fmt: str) -> None:
    values = [
        'a,b|c\td"e""',
        "cr\ronly",
        "lf\nonly",
        "crlf\r\nboth",
        "  spaced  ",
        "Zoë 😀 日本",
        "]]> <x> &amp; &#13;",
        "\x0bvertical\x0ctab",
        "\u2028\u2029",
        "",
        None,
    ]
    df = pd.DataFrame({"firstName": pd.array(values, dtype=pd.StringDtype("pyarrow"))})
    back = read_results(encode(df, fmt))
    assert back["firstName"].tolist()[:-1] == values[:-1]
    assert back["firstName"].isna().tolist() == [False] * 10 + [True]


def test_writer_streams_pieces() -> None:
    df = generate_results_frame(1000, seed=1)
    for fmt in FORMATS:
        pieces = list(write_results(df, fmt, chunk_rows=100))
        assert len(pieces) >= 10, fmt


def test_writer_accepts_iterable_of_frames() -> None:
    df = generate_results_frame(300, seed=2)
    parts = [df.iloc[:100], df.iloc[100:250], df.iloc[250:]]
    for fmt in FORMATS:
        assert encode(df, fmt) == b"".join(write_results(iter(parts), fmt)), fmt


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"": ["x"]}), "non-empty"),
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "duplicate"),
        (pd.DataFrame({"ts": pd.to_datetime(["2024-01-01"])}), "naive"),
        (pd.DataFrame({"bad\x0bname": ["x"]}), "control"),
    ],
    ids=["empty-name", "duplicate-names", "naive-datetime", "control-char-name"],
)
def test_writer_refuses(frame: pd.DataFrame, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        encode(frame, "XML")


@contextmanager
def type_sample(size: int) -> Iterator[None]:
    """Predict CSV column types from the first ``size`` bytes (0: predict nothing)."""
    from surveykit.results import _csv

    old = _csv.SAMPLE_BYTES
    _csv.SAMPLE_BYTES = size
    try:
        yield
    finally:
        _csv.SAMPLE_BYTES = old


def tiny_type_sample() -> Any:
    """Predict from the first ~64 bytes, so that later rows can prove the prediction wrong."""
    return type_sample(64)


def unpredicted(payload: bytes, fmt: str) -> pd.DataFrame:
    with type_sample(0):
        return read_results(payload, fmt)


@SETTINGS
@given(df=tables(), fmt=st.sampled_from(["CSV", "PIPE", "TAB"]))
def test_types_predicted_from_the_first_rows_never_change_the_frame(
    df: pd.DataFrame, fmt: str
) -> None:
    payload = encode(df, fmt)
    expected = unpredicted(payload, fmt)
    with tiny_type_sample():
        pd.testing.assert_frame_equal(read_results(payload, fmt), expected)
        streamed = read_results((payload[i : i + 50] for i in range(0, len(payload), 50)), fmt)
        pd.testing.assert_frame_equal(streamed, expected)
    pd.testing.assert_frame_equal(read_results(payload, fmt), expected)


def _column(header: str, first: list[str], later: list[str]) -> bytes:
    # Enough first rows to fill the 64-byte sample, then the rows that decide.
    return (header + "\n" + "\n".join(first * 20 + later) + "\n").encode()


@pytest.mark.parametrize(
    ("payload", "kind", "last"),
    [
        # Predicted datetime, then a value that is not one: text, every value kept.
        (
            _column(
                "Q1",
                [f"2024-08-07T{h:02}:{m:02}:26Z" for h in range(2) for m in range(40)],
                ["soon"],
            ),
            "string",
            "soon",
        ),
        # Predicted boolean, then a third answer: a category of the three.
        (_column("Q1", ["true", "false"], ["maybe"]), "category", "maybe"),
        # Predicted category, then too many distinct answers: text.
        (_column("Q1", ["a", "b"], [f"v{i}" for i in range(100)]), "string", "v99"),
        # "inf" alone predicts nothing: a later finite value makes the column float.
        (_column("Q1", ["inf"], ["1.5"]), "float64", 1.5),
        # channel is a category whatever its number of distinct values.
        (_column("channel", ["SMS"], [f"c{i}" for i in range(100)]), "category", "c99"),
        # A quoted empty string is missing in a typed column, even a predicted one.
        (_column("Q1", ["true"], ['""']), "boolean", None),
        # Predicted integers: more distinct values later is fine...
        (_column("Q1", ["1", "2"], [str(i) for i in range(1000)]), "Int64", 999),
        # ... a leading zero or a decimal later is not; an empty string is missing.
        (_column("Q1", ["1", "2"], ["007"]), "category", "007"),
        (_column("Q1", ["1", "2"], ["2.5"]), "category", "2.5"),
        (_column("Q1", ["1", "2"], ['""']), "Int64", None),
        # sortOrder is a respondent field: text, never a category.
        (_column("sortOrder", ["1", "2"], ["x"]), "string", "x"),
    ],
    ids=[
        "datetime-then-text",
        "bool-then-third",
        "category-then-many",
        "inf",
        "channel",
        "quoted-empty",
        "int-many",
        "int-then-zero-padded",
        "int-then-decimal",
        "int-then-empty",
        "respondent-int-then-text",
    ],
)
def test_a_wrong_prediction_reads_the_column_by_the_whole_column_rules(
    payload: bytes, kind: str, last: object
) -> None:
    with tiny_type_sample():
        back = read_results(payload, "CSV")
    column = back.iloc[:, 0]
    assert {"str": "string"}.get(column.dtype.name, column.dtype.name) == kind
    assert pd.isna(column.iloc[-1]) if last is None else column.iloc[-1] == last
    assert len(back) == payload.count(b"\n") - 1
    pd.testing.assert_frame_equal(back, unpredicted(payload, "CSV"))
    with tiny_type_sample():  # a stream is read once: the same frame without a second read
        streamed = read_results(iter([payload[:40], payload[40:]]), "CSV")
    pd.testing.assert_frame_equal(streamed, back)


def test_a_stream_predicts_only_what_it_never_has_to_read_again() -> None:
    from surveykit.results._csv import iter_csv
    from surveykit.results._source import Payload
    from surveykit.results._types import predict_types

    payload = _column("Q1", ["a", "b"], []).replace(b"\n", b",true,7,2024-08-07T21:51:26Z\n")
    payload = payload.replace(b"Q1,true,7,2024-08-07T21:51:26Z\n", b"Q1,Q2,Q3,Q4\n", 1)

    def predict(names: list[str], sample: list[Any]) -> Any:
        return predict_types(names, sample, dtypes=None, infer=True)

    def kinds(source: Any) -> dict[int, str]:
        (chunk,) = iter_csv(
            Payload(source), "CSV", header=True, names=None, streaming=False, predict=predict
        )
        return dict(chunk.predicted)

    assert kinds(payload) == {0: "category", 1: "boolean", 2: "Int64", 3: "datetime"}
    assert kinds(iter([payload[:30], payload[30:]])) == {0: "category", 2: "Int64"}
