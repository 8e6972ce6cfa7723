"""XML records with very many attributes are read in bulk: the same values, in order."""

from __future__ import annotations

from surveykit.results import read_results

XSI = "http://www.w3.org/2001/XMLSchema-instance"


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
