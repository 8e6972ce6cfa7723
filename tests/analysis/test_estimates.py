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


def domain_se(y: np.ndarray, w: np.ndarray, inside: np.ndarray) -> float:
    """R's se of a domain mean (svyby, na.rm=TRUE) on svydesign(ids=~1, weights=~w), written
    out: the influence values w (y - m) / W are 0 outside the domain, and the
    n / (n - 1) and the centring use the whole sample of n rows."""
    n = len(y)
    yd, wd = y[inside], w[inside]
    mean = np.sum(wd * yd) / np.sum(wd)
    x = np.where(inside, w * (np.where(inside, y, 0.0) - mean) / np.sum(wd), 0.0)
    return float(np.sqrt(n / (n - 1) * np.sum((x - x.mean()) ** 2)))


@pytest.mark.parametrize("method", list(METHODS))
def test_proportions_unweighted_match_statsmodels(survey: pd.DataFrame, method: str) -> None:
    out = analysis.proportions(survey, "Q2", by="region", method=method)  # type: ignore[arg-type]
    assert list(out.columns) == [
        "region",
        "question",
        "option",
        "count",
        "count_weighted",
        "n",
        "n_weighted",
        "n_eff",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "deff",
        "flag",
        "flag_reason",
        "note",
    ]
    assert (out["deff"] == 1.0).all()
    assert out["count"].dtype == np.int64 and out["n"].dtype == np.int64
    assert (out["count_weighted"] == out["count"]).all() and (out["n_weighted"] == out["n"]).all()
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


@pytest.mark.parametrize("method", ["logit", "beta", "wilson", "normal"])
def test_weighted_proportions_are_design_based_domains(survey: pd.DataFrame, method: str) -> None:
    out = analysis.proportions(
        survey, "Q2", by=["region", "channel"], weights="w", ci=0.9, method=method
    )
    groups = survey.groupby(["region", "channel"])
    assert len(out) == 3 * groups.ngroups
    n, dof = len(survey), len(survey) - 1
    w_all = survey["w"].to_numpy()
    for row in out.itertuples():
        inside = (
            (survey["region"] == row.region)
            & (survey["channel"] == row.channel)
            & survey["Q2"].notna()
        ).to_numpy()
        chose = (survey["Q2"] == row.option).to_numpy().astype(float)
        w = w_all[inside]
        p = w[chose[inside] == 1].sum() / w.sum()
        se = domain_se(chose, w_all, inside)
        assert row.count_weighted == pytest.approx(w[chose[inside] == 1].sum(), rel=1e-12)
        assert row.count == int(chose[inside].sum())
        assert row.n == inside.sum()
        assert row.n_weighted == pytest.approx(w.sum(), rel=1e-12)
        assert row.estimate == pytest.approx(p, rel=1e-12)
        assert row.se == pytest.approx(se, rel=1e-10)
        assert row.n_eff == pytest.approx(p * (1 - p) / se**2, rel=1e-9)
        assert row.deff == pytest.approx(se**2 / (p * (1 - p) / (inside.sum() - 1)), rel=1e-9)
        if method == "logit":
            half = stats.t.ppf(0.95, dof) * se / (p * (1 - p))
            expected = [1 / (1 + np.exp(-(np.log(p / (1 - p)) + s * half))) for s in (-1, 1)]
        elif method == "beta":
            n_eff = p * (1 - p) / se**2 * (stats.t.ppf(0.05, n - 1) / stats.t.ppf(0.05, dof)) ** 2
            expected = [
                stats.beta.ppf(0.05, n_eff * p, n_eff * (1 - p) + 1),
                stats.beta.ppf(0.95, n_eff * p + 1, n_eff * (1 - p)),
            ]
        elif method == "wilson":
            expected = list(proportion_confint(p * row.n_eff, row.n_eff, 0.1, method="wilson"))
        else:
            z = stats.norm.ppf(0.95)
            expected = [p - z * se, p + z * se]
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(expected), rel=1e-9)
    assert out.attrs["weights"] == "w"
    assert out.attrs["degrees_of_freedom"] == dof


def test_equal_weights_give_the_design_figures_not_the_textbook_ones(survey: pd.DataFrame) -> None:
    """R's effective size of a proportion under equal weights is n - 1, not n."""
    part = survey.dropna(subset=["Q2"]).reset_index(drop=True)
    plain = analysis.proportions(part, "Q2")
    equal = analysis.proportions(part.assign(one=1.0), "Q2", weights="one")
    n = len(part)
    p = plain["estimate"].to_numpy()
    np.testing.assert_allclose(equal["estimate"], p, rtol=1e-12)
    np.testing.assert_allclose(equal["se"], np.sqrt(p * (1 - p) / (n - 1)), rtol=1e-10)
    np.testing.assert_allclose(equal["n_eff"], n - 1, rtol=1e-9)
    means_plain = analysis.means(part, "Q3")
    means_equal = analysis.means(part.assign(one=1.0), "Q3", weights="one")
    assert means_equal["se"].iloc[0] == pytest.approx(means_plain["se"].iloc[0], rel=1e-10)


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
        "n_weighted",
        "n_eff",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "deff",
        "flag",
        "flag_reason",
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
def test_weighted_means_are_domains_of_the_whole_sample(
    survey: pd.DataFrame, question: str
) -> None:
    out = analysis.means(survey, question, by=["region", "channel"], weights="w")
    y_all = pd.to_numeric(survey[question]).to_numpy(dtype=float)
    w_all = survey["w"].to_numpy()
    dof = len(survey) - 1
    for row in out.itertuples():
        inside = (
            (survey["region"] == row.region)
            & (survey["channel"] == row.channel)
            & survey[question].notna()
        ).to_numpy()
        y, w = y_all[inside], w_all[inside]
        mean = np.average(y, weights=w)
        se = domain_se(np.nan_to_num(y_all), w_all, inside)
        half = stats.t.ppf(0.975, dof) * se
        srs = np.sum(w * (y - mean) ** 2) / np.sum(w) * len(y) / (len(y) - 1) / len(y)
        assert row.estimate == pytest.approx(mean, rel=1e-12)
        assert row.se == pytest.approx(se, rel=1e-10)
        assert row.deff == pytest.approx(se**2 / srs, rel=1e-9)
        assert row.n_eff == pytest.approx(len(y) / row.deff, rel=1e-9)
        assert (row.ci_low, row.ci_high) == pytest.approx((mean - half, mean + half), rel=1e-10)


def test_one_group_without_missing_answers_is_the_plain_linearisation(survey: pd.DataFrame) -> None:
    out = analysis.means(survey, "Q3", weights="w")
    y, w = survey["Q3"].to_numpy(), survey["w"].to_numpy()
    assert out["estimate"].iloc[0] == pytest.approx(np.average(y, weights=w), rel=1e-12)
    assert out["se"].iloc[0] == pytest.approx(linearised_se(y, w), rel=1e-10)


def test_nps_is_the_mean_of_the_promoter_score(survey: pd.DataFrame) -> None:
    out = analysis.nps(survey, "Q1", by="region", weights="w", ci=0.9)
    x_all = pd.to_numeric(survey["Q1"]).to_numpy(dtype=float)
    s_all = np.where(x_all >= 9, 100.0, np.where(x_all >= 7, 0.0, -100.0))
    w_all = survey["w"].to_numpy()
    for row in out.itertuples():
        inside = ((survey["region"] == row.region) & survey["Q1"].notna()).to_numpy()
        x, w, s = x_all[inside], w_all[inside], s_all[inside]
        mean = np.average(s, weights=w)
        se = domain_se(s_all, w_all, inside)
        t = stats.t.ppf(0.95, len(survey) - 1)
        assert row.estimate == pytest.approx(mean, rel=1e-12)
        assert row.se == pytest.approx(se, rel=1e-10)
        assert row.ci_low == pytest.approx(max(mean - t * se, -100))
        assert row.ci_high == pytest.approx(min(mean + t * se, 100))
        assert row.n == len(x)
        assert row.n_weighted == pytest.approx(w.sum(), rel=1e-12)
        assert (row.promoters, row.detractors) == ((x >= 9).sum(), (x <= 6).sum())
        assert row.promoters_weighted == pytest.approx(w[x >= 9].sum())
        assert row.percent_detractors == pytest.approx(100 * w[x <= 6].sum() / w.sum(), rel=1e-12)
        assert row.percent_promoters - row.percent_detractors == pytest.approx(mean, rel=1e-12)
    assert out["promoters"].dtype == np.int64 and out["n"].dtype == np.int64
    assert out["promoters_weighted"].dtype == np.float64


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
        plain = func(df, "Q", by="g").set_index("g")
        assert np.isnan(plain.loc["one", "se"])
        assert "one answer" in plain.loc["one", "note"]
        out = func(df, "Q", by="g", weights="w").set_index("g")
        # R: a domain of one respondent has a design-based se of exactly 0.
        assert out.loc["one", "se"] == 0.0
        assert "one respondent" in out.loc["one", "note"]
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
def test_unit_weights_keep_the_point_estimates(rows: list[tuple[str, int | None]]) -> None:
    df = pd.DataFrame(rows, columns=["g", "Q"]).assign(w=1.0)
    for func in (analysis.proportions, analysis.means, analysis.nps):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            plain = func(df, "Q", by="g")
            weighted = func(df, "Q", by="g", weights="w")
        np.testing.assert_allclose(plain["estimate"], weighted["estimate"], rtol=1e-12)
        np.testing.assert_array_equal(plain["n"], weighted["n"])


@settings(max_examples=60, deadline=None)
@given(
    weights=st.lists(st.floats(0.01, 100.0), min_size=2, max_size=50),
    groups=st.lists(st.sampled_from(["x", "y"]), min_size=50, max_size=50),
    values=st.lists(st.floats(0, 10), min_size=50, max_size=50),
)
def test_design_effective_size_is_n_over_deff(
    weights: list[float], groups: list[str], values: list[float]
) -> None:
    k = len(weights)
    df = pd.DataFrame({"g": groups[:k], "Q": values[:k], "w": weights})
    out = analysis.means(df, "Q", by="g", weights="w")
    ok = out["deff"].notna() & (out["deff"] > 0)
    np.testing.assert_allclose(out.loc[ok, "n_eff"], out.loc[ok, "n"] / out.loc[ok, "deff"])


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


def _labelled(
    kind: str, values: list, *, separator: str | None = None, scale: tuple = (None, None)
) -> pd.DataFrame:
    entry = {"key": "Q", "kind": kind, "min": scale[0], "max": scale[1], "separator": separator}
    df = pd.DataFrame({"Q": values})
    df.attrs["codebook"] = {"version": 1, "questions": [entry]}
    return df


def test_multi_choice_categorical_is_split_into_options() -> None:
    """A multi-choice question typed as a category is split, not read as combinations."""
    answers = ["Price;Quality", "Price", "Quality;App", "App;Price;Quality", None]
    df = pd.DataFrame({"Q": pd.Categorical(answers)})
    out = analysis.proportions(df, "Q")
    assert out["option"].tolist() == ["App", "Price", "Quality"]
    assert out["count"].tolist() == [2, 3, 3]
    assert out["n"].tolist() == [4, 4, 4]  # shares of respondents who answered
    assert out["estimate"].tolist() == pytest.approx([0.5, 0.75, 0.75])
    # The codebook's kind and separator decide even without a separator in the data.
    coded = _labelled("multi", pd.Categorical(["a|b", "b", "a"]), separator="|")
    assert analysis.proportions(coded, "Q")["option"].tolist() == ["a", "b"]


def test_nps_refuses_a_question_the_codebook_calls_a_rating() -> None:
    df = _labelled("rating", [1, 2, 5, 4], scale=(1, 5))
    with pytest.raises(
        AnalysisInputError, match=r"Q: the codebook says it is a rating question on a 1-5 scale"
    ):
        analysis.nps(df, "Q")
    with pytest.raises(AnalysisInputError, match="not an NPS question"):
        analysis.nps(df.assign(w=1.0), "Q", weights="w")
    assert analysis.nps(_labelled("nps", [10, 9, 0], scale=(0, 10)), "Q")["estimate"].iloc[
        0
    ] == pytest.approx(100 / 3)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=80))
def test_integer_groups_by_counting_equal_groups_by_hashing(values: list[int]) -> None:
    """Small-range integer group columns take a counting path; the groups are the same."""
    from surveykit.analysis import _inputs

    frame = pd.DataFrame({"g": np.asarray(values, dtype=np.int64)})
    grouped = _inputs.groups(frame, "g")
    codes, uniques = pd.factorize(frame["g"], sort=True)
    np.testing.assert_array_equal(grouped.ids, codes)
    assert grouped.frame["g"].tolist() == list(uniques)


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([3, 1, 3, 7, 1], dtype=np.int64),  # gaps in the range
        pd.Series([2, 0, 1, 1, 0], dtype=np.int64),  # every value of the range
        pd.Series([-5, 2, 2, -5], dtype=np.int16),
        pd.Series([-100, 100, 0, 50, 100], dtype=np.int8),  # values - low overflow int8
        pd.Series(pd.Categorical(["b", None, "a", "b"], categories=["c", "b", "a"])),
        pd.Series(pd.Categorical(["x", "y", "x"], categories=["y", "x"], ordered=True)),
        pd.Series(["north", "south", None, "north"], dtype="string[pyarrow]"),
        pd.Series([2.5, np.nan, 1.0, 2.5]),
        pd.Series([True, False, True]),
    ],
    ids=[
        "int-gaps",
        "int-dense",
        "int16",
        "int8-wide",
        "category-na",
        "ordered",
        "string",
        "float",
        "bool",
    ],
)
def test_groups_of_one_column_are_pandas_groups_in_the_columns_dtype(column: pd.Series) -> None:
    """One ``by`` column: ids, order and values (dtype kept) as pandas' ``groupby``."""
    from surveykit.analysis import _inputs

    frame = pd.DataFrame({"g": column, "x": np.arange(len(column))})
    grouped = _inputs.groups(frame, "g")
    by = frame.groupby("g", sort=True, observed=True, dropna=False)
    np.testing.assert_array_equal(grouped.ids, by.ngroup().to_numpy())
    assert grouped.count == by.ngroups
    expected = by["x"].first().index.to_series(index=range(by.ngroups))
    pd.testing.assert_series_equal(grouped.frame["g"], expected, check_names=False)
    assert frame["g"].equals(column)  # the frame is read, never written
    assert grouped.complete and (grouped.ids >= 0).all()


@pytest.mark.parametrize(
    ("by", "dropna", "complete"),
    [(None, False, True), ("g", True, False), (["g", "h"], True, False), (["g", "h"], False, True)],
    ids=["no-by", "one-dropped", "two-dropped", "two-kept"],
)
def test_groups_say_whether_every_row_is_in_one(
    by: list[str] | str | None, dropna: bool, complete: bool
) -> None:
    """``complete`` promises no id -1: the estimators then skip looking for one."""
    from surveykit.analysis import _inputs

    frame = pd.DataFrame({"g": ["a", None, "b", "a"], "h": [1, 2, 1, 2]})
    grouped = _inputs.groups(frame, by, dropna=dropna)
    assert grouped.complete == complete == bool((grouped.ids >= 0).all())
    if not grouped.ids.flags.writeable:
        with pytest.raises(ValueError, match="read-only"):
            grouped.ids[0] = 1


@pytest.mark.parametrize(
    ("p", "digits", "text"),
    [
        (0.0, 3, "p < 0.001"),
        (0.000999, 3, "p < 0.001"),
        (0.001, 3, "p = 0.001"),
        (0.0166, 3, "p = 0.017"),
        (1.0, 3, "p = 1.000"),
        (0.004, 2, "p < 0.01"),
        (float("nan"), 3, "p n/a"),
        (None, 3, "p n/a"),
    ],
)
def test_format_p_writes_a_bound_below_the_last_digit(
    p: float | None, digits: int, text: str
) -> None:
    assert sk.analysis.format_p(p, digits=digits) == text


def test_format_p_refuses_what_is_not_a_p_value() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        sk.analysis.format_p(1.5)
    with pytest.raises(ValueError, match="digits"):
        sk.analysis.format_p(0.5, digits=0)
