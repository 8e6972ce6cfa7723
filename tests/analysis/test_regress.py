"""sk.analysis.regress against R's svyglm (survey 4.1-1) and statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

import surveykit as sk
from surveykit.analysis import AnalysisInputError, Design, regress
from tests.analysis._rq_oracle import data, designs, oracle, values

REL = 1e-6
CASES = oracle()["regressions"]
COLUMNS = ["estimate", "se", "statistic", "p_value", "ci_low", "ci_high"]
ODDS = ["odds_ratio", "or_ci_low", "or_ci_high"]


def _python_formula(r_formula: str) -> str:
    return r_formula.replace('I(sch.wide == "Yes")', "yes")


def _fit(name: str) -> pd.DataFrame:
    case = CASES[name]
    family = "binomial" if case["family"] == "quasibinomial" else "gaussian"
    return regress(designs()[case["design"]], _python_formula(case["formula"]), family=family)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_r_svyglm(name: str) -> None:
    case = CASES[name]
    result = _fit(name)
    assert list(result["term"]) == case["terms"]
    columns = COLUMNS + (ODDS if case["family"] == "quasibinomial" else [])
    for column in columns:
        assert result[column].to_numpy() == pytest.approx(values(case[column]), rel=REL), column
    assert (result["df"] == case["df_residual"]).all()
    assert result.attrs["df_residual"] == case["df_residual"]
    assert result.attrs["degrees_of_freedom"] == case["degf"]
    assert result.attrs["n"] == case["n"]


def test_columns_and_attrs() -> None:
    result = _fit("sms_binomial")
    assert list(result.columns) == [
        "term",
        "estimate",
        "se",
        "statistic",
        "df",
        "p_value",
        "ci_low",
        "ci_high",
        *ODDS,
    ]
    attrs = result.attrs
    assert attrs["family"] == "binomial"
    assert attrs["formula"] == "renew ~ age + channel + nps"
    assert attrs["design"].startswith("Design: ")
    frame = designs()["sms"].data
    model = ["renew", "age", "channel", "nps"]
    assert attrs["dropped"] == int(frame[model].isna().any(axis=1).sum())
    assert attrs["n"] == len(frame) - attrs["dropped"]
    vcov = np.array(attrs["vcov"])
    assert np.sqrt(np.diag(vcov)) == pytest.approx(result["se"].to_numpy(), rel=1e-12)
    gaussian = _fit("sms_gaussian")
    assert "odds_ratio" not in gaussian.columns
    assert "event" not in gaussian.attrs


def test_missing_rows_are_a_domain_of_the_design() -> None:
    design = designs()["sms"]
    frame = design.data
    complete = frame[["spend", "age", "channel", "nps"]].notna().all(axis=1)
    formula = "spend ~ age + channel + nps"
    left_out = regress(design, formula)
    subset = regress(design.subset(complete), formula)
    pd.testing.assert_frame_equal(left_out, subset, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize(
    "response",
    [
        pytest.param(lambda f: f["sch.wide"], id="two-level-text"),
        pytest.param(lambda f: f["sch.wide"].astype("category"), id="categorical"),
        pytest.param(lambda f: (f["sch.wide"] == "Yes").astype(int), id="zero-one"),
        pytest.param(lambda f: f["sch.wide"] == "Yes", id="boolean"),
    ],
)
def test_binomial_responses(response: object) -> None:
    frame = data("apistrat")
    frame["answer"] = response(frame)  # type: ignore[operator]
    design = Design(frame, weights="pw", strata="stype", fpc="fpc")
    result = regress(design, "answer ~ ell + meals + stype", family="binomial")
    case = CASES["strat_binomial"]
    assert result["estimate"].to_numpy() == pytest.approx(values(case["estimate"]), rel=REL)
    assert result["se"].to_numpy() == pytest.approx(values(case["se"]), rel=REL)
    assert result.attrs["event"] in ("Yes", "TRUE", None)


def test_two_level_text_event_is_the_second_level() -> None:
    frame = data("apistrat")
    result = regress(frame, "sch.wide ~ ell", family="binomial", weights="pw")
    assert result.attrs["event"] == "Yes"


def test_weights_shortcut_is_a_design_of_those_weights() -> None:
    frame = data("apistrat")
    formula = "api00 ~ ell + meals + stype"
    pd.testing.assert_frame_equal(
        regress(frame, formula, weights="pw").drop(columns=[]),
        regress(Design(frame, weights="pw"), formula),
    )


def test_public_names() -> None:
    assert sk.analysis.regress is regress
    assert "regress" in sk.analysis.__all__


def test_star_expands_to_main_effects_and_interaction() -> None:
    design = designs()["sms"]
    star = regress(design, "spend ~ channel * region")
    spelled = regress(design, "spend ~ channel + region + channel:region")
    pd.testing.assert_frame_equal(star, spelled)


def test_no_intercept_codes_the_first_factor_in_full() -> None:
    result = _fit("strat_no_intercept")
    assert list(result["term"]) == ["ell", "stypeE", "stypeH", "stypeM"]


def test_levels_only_rows_without_weight_use_are_dropped() -> None:
    design = designs()["strat"]
    frame = design.data
    mask = frame["stype"] != "H"
    result = regress(design.subset(mask), "api00 ~ ell + stype")
    assert list(result["term"]) == ["(Intercept)", "ell", "stypeM"]


def test_intercept_only_is_the_mean() -> None:
    design = designs()["strat"]
    fit = regress(design, "api00 ~ 1")
    mean = sk.analysis.means(design, "api00")
    assert list(fit["term"]) == ["(Intercept)"]
    assert fit["estimate"].iloc[0] == pytest.approx(mean["estimate"].iloc[0], rel=1e-12)
    assert fit["se"].iloc[0] == pytest.approx(mean["se"].iloc[0], rel=1e-12)


def test_an_interaction_without_its_main_effect_codes_every_level() -> None:
    # R: model.matrix(~ ell:stype) has ell:stypeE, ell:stypeH and ell:stypeM.
    fit = regress(designs()["strat"], "api00 ~ ell:stype")
    assert list(fit["term"]) == ["(Intercept)", "ell:stypeE", "ell:stypeH", "ell:stypeM"]


def test_numeric_interaction_is_the_product() -> None:
    frame = data("apistrat")
    frame["ell_meals"] = frame["ell"] * frame["meals"]
    product = regress(frame, "api00 ~ ell + meals + ell:meals", weights="pw")
    column = regress(frame, "api00 ~ ell + meals + ell_meals", weights="pw")
    assert product["term"].iloc[-1] == "ell:meals"
    assert product["estimate"].to_numpy() == pytest.approx(column["estimate"].to_numpy())
    assert product["se"].to_numpy() == pytest.approx(column["se"].to_numpy())


def test_a_response_of_text_numbers_or_labels() -> None:
    frame = data("apistrat")
    as_text = frame.assign(api00=frame["api00"].astype(str))
    labelled = frame.assign(api00=frame["api00"].map(lambda v: f"score {v}").astype("category"))
    labelled.attrs["value_codes"] = {"api00": {f"score {v}": v for v in frame["api00"]}}
    expected = regress(frame, "api00 ~ ell", weights="pw")
    pd.testing.assert_frame_equal(regress(as_text, "api00 ~ ell", weights="pw"), expected)
    pd.testing.assert_frame_equal(regress(labelled, "api00 ~ ell", weights="pw"), expected)


def test_more_coefficients_than_degrees_of_freedom_give_no_p_values() -> None:
    # R: summary() gives NaN p-values and confint() NaN intervals when df.residual <= 0.
    frame = data("apiclus1")
    frame["district"] = frame["dnum"].astype(str)
    design = Design(frame, weights="pw", psu="dnum", fpc="fpc")
    result = regress(design, "api00 ~ ell + district")
    assert result.attrs["df_residual"] <= 0
    assert result["p_value"].isna().all()
    assert result["ci_low"].isna().all()
    assert result["se"].notna().all()


def test_backticks_name_any_column() -> None:
    frame = data("apistrat").rename(columns={"ell": "english learners"})
    result = regress(frame, "api00 ~ `english learners` + meals", weights="pw")
    assert list(result["term"]) == ["(Intercept)", "english learners", "meals"]


# -- property tests: unweighted fits equal statsmodels' ---------------------------------


def _random_frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "x2": rng.integers(0, 10, size=n).astype(float),
            "group": rng.choice(["a", "b", "c"], size=n),
        }
    )
    eta = 0.3 + 0.8 * frame["x1"] - 0.1 * frame["x2"] + (frame["group"] == "b") * 0.5
    frame["y"] = eta + rng.normal(size=n)
    frame["event"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return frame


def _statsmodels_matrix(frame: pd.DataFrame) -> pd.DataFrame:
    return sm.add_constant(
        pd.DataFrame(
            {
                "x1": frame["x1"],
                "x2": frame["x2"],
                "groupb": (frame["group"] == "b").astype(float),
                "groupc": (frame["group"] == "c").astype(float),
            }
        )
    )


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(40, 300))
def test_gaussian_without_weights_is_ols(seed: int, n: int) -> None:
    frame = _random_frame(seed, n)
    ours = regress(frame, "y ~ x1 + x2 + group")
    theirs = sm.OLS(frame["y"], _statsmodels_matrix(frame)).fit()
    assert ours["estimate"].to_numpy() == pytest.approx(theirs.params.to_numpy(), rel=1e-8)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(80, 300))
def test_binomial_without_weights_is_logit(seed: int, n: int) -> None:
    frame = _random_frame(seed, n)
    ours = regress(frame, "event ~ x1 + x2 + group", family="binomial")
    theirs = sm.Logit(frame["event"], _statsmodels_matrix(frame)).fit(disp=0, tol=1e-12)
    assert ours["estimate"].to_numpy() == pytest.approx(
        theirs.params.to_numpy(), rel=1e-7, abs=1e-9
    )


def test_robust_errors_without_a_design_are_hc0_times_n_over_n_minus_1() -> None:
    frame = _random_frame(7, 200)
    ours = regress(frame, "y ~ x1 + x2 + group")
    theirs = sm.OLS(frame["y"], _statsmodels_matrix(frame)).fit(cov_type="HC0")
    n = len(frame)
    assert ours["se"].to_numpy() == pytest.approx(
        theirs.bse.to_numpy() * np.sqrt(n / (n - 1)), rel=1e-10
    )
    assert ours.attrs["df_residual"] == n - 5


# -- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formula", "family", "message"),
    [
        ("api00 ~ ell + nothere", "gaussian", "no column 'nothere'"),
        ("sch.wide ~ ell", "gaussian", "not a number (a gaussian model's response"),
        ("stype ~ ell", "binomial", "two distinct answers"),
        ("api00 ~ ell", "binomial", "0/1 answers"),
        ("api00 ~ ell + ell2", "gaussian", "['ell2']"),
        ("I(api00 > 600) ~ ell", "binomial", "not a column name"),
        ("api00 ell", "gaussian", "write one response"),
        ("api00 ~ ell - meals", "gaussian", "only '- 1'"),
        ("api00 ~ ell + ", "gaussian", "missing around an operator"),
        ("api00 ~ api00 + ell", "gaussian", "also a predictor"),
        ("api00 ~ ell", "poisson", "family must be one of"),
        ("api00 ~ ell + one", "gaussian", "'one' has one value"),
        ("api00 ~ 0", "gaussian", "no predictor and no intercept"),
    ],
)
def test_bad_input(formula: str, family: str, message: str) -> None:
    frame = data("apistrat")
    frame["ell2"] = 2 * frame["ell"]
    frame["one"] = "same"
    with pytest.raises(AnalysisInputError) as error:
        regress(frame, formula, family=family, weights="pw")  # type: ignore[arg-type]
    assert message in str(error.value)


def test_separation_is_an_error() -> None:
    frame = pd.DataFrame({"x": np.arange(20.0), "y": (np.arange(20) >= 10).astype(float)})
    with pytest.raises(AnalysisInputError, match="separates"):
        regress(frame, "y ~ x", family="binomial")


def test_concatenating_results_keeps_working() -> None:
    both = pd.concat([_fit("strat_gaussian"), _fit("clus1_gaussian")])
    assert len(both) == 8


def test_weights_with_a_design_is_an_error() -> None:
    with pytest.raises(AnalysisInputError, match="carries its own weights"):
        regress(designs()["strat"], "api00 ~ ell", weights="pw")
