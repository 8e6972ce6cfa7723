"""XML batches skip the search for nil marks until the bytes hold "nil": never a wrong value."""

from __future__ import annotations

import pandas as pd
import pytest

from surveykit.results import read_results

XSI = "http://www.w3.org/2001/XMLSchema-instance"


def _payload(rows: int, nil_at: int) -> bytes:
    records = []
    for i in range(rows):
        q2 = '<Q2 xsi:nil="true"/>' if i == nil_at else "<Q2></Q2>"
        records.append(f"<Result><Q1>r{i}</Q1>{q2}</Result>")
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<Results xmlns:xsi="{XSI}">\n'
    return (head.replace(f' xmlns:xsi="{XSI}"', "") + "\n".join(records) + "\n</Results>").encode()


def _with_namespace_late(rows: int, nil_at: int) -> bytes:
    # The xsi declaration sits on the nil element itself, so "nil" first appears there.
    body = _payload(rows, nil_at).decode()
    return body.replace('<Q2 xsi:nil="true"/>', f'<Q2 xmlns:xsi="{XSI}" xsi:nil="true"/>').encode()


def _expected(rows: int, nil_at: int) -> pd.Series:
    values = ["" if i != nil_at else None for i in range(rows)]
    return pd.Series(values, dtype="string[pyarrow]", name="Q2")


@pytest.mark.parametrize("cut", [-1, 0, 1, 2, 3])
def test_nil_first_seen_across_a_chunk_boundary(cut: int) -> None:
    rows, nil_at = 40_000, 39_990  # the nil comes after many batches without one
    data = _with_namespace_late(rows, nil_at)
    where = data.index(b"nil") + cut
    got = read_results(iter([data[:where], data[where:]]), "XML", dtypes={"Q2": "string"})
    pd.testing.assert_series_equal(got["Q2"], _expected(rows, nil_at))


def test_nil_late_in_a_payload_in_memory() -> None:
    rows, nil_at = 40_000, 39_990
    got = read_results(_with_namespace_late(rows, nil_at), dtypes={"Q2": "string"})
    pd.testing.assert_series_equal(got["Q2"], _expected(rows, nil_at))


def test_many_attributes_read_in_order_with_foreign_ones_skipped() -> None:
    """Over 64 attributes are read in bulk: same values and order as a few, namespaced skipped."""
    width = 150
    rows = []
    for r in range(3):
        attrs = [f'Q{i}="{r}-{i}&amp;&lt;é"' for i in range(width)]
        attrs.insert(70, f'xsi:type="{r}"')  # a namespaced attribute, not a field
        rows.append(f"<Row {' '.join(attrs)}/>")
    data = f'<Rows xmlns:xsi="{XSI}">' + "".join(rows) + "</Rows>"
    got = read_results(data.encode(), infer_types=False)
    assert list(got.columns) == [f"Q{i}" for i in range(width)]
    for i in (0, 69, 70, 149):
        assert got[f"Q{i}"].tolist() == [f"{r}-{i}&<é" for r in range(3)]
