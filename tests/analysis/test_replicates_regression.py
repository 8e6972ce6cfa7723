"""sk.analysis.regress on replicate-weight designs against R's svyglm (survey 4.1-1).

R's figures (``survey:::svyglm.svyrep.design``) are in fixtures/r_replicates_regression.json,
written by tools/r_reference/replicates_regression.R; these tests never run R.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import surveykit as sk
from surveykit.analysis import AnalysisInputError, regress
from tests.analysis._api_data import FIXTURES, clus1, data, strat

R: dict[str, Any] = json.loads((FIXTURES / "r_replicates_regression.json").read_text())
REL = 1e-6
COLUMNS = ["estimate", "se", "statistic", "p_value", "ci_low", "ci_high"]
ODDS = ["odds_ratio", "or_ci_low", "or_ci_high"]
GREG: dict[str, Any] = {"stype": {"E": 4421, "H": 755, "M": 1018}, "enroll": 3_700_000.0}
POPULATION = {"sch.wide": {"No": 1100, "Yes": 5094}, "awards": {"No": 2300, "Yes": 3894}}


def boot() -> sk.ReplicateDesign:
    frame = data("apiclus1")
    weights = pd.read_csv(FIXTURES / "data" / "rep_apiclus1_boot_repweights.csv")
    return sk.ReplicateDesign(
        frame, weights="pw", replicate_weights=weights.set_axis(frame.index), method="bootstrap"
    )


DESIGNS: dict[str, Callable[[], sk.Design]] = {
    "apiclus1_jk1": lambda: clus1().replicates("jk1"),
    "apiclus1_jk1_mse": lambda: clus1().replicates("jk1", mse=True),
    "apistrat_jkn": lambda: strat().replicates("jkn"),
    "apiclus1_boot": boot,
    "brr_clus": lambda: sk.Design(
        data("brr_clus"), weights="pw", strata="pair", psu="dnum"
    ).replicates("brr"),
    "fay_26": lambda: sk.Design(data("brr_strat").head(52), weights="pw", strata="pair").replicates(
        "brr", fay=0.3
    ),
    "apistrat_jkn_raked": lambda: (
        strat().replicates("jkn").rake(POPULATION, tol=1e-13, max_iter=1000)
    ),
    "apiclus1_jk1_e": lambda: (lambda d: d.subset(d.data["stype"] == "E"))(
        clus1().replicates("jk1")
    ),
}
DESIGNS["apiclus1_jk1_greg"] = lambda: clus1().replicates("jk1").calibrate(GREG)
DESIGNS["apiclus1_jk1_cal_raking"] = lambda: (
    clus1().replicates("jk1").calibrate(GREG, method="raking", tol=1e-12, max_iter=1000)
)
CASES = {name: case for name, case in R.items() if name != "versions"}


def _formula(r_formula: str) -> str:
    return r_formula.replace('I(awards == "Yes")', "awards")


def _fit(name: str) -> pd.DataFrame:
    case = CASES[name]
    family = "binomial" if case["family"] == "quasibinomial" else "gaussian"
    return regress(DESIGNS[case["design"]](), _formula(case["formula"]), family=family)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_r_svyglm_on_replicates(name: str) -> None:
    case = CASES[name]
    result = _fit(name)
    assert list(result["term"]) == case["terms"]
    columns = COLUMNS + (ODDS if case["family"] == "quasibinomial" else [])
    for column in columns:
        assert result[column].to_numpy() == pytest.approx(case[column], rel=REL), column
    vcov = np.asarray(result.attrs["vcov"])
    assert vcov == pytest.approx(np.asarray(case["vcov"]), rel=REL, abs=1e-12 * np.abs(vcov).max())
    assert (result["df"] == case["df_residual"]).all()
    assert result.attrs["df_residual"] == case["df_residual"]
    assert result.attrs["degrees_of_freedom"] == case["degf"]
    assert result.attrs["n"] == case["n"]
    assert result.attrs["dropped"] == case["dropped"]
    assert result.attrs["replicates_dropped"] == 0


def test_degrees_of_freedom_are_the_whole_designs_before_dropping_missing_rows() -> None:
    """R: ``degf(design) + 1 - p`` with degf of the design as given (not the complete rows)."""
    case = CASES["apistrat_jkn_gaussian"]
    assert case["degf_complete"] < case["degf"]  # the rule is visible on this case
    result = _fit("apistrat_jkn_gaussian")
    assert result.attrs["df_residual"] == case["degf"] + 1 - len(case["terms"])


def test_intervals_use_t_on_the_residual_degrees_of_freedom() -> None:
    case = CASES["brr_clus_gaussian"]  # 3 residual df: t and normal differ by a lot
    design = DESIGNS["brr_clus"]()
    result = regress(design, _formula(case["formula"]), ci=0.90)
    assert result["ci_low"].to_numpy() == pytest.approx(case["ci90_low"], rel=REL)
    assert result["ci_high"].to_numpy() == pytest.approx(case["ci90_high"], rel=REL)


def test_replicate_fits_start_from_the_full_sample_and_converge() -> None:
    """R's first replicate's coefficients (``return.replicates=TRUE``) are one of ours.

    (R numbers the JK1 replicates in the order the PSUs appear, surveykit in their sorted
    order; the variance does not depend on the order.)
    """
    from surveykit.analysis._regression import _refit
    from surveykit.analysis._replicates import analysis_weight_chunks

    design = DESIGNS["apiclus1_jk1"]()
    frame = design.data
    rows = frame["avg.ed"].notna().to_numpy()
    x = np.column_stack([np.ones(len(frame)), frame["meals"], frame["avg.ed"]])[rows]
    y = (frame["awards"] == "Yes").to_numpy(float)[rows]
    _, weights = next(analysis_weight_chunks(design))
    start = np.asarray(CASES["apiclus1_jk1_binomial"]["estimate"])
    expected = np.asarray(CASES["apiclus1_jk1_binomial"]["replicates_first"])
    block = np.ascontiguousarray(weights[rows].T)
    betas = _refit(x, y, block, start, "binomial", 0)
    closest = min(betas, key=lambda beta: float(np.abs(beta / expected - 1).max()))
    assert closest == pytest.approx(expected, rel=REL)


def test_analysis_weight_chunks_are_the_replicate_weights() -> None:
    from surveykit.analysis._replicates import analysis_weight_chunks

    for name in (
        "apistrat_jkn_raked",
        "apiclus1_jk1_e",
        "apiclus1_jk1_greg",
        "apiclus1_jk1_cal_raking",
    ):
        design = DESIGNS[name]()
        assert isinstance(design, sk.ReplicateDesign)
        whole = design.replicate_weights().to_numpy()
        pieces = np.empty_like(whole)
        for chosen, weights in analysis_weight_chunks(design):
            pieces[:, chosen] = weights
        assert np.array_equal(pieces, whole)


def test_a_replicate_with_a_singular_matrix_is_left_out_as_r() -> None:
    """A level only one PSU has: that PSU's jackknife replicate has an NA coefficient."""
    frame = data("apiclus1")
    lone = frame["dnum"] == frame["dnum"].iloc[0]
    frame["flag"] = np.where(lone, "b", "a")
    design = sk.Design(frame, weights="pw", psu="dnum").replicates("jk1")
    result = regress(design, "api00 ~ meals + flag")
    assert result.attrs["replicates_dropped"] == 1
    assert np.isfinite(result["se"]).all()


def test_separation_in_a_replicate_is_an_error_naming_it() -> None:
    frame = data("apiclus1")
    rng = np.random.default_rng(1)
    # only district 637's rows break the separation: the replicate deleting it (the 12th
    # district in sorted order) separates
    first = (frame["dnum"] == frame["dnum"].iloc[0]).to_numpy()
    frame["y"] = np.where(first, rng.integers(0, 2, len(frame)), frame["meals"] > 50).astype(int)
    design = sk.Design(frame, weights="pw", psu="dnum").replicates("jk1")
    with pytest.raises(AnalysisInputError, match=r"replicate 12: the logistic refit"):
        regress(design, "y ~ meals", family="binomial")


def test_jk1_on_a_simple_random_sample_is_close_to_the_linearised_se() -> None:
    design = sk.Design(data("apisrs"), weights="pw")
    linear = regress(design, "api00 ~ meals + avg.ed")
    jk1 = regress(design.replicates("jk1"), "api00 ~ meals + avg.ed")
    assert jk1["estimate"].to_numpy() == pytest.approx(linear["estimate"].to_numpy(), rel=1e-12)
    # 200 replicates: the jackknife of a regression runs a little above the sandwich
    assert jk1["se"].to_numpy() == pytest.approx(linear["se"].to_numpy(), rel=0.15)


@pytest.mark.parametrize("name", ["apiclus1_boot_binomial", "apistrat_jkn_raked_gaussian"])
def test_small_blocks_give_the_same_figures(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replicates refitted one or two at a time, column products made per block of rows."""
    from surveykit.analysis import _regression

    whole = _fit(name)
    monkeypatch.setattr(_regression, "REFIT_CELLS", 300)
    monkeypatch.setattr(_regression, "ROW_BLOCK_CELLS", 100)
    monkeypatch.setattr(_regression, "PRODUCT_CELLS", 100)
    blocks = _fit(name)
    assert blocks["se"].to_numpy() == pytest.approx(whole["se"].to_numpy(), rel=1e-9)
    assert blocks["se"].to_numpy() == pytest.approx(CASES[name]["se"], rel=REL)
