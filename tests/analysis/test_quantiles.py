"""sk.analysis.quantiles against R's svyquantile (survey 4.1-1 defaults) and by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import surveykit as sk
from surveykit.analysis import AnalysisInputError, Design, quantiles
from tests.analysis._rq_oracle import data, designs, oracle, values

REL = 1e-6
CASES = oracle()["quantiles"]


@pytest.mark.parametrize("name", list(CASES))
def test_matches_r_svyquantile(name: str) -> None:
    case = CASES[name]
    by = case.get("by")
    result = quantiles(designs()[case["design"]], case["variable"], q=(0.25, 0.5, 0.75), by=by)
    if by is not None:
        assert list(result[by].astype(str)) == case["group"]
    assert list(result["q"]) == case["q"]
    for column in ("estimate", "se", "ci_low", "ci_high"):
        expected = values(case[column])
        assert result[column].to_numpy() == pytest.approx(expected, rel=REL, nan_ok=True), column
    no_bound = result["ci_low"].isna() | result["ci_high"].isna()
    assert (result.loc[no_bound, "note"] != "").all()
    assert (result.loc[~no_bound, "note"] == "").all()


def test_columns_counts_and_attrs() -> None:
    design = designs()["sms"]
    result = quantiles(design, "satisfaction", q=[0.5, 0.9], by="channel")
    assert list(result.columns) == [
        "channel",
        "question",
        "q",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "n",
        "note",
    ]
    frame = design.data
    answered = frame[frame["satisfaction"].notna()]
    counts = answered.groupby("channel").size()
    assert list(result["n"]) == list(np.repeat(counts.to_numpy(), 2))
    assert result.attrs["estimate"] == "quantiles"
    assert "Woodruff" in result.attrs["method"]
    assert result.attrs["design"].startswith("Design: ")


def test_the_math_rule_by_hand() -> None:
    # Weighted distribution function 0.1, 0.3, 0.6, 1.0 at 1, 2, 3, 4.
    frame = pd.DataFrame({"x": [4.0, 1.0, 3.0, 2.0], "w": [4.0, 1.0, 3.0, 2.0]})
    result = quantiles(frame, "x", q=[0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.99, 1.0], weights="w")
    # R's qrule_math: the first value whose share passes p, the value itself when a share
    # equals p, and (R's last() of no position) the second value below the first share.
    # R 4.2.2, survey 4.1-1: 2 1 2 2 3 3 4 4.
    assert list(result["estimate"]) == [2.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]


def test_equal_weights_summed_as_r_sums_them() -> None:
    # 6 x 33.847 summed in double is not twice 3 x 33.847; in R's long double it is.
    result = quantiles(designs()["ties"], "x", q=0.5)
    assert result["estimate"].tolist() == [2.0]


def test_a_frame_alone_is_a_design_of_equal_weights() -> None:
    frame = data("sms")
    alone = quantiles(frame, "nps", q=(0.25, 0.5))
    designed = quantiles(Design(frame), "nps", q=(0.25, 0.5))
    pd.testing.assert_frame_equal(alone.drop(columns=[]), designed)


def test_weights_shortcut() -> None:
    frame = data("apistrat")
    pd.testing.assert_frame_equal(
        quantiles(frame, "api00", weights="pw"),
        quantiles(Design(frame, weights="pw"), "api00"),
    )


def test_a_group_without_answers() -> None:
    frame = pd.DataFrame(
        {"g": ["a"] * 5 + ["b"] * 2, "x": [1.0, 2.0, 3.0, 4.0, 5.0, np.nan, np.nan]}
    )
    result = quantiles(frame, "x", by="g")
    row = result.set_index("g").loc["b"]
    assert np.isnan(row["estimate"])
    assert row["n"] == 0
    assert row["note"] == "no answers"


def test_public_names() -> None:
    assert sk.analysis.quantiles is quantiles
    assert "quantiles" in sk.analysis.__all__


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"question": "nothere"}, "no question column 'nothere'"),
        ({"question": "region"}, "not a number"),
        ({"question": "nps", "q": 1.5}, "probabilities from 0 to 1"),
        ({"question": "nps", "q": []}, "at least one probability"),
        ({"question": "nps", "q": ["half"]}, "probabilities from 0 to 1"),
        ({"question": "nps", "by": "nothere"}, "by: no column 'nothere'"),
        ({"question": "nps", "ci": 95}, "ci must be between 0 and 1"),
    ],
)
def test_bad_input(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(AnalysisInputError) as error:
        quantiles(designs()["sms"], **kwargs)  # type: ignore[arg-type]
    assert message in str(error.value)
