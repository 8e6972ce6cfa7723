"""compare: two groups or two waves against statsmodels and scipy."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

from surveykit import analysis
from surveykit.errors import AnalysisInputError

COLUMNS = [
    "question",
    "group_a",
    "group_b",
    "n_a",
    "n_b",
    "estimate_a",
    "estimate_b",
    "difference",
    "se",
    "ci_low",
    "ci_high",
    "statistic",
    "p_value",
    "significant",
    "test",
    "note",
]


@pytest.fixture(autouse=True)
def _no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.fixture
def waves() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 500
    wave = rng.choice(["2025", "2026"], n)
    score = np.where(wave == "2026", rng.integers(3, 11, n), rng.integers(0, 11, n))
    return pd.DataFrame(
        {
            "wave": wave,
            "Q1": score,
            "Q2": rng.choice(["Price", "Service", "Speed"], n),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )


def linearised_se(y: np.ndarray, w: np.ndarray) -> float:
    n = len(y)
    mean = np.sum(w * y) / np.sum(w)
    return float(np.sqrt(n / (n - 1) * np.sum((w * (y - mean)) ** 2)) / np.sum(w))


def test_means_is_welchs_t_test(waves: pd.DataFrame) -> None:
    out = analysis.compare(waves, "Q1", by="wave")
    assert list(out.columns) == COLUMNS
    row = out.iloc[0]
    a = waves.loc[waves["wave"] == "2025", "Q1"].to_numpy(dtype=float)
    b = waves.loc[waves["wave"] == "2026", "Q1"].to_numpy(dtype=float)
    reference = stats.ttest_ind(b, a, equal_var=False)
    assert (row["group_a"], row["group_b"]) == ("2025", "2026")
    assert row["difference"] == pytest.approx(b.mean() - a.mean())
    assert row["statistic"] == pytest.approx(reference.statistic, rel=1e-10)
    assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-8)
    interval = reference.confidence_interval(0.95)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((interval.low, interval.high))
    assert row["significant"] == (reference.pvalue < 0.05)
    assert row["test"] == "Welch t-test"
    assert out.attrs["method"] == "means"


def domain_se(y: np.ndarray, w: np.ndarray, groups: np.ndarray) -> float:
    """se of the difference of two domain means of Design(df, weights=w) (R's svyttest)."""
    n = len(y)
    squares = 0.0
    for g in np.unique(groups):
        yg, wg = y[groups == g], w[groups == g]
        mean = np.sum(wg * yg) / np.sum(wg)
        squares += np.sum((wg * (yg - mean)) ** 2) / np.sum(wg) ** 2
    return float(np.sqrt(n / (n - 1) * squares))


def test_weighted_means_are_a_design_based_t_test(waves: pd.DataFrame) -> None:
    # weights= is Design(df, weights=): the groups are domains of one sample, n / (n - 1)
    # of the whole sample, t on n - 2 degrees of freedom (R's svyttest; checked against R
    # in tests/analysis/test_between_groups_compare.py).
    row = analysis.compare(waves, "Q1", by="wave", weights="w").iloc[0]
    parts = [waves[waves["wave"] == w] for w in ("2025", "2026")]
    means = [np.average(p["Q1"], weights=p["w"]) for p in parts]
    se = domain_se(waves["Q1"].to_numpy(float), waves["w"].to_numpy(), waves["wave"].to_numpy())
    dof = len(waves) - 2
    t = (means[1] - means[0]) / se
    assert row["se"] == pytest.approx(se, rel=1e-10)
    assert row["statistic"] == pytest.approx(t, rel=1e-10)
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), dof), rel=1e-8)
    half = stats.t.ppf(0.975, dof) * se
    assert row["ci_high"] == pytest.approx(means[1] - means[0] + half)
    assert row["test"] == "design-based t-test (R svyttest)"


def test_proportions_are_two_proportion_z_tests(waves: pd.DataFrame) -> None:
    out = analysis.compare(waves, "Q2", by="wave", ci=0.9)
    assert list(out.columns) == [*COLUMNS[:1], "option", *COLUMNS[1:]]
    assert out["option"].tolist() == ["Price", "Service", "Speed"]
    a = waves.loc[waves["wave"] == "2025", "Q2"]
    b = waves.loc[waves["wave"] == "2026", "Q2"]
    for row in out.itertuples():
        ca, cb = int((a == row.option).sum()), int((b == row.option).sum())
        z, p = proportions_ztest([cb, ca], [len(b), len(a)])
        pa, pb = ca / len(a), cb / len(b)
        se = np.sqrt(pa * (1 - pa) / len(a) + pb * (1 - pb) / len(b))
        assert row.statistic == pytest.approx(z, rel=1e-10)
        assert row.p_value == pytest.approx(p, rel=1e-8)
        assert row.difference == pytest.approx(pb - pa)
        assert row.se == pytest.approx(se)
        assert row.ci_low == pytest.approx(pb - pa - stats.norm.ppf(0.95) * se)
        assert row.test == "two-proportion z-test"


def test_weighted_proportions_are_design_based_t_tests(waves: pd.DataFrame) -> None:
    out = analysis.compare(waves, "Q2", by="wave", weights="w")
    parts = [waves[waves["wave"] == w] for w in ("2025", "2026")]
    for row in out.itertuples():
        shares = [np.average(p["Q2"] == row.option, weights=p["w"]) for p in parts]
        y = (waves["Q2"] == row.option).to_numpy(float)
        se = domain_se(y, waves["w"].to_numpy(), waves["wave"].to_numpy())
        t = (shares[1] - shares[0]) / se
        assert row.statistic == pytest.approx(t, rel=1e-10)
        assert row.p_value == pytest.approx(2 * stats.t.sf(abs(t), len(waves) - 2), rel=1e-8)


def test_nps_se_is_the_root_sum_of_squares(waves: pd.DataFrame) -> None:
    out = analysis.compare(waves, "Q1", by="wave", estimate="nps")
    scores = analysis.nps(waves, "Q1", by="wave").set_index("wave")
    row = out.iloc[0]
    se = np.sqrt(scores.loc["2025", "se"] ** 2 + scores.loc["2026", "se"] ** 2)
    diff = scores.loc["2026", "estimate"] - scores.loc["2025", "estimate"]
    assert row["se"] == pytest.approx(se)
    assert row["difference"] == pytest.approx(diff)
    assert row["p_value"] == pytest.approx(2 * stats.norm.sf(abs(diff / se)))
    assert row["ci_low"] == pytest.approx(diff - stats.norm.ppf(0.975) * se)
    assert row["test"] == "z-test"
    # the score itself, recomputed: the mean of +100/0/-100
    x = waves.loc[waves["wave"] == "2025", "Q1"].to_numpy()
    s = np.where(x >= 9, 100.0, np.where(x >= 7, 0.0, -100.0))
    assert row["estimate_a"] == pytest.approx(s.mean())


def test_two_frames_are_two_waves(waves: pd.DataFrame) -> None:
    first = waves[waves["wave"] == "2025"].drop(columns="wave")
    second = waves[waves["wave"] == "2026"].drop(columns="wave")
    # Wave 2 dropped an option: it is 0% there, and still compared.
    second = second.assign(Q2=second["Q2"].replace("Speed", "Service"))
    out = analysis.compare(first, second, "Q2", names=("wave 1", "wave 2"))
    assert (out["group_a"] == "wave 1").all()
    assert (out["group_b"] == "wave 2").all()
    speed = out.set_index("option").loc["Speed"]
    assert speed["estimate_b"] == 0.0
    ca = int((first["Q2"] == "Speed").sum())
    z, p = proportions_ztest([0, ca], [len(second), len(first)])
    assert speed["statistic"] == pytest.approx(z)
    assert speed["p_value"] == pytest.approx(p)
    assert speed["significant"]
    by_column = analysis.compare(waves, "Q1", by="wave")
    by_frames = analysis.compare(first, second, "Q1")
    assert by_frames["statistic"].iloc[0] == pytest.approx(by_column["statistic"].iloc[0])


def test_more_than_two_groups_is_an_error_naming_them(waves: pd.DataFrame) -> None:
    three = waves.assign(wave=np.resize(["w1", "w2", "w3"], len(waves)))
    with pytest.raises(
        AnalysisInputError, match=r"exactly two groups, found 3: \['w1', 'w2', 'w3'\]"
    ):
        analysis.compare(three, "Q1", by="wave")


def test_a_group_too_small_gets_a_note_not_a_warning() -> None:
    df = pd.DataFrame({"g": ["a", "b", "b", "b"], "Q": [5.0, 4.0, 6.0, 8.0]})
    row = analysis.compare(df, "Q", by="g").iloc[0]
    assert np.isnan(row["p_value"])
    assert not row["significant"]
    assert "a: one answer" in row["note"]
    same = pd.DataFrame({"g": ["a", "a", "b", "b"], "Q": ["x", "x", "x", "x"]})
    row = analysis.compare(same, "Q", by="g").iloc[0]
    assert np.isnan(row["statistic"])
    assert row["note"]


def test_two_frames_take_a_pair_of_weight_series(waves: pd.DataFrame) -> None:
    first, second = waves[waves["wave"] == "2025"], waves[waves["wave"] == "2026"]
    pair = analysis.compare(
        first, second, "Q1", weights=(first["w"], second["w"]), names=("2025", "2026")
    )
    # two weighted frames are two independent samples: one design, the wave a stratum
    stacked = analysis.Design(waves, weights="w", strata="wave")
    column = analysis.compare(stacked, "Q1", by="wave")
    for name in ("difference", "se", "statistic", "p_value", "ci_low", "ci_high"):
        assert pair[name].iloc[0] == pytest.approx(column[name].iloc[0], rel=1e-12)
    with pytest.raises(AnalysisInputError, match="needs by="):
        analysis.compare(waves, "Q1")
