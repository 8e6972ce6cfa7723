"""compare on a design: R's svyttest for means, proportions and NPS; textbook unweighted.

R's figures come from tools/r_reference/tests_between_groups.R (fixtures/
r_tests_between_groups.json).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

from surveykit import analysis
from surveykit.errors import AnalysisInputError

REL = 1e-6
_ORACLE = json.loads(
    (Path(__file__).parent / "fixtures" / "r_tests_between_groups.json").read_text("utf-8")
)
TTESTS = [
    pytest.param(t, id=f"{t['design']}-{t['y']}-{t['group']}-{'-'.join(t['levels'] or [])}")
    for t in _ORACLE["ttest"]
]


def _design(designs: dict[str, analysis.Design], name: str) -> analysis.Design:
    if name in designs:
        return designs[name]
    base, _, stype = name.rpartition("_")  # "apistrat_E": subset(apistrat, stype == "E")
    design = designs[base]
    return design.subset(design.data["stype"] == stype)


def _row(out: pd.DataFrame, y: str) -> pd.Series:
    indicator = re.fullmatch(r'I\((\S+) == "(\S+)"\)', y)
    if indicator:
        return out[out["option"] == indicator.group(2)].iloc[0]
    return out.iloc[0]


def _compare(data: Any, y: str, group: str, **kwargs: Any) -> pd.DataFrame:
    indicator = re.fullmatch(r'I\((\S+) == "(\S+)"\)', y)
    if indicator:
        return analysis.compare(
            data, indicator.group(1), by=group, estimate="proportions", **kwargs
        )
    if y == "nps_score":
        return analysis.compare(data, "q_nps", by=group, estimate="nps", **kwargs)
    return analysis.compare(data, y, by=group, estimate="means", **kwargs)


def _assert_is_r(row: pd.Series, r: dict[str, Any], dof: float) -> None:
    assert row["statistic"] == pytest.approx(r["statistic"], rel=REL)
    assert row["difference"] == pytest.approx(r["difference"], rel=REL)
    assert row["estimate_b"] - row["estimate_a"] == pytest.approx(r["difference"], rel=REL)
    assert dof == r["df"]
    if r["p_value"] == "NaN":  # R: pt() on 0 degrees of freedom
        assert np.isnan(row["p_value"]) and np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
        assert "no degrees of freedom" in row["note"]
        return
    assert row["p_value"] == pytest.approx(r["p_value"], rel=REL)
    assert row["ci_low"] == pytest.approx(r["ci_low"], rel=REL)
    assert row["ci_high"] == pytest.approx(r["ci_high"], rel=REL)
    assert row["significant"] == (r["p_value"] < 0.05)
    assert row["test"] == "design-based t-test (R svyttest)"


@pytest.mark.parametrize("r", TTESTS)
def test_design_difference_is_rs_svyttest(r: dict[str, Any], tbg_designs: dict[str, Any]) -> None:
    design = _design(tbg_designs, r["design"])
    if r["levels"]:
        design = design.subset(design.data[r["group"]].isin(r["levels"]))
    out = _compare(design, r["y"], r["group"])
    _assert_is_r(_row(out, r["y"]), r, out.attrs["degrees_of_freedom"])


@pytest.mark.parametrize(
    "r",
    [t for t in TTESTS if t.values[0]["design"] == "sms_weights"],  # type: ignore[index]
)
def test_weights_argument_is_a_design_of_those_weights(
    r: dict[str, Any], tbg_designs: dict[str, Any]
) -> None:
    out = _compare(tbg_designs["sms"].data, r["y"], r["group"], weights="w")
    _assert_is_r(_row(out, r["y"]), r, out.attrs["degrees_of_freedom"])


@pytest.mark.parametrize(
    "r",
    [t for t in TTESTS if t.values[0]["design"] == "sms_waves"],  # type: ignore[index]
)
@pytest.mark.parametrize("weights", ["column", "series"])
def test_two_weighted_frames_are_two_strata(
    r: dict[str, Any], weights: str, tbg_designs: dict[str, Any]
) -> None:
    # svyttest(y ~ wave, svydesign(ids=~1, strata=~wave, weights=~w, data=rbind(w1, w2)))
    sms = tbg_designs["sms"].data
    first, second = sms[sms["wave"] == "W1"], sms[sms["wave"] == "W2"]
    pair: Any = "w" if weights == "column" else (first["w"], second["w"])
    indicator = re.fullmatch(r'I\((\S+) == "(\S+)"\)', r["y"])
    question, kind = (
        (indicator.group(1), "proportions")
        if indicator
        else ("q_nps", "nps")
        if r["y"] == "nps_score"
        else (r["y"], "means")
    )
    out = analysis.compare(first, second, question, weights=pair, estimate=kind, names=("W1", "W2"))
    assert (out["group_a"] == "W1").all() and (out["group_b"] == "W2").all()
    _assert_is_r(_row(out, r["y"]), r, out.attrs["degrees_of_freedom"])


def test_two_frames_keep_the_order_of_their_names(tbg_designs: dict[str, Any]) -> None:
    sms = tbg_designs["sms"].data
    first, second = sms[sms["wave"] == "W1"], sms[sms["wave"] == "W2"]
    out = analysis.compare(first, second, "q_sat", weights="w", names=("wave 9", "wave 10"))
    other = analysis.compare(first, second, "q_sat", weights="w", names=("W1", "W2"))
    assert out["group_a"].iloc[0] == "wave 9"
    assert out["difference"].iloc[0] == pytest.approx(other["difference"].iloc[0])
    assert out["estimate_a"].iloc[0] == pytest.approx(
        np.average(first["q_sat"].dropna(), weights=first.dropna(subset="q_sat")["w"])
    )


def test_missing_answers_are_a_domain(tbg_designs: dict[str, Any]) -> None:
    # R's svyglm drops the rows without an answer, but keeps their strata's PSU counts:
    # the same as a domain; a design built on the answered rows alone differs.
    r = next(t for t in _ORACLE["ttest"] if (t["design"], t["y"]) == ("sms", "q_sat"))
    sms = tbg_designs["sms"].data
    assert sms["q_sat"].isna().any()
    out = analysis.compare(tbg_designs["sms"], "q_sat", by="wave")
    assert out["n_a"].iloc[0] + out["n_b"].iloc[0] == sms["q_sat"].notna().sum()
    assert out["statistic"].iloc[0] == pytest.approx(r["statistic"], rel=REL)
    answered = sms.dropna(subset="q_sat")
    alone = analysis.Design(answered, weights="w", strata="region", psu="household")
    other = analysis.compare(alone, "q_sat", by="wave")
    assert other["statistic"].iloc[0] != pytest.approx(r["statistic"], rel=REL)


def test_a_subsets_other_groups_are_not_groups(tbg_designs: dict[str, Any]) -> None:
    design = tbg_designs["sms"]
    with pytest.raises(AnalysisInputError, match=r"found 3: \['email', 'sms', 'web'\]"):
        analysis.compare(design, "q_sat", by="channel")
    two = design.subset(design.data["channel"].isin(["email", "sms"]).to_numpy())
    out = analysis.compare(two, "q_sat", by="channel")
    assert out[["group_a", "group_b"]].iloc[0].tolist() == ["email", "sms"]


def test_no_variation_is_no_test(tbg_designs: dict[str, Any]) -> None:
    sms = tbg_designs["sms"].data.assign(q_same="yes")
    design = analysis.Design(sms, weights="w", strata="region", psu="household", fpc="fpc")
    row = analysis.compare(design, "q_same", by="wave").iloc[0]
    assert row["difference"] == 0.0
    assert np.isnan(row["statistic"]) and np.isnan(row["p_value"]) and not row["significant"]
    assert row["note"] == "no variation in either group: no test"


def test_bad_input_is_a_clear_error(tbg_designs: dict[str, Any]) -> None:
    design = tbg_designs["sms"]
    sms = design.data
    first, second = sms[sms["wave"] == "W1"], sms[sms["wave"] == "W2"]
    with pytest.raises(AnalysisInputError, match="not supported"):
        analysis.compare(design, design, "q_sat")  # type: ignore[arg-type]
    with pytest.raises(AnalysisInputError, match="carries its own weights"):
        analysis.compare(design, "q_sat", by="wave", weights="w")
    with pytest.raises(AnalysisInputError, match="wave 'b' has none"):
        analysis.compare(first, second, "q_sat", weights=(first["w"], None))  # type: ignore[arg-type]
    with pytest.raises(AnalysisInputError, match="two names"):
        analysis.compare(first, second, "q_sat", weights="w", names=("W", "W"))
    with pytest.raises(AnalysisInputError, match="row 5 has the answer 'x'"):
        analysis.compare(
            design.data.assign(
                q_sat=design.data["q_sat"].astype(object).where(design.data.index != 5, "x")
            ),
            "q_sat",
            by="wave",
            weights="w",
            estimate="means",
        )


@given(
    st.lists(st.integers(0, 10), min_size=2, max_size=30),
    st.lists(st.integers(0, 10), min_size=2, max_size=30),
)
def test_unweighted_means_are_welch_as_before(a: list[int], b: list[int]) -> None:
    df = pd.DataFrame({"g": ["a"] * len(a) + ["b"] * len(b), "y": a + b})
    row = analysis.compare(df, "y", by="g", estimate="means").iloc[0]
    assert row["test"] == "Welch t-test"
    if np.std(a) == 0 and np.std(b) == 0:
        assert np.isnan(row["statistic"])
        return
    with warnings.catch_warnings():  # scipy warns on nearly constant samples
        warnings.simplefilter("ignore", RuntimeWarning)
        reference = stats.ttest_ind(b, a, equal_var=False)
    assert row["statistic"] == pytest.approx(reference.statistic, rel=1e-9, abs=1e-12)
    assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-12)


@given(st.integers(1, 40), st.integers(0, 40), st.integers(1, 40), st.integers(0, 40))
def test_unweighted_proportions_are_z_tests_as_before(
    yes_a: int, no_a: int, yes_b: int, no_b: int
) -> None:
    answers = ["y"] * yes_a + ["n"] * no_a + ["y"] * yes_b + ["n"] * no_b
    df = pd.DataFrame({"g": ["a"] * (yes_a + no_a) + ["b"] * (yes_b + no_b), "q": answers})
    out = analysis.compare(df, "q", by="g", estimate="proportions").set_index("option")
    row = out.loc["y"]
    assert row["test"] == "two-proportion z-test"
    if no_a + no_b == 0:
        assert np.isnan(row["statistic"])
        return
    z, p = proportions_ztest([yes_b, yes_a], [yes_b + no_b, yes_a + no_a])
    assert row["statistic"] == pytest.approx(z, rel=1e-9)
    assert row["p_value"] == pytest.approx(p, rel=1e-9, abs=1e-15)


def test_multi_choice_options_are_their_indicators(tbg_designs: dict[str, Any]) -> None:
    sms = tbg_designs["sms"].data.copy()
    extra = np.where(np.arange(len(sms)) % 3 == 0, ";Speed", "")
    sms["q_multi"] = (sms["q_choice"] + extra).where(sms["q_choice"].notna())
    speed = sms["q_multi"].str.contains("Speed", na=False)
    sms["q_speed"] = np.where(sms["q_multi"].isna(), None, np.where(speed, "yes", "no"))
    design = analysis.Design(sms, weights="w", strata="region", psu="household", fpc="fpc")
    multi = analysis.compare(design, "q_multi", by="wave").set_index("option").loc["Speed"]
    single = analysis.compare(design, "q_speed", by="wave").set_index("option").loc["yes"]
    for column in ("estimate_a", "estimate_b", "se", "statistic", "p_value", "ci_low"):
        assert multi[column] == pytest.approx(single[column], rel=1e-12)


def test_two_labelled_waves_with_weights_keep_their_value_codes() -> None:
    """Stacking two labelled waves keeps sk.label's codes, so NPS reads its labels."""
    labels = {"0": "Not at all likely", **{str(i): str(i) for i in range(1, 10)}, "10": "Extremely"}
    order = list(labels.values())

    def wave(values: list[int], reasons: str) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "Q1": pd.Categorical(
                    [labels[str(v)] for v in values], categories=order, ordered=True
                ),
                "w": 1.0 + np.arange(len(values)) % 3,
            }
        )
        frame.attrs = {"value_codes": {"Q1": {t: c for c, t in labels.items()}}, "missing": reasons}
        return frame

    a, b = wave([0, 10, 9, 3, 8, 10], "a"), wave([10, 10, 9, 0, 7, 9, 10], "b")
    out = analysis.compare(a, b, "Q1", estimate="nps", weights="w")
    plain_a = analysis.nps(
        pd.DataFrame({"Q1": [0, 10, 9, 3, 8, 10], "w": a["w"]}), "Q1", weights="w"
    )
    assert out["estimate_a"].iloc[0] == pytest.approx(plain_a["estimate"].iloc[0])
