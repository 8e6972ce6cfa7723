"""Many short columns are typed in bulk: the frame must be the column-by-column one."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveykit.results import _bulk, read_results, write_results
from surveykit.results._types import build_frame

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Texts on both sides of every typing rule.
VALUES = st.sampled_from(
    [
        None,
        "",
        "true",
        "false",
        "True",
        "0",
        "7",
        "-7",
        "007",
        "-0",
        "+7",
        "0x7",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "1" * 25,
        "1.5",
        "1.50",
        "-0.25",
        "1e+16",
        "1e16",
        "inf",
        "-inf",
        "nan",
        "0.1",
        "2024-08-07T21:51:26Z",
        "2024-08-07T21:51:26+01:00",
        "2024-08-07 21:51:26.123456+0100",
        "2024-08-07T21:51:26",
        "2024-08-07",
        "2024-13-07T21:51:26Z",
        "2024-08-07xx",
        "a",
        "b",
        "N/A",
        "é",
        "😀",
        "Zz",
    ]
)
NAMES = st.sampled_from(
    ["Q", "channel", "Channel", "respondentId", "mobileNumber", "sortOrder", "started", "zip_code"]
)


def _both(names: list[str], columns: list[Any], nrows: int, **kw: Any) -> None:
    """Build the frame in bulk and column by column; they must be equal."""
    kw = {"dtypes": None, "infer": True, "plans": None, "format": "CSV", "nrows": nrows} | kw
    old, group = _bulk.MIN_COLUMNS, _bulk.GROUP_VALUES
    try:
        _bulk.MIN_COLUMNS = 1
        bulk, bulk_plans = build_frame(names, columns, **kw)
        _bulk.GROUP_VALUES = 2 * max(nrows, 1)  # two columns per group
        grouped, grouped_plans = build_frame(names, columns, **kw)
        _bulk.MIN_COLUMNS = 10**9
        slow, slow_plans = build_frame(names, columns, **kw)
    finally:
        _bulk.MIN_COLUMNS, _bulk.GROUP_VALUES = old, group
    pd.testing.assert_frame_equal(bulk, slow)
    pd.testing.assert_frame_equal(grouped, slow)
    assert bulk_plans == slow_plans == grouped_plans
    for name in bulk.columns:  # categories in the same order, so the same codes
        if isinstance(bulk[name].dtype, pd.CategoricalDtype):
            assert list(bulk[name].cat.categories) == list(slow[name].cat.categories)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str | None]], int]:
    nrows = draw(st.one_of(st.integers(0, 5), st.integers(60, 80)))
    ncols = draw(st.integers(1, 12))
    names = [f"{draw(NAMES)}{j}" if draw(st.booleans()) else f"Q{j}" for j in range(ncols)]
    names = [
        n if not n.startswith(("channel", "Channel")) else n.rstrip("0123456789") for n in names
    ]
    names = list(dict.fromkeys(names))
    columns = []
    for _ in names:
        # Mostly one value repeated or a pair, so categories and types are often reached.
        pool = draw(st.lists(VALUES, min_size=1, max_size=3))
        columns.append([draw(st.sampled_from(pool)) for _ in range(nrows)])
    return names, columns, nrows


@SETTINGS
@given(tables(), st.booleans(), st.booleans())
def test_bulk_typing_equals_column_by_column(
    table: tuple[list[str], list[list[str | None]], int], chunked: bool, infer: bool
) -> None:
    names, values, nrows = table
    columns: list[Any] = []
    for col in values:
        arr = pa.array(col, type=pa.large_string())
        if chunked and nrows > 1:  # readers may hand a column over in several chunks
            columns.append(pa.chunked_array([arr.slice(0, 1), arr.slice(1)]))
        else:
            columns.append(arr)
    _both(names, columns, nrows, infer=infer)


def test_bulk_typing_keeps_given_types_and_plain_strings() -> None:
    names = ["Q1", "Q2", "Q3"]
    texts = (["1", "2"], ["x", "x"], ["1.5", None])
    types = (pa.string(), pa.large_string(), pa.string())  # as different readers give them
    columns = [pa.array(v, type=k) for v, k in zip(texts, types, strict=True)]
    _both(names, columns, 2, dtypes={"Q2": "string"})


def test_wide_payload_in_every_format_gives_one_frame() -> None:
    """Every format of a payload wide enough for bulk typing reads to the same frame."""
    pairs = [("7", "8"), ("x", None), ("true", "false"), ("a", "a"), ("1.5", "-inf")]
    pairs += [("2024-08-07T21:51:26Z", None), ("2024-08-07", "2024-08-07"), ("007", "1")]
    width = max(_bulk.MIN_COLUMNS, 300)
    text = {f"Q{i}": list(pairs[i % len(pairs)]) for i in range(width)}
    frame = pd.DataFrame(text, dtype="string[pyarrow]")
    frames = {
        fmt: read_results(b"".join(write_results(frame, fmt)))
        for fmt in ("CSV", "PIPE", "TAB", "XML", "JSON")
    }
    old = _bulk.MIN_COLUMNS
    try:
        _bulk.MIN_COLUMNS = 10**9
        slow = read_results(b"".join(write_results(frame, "CSV")))
    finally:
        _bulk.MIN_COLUMNS = old
    kinds = ["Int64", "string", "boolean", "category", "float64", "datetime64[us, UTC]"]
    kinds += ["category", "string"]
    assert [str(slow[f"Q{i}"].dtype) for i in range(len(kinds))] == kinds
    for fmt, got in frames.items():
        pd.testing.assert_frame_equal(got, slow, obj=fmt)


@pytest.mark.parametrize("rows", [_bulk.MAX_ROWS, _bulk.MAX_ROWS + 1])
def test_threshold_rows(rows: int) -> None:
    """At and just past the row limit, the frame is the column-by-column one."""
    names = [f"Q{j}" for j in range(3)]
    columns = [
        pa.array([str(i % 3) for i in range(rows)], type=pa.large_string()),
        pa.array(["a", "b"] * (rows // 2) + ["a"] * (rows % 2), type=pa.large_string()),
        pa.array([f"t{i}" for i in range(rows)], type=pa.large_string()),
    ]
    _both(names, columns, rows)


def test_many_distinct_values_in_a_longer_short_column() -> None:
    """Over 64 distinct values, each seen twice: text, not a category, in bulk too."""
    rows = 2 * 70
    assert rows <= _bulk.MAX_ROWS
    names = ["Q1", "Q2"]
    columns = [
        pa.array([f"v{i % 70}" for i in range(rows)], type=pa.large_string()),
        pa.array([f"v{i % 64}" for i in range(rows)], type=pa.large_string()),
    ]
    _both(names, columns, rows)
