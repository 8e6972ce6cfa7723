"""sk.Design: construction, bad input, domains and calibration properties.

The figures themselves are checked against R in ``test_design_r.py``; these tests check
what a design refuses (each error names the column, stratum, level or row) and the
properties that hold whatever the data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import surveykit as sk
from surveykit import analysis
from surveykit.errors import AnalysisInputError


@pytest.fixture
def sample() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 300
    stratum = rng.choice(["N", "S", "E"], n)
    return pd.DataFrame(
        {
            "stratum": stratum,
            "hh": [f"{s}{h}" for s, h in zip(stratum, rng.integers(0, 25, n), strict=True)],
            "w": rng.lognormal(0, 0.5, n),
            "y": np.where(rng.random(n) < 0.1, np.nan, rng.normal(3, 1, n)),
            "q": rng.choice(["a", "b", "c"], n),
            "g": rng.choice(["x", "y"], n),
        },
        index=[f"r{i}" for i in range(n)],
    )


@pytest.mark.parametrize(
    ("kwargs", "edit", "match"),
    [
        ({"weights": "w"}, {"w": ("r5", np.nan)}, "weights 'w': row 'r5' has no weight"),
        ({"weights": "w"}, {"w": ("r7", -1.0)}, r"weights 'w': row 'r7' has -1\.0"),
        ({"weights": "nope"}, {}, "weights: no column 'nope'"),
        (
            {"strata": "stratum"},
            {"stratum": ("r9", None)},
            "strata 'stratum': row 'r9' has no value",
        ),
        ({"psu": "hh"}, {"hh": ("r2", None)}, "psu 'hh': row 'r2' has no value"),
        ({"strata": "nope"}, {}, "strata: no column 'nope'"),
    ],
    ids=[
        "missing-weight",
        "negative-weight",
        "no-weights-column",
        "missing-stratum",
        "missing-psu",
        "no-strata-column",
    ],
)
def test_bad_input_names_the_column_and_row(
    sample: pd.DataFrame, kwargs: dict, edit: dict, match: str
) -> None:
    df = sample.copy()
    for column, (row, value) in edit.items():
        df[column] = df[column].astype(object)
        df.loc[row, column] = value
    with pytest.raises(AnalysisInputError, match=match):
        sk.Design(df, **kwargs)


def test_a_lonely_psu_is_an_error_naming_the_stratum_unless_told(sample: pd.DataFrame) -> None:
    df = sample.copy()
    df.loc[df["stratum"] == "E", "hh"] = "only"
    with pytest.raises(AnalysisInputError, match=r"stratum 'E' of 'stratum' has only one PSU"):
        sk.Design(df, weights="w", strata="stratum", psu="hh")
    figures = {
        mode: analysis.means(
            sk.Design(df, weights="w", strata="stratum", psu="hh", lonely_psu=mode), "y"
        )["se"].iloc[0]
        for mode in ("adjust", "remove", "certainty")
    }
    assert figures["remove"] == figures["certainty"]
    assert figures["adjust"] != figures["remove"]
    with pytest.raises(AnalysisInputError, match="lonely_psu must be one of"):
        sk.Design(df, lonely_psu="average")  # type: ignore[arg-type]


def test_fpc_errors_name_the_stratum(sample: pd.DataFrame) -> None:
    df = sample.assign(fpc=1000.0)
    df.loc[df["stratum"] == "S", "fpc"] = 3.0  # fewer than the sample's PSUs there
    with pytest.raises(AnalysisInputError, match="fpc 'fpc': stratum 'S' has a population of 3"):
        sk.Design(df, strata="stratum", psu="hh", fpc="fpc")
    df = sample.assign(fpc=1000.0)
    df.loc["r1", "fpc"] = 999.0
    stratum = df.loc["r1", "stratum"]
    with pytest.raises(AnalysisInputError, match=f"fpc 'fpc' differs within stratum '{stratum}'"):
        sk.Design(df, strata="stratum", fpc="fpc")


def test_a_census_stratum_adds_no_variance(sample: pd.DataFrame) -> None:
    one = sample[sample["stratum"] == "N"]
    counts = one["hh"].nunique()
    census = sk.Design(one.assign(fpc=float(counts)), weights="w", psu="hh", fpc="fpc")
    assert analysis.means(census, "y")["se"].iloc[0] == 0.0
    fraction = sk.Design(one.assign(f=0.5), weights="w", psu="hh", fpc="f")
    full = sk.Design(one, weights="w", psu="hh")
    ratio = analysis.means(fraction, "y")["se"].iloc[0] / analysis.means(full, "y")["se"].iloc[0]
    assert ratio == pytest.approx(np.sqrt(0.5), rel=1e-12)


def test_targets_that_cannot_be_met_name_the_column_and_level(sample: pd.DataFrame) -> None:
    design = sk.Design(sample, weights="w")
    with pytest.raises(sk.weights.RakingError, match="level 'c' is in the data but not in"):
        design.rake({"q": {"a": 0.5, "b": 0.5}})
    with pytest.raises(sk.weights.RakingError, match=r"level 'z'.*no respondent"):
        design.rake({"q": {"a": 0.3, "b": 0.3, "c": 0.2, "z": 0.2}})
    with pytest.raises(sk.weights.RakingError, match="column 'q' sums to 100 but column 'g'"):
        design.rake({"q": {"a": 30, "b": 30, "c": 40}, "g": {"x": 40, "y": 70}})
    with pytest.raises(AnalysisInputError, match="calibrate: give population="):
        design.calibrate({"w": 10.0})
    with pytest.raises(AnalysisInputError, match="column 'y' has no number at row"):
        design.calibrate({"y": 10.0}, population=1000.0)
    with pytest.raises(AnalysisInputError, match="logit' needs finite bounds"):
        design.calibrate({"q": {"a": 1, "b": 1, "c": 1}}, method="logit")


def test_subset_is_a_domain_of_the_whole_sample(sample: pd.DataFrame) -> None:
    design = sk.Design(sample, weights="w", strata="stratum", psu="hh")
    by_group = analysis.means(design, "y", by="g").set_index("g")
    for group in ("x", "y"):
        alone = analysis.means(design.subset(sample["g"] == group), "y").iloc[0]
        assert alone["estimate"] == pytest.approx(by_group.loc[group, "estimate"], rel=1e-12)
        assert alone["se"] == pytest.approx(by_group.loc[group, "se"], rel=1e-12)
    # The subset keeps every row, and the degrees of freedom count PSUs still in it.
    assert len(design.subset(sample["g"] == "x").data) == len(sample)
    with pytest.raises(AnalysisInputError, match="one value per row"):
        design.subset([True, False])


def test_a_design_and_weights_together_are_refused(sample: pd.DataFrame) -> None:
    with pytest.raises(AnalysisInputError, match="a Design carries its own weights"):
        analysis.means(sk.Design(sample), "y", weights="w")


@settings(max_examples=40, deadline=None)
@given(
    shares=st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3),
    seed=st.integers(0, 10_000),
)
def test_any_raked_margin_has_se_zero(shares: list[float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 120
    df = pd.DataFrame(
        {
            "q": rng.choice(["a", "b", "c"], n),
            "g": rng.choice(["x", "y"], n),
            "w": rng.lognormal(0, 0.6, n),
            "y": rng.normal(0, 1, n),
        }
    )
    if df["q"].nunique() < 3 or df["g"].nunique() < 2:
        return
    total = sum(shares)
    targets = {
        "q": dict(zip("abc", [s / total for s in shares], strict=True)),
        "g": {"x": 0.4, "y": 0.6},
    }
    raked = sk.Design(df, weights="w").rake(targets, max_iter=1000)
    for column in ("q", "g"):
        out = analysis.proportions(raked, column)
        np.testing.assert_allclose(
            out["estimate"], [targets[column][o] for o in out["option"]], atol=1e-10
        )
        assert (out["se"] < 1e-10).all()
    assert analysis.means(raked, "y")["se"].iloc[0] > 0


def test_poststratified_margin_has_se_zero_and_a_linear_calibration_meets_its_totals(
    sample: pd.DataFrame,
) -> None:
    design = sk.Design(sample, weights="w", strata="stratum", psu="hh")
    post = design.poststratify("q", {"a": 0.2, "b": 0.3, "c": 0.5})
    assert (analysis.proportions(post, "q")["se"] < 1e-12).all()
    totals = {"q": {"a": 200.0, "b": 300.0, "c": 500.0}, "g": {"x": 450.0, "y": 550.0}}
    cal = design.calibrate(totals)
    w = cal.weights
    for column, levels in totals.items():
        for level, total in levels.items():
            assert w[sample[column] == level].sum() == pytest.approx(total, rel=1e-9)
    assert "calibrated (linear)" in cal.describe()


def test_tests_and_quantiles_take_a_replicate_design(sample: pd.DataFrame) -> None:
    """crosstab, compare and quantiles run on replicates (R figures: test_replicates.py)."""
    replicated = sk.Design(sample, weights="w", strata="stratum", psu="hh").replicates("jkn")
    test = analysis.crosstab(replicated, "q", "g").attrs["test"]
    assert test["test"] == "Rao-Scott F (R svychisq)"
    assert "replicate weights (JKn" in test["design"]
    assert analysis.compare(replicated, "y", by="g")["test"].iloc[0].startswith("design-based")
    assert "replicate weights" in analysis.quantiles(replicated, "y").attrs["variance"]


def test_rows_outside_every_group_are_left_out_whatever_the_number_of_groups(
    sample: pd.DataFrame,
) -> None:
    """Group id -1 (a row in no group) is outside the domain, with one group or several."""
    from surveykit.analysis import _domains

    design = sk.Design(sample.assign(y=sample["y"].fillna(0.0)), weights="w")
    y = design.data["y"].to_numpy()
    one = np.where(sample["g"] == "x", 0, -1)
    two = np.where(sample["g"] == "x", 0, 1)
    alone = _domains.means(design, y, one, 1)
    both = _domains.means(design, y, two, 2)
    assert alone.estimate[0, 0] == pytest.approx(both.estimate[0, 0], rel=1e-12)
    assert alone.variance[0, 0] == pytest.approx(both.variance[0, 0], rel=1e-12)
    assert alone.n[0] == (sample["g"] == "x").sum()


@pytest.mark.parametrize("lonely", ["adjust", "certainty"])
def test_variances_alone_are_the_diagonal_of_the_variance_matrix(
    sample: pd.DataFrame, lonely: str
) -> None:
    """The frames read the variances without the matrix; they are its diagonal, and a
    comparison reads the matrix later (made once)."""
    from surveykit.analysis import _domains
    from surveykit.analysis._influence import Basis, Influence

    frame = sample.copy()
    frame.loc[frame.index[:4], ["stratum", "hh"]] = ["L", "L1"]  # a lonely PSU
    design = sk.Design(frame, weights="w", strata="stratum", psu="hh", lonely_psu=lonely)
    design = design.rake({"g": {"x": 0.4, "y": 0.6}})
    codes = np.asarray(pd.factorize(frame["q"])[0], dtype=np.int64)
    x = Influence(3)
    x.add(np.nan_to_num(frame["y"].to_numpy()), Basis.one_hot(codes, 3))
    z = design.psu_totals(x)
    full = design.covariance(z)
    np.testing.assert_allclose(design.covariance(z, diagonal=True), np.diag(full), rtol=1e-12)
    np.testing.assert_array_equal(design.vcov(x), full)
    ids = np.asarray(pd.factorize(frame["g"], sort=True)[0], dtype=np.int64)
    figures = _domains.means(design, frame["y"].to_numpy(), ids, 2)
    assert figures.vcov is figures.vcov  # made once
    np.testing.assert_allclose(np.diag(figures.vcov), figures.variance[:, 0], rtol=1e-12)
    assert figures.vcov[0, 1] != 0  # the raking ties the two groups' errors


def test_a_replicate_design_has_no_linearised_variance(sample: pd.DataFrame) -> None:
    from surveykit.analysis._influence import Basis, Influence

    replicated = sk.Design(sample, weights="w").replicates("jk1")
    x = Influence(1)
    x.add(np.ones(len(sample)), Basis.constant())
    for ask in (replicated.vcov, replicated.psu_totals):
        with pytest.raises(AnalysisInputError, match="no linearised variance"):
            ask(x)
