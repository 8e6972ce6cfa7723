"""crosstab on a design: R's svychisq (Rao-Scott F and Chisq) and svyttest letters.

R's figures come from tools/r_reference/tests_between_groups.R (fixtures/
r_tests_between_groups.json); unweighted tables keep Pearson's test and z-test letters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chi2_contingency

from surveykit import analysis
from surveykit.errors import AnalysisInputError

REL = 1e-6

_ORACLE = json.loads(
    (Path(__file__).parent / "fixtures" / "r_tests_between_groups.json").read_text("utf-8")
)
CHISQ = [pytest.param(c, id=f"{c['design']}-{c['question']}-{c['by']}") for c in _ORACLE["chisq"]]
LETTER_TABLES = sorted({(t["design"], t["question"], t["by"]) for t in _ORACLE["letters"]})


def _design(designs: dict[str, analysis.Design], name: str) -> analysis.Design:
    if name in designs:
        return designs[name]
    base, _, stype = name.rpartition("_")  # "apistrat_E": subset(apistrat, stype == "E")
    design = designs[base]
    return design.subset(design.data["stype"] == stype)


@pytest.mark.parametrize("r", CHISQ)
def test_rao_scott_f_is_rs_svychisq(r: dict[str, Any], tbg_designs: dict[str, Any]) -> None:
    design = _design(tbg_designs, r["design"])
    test = analysis.crosstab(design, r["question"], r["by"]).attrs["test"]
    assert test["test"] == "Rao-Scott F (R svychisq)"
    assert test["statistic"] == pytest.approx(r["F"], rel=REL)
    assert test["ndf"] == pytest.approx(r["ndf"], rel=REL)
    assert test["ddf"] == pytest.approx(r["ddf"], rel=REL)
    assert test["p_value"] == pytest.approx(r["p_F"], rel=REL)
    assert test["chi2"] == pytest.approx(r["chisq"], rel=REL)  # R's Pearson X^2, Ntotal = N
    assert test["dof"] == r["chisq_df"]
    assert test["weighted"] is True
    assert test["note"] == ""


@pytest.mark.parametrize("r", CHISQ)
def test_rao_scott_chisq_is_rs_first_order(r: dict[str, Any], tbg_designs: dict[str, Any]) -> None:
    design = _design(tbg_designs, r["design"])
    table = analysis.crosstab(design, r["question"], r["by"], statistic="Chisq")
    test = table.attrs["test"]
    assert test["test"] == 'Rao-Scott chi-square (R svychisq, statistic="Chisq")'
    assert test["statistic"] == pytest.approx(r["chisq"], rel=REL)
    assert test["ndf"] == r["chisq_df"]
    assert np.isnan(test["ddf"])
    assert test["p_value"] == pytest.approx(r["p_chisq"], rel=REL)


def test_weights_argument_is_a_design_of_those_weights(tbg_designs: dict[str, Any]) -> None:
    r = next(c for c in _ORACLE["chisq"] if c["design"] == "sms_weights")
    sms = tbg_designs["sms"].data
    test = analysis.crosstab(sms, r["question"], r["by"], weights="w").attrs["test"]
    assert test["statistic"] == pytest.approx(r["F"], rel=REL)
    assert test["p_value"] == pytest.approx(r["p_F"], rel=REL)


def test_missing_answers_and_groups_stay_in_the_design(tbg_designs: dict[str, Any]) -> None:
    # R's na.rm=TRUE is a domain: the rows without an answer or channel stay in the design
    # (its n / (n - 1) and degrees of freedom); a design of the answered rows alone differs.
    r = next(c for c in _ORACLE["chisq"] if c["design"] == "sms_weights" and c["by"] == "channel")
    sms = tbg_designs["sms"].data
    assert sms["q_choice"].isna().any() and sms["channel"].isna().any()
    answered = sms.dropna(subset=["q_choice", "channel"])
    test = analysis.crosstab(sms, "q_choice", "channel", weights="w").attrs["test"]
    other = analysis.crosstab(answered, "q_choice", "channel", weights="w").attrs["test"]
    assert test["ddf"] == pytest.approx(r["ddf"], rel=REL)
    assert other["ddf"] != pytest.approx(r["ddf"], rel=REL)
    assert test["n"] == len(answered)


@pytest.mark.parametrize(
    ("design", "question", "by"), [pytest.param(*t, id="-".join(t)) for t in LETTER_TABLES]
)
def test_letters_are_rs_pairwise_svyttest(
    design: str, question: str, by: str, tbg_designs: dict[str, Any]
) -> None:
    table = analysis.crosstab(_design(tbg_designs, design), question, by)
    pairs = table.attrs["letters_pairs"].set_index(["option", "column_a", "column_b"])
    expected = [
        t
        for t in _ORACLE["letters"]
        if (t["design"], t["question"], t["by"]) == (design, question, by)
    ]
    assert len(pairs) == len(expected)
    for r in expected:
        row = pairs.loc[(r["level"], r["a"], r["b"])]
        assert row["difference"] == pytest.approx(r["difference"], rel=REL)
        assert row["statistic"] == pytest.approx(r["statistic"], rel=REL)
        assert row["df"] == r["df"]
        assert row["p_value"] == pytest.approx(r["p_value"], rel=REL)
        assert row["p_adjusted"] == pytest.approx(min(3 * r["p_value"], 1.0), rel=REL)
    assert table.attrs["letters_test"].startswith("design-based t-test")
    _letters_follow_pairs(table)


def _letters_follow_pairs(table: pd.DataFrame) -> None:
    keys = table.attrs["column_letters"]
    expected = {(o, c): "" for o in table.index for c in table.columns}
    pairs = table.attrs["letters_pairs"]
    for row in pairs.itertuples():
        if row.p_adjusted < table.attrs["alpha"]:
            larger, smaller = (
                (row.column_b, row.column_a) if row.difference > 0 else (row.column_a, row.column_b)
            )
            expected[(row.option, larger)] += keys[smaller]
    letters = table.attrs["letters"]
    got = {(o, c): letters.loc[o, c] for o in table.index for c in table.columns}
    assert got == {k: "".join(sorted(v)) for k, v in expected.items()}


def test_some_letters_are_shown(tbg_designs: dict[str, Any]) -> None:
    # R: Yes is 39 points higher in E than in H and 21 than in M (Bonferroni p 1.7e-6 and
    # 0.009); H against M, 18 points, has p 0.18.
    table = analysis.crosstab(tbg_designs["apistrat"], "sch.wide", "stype")
    assert table.attrs["column_letters"] == {"E": "A", "H": "B", "M": "C"}
    letters = table.attrs["letters"]
    assert letters.loc["Yes"].tolist() == ["BC", "", ""]
    assert letters.loc["No"].tolist() == ["", "A", "A"]


def test_multi_choice_letters_test_each_options_indicator(tbg_designs: dict[str, Any]) -> None:
    sms = tbg_designs["sms"].data.copy()
    rng = np.random.default_rng(5)
    extra = np.where(rng.random(len(sms)) < 0.4, ";Speed", "")
    sms["q_multi"] = (sms["q_choice"] + extra).where(sms["q_choice"].notna())
    speed = sms["q_multi"].str.contains("Speed", na=False)
    sms["q_speed"] = np.where(sms["q_multi"].isna(), None, np.where(speed, "yes", "no"))
    design = analysis.Design(sms, weights="w", strata="region", psu="household", fpc="fpc")
    table = analysis.crosstab(design, "q_multi", "channel", kind="multi")
    assert np.isnan(table.attrs["test"]["statistic"])
    assert "multi-choice" in table.attrs["test"]["note"]
    speed = analysis.crosstab(design, "q_speed", "channel").attrs["letters_pairs"]
    multi = table.attrs["letters_pairs"]
    got = multi[multi["option"] == "Speed"].reset_index(drop=True)
    want = speed[speed["option"] == "yes"].reset_index(drop=True)
    columns = ["difference", "se", "statistic", "df", "p_value"]
    np.testing.assert_allclose(got[columns].to_numpy(float), want[columns].to_numpy(float))


def test_a_column_of_one_respondent_is_tested(tbg_designs: dict[str, Any]) -> None:
    table = analysis.crosstab(tbg_designs["sms"], "q_choice", "tiny", normalize=False)
    assert table["solo"].sum() == pytest.approx(
        tbg_designs["sms"].data.query("tiny == 'solo'")["w"].sum()
    )
    pairs = table.attrs["letters_pairs"]
    assert set(pairs["column_a"]) | set(pairs["column_b"]) == {"pair", "rest", "solo"}
    assert np.isfinite(table.attrs["test"]["p_value"])


def test_percentages_are_weighted_column_percentages(tbg_designs: dict[str, Any]) -> None:
    sms = tbg_designs["sms"].data
    table = analysis.crosstab(tbg_designs["sms"], "q_choice", "channel")
    weighted = sms.pivot_table(index="q_choice", columns="channel", values="w", aggfunc="sum")
    np.testing.assert_allclose(table.to_numpy(), 100 * weighted / weighted.sum(), rtol=1e-12)


def test_bad_statistic_is_an_error_naming_it(tbg_designs: dict[str, Any]) -> None:
    with pytest.raises(AnalysisInputError, match="'Wald'"):
        analysis.crosstab(tbg_designs["sms"], "q_choice", "channel", statistic="Wald")  # type: ignore[arg-type]
    with pytest.raises(AnalysisInputError, match="carries its own weights"):
        analysis.crosstab(tbg_designs["sms"], "q_choice", "channel", weights="w")


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y", "z", "v"])),
        min_size=4,
        max_size=60,
    )
)
def test_unweighted_is_pearson_as_before(rows: list[tuple[str, str]]) -> None:
    df = pd.DataFrame(rows, columns=["g", "q"])
    table = analysis.crosstab(df, "q", "g")
    test = table.attrs["test"]
    observed = pd.crosstab(df["q"], df["g"]).to_numpy()
    assert test["weighted"] is False
    assert test["test"].startswith("Pearson chi-square")
    if min(observed.shape) < 2:
        assert np.isnan(test["chi2"])
        return
    reference = chi2_contingency(observed, correction=False)
    assert test["chi2"] == pytest.approx(reference.statistic, rel=1e-12, abs=1e-12)
    assert test["statistic"] == test["chi2"]
    assert test["dof"] == test["ndf"] == reference.dof
    assert test["p_value"] == pytest.approx(reference.pvalue, rel=1e-12, abs=1e-15)
    assert table.attrs["letters_test"].startswith("two-proportion z-test")
    _letters_follow_pairs(table)


def test_one_column_has_no_test_and_no_letters(tbg_designs: dict[str, Any]) -> None:
    design = tbg_designs["sms"]
    one = design.subset((design.data["channel"] == "web").to_numpy())
    table = analysis.crosstab(one, "q_choice", "channel")
    assert list(table.columns) == ["web"]
    assert np.isnan(table.attrs["test"]["p_value"])
    assert "fewer than two" in table.attrs["test"]["note"]
    assert (table.attrs["letters"] == "").all().all()
    assert table.attrs["letters_pairs"].empty


def test_an_unchosen_scale_point_is_left_out_of_the_test(tbg_designs: dict[str, Any]) -> None:
    sms = tbg_designs["sms"].data
    scale = ["Price", "Service", "Speed", "Other"]
    labelled = sms.assign(q_choice=pd.Categorical(sms["q_choice"], categories=scale, ordered=True))
    design = analysis.Design(labelled, weights="w", strata="region", psu="household", fpc="fpc")
    table = analysis.crosstab(design, "q_choice", "channel")
    assert table.index.tolist() == scale
    r = next(c for c in _ORACLE["chisq"] if c["design"] == "sms" and c["by"] == "channel")
    assert table.attrs["test"]["statistic"] == pytest.approx(r["F"], rel=REL)
    assert (table.attrs["letters"].loc["Other"] == "").all()
    other = table.attrs["letters_pairs"].query("option == 'Other'")
    assert other["p_value"].isna().all()
