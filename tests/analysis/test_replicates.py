"""Replicate-weight designs against R's survey package (tools/r_reference/replicates.R).

R's figures are committed in fixtures/r_replicates.json; these tests never run R.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import surveykit as sk
from surveykit import analysis as sa
from surveykit.analysis._replicates import _Jackknife
from tests.analysis._api_data import FIXTURES, clus1, data, strat

R = json.loads((FIXTURES / "r_replicates.json").read_text())
REL = 1e-6
ABS_VARIANCE = 1e-20  # per squared unit of the estimate: a calibrated margin's 0 is ~1e-27

POPULATION = {"sch.wide": {"No": 1100, "Yes": 5094}, "awards": {"No": 2300, "Yes": 3894}}
STYPE_TOTALS = {"E": 4421, "H": 755, "M": 1018}
GREG: dict[str, Any] = {"stype": STYPE_TOTALS, "enroll": 3_700_000.0}
TIGHT: dict[str, Any] = {"tol": 1e-12, "max_iter": 1000}  # R's epsilon = 1e-12, maxit = 1000


def boot() -> sk.ReplicateDesign:
    frame = data("apiclus1")
    weights = pd.read_csv(FIXTURES / "data" / "rep_apiclus1_boot_repweights.csv")
    return sk.ReplicateDesign(
        frame,
        weights="pw",
        replicate_weights=weights.set_axis(frame.index),
        method="bootstrap",
        scale=R["apiclus1_boot"]["scale"],
    )


def brr_clus() -> sk.Design:
    """7 strata (``pair``) of 2 clusters each, R's 8 BRR replicates."""
    return sk.Design(data("brr_clus"), weights="pw", strata="pair", psu="dnum")


def brr_strat(rows: int) -> sk.Design:
    """``rows / 2`` strata of 2 schools each (numbered: R orders them as text)."""
    return sk.Design(data("brr_strat").head(rows), weights="pw", strata="pair")


CASES: dict[str, tuple[Callable[[], sk.Design], str]] = {
    "apiclus1_jk1": (lambda: clus1().replicates("jk1"), "avg.ed"),
    "apiclus1_jk1_mse": (lambda: clus1().replicates("jk1", mse=True), "avg.ed"),
    "apistrat_jkn": (lambda: strat().replicates("jkn"), "acs.46"),
    "apisrs_jk1": (lambda: sk.Design(data("apisrs"), weights="pw").replicates(), "acs.46"),
    "apiclus1_boot": (boot, "avg.ed"),
    "apistrat_jkn_raked": (lambda: strat().rake(POPULATION).replicates("jkn"), "acs.46"),
    "apistrat_jkn_then_raked": (lambda: strat().replicates("jkn").rake(POPULATION), "acs.46"),
    "apiclus1_jk1_post": (
        lambda: clus1().replicates("jk1").poststratify("stype", STYPE_TOTALS),
        "avg.ed",
    ),
    "apiclus1_jk1_greg": (lambda: clus1().calibrate(GREG).replicates("jk1"), "avg.ed"),
    "apiclus1_jk1_then_greg": (lambda: clus1().replicates("jk1").calibrate(GREG), "avg.ed"),
    "apiclus1_jk1_cal_raking": (
        lambda: clus1().replicates("jk1").calibrate(GREG, method="raking", **TIGHT),
        "avg.ed",
    ),
    "apiclus1_jk1_then_cal_raking": (
        lambda: clus1().calibrate(GREG, method="raking", **TIGHT).replicates("jk1"),
        "avg.ed",
    ),
    "apiclus1_jk1_cal_logit": (
        lambda: (
            clus1().replicates("jk1").calibrate(GREG, method="logit", bounds=(0.5, 2.5), **TIGHT)
        ),
        "avg.ed",
    ),
    "apiclus1_jk1_cal_trim": (
        lambda: (
            clus1().replicates("jk1").calibrate(GREG, method="raking", trim=(0.95, 1.4), **TIGHT)
        ),
        "avg.ed",
    ),
    "apiclus1_jk1_then_cal_trim": (
        lambda: (
            clus1().calibrate(GREG, method="raking", trim=(0.95, 1.4), **TIGHT).replicates("jk1")
        ),
        "avg.ed",
    ),
    "apiclus1_boot_cal_raking": (
        lambda: boot().calibrate(GREG, method="raking", **TIGHT),
        "avg.ed",
    ),
    "brr_clus": (lambda: brr_clus().replicates("brr"), "avg.ed"),
    "brr_26": (lambda: brr_strat(52).replicates("brr"), "acs.46"),
    "fay_26": (lambda: brr_strat(52).replicates("brr", fay=0.3), "acs.46"),
    "brr_40": (lambda: brr_strat(80).replicates("brr"), "acs.46"),
    "brr_clus_raked": (
        lambda: brr_clus().rake({"sch.wide": POPULATION["sch.wide"]}).replicates("brr", fay=0.5),
        "avg.ed",
    ),
    **{
        f"apistrat_lonely_{rule}": (
            lambda rule=rule: sk.Design(
                data("apistrat_lonely"), weights="pw", strata="stratum", lonely_psu=rule
            ).replicates("jkn"),
            "acs.46",
        )
        for rule in ("adjust", "remove", "certainty")
    },
}
R_CASE = {
    "apiclus1_jk1_then_cal_trim": "apiclus1_jk1_cal_trim",
    "apiclus1_jk1_then_cal_raking": "apiclus1_jk1_cal_raking",
    "apistrat_jkn_then_raked": "apistrat_jkn_raked",
    "apiclus1_jk1_then_greg": "apiclus1_jk1_greg",
}


def _figures(frame: pd.DataFrame, options: int = 1) -> dict[str, Any]:
    """Estimate, variance and deff in R's order (svyby: option-major)."""
    out = {
        "estimate": frame["estimate"].to_numpy(),
        "variance": frame["se"].to_numpy() ** 2,
        "deff": frame["deff"].to_numpy() if "deff" in frame else None,
    }
    if options > 1:
        out = {k: None if v is None else v.reshape(-1, options).T.ravel() for k, v in out.items()}
    return out


STATISTICS: dict[str, Callable[[sk.Design, str], dict[str, Any]]] = {
    "mean": lambda d, na: _figures(sa.means(d, "api00")),
    "mean_missing": lambda d, na: _figures(sa.means(d, na)),
    "proportions": lambda d, na: _figures(sa.proportions(d, "stype")),
    "total": lambda d, na: _figures(sa.totals(d, "enroll")),
    "ratio": lambda d, na: _figures(sa.ratio(d, "api00", "api99")),
    "nps": lambda d, na: _figures(sa.nps(d, "nps_q")),
    "mean_by": lambda d, na: _figures(sa.means(d, "api00", by="stype")),
    "mean_missing_by": lambda d, na: _figures(sa.means(d, na, by="sch.wide")),
    "proportions_by": lambda d, na: _figures(sa.proportions(d, "awards", by="stype"), 2),
    "total_by": lambda d, na: _figures(sa.totals(d, "enroll", by="stype")),
    "ratio_by": lambda d, na: _figures(sa.ratio(d, "api00", "api99", by="stype")),
    "mean_sparse_by": lambda d, na: _figures(sa.means(d, "api00", by="dgroup")),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request: pytest.FixtureRequest) -> tuple[str, sk.Design, str]:
    make, missing = CASES[request.param]
    return R_CASE.get(request.param, request.param), make(), missing


@pytest.mark.parametrize("statistic", list(STATISTICS))
def test_matches_r(case: tuple[str, sk.Design, str], statistic: str) -> None:
    name, design, missing = case
    ours = STATISTICS[statistic](design, missing)
    theirs = {
        k: np.atleast_1d(np.asarray(v, dtype=float))
        for k, v in R[name][statistic].items()
        if v != {}  # R's NULL: no design effect
    }
    assert ours["estimate"] == pytest.approx(theirs["estimate"], rel=REL)
    zero = ABS_VARIANCE * max(1.0, float(np.nanmax(np.abs(theirs["estimate"]))) ** 2)
    assert ours["variance"] == pytest.approx(theirs["variance"], rel=REL, abs=zero)
    if theirs.get("deff", np.array([])).size:  # R gives none for svyby proportions, ratios
        assert ours["deff"] == pytest.approx(theirs["deff"], rel=REL, abs=1e-15)


def test_degrees_of_freedom_scale_and_rscales_match_r(case: tuple[str, sk.Design, str]) -> None:
    name, design, _ = case
    assert isinstance(design, sk.ReplicateDesign)
    assert design.degrees_of_freedom == R[name]["degf"]
    assert design.scale == pytest.approx(R[name]["scale"], rel=1e-12)
    assert np.sort(design.rscales) == pytest.approx(np.sort(R[name]["rscales"]), rel=1e-12)
    assert design.n_replicates == len(R[name]["rscales"])


def test_raked_margin_has_no_variance_on_replicates() -> None:
    design = strat().rake(POPULATION).replicates("jkn")
    figures = sa.proportions(design, "sch.wide")
    assert figures["estimate"].to_numpy() == pytest.approx(
        R["apistrat_jkn_raked"]["margin"]["estimate"], rel=REL
    )
    assert (figures["se"].to_numpy() < 1e-10).all()
    # R's as.svrepdesign() of the raked design does not recalibrate (the margin keeps a
    # variance); the documented difference.
    assert R["apistrat_raked_then_jkn"]["margin"]["variance"][0] > 1e-4


def test_intervals_use_the_replicate_degrees_of_freedom() -> None:
    design = clus1().replicates("jk1")
    frame = sa.means(design, "api00")
    assert frame.attrs["degrees_of_freedom"] == 14
    assert "JK1" in frame.attrs["variance"] and "replicates' mean" in frame.attrs["variance"]
    from scipy import stats

    half = stats.t.ppf(0.975, 14) * frame["se"].iloc[0]
    assert frame["ci_high"].iloc[0] - frame["estimate"].iloc[0] == pytest.approx(half)


def test_bootstrap_from_a_design_is_seeded_and_unbiased_for_a_total() -> None:
    design = strat()
    one = design.replicates("bootstrap", replicates=200, seed=7)
    two = design.replicates("bootstrap", replicates=200, seed=7)
    assert one.n_replicates == 200
    # every replicate's counts sum to n_h in each stratum: rank PSUs - strata + 1 (R's too)
    assert one.degrees_of_freedom == 200 - 3
    a, b = sa.totals(one, "enroll"), sa.totals(two, "enroll")
    assert a["se"].iloc[0] == b["se"].iloc[0]
    # the rescaled bootstrap estimates the linearised variance (with its fpc): within the
    # bootstrap's own noise (200 replicates: about 10% on the se)
    linear = sa.totals(design, "enroll")["se"].iloc[0]
    assert a["se"].iloc[0] == pytest.approx(linear, rel=0.25)
    weights = one.replicate_weights()
    assert weights.shape == (200, 200)
    assert (weights.to_numpy() >= 0).all()


def test_replicate_weights_are_the_base_weights_times_psu_multipliers() -> None:
    design = clus1().replicates("jk1")
    weights = design.replicate_weights().to_numpy()
    pw = data("apiclus1")["pw"].to_numpy()
    # JK1 drops one PSU per replicate and scales the others by n / (n - 1)
    assert set(np.round(np.unique(weights / pw[:, None]), 12)) == {0.0, round(15 / 14, 12)}
    assert ((weights == 0).sum(axis=1) == 1).all()


def test_subset_zeroes_every_replicate() -> None:
    design = clus1().replicates("jk1")
    frame = design.data
    sub = design.subset(frame["stype"] == "E")
    by = sa.means(design, "api00", by="stype")
    alone = sa.means(sub, "api00")
    assert alone["estimate"].iloc[0] == pytest.approx(by["estimate"].iloc[0], rel=1e-12)
    assert alone["se"].iloc[0] == pytest.approx(by["se"].iloc[0], rel=1e-12)
    assert isinstance(sub, sk.ReplicateDesign)


# -- JK1 against linearisation --------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_jk1_equals_linearisation_for_totals_and_is_close_for_means(seed: int) -> None:
    """JK1 on an unstratified, unclustered design: exact for a total; a mean within 5/n.

    A total is linear, so its jackknife variance (n-1)/n sum (T_r - mean T_r)^2 is exactly
    n/(n-1) sum (z_i - mean z)^2, the linearised one. A mean is a ratio: its jackknife
    variance differs from the linearised one by O(1/n); with n = 400 weights from 1 to 5 we
    test |se_JK / se_lin - 1| < 5 / n.
    """
    rng = np.random.default_rng(seed)
    n = 400
    frame = pd.DataFrame({"w": rng.uniform(1, 5, n), "y": rng.gamma(2.0, 3.0, n)})
    frame.loc[rng.choice(n, 20, replace=False), "y"] = np.nan
    frame["g"] = rng.choice(["a", "b", "c"], n)
    design = sk.Design(frame, weights="w")
    jk = design.replicates("jk1")
    assert jk.degrees_of_freedom == design.degrees_of_freedom == n - 1
    for by in (None, "g"):
        linear_total = sa.totals(design, "y", by=by)["se"].to_numpy()
        jk_total = sa.totals(jk, "y", by=by)["se"].to_numpy()
        assert jk_total == pytest.approx(linear_total, rel=1e-10)
        linear = sa.means(design, "y", by=by)["se"].to_numpy()
        jk_mean = sa.means(jk, "y", by=by)["se"].to_numpy()
        assert np.abs(jk_mean / linear - 1).max() < 5 / n


def test_jkn_rank_formula_matches_a_numerical_rank() -> None:
    rng = np.random.default_rng(3)
    psu_stratum = np.repeat(np.arange(4), [3, 5, 2, 6])
    design = sk.Design(
        pd.DataFrame({"h": psu_stratum, "p": np.arange(len(psu_stratum)), "y": 1.0}),
        strata="h",
        psu="p",
    ).replicates("jkn")
    jackknife = design._replicates.jackknife
    assert isinstance(jackknife, _Jackknife)
    dense = jackknife.columns(slice(None))
    for _ in range(30):
        present = rng.random(len(psu_stratum)) < rng.uniform(0.2, 1.0)
        expected = np.linalg.matrix_rank(dense[present]) if present.any() else 0
        assert jackknife.rank(present) == expected


def test_the_ldl_certificate_agrees_with_the_eigenvalues() -> None:
    from surveykit.analysis._replicates import _exceeds

    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 90))
        x = rng.normal(size=(int(rng.integers(1, 2 * n + 2)), n)) * rng.uniform(0.1, 10, n)
        gram = x.T @ x
        values = np.linalg.eigvalsh(gram)
        for floor in (0.0, values.min() / 2, values.min() * 2, float(np.median(values))):
            if abs(values.min() - floor) > 1e-9 * values.max():  # not on the edge
                assert _exceeds(gram, floor) == (values.min() > floor)


def _numerical_rank(reps: Any) -> int:
    """The eigenvalue rank of the units' multipliers, as computed before the certificate."""
    units, n_units = reps._unit_codes()
    present = np.zeros(n_units, dtype=bool)
    present[units[reps.row_scale != 0]] = True
    rows = reps._unit_rows(np.flatnonzero(present))
    values = np.linalg.eigvalsh(rows.T @ rows)
    return int((values > values.max() * 1e-10).sum())


@pytest.mark.parametrize("seed", range(4))
def test_the_bootstrap_rank_certificate_gives_the_eigenvalue_rank(seed: int) -> None:
    """Full rank is shown on a subset of PSUs; short of it, the eigenvalues decide."""
    rng = np.random.default_rng(seed)
    strata, per = int(rng.integers(2, 6)), int(rng.integers(2, 40))
    frame = pd.DataFrame(
        {
            "h": np.repeat(np.arange(strata), per * 3),
            "p": np.repeat(np.arange(strata * per), 3),
            "w": rng.uniform(1, 3, strata * per * 3),
            "y": rng.normal(size=strata * per * 3),
            "g": rng.integers(0, 3, strata * per * 3),
        }
    )
    design = sk.Design(frame, weights="w", strata="h", psu="p")
    for count in (5, strata * per // 2, strata * per - strata, strata * per + 10):
        replicated = design.replicates("bootstrap", replicates=max(count, 2), seed=seed)
        for version in (
            replicated,
            replicated.subset(frame["g"] != 0),
            replicated.rake({"g": {0: 0.3, 1: 0.3, 2: 0.4}}),
        ):
            reps = version._replicates
            assert reps.rank == _numerical_rank(reps)
    # a replicate repeated: never shown full, so the eigenvalues count it once
    reps = design.replicates("bootstrap", replicates=6, seed=seed)._replicates
    assert reps.factors is not None
    twice = dataclasses.replace(
        reps, factors=np.hstack([reps.factors, reps.factors[:, :1]]), rscales=np.ones(7)
    )
    assert twice.rank == _numerical_rank(twice) == _numerical_rank(reps)


@pytest.mark.parametrize("shift", [0.0, 1e3, 1e7])
def test_a_means_design_effect_does_not_move_with_a_shift_of_the_answers(shift: float) -> None:
    """Far from 0 the one-pass sum of squares would cancel: the two-pass one takes over."""
    frame = data("apistrat")
    design = sk.Design(frame, weights="pw", strata="stype", fpc="fpc")
    shifted = design.with_data(frame.assign(api00=frame["api00"] + shift))
    for a, b in ((design, shifted), (design.replicates("jkn"), shifted.replicates("jkn"))):
        expected, got = sa.means(a, "api00").iloc[0], sa.means(b, "api00").iloc[0]
        assert got["deff"] == pytest.approx(expected["deff"], rel=1e-9)
        assert got["se"] == pytest.approx(expected["se"], rel=1e-6 if shift > 1e6 else 1e-9)


# -- supplied replicate weights -------------------------------------------------------


def _panel() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"w": rng.uniform(1, 3, 50), "y": rng.normal(size=50)})
    for r in range(4):
        frame[f"rw{r}"] = frame["w"] * rng.uniform(0.5, 1.5, 50)
    return frame


def test_supplied_weights_by_columns_frame_or_array_agree() -> None:
    frame = _panel()
    names = [f"rw{r}" for r in range(4)]
    by_name = sk.ReplicateDesign(frame, weights="w", replicate_weights=names, method="jk1")
    by_frame = sk.ReplicateDesign(frame, weights="w", replicate_weights=frame[names], method="jk1")
    by_array = sk.ReplicateDesign(
        frame, weights="w", replicate_weights=frame[names].to_numpy(), method="jk1"
    )
    se = [sa.means(d, "y")["se"].iloc[0] for d in (by_name, by_frame, by_array)]
    assert se[0] == se[1] == se[2]
    assert by_name.scale == pytest.approx(3 / 4)
    # by hand: R's svrVar around the replicates' mean
    w = frame[names].to_numpy()
    thetas = (w * frame["y"].to_numpy()[:, None]).sum(axis=0) / w.sum(axis=0)
    assert se[0] ** 2 == pytest.approx(0.75 * ((thetas - thetas.mean()) ** 2).sum())


@pytest.mark.parametrize(
    ("method", "scale", "rscales", "expected"),
    [
        ("bootstrap", None, None, (1 / 3, 1.0)),
        ("brr", None, None, (1 / 4, 1.0)),
        ("other", None, None, (1.0, 1.0)),
        ("jkn", None, [0.5, 0.5, 0.75, 0.75], (1.0, 0.5)),
        ("other", 2.0, 0.25, (2.0, 0.25)),
    ],
)
def test_supplied_scale_defaults_follow_r(
    method: Any, scale: Any, rscales: Any, expected: tuple[float, float]
) -> None:
    frame = _panel()
    design = sk.ReplicateDesign(
        frame,
        weights="w",
        replicate_weights=[f"rw{r}" for r in range(4)],
        method=method,
        scale=scale,
        rscales=rscales,
    )
    assert design.scale == pytest.approx(expected[0])
    assert design.rscales[0] == pytest.approx(expected[1])


@pytest.mark.parametrize(
    ("change", "kwargs", "message"),
    [
        (lambda f: f.assign(rw2=f["rw2"].where(f.index != 7)), {}, r"'rw2': row 7 has no weight"),
        (lambda f: f.assign(rw1=f["rw1"].where(f.index != 3, -1.0)), {}, r"'rw1': row 3 has -1.0"),
        (lambda f: f.drop(columns="rw3"), {}, r"no column 'rw3'"),
        (lambda f: f, {"method": "fay"}, r"method must be one of"),
        (lambda f: f, {"method": "jkn"}, r"rscales: method='jkn' needs rscales"),
        (lambda f: f, {"rscales": [1, 2]}, r"rscales has 2 values; it needs one per replicate"),
        (lambda f: f, {"method": "brr", "scale": 0.5}, r"method='brr' has scale 1/R"),
        (lambda f: f, {"replicate_weights": "rw0"}, r"not one name"),
        (lambda f: f, {"replicate_weights": np.ones((3, 2))}, r"one row per respondent"),
        (lambda f: f, {"replicate_weights": ["rw0"]}, r"at least 2 replicates"),
    ],
    ids=[
        "missing",
        "negative",
        "absent-column",
        "unknown-method",
        "jkn-without-rscales",
        "rscales-length",
        "brr-scale",
        "one-name",
        "array-shape",
        "one-replicate",
    ],
)
def test_bad_supplied_weights_are_named(
    change: Callable[[pd.DataFrame], pd.DataFrame], kwargs: dict[str, Any], message: str
) -> None:
    frame = change(_panel())
    arguments: dict[str, Any] = {
        "weights": "w",
        "replicate_weights": [f"rw{r}" for r in range(4)],
        "method": "jk1",
        **kwargs,
    }
    with pytest.raises(sk.analysis.AnalysisInputError, match=message):
        sk.ReplicateDesign(frame, **arguments)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: strat().replicates("jk1"), r"method='jk1' is for an unstratified design"),
        (lambda: clus1().replicates("jkn"), r"method='jkn' is for a stratified design"),
        (lambda: clus1().replicates("bootstrap", replicates=1), r"whole number >= 2"),
        (lambda: clus1().replicates("jk1", replicates=10), r"replicates= is for the bootstrap"),
        (lambda: clus1().replicates("brr"), r"method='brr' is for a stratified design"),
        (lambda: strat().replicates("brr"), r"exactly 2 PSUs in every stratum; stratum 'E'"),
        (lambda: brr_clus().replicates("brr", fay=1.0), r"fay= must be a number from 0"),
        (lambda: brr_clus().replicates("jkn", fay=0.5), r"fay= is Fay's factor"),
        (lambda: clus1().replicates("fay"), r"method must be one of"),  # type: ignore[arg-type]
        (
            lambda: clus1().replicates().calibrate(GREG, method="raking").calibrate(GREG),
            r"can be calibrated once",
        ),
        (
            lambda: clus1().replicates().calibrate(GREG).rake(POPULATION),
            r"rake or post-stratify first, then calibrate",
        ),
        (lambda: clus1().replicates().replicates(), r"already has replicate weights"),
        (
            lambda: strat().replicates("jkn").rake(POPULATION, trim=(0.5, 2.0)),
            r"calibrate\(totals, method='raking', trim=",
        ),
        (
            lambda: (
                clus1()
                .replicates("jk1")
                .calibrate(GREG, method="logit", bounds=(0.8, 1.7), **TIGHT)
            ),
            r"replicate 10: calibrate: the totals cannot be met",
        ),
        (
            lambda: sk.Design(pd.DataFrame({"y": np.zeros(100_001)})).replicates("jk1"),
            r"one replicate per PSU, 100,001 here",
        ),
    ],
    ids=[
        "jk1-stratified",
        "jkn-unstratified",
        "one-bootstrap",
        "jk-count",
        "brr-unstratified",
        "brr-three-psus",
        "fay-one",
        "fay-not-brr",
        "fay-method",
        "calibrate-twice",
        "rake-after-greg",
        "twice",
        "rake-trim",
        "replicate-not-calibrated",
        "huge-jackknife",
    ],
)
def test_bad_replicate_requests_are_named(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(sk.analysis.AnalysisInputError, match=message):
        make()


@pytest.mark.parametrize(
    "name", ["apiclus1_jk1", "apistrat_jkn_raked", "apiclus1_boot", "apiclus1_jk1_greg"]
)
def test_sparse_tables_and_small_chunks_give_the_same_figures(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large samples take sparse unit x group tables and multipliers in chunks: same figures."""
    from surveykit.analysis import _replicates

    make, _ = CASES[name]
    expected = sa.means(make(), "api00", by="stype")
    monkeypatch.setattr(_replicates, "DENSE_CELLS", 0)
    monkeypatch.setattr(_replicates, "CHUNK_CELLS", 7)
    design = make()
    got = sa.means(design, "api00", by="stype")
    assert got["se"].to_numpy() == pytest.approx(expected["se"].to_numpy(), rel=1e-12)
    assert design.degrees_of_freedom == R[R_CASE.get(name, name)]["degf"]


@pytest.mark.parametrize("lonely", ["adjust", "remove", "certainty"])
@pytest.mark.parametrize("seed", range(6))
def test_the_jackknife_rank_formula_equals_the_numerical_rank(lonely: str, seed: int) -> None:
    """With lonely and census strata, the closed form gives the eigenvalue rank (R's degf+1)."""
    from surveykit.analysis import _replicates

    rng = np.random.default_rng(seed)
    strata = rng.integers(2, 6)
    rows = []
    for h in range(strata):
        n_psu = 1 if h == 0 else int(rng.integers(2, 6))  # stratum 0 is lonely
        for p in range(n_psu):
            for _ in range(int(rng.integers(1, 4))):
                rows.append((h, f"{h}-{p}", float(rng.uniform(1, 3)), 1000.0))
    df = pd.DataFrame(rows, columns=["h", "psu", "w", "fpc"])
    if seed % 2:  # a census stratum: its replicates are dropped
        census = strata - 1
        df.loc[df["h"] == census, "fpc"] = df.loc[df["h"] == census, "psu"].nunique()
    design = sk.Design(df, weights="w", strata="h", psu="psu", fpc="fpc", lonely_psu=lonely)
    replicated = design.replicates("jkn")
    reps = replicated._replicates  # the replicate factors
    jackknife = reps.jackknife
    assert jackknife is not None
    numerical = _replicates._Replicates.rank.func(  # the eigenvalue fallback, bypassing the formula
        dataclasses.replace(reps, jackknife=None, factors=jackknife.columns(slice(None)))
    )
    assert jackknife.rank(np.ones(len(jackknife.psu_stratum), dtype=bool)) == numerical


# -- tests and quantiles on replicate designs (tools/r_reference/replicates_tests.R) ----

TESTS = json.loads((FIXTURES / "r_replicates_tests.json").read_text())


def _tests_frame(name: str) -> pd.DataFrame:
    frame = data(name)
    frame["ed"] = np.where(
        frame["avg.ed"].isna(), None, np.where(frame["avg.ed"] >= 3, "high", "low")
    )
    return frame


def _supplied_boot() -> sk.ReplicateDesign:
    frame = _tests_frame("apiclus1")
    weights = pd.read_csv(FIXTURES / "data" / "rep_apiclus1_boot_repweights.csv")
    return sk.ReplicateDesign(
        frame,
        weights="pw",
        replicate_weights=weights.set_axis(frame.index),
        method="bootstrap",
        scale=R["apiclus1_boot"]["scale"],
    )


TEST_DESIGNS: dict[str, Callable[[], sk.ReplicateDesign]] = {
    "apiclus1_jk1": lambda: sk.Design(
        _tests_frame("apiclus1"), weights="pw", psu="dnum", fpc="fpc"
    ).replicates("jk1"),
    "apistrat_jkn": lambda: sk.Design(
        _tests_frame("apistrat"), weights="pw", strata="stype", fpc="fpc"
    ).replicates("jkn"),
    "apistrat_jkn_raked": lambda: (
        sk.Design(_tests_frame("apistrat"), weights="pw", strata="stype", fpc="fpc")
        .replicates("jkn")
        .rake(POPULATION)
    ),
    "brr_26": lambda: sk.Design(
        _tests_frame("brr_strat").head(52), weights="pw", strata="pair"
    ).replicates("brr"),
    "fay_clus": lambda: sk.Design(
        _tests_frame("brr_clus"), weights="pw", strata="pair", psu="dnum"
    ).replicates("brr", fay=0.5),
    "apiclus1_supplied_boot": _supplied_boot,
}


@pytest.fixture(scope="module", params=list(TEST_DESIGNS))
def tested(request: pytest.FixtureRequest) -> tuple[dict[str, Any], sk.ReplicateDesign]:
    return TESTS[request.param], TEST_DESIGNS[request.param]()


def test_replicate_degrees_of_freedom_for_tests_match_r(
    tested: tuple[dict[str, Any], sk.ReplicateDesign],
) -> None:
    expected, design = tested
    assert design.degrees_of_freedom == expected["degf"]


@pytest.mark.parametrize("index", range(3), ids=["sch.wide", "awards", "ed-missing"])
def test_crosstab_on_replicates_is_svychisq(
    tested: tuple[dict[str, Any], sk.ReplicateDesign], index: int
) -> None:
    expected, design = tested
    case = expected["chisq"][index]
    f = sa.crosstab(design, case["question"], case["by"]).attrs["test"]
    assert f["test"] == "Rao-Scott F (R svychisq)"
    assert [f["statistic"], f["ndf"], f["ddf"], f["p_value"]] == pytest.approx(
        [case["F"], case["ndf"], case["ddf"], case["p_F"]], rel=REL
    )
    chisq = sa.crosstab(design, case["question"], case["by"], statistic="Chisq").attrs["test"]
    assert [chisq["statistic"], chisq["dof"], chisq["p_value"]] == pytest.approx(
        [case["chisq"], case["chisq_df"], case["p_chisq"]], rel=REL
    )


@pytest.mark.parametrize(
    ("index", "question", "estimate"),
    [
        (0, "api00", "means"),
        (1, "sch.wide", "proportions"),
        (2, "nps_q", "nps"),
        (3, "avg.ed", "means"),
    ],
    ids=["mean", "proportion", "nps", "mean-missing"],
)
def test_compare_on_replicates_is_svyttest(
    tested: tuple[dict[str, Any], sk.ReplicateDesign], index: int, question: str, estimate: Any
) -> None:
    expected, design = tested
    case = expected["ttest"][index]
    frame = sa.compare(design, question, by="awards", estimate=estimate)
    row = frame[frame["option"] == "Yes"].iloc[0] if estimate == "proportions" else frame.iloc[0]
    assert frame.attrs["degrees_of_freedom"] == case["df"]
    ours = [row["difference"], row["statistic"], row["p_value"], row["ci_low"], row["ci_high"]]
    theirs = [case["difference"], case["statistic"], case["p_value"]]
    theirs += [case["ci_low"], case["ci_high"]]
    if abs(case["statistic"]) > 1e8:  # a raked-on margin's difference: se is rounding noise
        ours[1], theirs[1] = np.sign(ours[1]), np.sign(theirs[1])
    assert ours == pytest.approx(theirs, rel=REL)


def test_crosstab_letters_on_replicates_are_pairwise_svyttest(
    tested: tuple[dict[str, Any], sk.ReplicateDesign],
) -> None:
    expected, design = tested
    cases = expected["letters"]
    for question in ("awards", "ed"):
        pairs = sa.crosstab(design, question, "stype").attrs["letters_pairs"]
        for case in (c for c in cases if c["question"] == question):
            row = pairs[
                (pairs["option"] == case["level"])
                & (pairs["column_a"] == case["a"])
                & (pairs["column_b"] == case["b"])
            ].iloc[0]
            assert row["df"] == case["df"]
            assert [row["difference"], row["statistic"], row["p_value"]] == pytest.approx(
                [case["difference"], case["statistic"], case["p_value"]], rel=REL
            )


@pytest.mark.parametrize(("variable", "by"), [("api00", "stype"), ("avg.ed", "awards")])
def test_quantiles_on_replicates_are_svyquantile(
    tested: tuple[dict[str, Any], sk.ReplicateDesign], variable: str, by: str
) -> None:
    expected, design = tested
    cases = [c for c in expected["quantiles"] if c["variable"] == variable]
    whole = sa.quantiles(design, variable, q=(0.25, 0.5, 0.75))
    grouped = sa.quantiles(design, variable, q=(0.25, 0.5, 0.75), by=by)
    for case in cases:
        if case["group"] is None:
            frame, dof = whole, whole.attrs["degrees_of_freedom"][0]
        else:
            frame = grouped[grouped[by] == case["group"]]
            position = list(grouped[by].unique()).index(case["group"])
            dof = grouped.attrs["degrees_of_freedom"][position]
        assert dof == case["df"]
        for column in ("estimate", "ci_low", "ci_high", "se"):
            theirs = np.array([np.nan if v is None else v for v in case[column]], dtype=float)
            assert frame[column].to_numpy() == pytest.approx(theirs, rel=REL, nan_ok=True)


# -- BRR and Fay -------------------------------------------------------------------------


@pytest.mark.parametrize("case", R["hadamard"], ids=lambda case: str(case["n"]))
def test_hadamard_matrices_are_rs(case: dict[str, Any]) -> None:
    from surveykit.analysis._hadamard import hadamard

    rows = ["".join(str(v) for v in row) for row in hadamard(case["n"])]
    assert rows == case["rows"]


def test_brr_multipliers_are_rs_replicate_by_replicate() -> None:
    design = brr_strat(52).replicates("brr")
    pw = data("brr_strat").head(52)["pw"].to_numpy()
    multipliers = design.replicate_weights().to_numpy() / pw[:, None]
    assert multipliers == pytest.approx(np.array(R["brr_26"]["multipliers"]), abs=1e-12)
    assert design.method == "brr" and "BRR, 28 replicates" in design.variance_method
    fay = brr_strat(52).replicates("brr", fay=0.3)
    assert fay.method == "fay" and "Fay" in fay.describe()


def test_trimmed_calibration_of_the_linearised_design_is_rs() -> None:
    """R's calibrate(trim=) on the svydesign: trimmed factors, variance from them."""
    expected = R["apiclus1_cal_trim_linearised"]
    design = clus1().calibrate(GREG, method="raking", trim=(0.95, 1.4), **TIGHT)
    assert design.weights.sum() == pytest.approx(expected["weights_sum"], rel=1e-12)
    g = design.weights.to_numpy() / data("apiclus1")["pw"].to_numpy()
    assert g.min() >= 0.95 - 1e-12
    for name, frame in (
        ("mean", sa.means(design, "api00")),
        ("mean_by", sa.means(design, "api00", by="stype")),
        ("total", sa.totals(design, "enroll")),
    ):
        ours = _figures(frame)
        assert ours["estimate"] == pytest.approx(expected[name]["estimate"], rel=REL)
        assert ours["variance"] == pytest.approx(
            expected[name]["variance"], rel=REL, abs=1e-12 * ours["estimate"].max() ** 2
        )
    assert "trimmed to [0.95, 1.4]" in design.describe()


def test_trim_on_an_unbounded_linear_calibration_is_refused() -> None:
    with pytest.raises(sk.analysis.AnalysisInputError, match=r"trim= applies to method="):
        clus1().calibrate(GREG, trim=(0.9, 1.1))
    with pytest.raises(sk.analysis.AnalysisInputError, match=r"0 <= low < high"):
        clus1().calibrate(GREG, method="raking", trim=(1.2, 1.1))
