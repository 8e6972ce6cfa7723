"""proportions, means and nps against independent computations (numpy, scipy, statsmodels)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import surveykit as sk
from surveykit import analysis
from surveykit.errors import AnalysisInputError, SurveykitError

METHODS = {"wilson": "wilson", "clopper-pearson": "beta", "normal": "normal"}


@pytest.fixture(autouse=True)
def _no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.fixture
def survey() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 400
    rating = rng.integers(0, 11, n).astype(object)
    rating[rng.random(n) < 0.1] = None
    choice = rng.choice(["Price", "Service", "Speed"], n).astype(object)
    choice[rng.random(n) < 0.1] = None
    return pd.DataFrame(
        {
            "region": rng.choice(["North", "South"], n),
            "channel": rng.choice(["SMS", "Email", "Web"], n),
            # Raw results: ratings as text, as some formats deliver them.
            "Q1": pd.Series([None if v is None else str(v) for v in rating], dtype="string"),
            "Q2": choice,
            "Q3": rng.normal(50, 12, n).round(3),
            "w": rng.uniform(0.3, 3.0, n),
        }
    )


def kish(w: np.ndarray) -> float:
    return float(w.sum() ** 2 / (w**2).sum())


def linearised_se(y: np.ndarray, w: np.ndarray) -> float:
    """The with-replacement linearisation se of the weighted mean, written out."""
    n = len(y)
    mean = np.sum(w * y) / np.sum(w)
    return float(np.sqrt(n / (n - 1) * np.sum((w * (y - mean)) ** 2)) / np.sum(w))


@pytest.mark.parametrize("method", list(METHODS))
def test_proportions_unweighted_match_statsmodels(survey: pd.DataFrame, method: str) -> None:
    out = analysis.proportions(survey, "Q2", by="region", method=method)  # type: ignore[arg-type]
    assert list(out.columns) == [
        "region",
        "question",
        "option",
        "count",
        "n",
        "n_eff",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "note",
    ]
    for row in out.itertuples():
        part = survey.loc[survey["region"] == row.region, "Q2"].dropna()
        count, n = int((part == row.option).sum()), len(part)
        low, high = proportion_confint(count, n, alpha=0.05, method=METHODS[method])
        assert (row.count, row.n, row.n_eff) == (count, n, n)
        assert row.estimate == pytest.approx(count / n, rel=1e-12)
        assert row.se == pytest.approx(np.sqrt(count / n * (1 - count / n) / n), rel=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), rel=1e-12, abs=1e-15)
    assert out.attrs["estimate"] == "proportions"
    assert out.attrs["method"] == method
    assert out.attrs["ci"] == 0.95


@pytest.mark.parametrize("method", list(METHODS))
def test_weighted_proportions_use_kish_effective_size(survey: pd.DataFrame, method: str) -> None:
    out = analysis.proportions(
        survey,
        "Q2",
        by=["region", "channel"],
        weights="w",
        ci=0.9,
        method=method,  # type: ignore[arg-type]
    )
    groups = survey.dropna(subset=["Q2"]).groupby(["region", "channel"])
    assert len(out) == 3 * groups.ngroups
    for row in out.itertuples():
        part = groups.get_group((row.region, row.channel))
        w = part["w"].to_numpy()
        chose = (part["Q2"] == row.option).to_numpy()
        p = w[chose].sum() / w.sum()
        n_eff = kish(w)
        low, high = proportion_confint(p * n_eff, n_eff, alpha=0.1, method=METHODS[method])
        assert row.count == pytest.approx(w[chose].sum(), rel=1e-12)
        assert row.n == len(part)
        assert row.n_eff == pytest.approx(n_eff, rel=1e-12)
        assert row.n_eff <= row.n
        assert row.estimate == pytest.approx(p, rel=1e-12)
        assert row.se == pytest.approx(np.sqrt(p * (1 - p) / n_eff), rel=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), rel=1e-10, abs=1e-14)
    assert out.attrs["weights"] == "w"


def test_multi_choice_options_each_get_a_row() -> None:
    df = pd.DataFrame({"Q": ["A;B", "B", " C ; A", "", None, "B;C"]})
    out = analysis.proportions(df, "Q").set_index("option")
    answered = 5  # the blank answer counts as answered, with no option
    expected = {"A": 2, "B": 3, "C": 2}
    assert out["count"].to_dict() == expected
    assert (out["n"] == answered).all()
    for option, count in expected.items():
        low, high = proportion_confint(count, answered, method="wilson")
        assert out.loc[option, "ci_low"] == pytest.approx(low)
        assert out.loc[option, "ci_high"] == pytest.approx(high)
    assert out["estimate"].sum() > 1


def test_labelled_frame_keeps_every_category_in_order() -> None:
    labels = ["Very dissatisfied", "Dissatisfied", "Neutral", "Satisfied", "Very satisfied"]
    answers = pd.Categorical(
        ["Satisfied", "Neutral", "Satisfied", None, "Very satisfied"],
        categories=labels,
        ordered=True,
    )
    df = pd.DataFrame({"Q5": answers})
    df.attrs["questions"] = {"Q5": "How satisfied are you?"}
    df.attrs["value_codes"] = {"Q5": {label: str(i) for i, label in enumerate(labels, 1)}}
    out = analysis.proportions(df, "Q5")
    assert out["option"].tolist() == labels
    assert out["count"].tolist() == [0, 0, 1, 2, 1]
    assert out.attrs["question_text"] == "How satisfied are you?"
    mean = analysis.means(df, "Q5").iloc[0]
    codes = np.array([4.0, 3.0, 4.0, 5.0])
    assert mean["estimate"] == pytest.approx(codes.mean())
    assert mean["se"] == pytest.approx(codes.std(ddof=1) / np.sqrt(4))


def test_numbers_and_their_text_are_one_option() -> None:
    df = pd.DataFrame({"Q": ["7", 7, 7.0, "10", 2]})
    out = analysis.proportions(df, "Q")
    assert out["option"].tolist() == ["2", "7", "10"]
    assert out["count"].tolist() == [1, 3, 1]


def test_means_unweighted_is_sd_over_root_n_with_a_t_interval(survey: pd.DataFrame) -> None:
    out = analysis.means(survey, "Q1", by="channel", ci=0.99)
    assert list(out.columns) == [
        "channel",
        "question",
        "n",
        "n_eff",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "note",
    ]
    for row in out.itertuples():
        y = pd.to_numeric(survey.loc[survey["channel"] == row.channel, "Q1"]).dropna().to_numpy()
        se = y.std(ddof=1) / np.sqrt(len(y))
        half = stats.t.ppf(0.995, len(y) - 1) * se
        assert (row.n, row.n_eff) == (len(y), len(y))
        assert row.estimate == pytest.approx(y.mean(), rel=1e-12)
        assert row.se == pytest.approx(se, rel=1e-12)
        assert row.se == pytest.approx(stats.sem(y), rel=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx((y.mean() - half, y.mean() + half))
    assert out.attrs["method"] == "t"


@pytest.mark.parametrize("question", ["Q1", "Q3"], ids=["rating", "continuous"])
def test_weighted_means_use_the_linearisation_se(survey: pd.DataFrame, question: str) -> None:
    out = analysis.means(survey, question, by=["region", "channel"], weights="w")
    for row in out.itertuples():
        part = survey[(survey["region"] == row.region) & (survey["channel"] == row.channel)]
        part = part[part[question].notna()]
        y = pd.to_numeric(part[question]).to_numpy(dtype=float)
        w = part["w"].to_numpy()
        mean = np.average(y, weights=w)
        se = linearised_se(y, w)
        half = stats.t.ppf(0.975, len(y) - 1) * se
        assert row.estimate == pytest.approx(mean, rel=1e-12)
        assert row.se == pytest.approx(se, rel=1e-10)
        assert row.n_eff == pytest.approx(kish(w), rel=1e-12)
        assert (row.ci_low, row.ci_high) == pytest.approx((mean - half, mean + half), rel=1e-10)


def test_means_of_many_distinct_values_take_the_per_row_path(
    survey: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    from surveykit.analysis import _inputs

    monkeypatch.setattr(_inputs, "_MAX_CELLS", 10)
    out = analysis.means(survey, "Q3", by="region", weights="w")
    for row in out.itertuples():
        part = survey[survey["region"] == row.region]
        y, w = part["Q3"].to_numpy(), part["w"].to_numpy()
        assert row.estimate == pytest.approx(np.average(y, weights=w), rel=1e-12)
        assert row.se == pytest.approx(linearised_se(y, w), rel=1e-10)


def test_nps_is_the_mean_of_the_promoter_score(survey: pd.DataFrame) -> None:
    out = analysis.nps(survey, "Q1", by="region", weights="w", ci=0.9)
    for row in out.itertuples():
        part = survey[survey["region"] == row.region].dropna(subset=["Q1"])
        x = pd.to_numeric(part["Q1"]).to_numpy()
        w = part["w"].to_numpy()
        s = np.where(x >= 9, 100.0, np.where(x >= 7, 0.0, -100.0))
        mean = np.average(s, weights=w)
        se = linearised_se(s, w)
        z = stats.norm.ppf(0.95)
        assert row.estimate == pytest.approx(mean, rel=1e-12)
        assert row.se == pytest.approx(se, rel=1e-10)
        assert row.ci_low == pytest.approx(max(mean - z * se, -100))
        assert row.ci_high == pytest.approx(min(mean + z * se, 100))
        assert row.responses == row.n == len(x)
        assert row.promoters == pytest.approx(w[x >= 9].sum())
        assert row.percent_detractors == round(100 * w[x <= 6].sum() / w.sum(), 1)


def test_unweighted_nps_keeps_its_columns_and_matches_percentages(survey: pd.DataFrame) -> None:
    out = analysis.nps(survey, "Q1")
    row = out.iloc[0]
    x = pd.to_numeric(survey["Q1"]).dropna().to_numpy()
    promoters, detractors = int((x >= 9).sum()), int((x <= 6).sum())
    assert (row["promoters"], row["detractors"]) == (promoters, detractors)
    assert row["passives"] == len(x) - promoters - detractors
    assert row["estimate"] == pytest.approx(100 * (promoters - detractors) / len(x))
    s = np.where(x >= 9, 100.0, np.where(x >= 7, 0.0, -100.0))
    assert row["se"] == pytest.approx(s.std(ddof=1) / np.sqrt(len(s)))
    assert out.attrs["estimate"] == "nps"


def test_nps_interval_is_clipped_to_the_scale() -> None:
    out = analysis.nps(pd.DataFrame({"Q": [10, 10, 10, 9, 0]}), "Q")
    assert out.loc[0, "ci_high"] == 100.0
    assert out.loc[0, "ci_low"] > -100.0


def test_small_groups_get_nan_and_a_note_without_warnings() -> None:
    df = pd.DataFrame(
        {
            "g": ["one", "none", "two", "two", "zero", "zero"],
            "Q": [7, None, 9, 3, 5, 6],
            "w": [1.0, 1.0, 1.0, 2.0, 0.0, 0.0],
        }
    )
    for func in (analysis.means, analysis.nps):
        out = func(df, "Q", by="g", weights="w").set_index("g")
        assert np.isnan(out.loc["one", "se"])
        assert np.isnan(out.loc["one", "ci_low"])
        assert "one answer" in out.loc["one", "note"]
        assert out.loc["none", "note"] == "no answers"
        assert out.loc["none", "n"] == 0
        assert "sum to zero" in out.loc["zero", "note"]
        assert out.loc["two", "note"] == ""
        assert np.isfinite(out.loc["two", "ci_high"])
    props = analysis.proportions(df, "Q", by="g", method="clopper-pearson")
    assert (props.loc[props["g"] == "none", "note"] == "no answers").all()
    assert props.loc[props["g"] == "none", "ci_low"].isna().all()
    assert props.loc[props["g"] == "one", "ci_low"].notna().all()


def test_missing_by_value_is_a_group_of_its_own() -> None:
    df = pd.DataFrame({"g": ["a", None, "a", None], "Q": [1, 2, 3, 5]})
    out = analysis.means(df, "Q", by="g")
    assert out["n"].tolist() == [2, 2]
    assert out["estimate"].tolist() == [2.0, 3.5]
    assert out["g"].isna().tolist() == [False, True]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda df: analysis.means(df, "Q9"), "no question column 'Q9'"),
        (lambda df: analysis.means(df, "Q", by="nope"), "by: no column 'nope'"),
        (lambda df: analysis.means(df, "T"), r"T: row 'r2' has the answer 'soon'"),
        (lambda df: analysis.nps(df, "Q"), r"whole-number answers from 0 to 10; row 'r3'"),
        (lambda df: analysis.means(df, "Q", weights="missing"), "row 'r2' has no weight"),
        (lambda df: analysis.means(df, "Q", weights="negative"), r"row 'r1' has -1.0"),
        (lambda df: analysis.means(df, "Q", weights="zero"), "sum to zero"),
        (lambda df: analysis.means(df, "Q", weights="nothere"), "weights: no column 'nothere'"),
        (
            lambda df: analysis.means(df, "Q", weights=pd.Series([1.0], index=["r1"])),
            "no weight for row 'r2'",
        ),
        (lambda df: analysis.means(df, "Q", ci=95), "ci must be between 0 and 1"),
    ],
    ids=[
        "question",
        "by",
        "text-rating",
        "nps-scale",
        "missing-weight",
        "negative-weight",
        "zero-weights",
        "weights-column",
        "weights-series",
        "ci",
    ],
)
def test_bad_input_names_the_column_row_and_value(call: object, match: str) -> None:
    df = pd.DataFrame(
        {
            "Q": [1, 2, 11],
            "T": ["3", "soon", "4"],
            "missing": [1.0, None, 1.0],
            "negative": [-1.0, 1.0, 1.0],
            "zero": [0.0, 0.0, 0.0],
        },
        index=["r1", "r2", "r3"],
    )
    with pytest.raises(AnalysisInputError, match=match) as caught:
        call(df)  # type: ignore[operator]
    assert isinstance(caught.value, SurveykitError)
    assert isinstance(caught.value, ValueError)


def test_weights_as_a_series_are_aligned_by_index(survey: pd.DataFrame) -> None:
    shuffled = survey["w"].sample(frac=1.0, random_state=1)
    by_series = analysis.means(survey, "Q3", weights=shuffled)
    by_column = analysis.means(survey, "Q3", weights="w")
    assert by_series["estimate"].iloc[0] == pytest.approx(by_column["estimate"].iloc[0], rel=1e-12)
    assert by_series.attrs["weights"] == "w"


def test_exported_from_the_package() -> None:
    for name in ("proportions", "means", "nps", "crosstab", "compare"):
        assert callable(getattr(sk.analysis, name))
        assert name in sk.analysis.__all__


answers_strategy = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), st.integers(0, 10))),
    min_size=1,
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(rows=answers_strategy)
def test_unit_weights_give_exactly_the_unweighted_results(
    rows: list[tuple[str, int | None]],
) -> None:
    df = pd.DataFrame(rows, columns=["g", "Q"]).assign(w=1.0)
    for func in (analysis.proportions, analysis.means, analysis.nps):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            plain = func(df, "Q", by="g")
            weighted = func(df, "Q", by="g", weights="w")
        counted = ["count", "detractors", "passives", "promoters"]  # int unweighted, else float
        columns = [c for c in plain.columns if c not in counted]
        pd.testing.assert_frame_equal(plain[columns], weighted[columns], check_exact=True)
        for column in set(counted) & set(plain.columns):
            np.testing.assert_array_equal(plain[column].astype(float), weighted[column])


@settings(max_examples=60, deadline=None)
@given(
    weights=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=50),
    groups=st.lists(st.sampled_from(["x", "y"]), min_size=50, max_size=50),
)
def test_effective_size_never_exceeds_n(weights: list[float], groups: list[str]) -> None:
    df = pd.DataFrame({"g": groups[: len(weights)], "Q": 5.0, "w": weights})
    out = analysis.means(df, "Q", by="g", weights="w")
    assert (out["n_eff"] <= out["n"] * (1 + 1e-12)).all()
    for row in out.itertuples():
        assert row.n_eff == pytest.approx(kish(df.loc[df["g"] == row.g, "w"].to_numpy()))


def test_labelled_nps_maps_labels_back_to_codes() -> None:
    labels = {
        str(i): f"{i}" if 0 < i < 10 else ("Not at all" if i == 0 else "Extremely")
        for i in range(11)
    }
    raw = pd.Series([10, 9, 0, 7, 3, 10, None])
    df = pd.DataFrame(
        {
            "Q1": pd.Categorical(
                raw.map(lambda v: None if pd.isna(v) else labels[str(int(v))]),
                categories=list(labels.values()),
                ordered=True,
            )
        }
    )
    df.attrs["value_codes"] = {"Q1": {label: code for code, label in labels.items()}}
    labelled = analysis.nps(df, "Q1").iloc[0]
    plain = analysis.nps(pd.DataFrame({"Q1": raw}), "Q1").iloc[0]
    assert labelled["estimate"] == pytest.approx(plain["estimate"])
    assert labelled["se"] == pytest.approx(plain["se"])
    assert (labelled["promoters"], labelled["detractors"]) == (3, 2)


def test_unused_categories_of_a_grouping_column_are_not_groups() -> None:
    df = pd.DataFrame(
        {
            "g": pd.Categorical(["b", "a", "b", None], categories=["c", "b", "a"]),
            "Q": [1.0, 2.0, 3.0, 4.0],
        }
    )
    out = analysis.means(df, "Q", by="g")
    assert out["g"].astype(object).where(out["g"].notna(), None).tolist() == ["b", "a", None]
    assert out["estimate"].tolist() == [2.0, 2.0, 4.0]
    assert isinstance(out["g"].dtype, pd.CategoricalDtype)
