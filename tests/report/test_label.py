"""sk.label: ordered categoricals with labels, missing codes as missing, texts in attrs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import surveykit as sk
from surveykit.report import Codebook, LabelError, Question

SAT = {"1": "Very unhappy", "2": "Unhappy", "3": "Neutral", "4": "Happy", "5": "Very happy"}


def codebook() -> Codebook:
    return Codebook(
        [
            Question("Q1", "How satisfied?", "rating", labels=SAT, missing={"99": "Don't know"},
                     min=1, max=5),
            Question("Q2", "Why?", "choice", labels={"q": "Quality", "p": "Price"},
                     missing={"x": "Refused"}),
            Question("Q3", "Recommend?", "nps", labels={"0": "Not at all", "10": "Extremely"}),
            Question("Q4", "Which?", "multi", labels={"A": "Apples", "B": "Bananas"},
                     missing={"DK": "Don't know"}),
            Question("Q5", "Age", "number", missing={"-1": "Not given"}),
            Question("Q6", "Comments", "text", missing={"N/A": "Not applicable"}),
            Question("Q7", "Not in the frame", "text"),
        ]
    )


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "respondentId": ["a", "b", "c", "d", "e"],
            "Q1": pd.array([5, 1, 99, None, 3], dtype="Int64"),
            "Q2": pd.Categorical(["q", "p", "x", "q", None]),
            "Q3": pd.array([10, 0, 7, 9, None], dtype="Int64"),
            "Q4": pd.array(["A;B", "B", "DK", "", None], dtype="string"),
            "Q5": pd.array(["34", "-1", "51.5", None, "20"], dtype="string"),
            "Q6": pd.array(["Great", "N/A", None, "Meh", "N/A"], dtype="string"),
        },
        index=pd.Index([10, 11, 12, 13, 14], name="row"),
    )


def test_labels_categories_missing_and_attrs() -> None:
    df = frame()
    out = sk.label(df, codebook())
    q1 = out["Q1"]
    assert isinstance(q1.dtype, pd.CategoricalDtype) and q1.dtype.ordered
    assert list(q1.cat.categories) == list(SAT.values())
    assert q1.tolist()[:2] == ["Very happy", "Very unhappy"]
    assert q1.isna().tolist() == [False, False, True, True, False]
    assert q1.max() == "Very happy" and q1.min() == "Very unhappy"  # ordered
    assert list(out["Q2"].cat.categories) == ["Quality", "Price"]
    assert out["Q2"].tolist()[:2] == ["Quality", "Price"]
    assert out["Q3"].cat.categories.tolist() == ["Not at all", *map(str, range(1, 10)),
                                                 "Extremely"]
    assert out["Q3"].tolist()[:3] == ["Extremely", "Not at all", "7"]
    assert out["Q4"].tolist()[:2] == ["A;B", "B"] and pd.isna(out["Q4"].iloc[2])
    assert out["Q4"].iloc[3] == ""  # chose nothing: an answer, not a missing one
    assert out["Q5"].dtype == "Float64"
    assert out["Q5"].tolist()[0] == 34 and pd.isna(out["Q5"].iloc[1])
    assert out["Q6"].isna().tolist() == [False, True, True, False, True]
    assert out.attrs["questions"] == {"Q1": "How satisfied?", "Q2": "Why?", "Q3": "Recommend?",
                                      "Q4": "Which?", "Q5": "Age", "Q6": "Comments"}
    assert out.attrs["missing_reasons"] == {
        "Q1": {12: "Don't know"},
        "Q2": {12: "Refused"},
        "Q4": {12: "Don't know"},
        "Q5": {11: "Not given"},
        "Q6": {11: "Not applicable", 14: "Not applicable"},
    }
    assert out.attrs["value_codes"]["Q1"] == {v: k for k, v in SAT.items()}
    assert out.attrs["value_codes"]["Q2"] == {"Quality": "q", "Price": "p"}
    assert Codebook.from_dict(out.attrs["codebook"]) == codebook()
    # the input is left alone
    assert df["Q1"].tolist()[2] == 99 and not df.attrs
    assert out["respondentId"].tolist() == df["respondentId"].tolist()


def test_answers_may_be_codes_or_label_texts_and_relabel_is_stable() -> None:
    df = pd.DataFrame({"Q2": ["q", "Price", "x"]})
    once = sk.label(df, codebook())
    assert once["Q2"].tolist()[:2] == ["Quality", "Price"]
    twice = sk.label(once, codebook())
    assert twice["Q2"].equals(once["Q2"])


@pytest.mark.parametrize(
    ("column", "values", "row", "value"),
    [
        ("Q1", pd.array([1, 7, 2], dtype="Int64"), 1, 7),
        ("Q2", ["q", "p", "maybe"], 2, "maybe"),
        ("Q4", ["A", "A;C", "B"], 1, "A;C"),
        ("Q5", ["3", "4", "forty"], 2, "forty"),
    ],
    ids=["rating", "choice", "multi-option", "number"],
)
def test_unknown_answer_names_column_row_value(column: str, values: object, row: int,
                                               value: object) -> None:
    df = pd.DataFrame({column: values}, index=["r0", "r1", "r2"])
    with pytest.raises(LabelError, match=f"{column}: row 'r{row}' has") as info:
        sk.label(df, codebook())
    assert (info.value.column, info.value.row, info.value.value) == (column, f"r{row}", value)
    assert isinstance(info.value, sk.SurveykitError) and isinstance(info.value, ValueError)
    out = sk.label(df, codebook(), errors="coerce")
    assert pd.isna(out[column].iloc[row])
    assert out.attrs["coerced"] == [{"column": column, "row": f"r{row}", "value": value}]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="errors: expected 'raise' or 'coerce'"):
        sk.label(frame(), codebook(), errors="ignore")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="codebook: expected a Codebook"):
        sk.label(frame(), {"Q1": "x"})  # type: ignore[arg-type]


def test_big_frame_matches_a_plain_mapping() -> None:
    """The vectorised path gives what a row-by-row mapping gives (independent oracle)."""
    rng = np.random.default_rng(3)
    n = 20_000
    raw = rng.choice(["1", "2", "3", "4", "5", "99"], n)
    df = pd.DataFrame({"Q1": pd.array(raw, dtype="string")})
    df.loc[rng.random(n) < 0.1, "Q1"] = None
    out = sk.label(df, codebook())
    expected = [None if v is pd.NA or v == "99" else SAT[v] for v in df["Q1"].tolist()]
    assert [None if pd.isna(v) else v for v in out["Q1"].tolist()] == expected
    reasons = out.attrs["missing_reasons"]["Q1"]
    assert sorted(reasons) == [i for i, v in enumerate(df["Q1"].tolist())
                               if v is not pd.NA and v == "99"]


def test_sample_survey_with_its_codebook(sandbox: sk.Sandbox, client: sk.Client) -> None:
    df = client.surveys.results("CSAT-SMS-2026")
    out = sk.label(df, sandbox.codebook("CSAT-SMS-2026"))
    assert out["Q1"].cat.categories.tolist()[0] == "Very unhappy"
    counts = out["Q1"].value_counts().reindex(out["Q1"].cat.categories)
    raw = df["Q1"].value_counts().reindex(range(1, 6), fill_value=0)
    assert counts.tolist() == raw.tolist()


def test_per_row_attrs_are_read_only_views_pandas_copies_for_free() -> None:
    import copy

    out = sk.label(frame(), codebook())
    reasons = out.attrs["missing_reasons"]["Q6"]
    assert reasons.to_dict() == {11: "Not applicable", 14: "Not applicable"}
    assert dict(reasons.items()) == {11: "Not applicable", 14: "Not applicable"}
    assert reasons[14] == "Not applicable" and len(reasons) == 2
    with pytest.raises(KeyError):
        reasons[10]
    assert copy.deepcopy(out.attrs)["missing_reasons"]["Q6"] is reasons
    assert out["Q6"].attrs["missing_reasons"]["Q6"] is reasons  # selecting keeps, not copies
    coerced = sk.label(pd.DataFrame({"Q2": ["q", "zz", "yy"]}), codebook(),
                       errors="coerce").attrs["coerced"]
    assert len(coerced) == 2 and coerced[1] == {"column": "Q2", "row": 2, "value": "yy"}
    assert coerced[:1] == [{"column": "Q2", "row": 1, "value": "zz"}]
    assert copy.deepcopy(coerced) is coerced


def test_date_questions_held_as_text_are_parsed_in_utc() -> None:
    cb = Codebook([Question("D", "When?", "date", missing={"unknown": "Not known"})])
    df = pd.DataFrame({"D": ["2026-01-02T10:00:00+01:00", "unknown", "2026-01-03", None]})
    out = sk.label(df, cb)
    expected = pd.to_datetime(["2026-01-02T09:00:00Z", None, "2026-01-03T00:00:00Z", None],
                              utc=True, format="ISO8601")
    assert out["D"].tolist() == pd.Series(expected).tolist()
    assert out.attrs["missing_reasons"]["D"] == {1: "Not known"}
    bad = pd.DataFrame({"D": ["2026-01-02", "soon"]})
    with pytest.raises(LabelError, match="D: row 1 has 'soon'"):
        sk.label(bad, cb)
    assert pd.isna(sk.label(bad, cb, errors="coerce")["D"].iloc[1])
