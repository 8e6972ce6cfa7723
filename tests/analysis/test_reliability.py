"""Reliability flags: NCHS's presentation standards for proportions (Parker et al. 2017) and
the sample-size / RSE rule for means, totals and scores, each rule computed here on its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import surveykit as sk
from surveykit import analysis
from surveykit.analysis import _reliability as reliability


def clopper_pearson_width(count: float, n: float) -> float:
    """The exact (Clopper-Pearson) 95% interval's width, from scipy's beta distribution."""
    low = 0.0 if count == 0 else stats.beta.ppf(0.025, count, n - count + 1)
    high = 1.0 if count == n else stats.beta.ppf(0.975, count + 1, n - count)
    return float(high - low)


def nchs(p: float, n_eff: float, width: float, df: float) -> tuple[str, str]:
    """NCHS's steps for one proportion, written out as the standard reads."""
    if n_eff < 30:
        return "unreliable", "effective sample size < 30"
    if p in (0.0, 1.0):
        width = 0.0
    if width >= 0.30:
        return "unreliable", "Korn-Graubard CI width >= 0.30"
    if width > 0.05 and width / p > 1.30:
        return "unreliable", "relative CI width > 130%"
    reasons = []
    if df < 8:
        reasons.append("degrees of freedom < 8")
    if p in (0.0, 1.0):
        reasons.append("estimate of 0% or 100%")
    elif width > 0.05 and width / (1 - p) > 1.30:
        reasons.append("complement's relative CI width > 130%")
    return ("review" if reasons else ""), "; ".join(reasons)


# -- the rules, at their boundaries -----------------------------------------------------


@pytest.mark.parametrize(
    ("p", "n_eff", "width", "df", "expected"),
    [
        (0.5, 29.999, 0.01, 100, ("unreliable", "effective sample size < 30")),
        (0.5, 30.0, 0.01, 100, ("", "")),
        (0.5, 30.0, 0.30, 100, ("unreliable", "Korn-Graubard CI width >= 0.30")),
        (0.5, 30.0, 0.30 - 1e-12, 100, ("", "")),
        (0.02, 500.0, 0.05, 100, ("", "")),  # width <= 0.05: shown, whatever its relative width
        (0.02, 500.0, 0.05 + 1e-12, 100, ("unreliable", "relative CI width > 130%")),
        (0.2, 500.0, 1.3 * 0.2 * (1 + 1e-9), 100, ("unreliable", "relative CI width > 130%")),
        (0.2, 500.0, 1.3 * 0.2 * (1 - 1e-9), 100, ("", "")),
        (0.9, 500.0, 0.14, 100, ("review", "complement's relative CI width > 130%")),
        (0.9, 500.0, 0.12, 100, ("", "")),
        (0.5, 500.0, 0.04, 7, ("review", "degrees of freedom < 8")),
        (0.5, 500.0, 0.04, 8, ("", "")),
        (0.5, 29.0, 0.04, 7, ("unreliable", "effective sample size < 30")),
        (0.0, 40.0, 0.09, 100, ("review", "estimate of 0% or 100%")),
        (1.0, 40.0, 0.09, 100, ("review", "estimate of 0% or 100%")),
        (0.0, 29.0, 0.0, 100, ("unreliable", "effective sample size < 30")),
        (1.0, 40.0, 0.09, 3, ("review", "degrees of freedom < 8; estimate of 0% or 100%")),
    ],
    ids=[
        "n_eff-29.999",
        "n_eff-30",
        "width-0.30",
        "width-under-0.30",
        "width-0.05",
        "width-over-0.05",
        "relative-over-130",
        "relative-under-130",
        "complement",
        "complement-ok",
        "df-7",
        "df-8",
        "small-and-few-df",
        "zero",
        "one",
        "zero-small",
        "one-few-df",
    ],
)
def test_proportion_rules_at_their_boundaries(
    p: float, n_eff: float, width: float, df: float, expected: tuple[str, str]
) -> None:
    assert nchs(p, n_eff, width, df) == expected  # the written-out standard agrees
    flag, reason = reliability.proportion_rules(
        np.array([p]), np.array([n_eff]), np.array([width]), np.array([df])
    )
    assert (flag[0], reason[0]) == expected


def test_effective_size_is_capped_at_n_and_is_n_at_zero_and_one() -> None:
    p = np.array([0.5, 0.5, 0.0, 1.0, 0.3, np.nan])
    variance = np.array([0.25 / 50, 0.25 / 500, 0.0, 0.0, 0.0, np.nan])
    n = np.array([100.0, 100.0, 40.0, 40.0, 60.0, 0.0])
    got = reliability.effective_size(p, variance, n)
    np.testing.assert_allclose(got, [50.0, 100.0, 40.0, 40.0, 60.0, 0.0])


@pytest.mark.parametrize(("count", "n"), [(0, 40), (1, 40), (12, 40), (39, 40), (40, 40), (7, 9)])
def test_korn_graubard_of_a_simple_random_sample_is_clopper_pearson(count: int, n: int) -> None:
    """With n_eff = n and df = n - 1 the adjustment is 1: scipy's beta quantiles."""
    p = np.array([count / n])
    low, high = reliability.korn_graubard(
        p, np.array([float(n)]), np.array([float(n)]), np.array([n - 1.0])
    )
    assert high[0] - low[0] == pytest.approx(clopper_pearson_width(count, n), rel=1e-12)
    cp = proportion_confint(count, n, alpha=0.05, method="beta")
    assert (low[0], high[0]) == pytest.approx(cp, rel=1e-10, abs=1e-15)


def test_korn_graubard_adjusts_the_effective_size_by_the_degrees_of_freedom() -> None:
    p, n_eff, n, df = 0.3, 120.0, 400.0, 6.0
    size = min(n, n_eff * (stats.t.ppf(0.025, n - 1) / stats.t.ppf(0.025, df)) ** 2)
    low = stats.beta.ppf(0.025, size * p, size * (1 - p) + 1)
    high = stats.beta.ppf(0.975, size * p + 1, size * (1 - p))
    got = reliability.korn_graubard(np.array([p]), np.array([n_eff]), np.array([n]), np.array([df]))
    assert (got[0][0], got[1][0]) == pytest.approx((low, high), rel=1e-12)
    # no degrees of freedom: the interval is 0..1
    none = reliability.korn_graubard(
        np.array([p]), np.array([n_eff]), np.array([n]), np.array([0.0])
    )
    assert (none[0][0], none[1][0]) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("estimate", "se", "n", "df", "expected"),
    [
        (10.0, 1.0, 29, 28, ("unreliable", "sample size < 30")),
        (10.0, 1.0, 30, 29, ("", "")),
        (10.0, 3.0, 30, 29, ("unreliable", "relative standard error >= 30%")),
        (10.0, 2.9999, 30, 29, ("", "")),
        (-10.0, 2.9999, 30, 29, ("", "")),
        (0.0, 0.1, 300, 299, ("unreliable", "relative standard error >= 30%")),
        (10.0, np.nan, 300, 299, ("unreliable", "relative standard error >= 30%")),
        (10.0, 1.0, 300, 7, ("review", "degrees of freedom < 8")),
        (10.0, 1.0, 300, 8, ("", "")),
    ],
    ids=["n-29", "n-30", "rse-30", "rse-under-30", "negative", "zero", "no-se", "df-7", "df-8"],
)
def test_estimate_flags_are_the_30_30_rule(
    estimate: float, se: float, n: int, df: float, expected: tuple[str, str]
) -> None:
    flag, reason = reliability.estimate_flags(
        np.array([estimate]), np.array([se]), np.array([n]), np.array([df])
    )
    assert (flag[0], reason[0]) == expected


def test_score_flags_use_the_width_of_the_95_interval() -> None:
    df = np.array([99.0, 99.0, 99.0, 5.0])
    edge = 60.0 / (2 * stats.t.ppf(0.975, 99))
    se = np.array([edge * (1 - 1e-9), edge, 1.0, 1.0])
    flag, reason = reliability.score_flags(se, np.array([100, 100, 29, 100]), df)
    assert flag.tolist() == ["", "unreliable", "unreliable", "review"]
    assert reason.tolist() == [
        "",
        "95% CI width >= 60 points",
        "sample size < 30",
        "degrees of freedom < 8",
    ]


# -- the frames -------------------------------------------------------------------------


def test_textbook_proportions_carry_nchs_flags_computed_from_clopper_pearson() -> None:
    df = pd.DataFrame(
        {
            "g": ["big"] * 400 + ["mid"] * 60 + ["small"] * 20,
            "q": (["a"] * 396 + ["b"] * 4) + (["a"] * 57 + ["b"] * 3) + (["a"] * 10 + ["b"] * 10),
        }
    )
    out = analysis.proportions(df, "q", by="g")
    for row in out.itertuples():
        count, n = int(row.count), int(row.n)
        p = count / n
        expected = nchs(p, float(n), clopper_pearson_width(count, n), n - 1)
        assert (row.flag, row.flag_reason) == expected, row
    flags = out.set_index(["g", "option"])["flag"].to_dict()
    assert flags[("big", "a")] == ""  # 99%, narrow interval
    assert flags[("big", "b")] == ""  # 1% of 400: width <= 0.05
    assert flags[("mid", "b")] == "unreliable"  # 5% of 60: width > 0.05, relative > 130%
    assert flags[("small", "a")] == "unreliable"  # n = 20


def test_a_group_without_answers_is_unreliable_and_0_or_100_percent_is_reviewed() -> None:
    df = pd.DataFrame({"g": ["x"] * 40 + ["y"] * 5, "q": ["a"] * 40 + [None] * 5})
    out = analysis.means(df.assign(q=df["q"].map({"a": 1.0})), "q", by="g").set_index("g")
    assert (out.loc["y", "flag"], out.loc["y", "note"]) == ("unreliable", "no answers")
    assert out.loc["x", "flag"] == ""  # every answer the same: se 0, nothing to doubt
    props = analysis.proportions(df, "q", by="g").set_index("g")
    assert (props.loc["x", "flag"], props.loc["x", "flag_reason"]) == (
        "review",
        "estimate of 0% or 100%",
    )
    assert props.loc["y", "flag"] == "unreliable"


def clustered(psus_per_stratum: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for stratum in range(2):
        for psu in range(psus_per_stratum):
            size = 150
            rows.append(
                pd.DataFrame(
                    {
                        "stratum": stratum,
                        "psu": psu,
                        "w": rng.uniform(0.5, 2.0, size),
                        "q": rng.choice(["yes", "no"], size, p=[0.45, 0.55]),
                        "y": rng.normal(50, 10, size),
                        "s": rng.integers(0, 11, size),
                        "g": rng.choice(["one", "two"], size),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def test_domain_degrees_of_freedom_are_psus_minus_strata_of_the_domain() -> None:
    df = clustered(6)
    df.loc[df["psu"] >= 4, "g"] = "one"  # group "two" lives in 4 PSUs of each stratum
    design = sk.Design(df, weights="w", strata="stratum", psu="psu")
    ids = np.where(df["g"] == "one", 0, 1).astype(np.int64)
    got = reliability.domain_degrees_of_freedom(design, ids, 2)
    expected = [
        part.groupby(["stratum", "psu"]).ngroups - part["stratum"].nunique()
        for _, part in df.groupby("g")
    ]
    assert got.tolist() == expected == [10, 6]


@pytest.mark.parametrize(("psus", "flag"), [(4, "review"), (5, "")], ids=["df-6", "df-8"])
def test_design_with_few_psus_is_flagged_for_review(psus: int, flag: str) -> None:
    df = clustered(psus)
    design = sk.Design(df, weights="w", strata="stratum", psu="psu")
    df_design = 2 * psus - 2
    out = analysis.proportions(design, "q")
    for row in out.itertuples():
        n_eff = min(row.n, row.estimate * (1 - row.estimate) / row.se**2)
        ratio = (stats.t.ppf(0.025, row.n - 1) / stats.t.ppf(0.025, df_design)) ** 2
        size = min(row.n, n_eff * ratio)
        p = row.estimate
        width = stats.beta.ppf(0.975, size * p + 1, size * (1 - p)) - stats.beta.ppf(
            0.025, size * p, size * (1 - p) + 1
        )
        assert (row.flag, row.flag_reason) == nchs(p, n_eff, width, df_design)
        assert row.flag == flag
    for table in (analysis.means(design, "y"), analysis.totals(design, "y")):
        assert table["flag"].tolist() == [flag]
        assert table["flag_reason"].tolist() == ["degrees of freedom < 8" if flag else ""]
    assert analysis.nps(design, "s")["flag"].tolist() == [flag]


def test_design_flags_use_the_groups_own_degrees_of_freedom() -> None:
    df = clustered(6)
    df.loc[df["psu"] >= 4, "g"] = "one"
    design = sk.Design(df, weights="w", strata="stratum", psu="psu")
    means = analysis.means(design, "y", by="g").set_index("g")
    assert means.loc["one", "flag"] == "" and means.loc["two", "flag"] == "review"
    props = analysis.proportions(design, "q", by="g")
    assert set(props.loc[props["g"] == "two", "flag"]) == {"review"}


def test_rse_flag_of_a_mean_uses_se_over_the_estimate() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"y": rng.normal(0.5, 10, 60)})
    row = analysis.means(df, "y").iloc[0]
    rse = row.se / abs(row.estimate)
    assert rse >= 0.30
    assert (row.flag, row.flag_reason) == ("unreliable", "relative standard error >= 30%")


def test_replicate_designs_flag_on_the_replicates_degrees_of_freedom() -> None:
    df = clustered(3)  # 6 PSUs in 2 strata: jkn replicates of rank 6, df 5
    replicated = sk.Design(df, weights="w", strata="stratum", psu="psu").replicates("jkn")
    assert replicated.degrees_of_freedom < 8
    ids = np.zeros(len(df), dtype=np.int64)
    assert reliability.domain_degrees_of_freedom(replicated, ids, 1).tolist() == [
        float(replicated.degrees_of_freedom)
    ]
    out = analysis.proportions(replicated, "q")
    assert set(out["flag"]) == {"review"}
    assert set(out["flag_reason"]) == {"degrees of freedom < 8"}
    assert analysis.means(replicated, "y")["flag"].tolist() == ["review"]


@pytest.mark.parametrize("zero_weights", [False, True], ids=["positive", "some-zero"])
def test_domain_degrees_of_freedom_of_codes_and_of_ids_agree_with_pandas(
    zero_weights: bool,
) -> None:
    """Codes with a spare "none" code and ids with -1 give pandas' PSUs minus strata."""
    rng = np.random.default_rng(11)
    rows = 1200
    df = pd.DataFrame(
        {
            "stratum": rng.integers(0, 5, rows),
            "psu": rng.integers(0, 40, rows),
            "w": rng.uniform(0.5, 3.0, rows),
            "g": rng.integers(0, 7, rows),
            "y": np.where(rng.random(rows) < 0.2, np.nan, rng.normal(10.0, 1.0, rows)),
        }
    )
    last = df["g"] == 6  # a group in 3 PSUs of one stratum: 2 degrees of freedom
    df.loc[last, "stratum"] = 0
    df.loc[last, "psu"] = rng.integers(0, 3, int(last.sum()))
    df["psu"] = df["stratum"] * 100 + df["psu"]
    if zero_weights:
        df.loc[rng.random(rows) < 0.3, "w"] = 0.0
    design = sk.Design(df, weights="w", strata="stratum", psu="psu")
    answered = df["y"].notna().to_numpy()
    ids = np.where(answered, df["g"], -1).astype(np.int64)
    codes = np.where(answered, df["g"], 7).astype(np.int64)
    counted = df[answered & (df["w"] != 0).to_numpy()]
    expected = (
        counted.groupby("g")["psu"].nunique() - counted.groupby("g")["stratum"].nunique()
    ).reindex(range(7), fill_value=0)
    assert reliability.domain_degrees_of_freedom(design, ids, 7).tolist() == expected.tolist()
    got = reliability.domain_codes_degrees_of_freedom(design, codes, 7)
    assert got.tolist() == expected.tolist()
    # one domain (the rows that answered) given as a mask of the rows in none
    whole = counted["psu"].nunique() - counted["stratum"].nunique()
    one = reliability.domain_codes_degrees_of_freedom(design, ~answered, 1)
    assert one.tolist() == [whole] == reliability.domain_degrees_of_freedom(
        design, np.where(answered, 0, -1), 1
    ).tolist()
    assert whole < design.degrees_of_freedom  # some PSUs answered nothing
    # the estimators pass their own domain codes: the same figures reach the flags
    means = analysis.means(design, "y", by="g")
    few = means["flag_reason"].str.contains("degrees of freedom").tolist()
    assert few == (expected < 8).tolist() == [False] * 6 + [True]


def test_domain_degrees_of_freedom_without_psus_count_rows_less_strata() -> None:
    """Every row its own PSU: a domain's degrees of freedom are its counted rows less the
    strata they fall in (pandas), whichever entry point reads them."""
    rng = np.random.default_rng(4)
    rows = 300
    df = pd.DataFrame(
        {
            "stratum": rng.integers(0, 4, rows),
            "w": np.where(rng.random(rows) < 0.25, 0.0, 1.5),
            "g": rng.integers(0, 5, rows),
            "y": np.where(rng.random(rows) < 0.2, np.nan, 1.0),
        }
    )
    design = sk.Design(df, weights="w", strata="stratum")
    answered = df["y"].notna().to_numpy()
    counted = df[answered & (df["w"] != 0).to_numpy()]
    expected = (counted.groupby("g").size() - counted.groupby("g")["stratum"].nunique()).tolist()
    codes = np.where(answered, df["g"], 5).astype(np.int64)
    ids = np.where(answered, df["g"], -1).astype(np.int64)
    assert reliability.domain_codes_degrees_of_freedom(design, codes, 5).tolist() == expected
    assert reliability.domain_degrees_of_freedom(design, ids, 5).tolist() == expected
