"""crosstab: the table as before, chi-square and letters against scipy and statsmodels."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency
from statsmodels.stats.proportion import proportions_ztest

from surveykit import analysis


@pytest.fixture(autouse=True)
def _no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.fixture
def survey() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 600
    region = rng.choice(["East", "North", "West"], n)
    # Answers depend on the region, so the test has something to find.
    shift = {"East": [0.6, 0.3, 0.1], "North": [0.3, 0.4, 0.3], "West": [0.2, 0.3, 0.5]}
    answer = [rng.choice(["Good", "Fair", "Poor"], p=shift[r]) for r in region]
    return pd.DataFrame(
        {
            "region": region,
            "channel": rng.choice(["SMS", "Email"], n),
            "Q": answer,
            "w": rng.uniform(0.2, 4.0, n),
        }
    )


def letters_by_loop(
    counts: pd.DataFrame, bases: pd.Series, alpha: float = 0.05
) -> dict[tuple[str, str], str]:
    """SPSS column letters: pairwise proportions_ztest, Bonferroni over the column pairs."""
    keys = dict(zip(counts.columns, "ABCDEFGHIJ", strict=False))
    pairs = list(combinations(counts.columns, 2))
    out = {(r, c): "" for r in counts.index for c in counts.columns}
    for r in counts.index:
        for i, j in pairs:
            ci, cj = counts.loc[r, i], counts.loc[r, j]
            pooled = (ci + cj) / (bases[i] + bases[j])
            if pooled in (0, 1):
                continue
            z, p = proportions_ztest([ci, cj], [bases[i], bases[j]])
            if min(p * len(pairs), 1) < alpha:
                larger, smaller = (i, j) if z > 0 else (j, i)
                out[(r, larger)] += keys[smaller]
    return {k: "".join(sorted(v)) for k, v in out.items()}


def test_table_is_todays_column_percentages(survey: pd.DataFrame) -> None:
    table = analysis.crosstab(survey, "Q", "region")
    expected = pd.crosstab(survey["Q"], survey["region"])
    expected = 100 * expected / expected.sum()  # exact, not rounded
    pd.testing.assert_frame_equal(
        table, expected, check_names=False, check_column_type=False, check_index_type=False
    )
    assert (table.index.name, table.columns.name) == ("Q", "region")
    counts = analysis.crosstab(survey, "Q", "region", normalize=False)
    assert (
        counts.to_numpy().tolist() == pd.crosstab(survey["Q"], survey["region"]).to_numpy().tolist()
    )


def test_chi_square_without_correction_and_cramers_v(survey: pd.DataFrame) -> None:
    table = analysis.crosstab(survey, "Q", "region")
    observed = pd.crosstab(survey["Q"], survey["region"]).to_numpy()
    reference = chi2_contingency(observed, correction=False)
    test = table.attrs["test"]
    assert test["chi2"] == pytest.approx(reference.statistic, rel=1e-12)
    assert test["p_value"] == pytest.approx(reference.pvalue, rel=1e-9)
    assert test["dof"] == reference.dof == 4
    v = np.sqrt(reference.statistic / (observed.sum() * (min(observed.shape) - 1)))
    assert test["cramers_v"] == pytest.approx(v, rel=1e-12)
    assert (test["n"], test["n_eff"], test["weighted"]) == (600, 600.0, False)
    pd.testing.assert_frame_equal(
        table.attrs["counts"],
        pd.crosstab(survey["Q"], survey["region"]),
        check_names=False,
        check_dtype=False,
        check_column_type=False,
        check_index_type=False,
    )


def test_two_by_two_is_not_yates_corrected() -> None:
    df = pd.DataFrame(
        {"g": ["a"] * 30 + ["b"] * 30, "Q": ["y"] * 20 + ["n"] * 10 + ["y"] * 12 + ["n"] * 18}
    )
    test = analysis.crosstab(df, "Q", "g").attrs["test"]
    observed = pd.crosstab(df["Q"], df["g"]).to_numpy()
    assert test["chi2"] == pytest.approx(chi2_contingency(observed, correction=False).statistic)
    assert test["chi2"] != pytest.approx(chi2_contingency(observed, correction=True).statistic)


def test_letters_on_a_table_with_known_differences() -> None:
    # Yes: A 80%, B 50%, C 20% of 100 each: every pair differs at 5% after Bonferroni.
    rows = []
    for group, yes in (("A-grp", 80), ("B-grp", 50), ("C-grp", 20)):
        rows += [(group, "Yes")] * yes + [(group, "No")] * (100 - yes)
    rows += [("D-grp", "Yes")] * 52 + [("D-grp", "No")] * 48  # like B
    df = pd.DataFrame(rows, columns=["g", "Q"])
    table = analysis.crosstab(df, "Q", "g")
    assert table.attrs["column_letters"] == {"A-grp": "A", "B-grp": "B", "C-grp": "C", "D-grp": "D"}
    letters = table.attrs["letters"]
    assert letters.loc["Yes"].tolist() == ["BCD", "C", "", "C"]
    assert letters.loc["No"].tolist() == ["", "A", "ABD", "A"]
    counts = pd.crosstab(df["Q"], df["g"])
    expected = letters_by_loop(counts, counts.sum())
    assert {(r, c): letters.loc[r, c] for r in letters.index for c in letters.columns} == expected


def test_weighted_statistics_are_design_based(survey: pd.DataFrame) -> None:
    # weights= is Design(df, weights=): R's svychisq and svyttest letters (figures checked
    # against R in tests/analysis/test_between_groups_crosstab.py); percentages as before.
    table = analysis.crosstab(survey, "Q", "region", weights="w", alpha=0.01)
    design = analysis.crosstab(analysis.Design(survey, weights="w"), "Q", "region", alpha=0.01)
    weighted = survey.pivot_table(index="Q", columns="region", values="w", aggfunc="sum")
    test = table.attrs["test"]
    assert test["weighted"] is True
    assert test["test"] == "Rao-Scott F (R svychisq)"
    assert test == design.attrs["test"]
    assert table.attrs["letters_test"].startswith("design-based t-test")
    assert table.attrs["letters"].equals(design.attrs["letters"])
    expected_pct = 100 * weighted / weighted.sum()
    np.testing.assert_allclose(table.to_numpy(), expected_pct.to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(table.attrs["counts_weighted"].to_numpy(), weighted.to_numpy())
    respondents = pd.crosstab(survey["Q"], survey["region"])  # every weight is non-zero
    assert table.attrs["counts"].to_numpy().tolist() == respondents.to_numpy().tolist()
    assert table.attrs["counts"].to_numpy().dtype == np.int64


def test_by_two_columns_gives_a_column_multiindex(survey: pd.DataFrame) -> None:
    table = analysis.crosstab(survey, "Q", ["region", "channel"], normalize=False)
    expected = pd.crosstab(survey["Q"], [survey["region"], survey["channel"]])
    assert table.columns.names == ["region", "channel"]
    assert list(table.columns) == list(expected.columns)
    assert table.to_numpy().tolist() == expected.to_numpy().tolist()
    reference = chi2_contingency(expected.to_numpy(), correction=False)
    assert table.attrs["test"]["chi2"] == pytest.approx(reference.statistic)
    assert len(table.attrs["column_letters"]) == 6
    expected_letters = letters_by_loop(expected, expected.sum())
    letters = table.attrs["letters"]
    assert {
        (r, c): letters.loc[r, c] for r in letters.index for c in letters.columns
    } == expected_letters


def test_multi_choice_has_letters_but_no_chi_square() -> None:
    df = pd.DataFrame(
        {
            "g": ["a"] * 50 + ["b"] * 50,
            "Q": ["Price;Speed"] * 40 + ["Speed"] * 10 + ["Price"] * 5 + ["Speed"] * 45,
        }
    )
    table = analysis.crosstab(df, "Q", "g", normalize=False)
    assert table.loc["Price"].tolist() == [40, 5]
    assert table.loc["Speed"].tolist() == [50, 45]
    test = table.attrs["test"]
    assert np.isnan(test["chi2"])
    assert "multi-choice" in test["note"]
    counts = table.attrs["counts"]
    expected = letters_by_loop(counts, pd.Series({"a": 50, "b": 50}))
    letters = table.attrs["letters"]
    assert {(r, c): letters.loc[r, c] for r in letters.index for c in letters.columns} == expected
    assert letters.loc["Price", "a"] == "B"


def test_labelled_scale_keeps_every_point_in_order() -> None:
    scale = ["Poor", "Fair", "Good", "Excellent"]
    df = pd.DataFrame(
        {
            "Q": pd.Categorical(["Good", "Poor", "Good", "Fair"], categories=scale, ordered=True),
            "g": ["x", "x", "y", "y"],
        }
    )
    table = analysis.crosstab(df, "Q", "g", normalize=False)
    assert table.index.tolist() == scale
    assert table["x"].tolist() == [1, 0, 1, 0]
    assert table.attrs["test"]["dof"] == 2  # the empty row is left out of the test


def test_numbers_sort_by_value_and_one_group_has_no_test() -> None:
    df = pd.DataFrame({"Q": [10, 2, 9, 2], "g": ["only"] * 4})
    table = analysis.crosstab(df, "Q", "g")
    assert table.index.tolist() == ["2", "9", "10"]
    assert np.isnan(table.attrs["test"]["chi2"])
    assert table.attrs["test"]["note"]
    assert (table.attrs["letters"] == "").all().all()


def test_without_test_only_counts_are_attached(survey: pd.DataFrame) -> None:
    table = analysis.crosstab(survey, "Q", "region", test=False)
    assert table.attrs["test"] is None
    assert table.attrs["letters"] is None
    assert table.attrs["counts"].to_numpy().sum() == len(survey)


# -- small bases, sparse tables and reliability flags (issue 23) -------------------------


def cochran_by_hand(observed: np.ndarray) -> bool:
    """Cochran's rule from scipy's expected counts: > 20% below 5, or any below 1."""
    from scipy.stats.contingency import expected_freq

    table = observed[observed.sum(axis=1) > 0][:, observed.sum(axis=0) > 0]
    expected = expected_freq(table)
    return bool((expected < 5).mean() > 0.2 or (expected < 1).any())


@pytest.mark.parametrize(
    ("n", "groups", "answers"),
    [(8, 5, 6), (40, 3, 3), (600, 3, 3), (90, 2, 4), (1000, 6, 5)],
    ids=["n8-30-cells", "n40", "n600", "n90-2x4", "n1000"],
)
def test_pearson_warns_by_cochrans_rule(n: int, groups: int, answers: int) -> None:
    rng = np.random.default_rng(n)
    df = pd.DataFrame(
        {
            "g": [f"g{k}" for k in rng.integers(0, groups, n)],
            "Q": [f"a{k}" for k in rng.integers(0, answers, n)],
        }
    )
    test = analysis.crosstab(df, "Q", "g").attrs["test"]
    observed = pd.crosstab(df["Q"], df["g"]).to_numpy()
    expected_warning = cochran_by_hand(observed)
    assert bool(test["warning"]) is expected_warning
    if expected_warning:
        assert "Cochran" in test["warning"]
        from scipy.stats.contingency import expected_freq

        below = int((expected_freq(observed) < 5).sum())
        assert test["warning"].startswith(f"{below} of {observed.size} expected counts")


def test_the_issues_table_of_eight_respondents_warns() -> None:
    df = pd.DataFrame({"g": list("aabbccdd"), "Q": list("xyzxyzxy")})
    test = analysis.crosstab(df, "Q", "g").attrs["test"]
    assert "Cochran" in test["warning"]
    assert "below 1" in test["warning"]


def test_column_bases_and_low_bases(survey: pd.DataFrame) -> None:
    small = survey.iloc[:640].copy()
    small.loc[small.index[:25], "region"] = "Tiny"  # 25 respondents
    table = analysis.crosstab(small, "Q", "region")
    bases = small.groupby("region").size()
    assert table.attrs["bases"].to_dict() == bases.to_dict()
    assert table.attrs["min_base"] == 30
    assert table.attrs["low_base"].to_dict() == (bases < 30).to_dict()
    assert table.attrs["low_base"]["Tiny"]
    assert not np.isnan(table["Tiny"]).any()  # flagged, not suppressed
    higher = analysis.crosstab(small, "Q", "region", min_base=200)
    assert higher.attrs["low_base"].to_dict() == (bases < 200).to_dict()


def test_cell_flags_are_the_nchs_flags_of_proportions(survey: pd.DataFrame) -> None:
    small = survey.copy()
    small.loc[small.index[:20], "region"] = "Tiny"
    table = analysis.crosstab(small, "Q", "region")
    flags = table.attrs["flags"]
    assert flags.shape == table.shape
    reference = analysis.proportions(small, "Q", by="region")
    for row in reference.itertuples():
        assert flags.loc[row.option, row.region] == row.flag, (row.option, row.region)
    # n = 20: an effective sample size below 30, unreliable whatever the share
    assert (flags["Tiny"] == "unreliable").all()
    assert table.attrs["flag_reasons"].loc["Good", "Tiny"].startswith("effective sample size")


def test_design_flags_and_warnings(survey: pd.DataFrame) -> None:
    df = survey.copy()
    df["psu"] = np.arange(len(df)) % 6  # 6 clusters: 5 degrees of freedom
    design = analysis.Design(df, weights="w", psu="psu")
    table = analysis.crosstab(design, "Q", "region")
    warning = table.attrs["test"]["warning"]
    assert "5 degrees of freedom" in warning
    reference = analysis.proportions(design, "Q", by="region")
    flags = table.attrs["flags"]
    for row in reference.itertuples():
        assert flags.loc[row.option, row.region] == row.flag
    assert (flags == "review").any().any()  # df < 8
    many = analysis.Design(df, weights="w")
    assert analysis.crosstab(many, "Q", "region").attrs["test"]["warning"] == ""
    small = df.copy()
    small.loc[small.index[:12], "region"] = "Tiny"
    warned = analysis.crosstab(analysis.Design(small, weights="w"), "Q", "region")
    assert "1 column(s) with fewer than 30 respondents (Tiny)" in warned.attrs["test"]["warning"]
