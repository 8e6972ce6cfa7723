"""Hypothesis strategies shared by the results tests: typed tables with hostile text."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
from hypothesis import strategies as st

STRING = pd.StringDtype("pyarrow")
FORMATS = ["CSV", "PIPE", "TAB", "XML", "JSON"]

# Text that breaks naive writers: delimiters, quotes, line breaks, markup, controls.
HOSTILE = st.sampled_from(
    [
        ",",
        "|",
        "\t",
        '"',
        '""',
        "\r",
        "\n",
        "\r\n",
        "<",
        ">",
        "&",
        "]]>",
        "&amp;",
        "\x0b",
        "\x00",
        "\x1f",
        "\ufffe",
        "N/A",
        "null",
        "None",
        "NA",
        "007",
        " ",
        "😀",
        "é",
        "\u2028",
        "_x0041_",
        "true",
        "1.50",
        "2024-08-07T21:51:26+01:00",
    ]
)
TEXT = st.one_of(
    st.text(max_size=12),
    st.lists(HOSTILE, min_size=1, max_size=4).map("".join),
    st.lists(st.one_of(HOSTILE, st.text(max_size=3)), max_size=5).map("".join),
)
NAME = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=10),
    st.sampled_from(
        [
            "Q1",
            "respondentId",
            "sortOrder",
            "a b",
            "x:y",
            "1st",
            "_x0020_",
            "Result",
            "Columns",
            "xml",
            "é",
            "ok-name",
        ]
    ),
)


def _col(kind: str, n: int) -> st.SearchStrategy[Any]:
    if kind == "string":
        return st.lists(st.one_of(st.none(), TEXT), min_size=n, max_size=n).map(
            lambda v: pd.array(v, dtype=STRING)
        )
    if kind == "Int64":
        return st.lists(
            st.one_of(st.none(), st.integers(-(2**63) + 1, 2**63 - 1)), min_size=n, max_size=n
        ).map(lambda v: pd.array(v, dtype="Int64"))
    if kind == "float64":
        return st.lists(
            st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=True)),
            min_size=n,
            max_size=n,
        ).map(lambda v: pd.array([float("nan") if x is None else x for x in v], dtype="float64"))
    if kind == "boolean":
        return st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n).map(
            lambda v: pd.array(v, dtype="boolean")
        )
    if kind == "datetime":
        moments = st.datetimes(
            min_value=dt.datetime(1, 1, 2),
            max_value=dt.datetime(9999, 12, 30),
            timezones=st.just(dt.UTC),
        )
        return st.lists(st.one_of(st.none(), moments), min_size=n, max_size=n).map(
            lambda v: pd.array(
                [pd.NaT if x is None else pd.Timestamp(x) for x in v],
                dtype=pd.DatetimeTZDtype("us", "UTC"),
            )
        )
    # category: the reader's convention, sorted categories actually present
    return st.lists(
        st.one_of(st.none(), st.sampled_from(["a", "b", "N/A", "", "x,y", "😀"])),
        min_size=n,
        max_size=n,
    ).map(_category)


def _category(values: list[str | None]) -> pd.Categorical:
    cats = sorted({v for v in values if v is not None})
    return pd.Categorical(values, dtype=pd.CategoricalDtype(pd.Index(cats, dtype=STRING)))


KINDS = ["string", "Int64", "float64", "boolean", "datetime", "category"]


@st.composite
def tables(draw: st.DrawFn, min_rows: int = 1, max_rows: int = 8) -> pd.DataFrame:
    n = draw(st.integers(min_rows, max_rows))
    names = draw(st.lists(NAME, min_size=1, max_size=6, unique=True))
    data = {name: draw(_col(draw(st.sampled_from(KINDS)), n)) for name in names}
    return pd.DataFrame(data)
