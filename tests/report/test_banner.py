"""sk.report.banner without a design: textbook figures checked against pandas and statsmodels.

Shares and bases are recounted with pandas; letters come from statsmodels'
``proportions_ztest`` (pooled two-proportion z-test), ``ttest_ind(usevar="unequal")``
(Welch) and ``multipletests`` (the corrections), applied by hand to the same cells.
"""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest
from statsmodels.stats.weightstats import ttest_ind

import surveykit as sk
from surveykit.errors import AnalysisInputError
from surveykit.report import Codebook, Question
from surveykit.report._banner import adjust
from tests.helpers.files import FORMULA_ANSWERS

ALPHA = 0.05
LETTERS = "ABCDEFGH"


def _survey(n: int = 900, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    channel = rng.choice(["sms", "email", "web", "app"], n, p=[0.4, 0.3, 0.2, 0.1])
    region = rng.choice(["North", "South", "East"], n)
    # answers that depend on the channel, so that some differences are significant
    shift = pd.Series(channel).map({"sms": 0.0, "email": 0.6, "web": -0.5, "app": 0.2})
    q1 = np.clip(np.round(3 + shift.to_numpy() + rng.normal(0, 1.2, n)), 1, 5)
    q1[rng.random(n) < 0.08] = np.nan
    q2 = np.where(
        channel == "web",
        rng.choice(["Price", "Quality", "Speed"], n, p=[0.6, 0.2, 0.2]),
        rng.choice(["Price", "Quality", "Speed"], n, p=[0.3, 0.4, 0.3]),
    ).astype(object)
    q2[rng.random(n) < 0.05] = None
    options = ["Price", "Quality", "App"]
    q3 = []
    for c in channel:
        if rng.random() < 0.1:
            q3.append(None)
            continue
        p_app = 0.7 if c == "app" else 0.3
        ticks = [o for o, p in zip(options, [0.4, 0.5, p_app], strict=True) if rng.random() < p]
        q3.append(";".join(ticks))  # "" is answered, no option
    age = rng.normal(40, 12, n) + np.where(channel == "app", -8, 0)
    missing_region = rng.random(n) < 0.03
    return pd.DataFrame(
        {
            "Q1": q1,
            "Q2": q2,
            "Q3": q3,
            "age": np.round(age, 1),
            "channel": channel,
            "region": np.where(missing_region, None, region),
        }
    )


def _cell(frame: pd.DataFrame, question: str, row: str, banner: str, column: str) -> pd.Series:
    found = frame[
        (frame["question"] == question)
        & (frame["row"] == row)
        & (frame["banner"] == banner)
        & (frame["column"] == column)
    ]
    assert len(found) == 1, (question, row, banner, column)
    return found.iloc[0]


def _levels(df: pd.DataFrame, banner: str) -> list[str]:
    return sorted(df[banner].dropna().unique())


# -- figures -------------------------------------------------------------------------------


def test_frame_has_one_row_per_cell_with_the_contract_columns() -> None:
    df = _survey()
    result = sk.report.banner(df, ["Q1", "Q2"], banner=["channel", "region"])
    frame = result.frame
    assert list(frame.columns) == [
        "question", "row", "banner", "column", "estimate", "base", "base_weighted",
        "letters", "flag",
    ]  # fmt: skip
    assert frame["base"].dtype == np.int64
    columns = list(dict.fromkeys(zip(frame["banner"], frame["column"], strict=True)))
    assert columns[0] == ("Total", "Total")
    assert columns[1:5] == [("channel", c) for c in ["app", "email", "sms", "web"]]
    assert ("region", "(missing)") in columns
    q1_rows = list(dict.fromkeys(frame.loc[frame["question"] == "Q1", "row"]))
    assert q1_rows == ["1", "2", "3", "4", "5", "Mean"]
    assert len(frame) == len(frame.drop_duplicates(["question", "row", "banner", "column"]))


def test_shares_and_bases_are_those_pandas_counts() -> None:
    df = _survey()
    frame = sk.report.banner(df, ["Q2"], banner=["channel", "region"], test=None).frame
    answered = df[df["Q2"].notna()]
    for banner in ("channel", "region"):
        for level, group in answered.groupby(answered[banner].fillna("(missing)")):
            shares = group["Q2"].value_counts(normalize=True)
            for option in ["Price", "Quality", "Speed"]:
                cell = _cell(frame, "Q2", option, banner, str(level))
                assert cell["base"] == len(group)
                assert cell["base_weighted"] == len(group)
                if len(group) >= 10:
                    assert cell["estimate"] == pytest.approx(shares.get(option, 0.0), abs=1e-12)
    total = _cell(frame, "Q2", "Price", "Total", "Total")
    assert total["base"] == len(answered)
    assert total["estimate"] == pytest.approx((answered["Q2"] == "Price").mean(), abs=1e-12)


def test_a_banner_variables_columns_add_up_to_the_total() -> None:
    df = _survey()
    frame = sk.report.banner(df, ["Q1"], banner=["region"], test=None).frame
    cells = frame[(frame["row"] == "Mean")]
    total = int(cells.loc[cells["banner"] == "Total", "base"].iloc[0])
    assert int(cells.loc[cells["banner"] == "region", "base"].sum()) == total
    assert total == int(df["Q1"].notna().sum())


def test_means_are_the_answers_mean_per_column() -> None:
    df = _survey()
    frame = sk.report.banner(df, ["Q1", "age"], banner="channel", test=None).frame
    for level, group in df.groupby("channel"):
        for question in ("Q1", "age"):
            cell = _cell(frame, question, "Mean", "channel", str(level))
            assert cell["estimate"] == pytest.approx(group[question].mean(), rel=1e-12)
            assert cell["base"] == group[question].notna().sum()
    assert list(frame.loc[frame["question"] == "age", "row"].unique()) == ["Mean"]


def test_multi_choice_is_a_multiple_response_set() -> None:
    df = _survey()
    frame = sk.report.banner(df, ["Q3"], banner="channel", test=None).frame
    assert list(frame["row"].unique()) == ["App", "Price", "Quality"]
    answered = df[df["Q3"].notna()]
    for level, group in answered.groupby("channel"):
        for option in ["App", "Price", "Quality"]:
            chose = group["Q3"].str.split(";").apply(lambda ticks, o=option: o in ticks)
            cell = _cell(frame, "Q3", option, "channel", str(level))
            assert cell["base"] == len(group)  # the empty answer counts as answered
            assert cell["estimate"] == pytest.approx(chose.mean(), abs=1e-12)
    shares = frame[(frame["banner"] == "Total")]["estimate"].sum()
    assert shares > 1  # options are not exclusive


def test_multi_choice_by_codebook_kind_even_for_a_categorical() -> None:
    df = _survey()
    df["Q3"] = df["Q3"].astype("category")
    codebook = Codebook([Question("Q3", "What mattered?", "multi")])
    frame = sk.report.banner(df, ["Q3"], banner="channel", codebook=codebook, test=None).frame
    assert list(frame["row"].unique()) == ["App", "Price", "Quality"]


def test_nets_are_shares_choosing_any_of_their_codes() -> None:
    df = _survey()
    nets = {"Q1": {"Happy": [4, 5], "Unhappy": ["1", 2.0]}, "Q3": {"Not app": ["Price", "Quality"]}}
    frame = sk.report.banner(df, ["Q1", "Q3"], banner="channel", nets=nets, test=None).frame
    assert list(dict.fromkeys(frame.loc[frame["question"] == "Q1", "row"])) == [
        "1", "2", "3", "4", "5", "Happy", "Unhappy", "Mean",
    ]  # fmt: skip
    for level, group in df.groupby("channel"):
        q1 = group["Q1"].dropna()
        happy = _cell(frame, "Q1", "Happy", "channel", str(level))
        assert happy["estimate"] == pytest.approx(q1.isin([4, 5]).mean(), abs=1e-12)
        unhappy = _cell(frame, "Q1", "Unhappy", "channel", str(level))
        assert unhappy["estimate"] == pytest.approx(q1.isin([1, 2]).mean(), abs=1e-12)
        q3 = group["Q3"].dropna().str.split(";")
        not_app = _cell(frame, "Q3", "Not app", "channel", str(level))
        expected = q3.apply(lambda t: "Price" in t or "Quality" in t).mean()
        assert not_app["estimate"] == pytest.approx(expected, abs=1e-12)


def test_top_box_uses_the_codebooks_scale_even_where_nobody_answered() -> None:
    df = _survey()
    df.loc[df["Q1"] == 1, "Q1"] = 2  # nobody chose 1
    codebook = Codebook(
        [
            Question("Q1", "How satisfied?", "rating", min=1, max=5,
                     labels={"1": "Very unhappy", "5": "Very happy"}),
            Question("Q2", "Why?", "choice"),
        ]
    )  # fmt: skip
    frame = sk.report.banner(
        df, ["Q1", "Q2"], banner="channel", top_box=2, codebook=codebook, test=None
    ).frame
    rows = list(dict.fromkeys(frame.loc[frame["question"] == "Q1", "row"]))
    assert rows == ["Very unhappy", "2", "3", "4", "Very happy", "Top 2", "Bottom 2", "Mean"]
    assert "Top 2" not in set(frame.loc[frame["question"] == "Q2", "row"])  # not a rating
    for level, group in df.groupby("channel"):
        q1 = group["Q1"].dropna()
        assert _cell(frame, "Q1", "Very unhappy", "channel", str(level))["estimate"] == 0
        top = _cell(frame, "Q1", "Top 2", "channel", str(level))["estimate"]
        bottom = _cell(frame, "Q1", "Bottom 2", "channel", str(level))["estimate"]
        assert top == pytest.approx(q1.isin([4, 5]).mean(), abs=1e-12)
        assert bottom == pytest.approx(q1.isin([1, 2]).mean(), abs=1e-12)


def test_codebook_missing_codes_are_not_answers() -> None:
    df = _survey()
    df.loc[df.index[:50], "Q1"] = 99
    codebook = Codebook(
        [Question("Q1", "How satisfied?", "rating", min=1, max=5, missing={"99": "Don't know"})]
    )
    frame = sk.report.banner(df, ["Q1"], banner="channel", codebook=codebook, test=None).frame
    assert "99" not in set(frame["row"])
    total = _cell(frame, "Q1", "Mean", "Total", "Total")
    valid = df["Q1"][df["Q1"] != 99].dropna()
    assert total["base"] == len(valid)
    assert total["estimate"] == pytest.approx(valid.mean(), rel=1e-12)


def test_a_labelled_frame_shows_labels_and_takes_nets_by_code() -> None:
    df = _survey()
    codebook = Codebook(
        [
            Question("Q1", "How satisfied?", "rating", min=1, max=5,
                     labels={"1": "Very unhappy", "2": "Unhappy", "3": "Neutral",
                             "4": "Happy", "5": "Very happy"}),
        ]
    )  # fmt: skip
    labelled = sk.label(df, codebook)
    frame = sk.report.banner(
        labelled, ["Q1"], banner="channel", nets={"Q1": {"Top 2": [4, 5]}}, test=None
    ).frame
    rows = list(dict.fromkeys(frame["row"]))
    assert rows == ["Very unhappy", "Unhappy", "Neutral", "Happy", "Very happy", "Top 2", "Mean"]
    mean = _cell(frame, "Q1", "Mean", "Total", "Total")["estimate"]
    assert mean == pytest.approx(df["Q1"].mean(), rel=1e-12)
    top = _cell(frame, "Q1", "Top 2", "Total", "Total")["estimate"]
    assert top == pytest.approx(df["Q1"].dropna().isin([4, 5]).mean(), abs=1e-12)
    assert result_text(labelled) == "How satisfied?"


def result_text(labelled: pd.DataFrame) -> str:
    result = sk.report.banner(labelled, ["Q1"], banner="channel")
    return str(result.frame.attrs["question_texts"]["Q1"])


def test_a_question_nobody_answered_keeps_a_row_saying_so() -> None:
    df = _survey()
    df["Q9"] = np.nan
    frame = sk.report.banner(df, ["Q9", "Q2"], banner="channel").frame
    q9 = frame[frame["question"] == "Q9"]
    assert set(q9["row"]) == {"(no answers)"}
    assert set(q9["base"]) == {0} and set(q9["flag"]) == {"suppressed"}
    assert q9["estimate"].isna().all()


def test_a_banner_variable_of_one_level_has_no_tests() -> None:
    df = _survey()
    df["everyone"] = "all"
    result = sk.report.banner(df, ["Q2"], banner=["everyone"], test="columns")
    assert set(result.frame["letters"]) == {""}
    assert result.frame.attrs["tests"].empty


def test_total_test_grid_has_no_column_letters_in_its_header() -> None:
    result = sk.report.banner(_survey(), ["Q2"], banner="channel", test="total")
    assert ("channel", "app") in result.table.columns
    assert "test='total'" in repr(result)
    assert "<table" in result._repr_html_()


def test_total_false_leaves_the_total_column_out() -> None:
    frame = sk.report.banner(_survey(), ["Q2"], banner="channel", total=False).frame
    assert "Total" not in set(frame["banner"])


# -- letters: statsmodels ----------------------------------------------------------------


def _expected_column_letters(
    df: pd.DataFrame, question: str, banner: str, row: str, method: str | None
) -> dict[str, str]:
    answered = df[df[question].notna()]
    levels = _levels(answered, banner)
    keys = dict(zip(levels, LETTERS, strict=False))
    groups = {lv: answered.loc[answered[banner] == lv, question] for lv in levels}
    pairs = list(combinations(levels, 2))
    p_values, larger = [], []
    for a, b in pairs:
        if row == "Mean":
            _, p, _ = ttest_ind(groups[a], groups[b], usevar="unequal")
            first = groups[a].mean() > groups[b].mean()
        else:
            value = float(row) if question == "Q1" else row
            counts = [int((groups[lv] == value).sum()) for lv in (a, b)]
            nobs = [len(groups[a]), len(groups[b])]
            with np.errstate(invalid="ignore", divide="ignore"):
                _, p = proportions_ztest(counts, nobs)
            first = counts[0] / nobs[0] > counts[1] / nobs[1]
        p_values.append(p)
        larger.append(first)
    adjusted = np.asarray(p_values, dtype=float)
    tested = np.isfinite(adjusted)  # a pair without variation is no test
    if method is not None and tested.any():
        adjusted[tested] = multipletests(adjusted[tested], alpha=ALPHA, method=method)[1]
    out = {lv: "" for lv in levels}
    found: dict[str, list[str]] = {lv: [] for lv in levels}
    for (a, b), p, first in zip(pairs, adjusted, larger, strict=True):
        if p < ALPHA:
            big, small = (a, b) if first else (b, a)
            found[big].append(keys[small])
    for lv in levels:
        out[lv] = "".join(sorted(found[lv]))
    return out


@pytest.mark.parametrize("correction", ["bonferroni", "holm", "fdr_bh", None])
def test_column_letters_are_statsmodels_z_and_welch_tests(correction: str | None) -> None:
    df = _survey(n=1500)
    result = sk.report.banner(
        df,
        ["Q1", "Q2"],
        banner="channel",
        correction=correction,
        alpha=ALPHA,  # type: ignore[arg-type]
    )
    frame = result.frame
    assert result.frame.attrs["column_letters"]["channel"] == {
        "app": "A", "email": "B", "sms": "C", "web": "D",
    }  # fmt: skip
    some = 0
    for question, rows in (("Q1", ["1", "2", "3", "4", "5", "Mean"]),
                           ("Q2", ["Price", "Quality", "Speed"])):  # fmt: skip
        for row in rows:
            expected = _expected_column_letters(df, question, "channel", row, correction)
            for level, letters in expected.items():
                assert _cell(frame, question, row, "channel", level)["letters"] == letters
                some += bool(letters)
    assert some >= 4  # the data hold real differences


def test_the_tests_behind_the_letters_are_in_attrs() -> None:
    df = _survey(n=1500)
    tests = sk.report.banner(df, ["Q2"], banner="channel", correction="holm").frame.attrs["tests"]
    answered = df[df["Q2"].notna()]
    price = tests[(tests["row"] == "Price")]
    assert list(zip(price["column_a"], price["column_b"], strict=True)) == list(
        combinations(["app", "email", "sms", "web"], 2)
    )
    expected = []
    for a, b in zip(price["column_a"], price["column_b"], strict=True):
        ga, gb = (answered.loc[answered["channel"] == lv, "Q2"] for lv in (a, b))
        z, p = proportions_ztest([(ga == "Price").sum(), (gb == "Price").sum()], [len(ga), len(gb)])
        expected.append(p)
        row = price[(price["column_a"] == a) & (price["column_b"] == b)].iloc[0]
        assert row["statistic"] == pytest.approx(z, rel=1e-9)
    assert price["p_value"].to_numpy() == pytest.approx(expected, rel=1e-9)
    holm = multipletests(expected, method="holm")[1]
    assert price["p_adjusted"].to_numpy() == pytest.approx(holm, rel=1e-9)


@pytest.mark.parametrize("correction", ["bonferroni", "holm", "fdr_bh"])
def test_total_test_compares_each_column_with_the_rest(correction: str) -> None:
    df = _survey(n=1500)
    frame = sk.report.banner(
        df,
        ["Q1", "Q2"],
        banner=["channel", "region"],
        test="total",
        correction=correction,  # type: ignore[arg-type]
    ).frame
    marks = 0
    for question, row in (("Q2", "Price"), ("Q1", "Mean"), ("Q1", "4")):
        answered = df[df[question].notna()]
        for banner in ("channel", "region"):
            levels = _levels(answered, banner)
            p_values, higher = [], []
            for level in levels:
                inside = answered[banner] == level  # the rest includes missing banner values
                a, b = answered.loc[inside, question], answered.loc[~inside, question]
                if row == "Mean":
                    _, p, _ = ttest_ind(a, b, usevar="unequal")
                    up = a.mean() > b.mean()
                else:
                    value: Any = row if question == "Q2" else float(row)
                    _, p = proportions_ztest([(a == value).sum(), (b == value).sum()],
                                             [len(a), len(b)])  # fmt: skip
                    up = (a == value).mean() > (b == value).mean()
                p_values.append(p)
                higher.append(up)
            adjusted = multipletests(p_values, method=correction)[1]
            for level, p, up in zip(levels, adjusted, higher, strict=True):
                expected = ("+" if up else "-") if p < ALPHA else ""
                assert _cell(frame, question, row, banner, level)["letters"] == expected
                marks += bool(expected)
            if banner == "region":  # respondents without a region: shown, not tested
                assert _cell(frame, question, row, banner, "(missing)")["letters"] == ""
    assert marks >= 2
    assert set(frame.loc[frame["banner"] == "Total", "letters"]) == {""}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.floats(0, 1, allow_nan=False), st.just(math.nan)), min_size=5, max_size=5
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["bonferroni", "holm", "fdr_bh"]),
)
def test_adjust_is_multipletests_on_each_rows_tests(rows: list[list[float]], method: str) -> None:
    p = np.array(rows)
    got = adjust(p, method)  # type: ignore[arg-type]
    for r in range(len(p)):
        finite = np.isfinite(p[r])
        assert np.isnan(got[r][~finite]).all()
        if finite.any():
            expected = multipletests(p[r][finite], method=method)[1]
            assert got[r][finite] == pytest.approx(expected, abs=1e-12)


# -- flags, missing banner values ------------------------------------------------------------


def test_small_bases_are_flagged_and_tiny_ones_suppressed_and_untested() -> None:
    df = _survey(n=1500)
    df["panel"] = np.where(
        np.arange(len(df)) < 8, "tiny", np.where(np.arange(len(df)) < 28, "small", "big")
    )
    frame = sk.report.banner(df, ["Q2"], banner="panel", min_base=30).frame
    tiny = frame[frame["column"] == "tiny"]
    assert set(tiny["flag"]) == {"suppressed"}
    assert tiny["estimate"].isna().all()
    assert set(tiny["letters"]) == {""}
    small = frame[frame["column"] == "small"]
    assert set(small["flag"]) == {"low base"}
    assert small["estimate"].notna().all()
    assert set(frame.loc[frame["column"] == "big", "flag"]) == {""}
    tests = frame.attrs["tests"]
    assert "tiny" not in set(tests["column_a"]) | set(tests["column_b"])
    assert set(tests["column_a"]) | set(tests["column_b"]) == {"big", "small"}


def test_missing_banner_values_are_a_column_that_is_shown_but_not_tested() -> None:
    df = _survey(n=1500)
    df.loc[df.index[:60], "region"] = None
    frame = sk.report.banner(df, ["Q2"], banner="region").frame
    missing = frame[frame["column"] == "(missing)"]
    assert len(missing) == 3 and missing["estimate"].notna().all()
    assert set(missing["letters"]) == {""}
    tests = frame.attrs["tests"]
    assert "(missing)" not in set(tests["column_a"]) | set(tests["column_b"])
    assert frame.attrs["column_letters"]["region"] == {"East": "A", "North": "B", "South": "C"}


def test_banner_levels_are_named_as_text() -> None:
    df = _survey()
    df["renewed"] = np.arange(len(df)) % 2 == 0
    df["wave"] = (np.arange(len(df)) % 3 + 1).astype(float)
    frame = sk.report.banner(df, ["Q2"], banner=["renewed", "wave"]).frame
    assert list(frame.loc[frame["banner"] == "renewed", "column"].unique()) == ["False", "True"]
    assert list(frame.loc[frame["banner"] == "wave", "column"].unique()) == ["1", "2", "3"]


def test_no_missing_column_without_missing_values() -> None:
    frame = sk.report.banner(_survey(), ["Q2"], banner="channel").frame
    assert "(missing)" not in set(frame["column"])


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"questions": ["Q9"]}, "'Q9'"),
        ({"banner": ["nowhere"]}, "banner: no column 'nowhere'"),
        ({"banner": ["channel", "Q2"]}, "'Q2' is also a question"),
        ({"nets": {"Q1": {"Top 2": [4, 6]}}}, r"nets\['Q1'\]\['Top 2'\]: 6 is not a code of Q1"),
        ({"nets": {"Q2": {"Both": ["Price", "Cost"]}}}, "'Cost' is not a code of Q2"),
        ({"nets": {"Q8": {"x": [1]}}}, "nets: 'Q8' is not one of the questions"),
        ({"nets": {"Q2": {"Price": ["Price"]}}}, "'Price' is already a row of Q2"),
        ({"test": "rows"}, "test must be"),
        ({"correction": "sidak"}, "correction must be one of"),
        ({"top_box": 0}, "top_box"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs: dict[str, Any], message: str) -> None:
    options: dict[str, Any] = {"questions": ["Q1", "Q2"], "banner": ["channel"]} | kwargs
    with pytest.raises(AnalysisInputError, match=message):
        sk.report.banner(_survey(), options.pop("questions"), **options)


def test_a_replicate_design_is_refused_naming_what_to_use() -> None:
    replicates = sk.Design(_survey()).replicates("jk1")
    with pytest.raises(AnalysisInputError, match="banner on a replicate design"):
        sk.report.banner(replicates, ["Q1"], banner="channel")


def test_a_free_text_question_is_refused() -> None:
    codebook = Codebook([Question("Q2", "Why?", "text")])
    with pytest.raises(AnalysisInputError, match="'Q2' is a text question in the codebook"):
        sk.report.banner(_survey(), ["Q2"], banner="channel", codebook=codebook)


def test_a_number_question_with_a_text_answer_names_the_row() -> None:
    df = _survey()
    df["age"] = df["age"].astype(object)
    df.loc[5, "age"] = "forty"
    codebook = Codebook([Question("age", "Age", "number")])
    with pytest.raises(AnalysisInputError, match=r"age: row 5 has the answer 'forty'"):
        sk.report.banner(df, ["age"], banner="channel", codebook=codebook)


# -- the grid and the workbook ---------------------------------------------------------------


def test_table_is_a_grid_with_total_first_letters_and_bases() -> None:
    df = _survey(n=1500)
    result = sk.report.banner(df, ["Q1", "Q2"], banner=["channel", "region"], top_box=2)
    table = result.table
    assert table.columns[0] == ("Total", "Total")
    assert ("channel", "app (A)") in table.columns
    assert list(table.loc["Q2"].index) == ["Price", "Quality", "Speed", "Base"]
    frame = result.frame
    for (question, row), line in table.iterrows():
        if row == "Base":
            continue
        cell = _cell(frame, str(question), str(row), "channel", "web")
        text = line[("channel", "web (D)")]
        shown = f"{cell['estimate']:.2f}" if row == "Mean" else f"{100 * cell['estimate']:.1f}%"
        assert text.startswith(shown)
        assert text.endswith(cell["letters"] + (" *" if cell["flag"] == "low base" else ""))
    base = table.loc[("Q2", "Base"), ("Total", "Total")]
    assert base == f"{int(df['Q2'].notna().sum()):,}"
    # the frame is not rounded
    assert (frame["estimate"].dropna() * 1000 % 1 != 0).any()
    assert any("Letters" in note for note in table.attrs["notes"])


def test_table_marks_low_and_suppressed_cells() -> None:
    df = _survey(n=600)
    df["panel"] = np.where(
        np.arange(len(df)) < 5, "tiny", np.where(np.arange(len(df)) < 25, "small", "big")
    )
    table = sk.report.banner(df, ["Q2"], banner="panel", test=None).table
    assert table.loc[("Q2", "Price"), ("panel", "tiny")] == "-"
    assert table.loc[("Q2", "Price"), ("panel", "small")].endswith(" *")


def test_weights_give_a_weighted_base_row() -> None:
    df = _survey()
    df["w"] = np.linspace(0.5, 1.5, len(df))
    result = sk.report.banner(df, ["Q2"], banner="channel", weights="w")
    assert ("Q2", "Base (weighted)") in result.table.index
    cell = _cell(result.frame, "Q2", "Price", "Total", "Total")
    answered = df[df["Q2"].notna()]
    assert cell["base_weighted"] == pytest.approx(answered["w"].sum(), rel=1e-12)
    expected = answered.loc[answered["Q2"] == "Price", "w"].sum() / answered["w"].sum()
    assert cell["estimate"] == pytest.approx(expected, rel=1e-12)
    design = sk.report.banner(sk.Design(df, weights="w"), ["Q2"], banner="channel")
    pd.testing.assert_frame_equal(result.frame, design.frame)


def test_to_excel_writes_numbers_letters_and_text_as_text(tmp_path: Path) -> None:
    df = _survey(n=1500)
    df["Q4"] = np.resize(np.asarray(FORMULA_ANSWERS, dtype=object), len(df))
    df["channel"] = df["channel"].replace({"sms": "=SUM(A1)"})
    result = sk.report.banner(df, ["Q2", "Q4"], banner=["channel"], min_base=300)
    path = tmp_path / "banner.xlsx"
    result.to_excel(path)
    sheet = load_workbook(path)["Banner"]
    cells = {(c.row, c.column): c for row in sheet.iter_rows() for c in row if c.value is not None}
    texts = {c.value: c for c in cells.values() if isinstance(c.value, str)}
    for answer in FORMULA_ANSWERS:  # answers are read stripped of surrounding blanks
        assert texts[answer.strip()].data_type == "s"
    assert any(str(v).startswith("=SUM(A1) (") and c.data_type == "s" for v, c in texts.items())
    # the Price row: its Total share is a number in percent format, bases whole numbers
    price_row = next(r for (r, col), c in cells.items() if col == 1 and c.value == "Price")
    total = sheet.cell(price_row, 2)
    expected = _cell(result.frame, "Q2", "Price", "Total", "Total")["estimate"]
    assert total.value == pytest.approx(expected, rel=1e-12)
    assert total.number_format == "0.0%"
    base_row = next(r for (r, col), c in cells.items() if col == 1 and c.value == "Base")
    assert sheet.cell(base_row, 2).value == int(df["Q2"].notna().sum())
    # letters and the low-base mark sit in the cell beside the figure
    frame = result.frame
    lettered = frame[(frame["letters"] != "") & (frame["question"] == "Q2")].iloc[0]
    row = next(r for (r, col), c in cells.items() if col == 1 and c.value == lettered["row"])
    marks = [sheet.cell(row, col).value for col in range(3, sheet.max_column + 1, 2)]
    assert any(str(m).startswith(lettered["letters"]) for m in marks if m)
    assert any(str(m).endswith("*") for m in marks if m)  # min_base=300: low bases
    assert any("Letters" in str(v) for v in texts)
    assert sheet.page_setup.fitToWidth == 1


def test_to_excel_refuses_a_text_a_workbook_cannot_store(tmp_path: Path) -> None:
    df = _survey()
    df["Q2"] = df["Q2"].replace({"Price": "Pri\x01ce"})
    result = sk.report.banner(df, ["Q2"], banner="channel")
    with pytest.raises(sk.ExportError, match=r"'row'.*U\+0001"):
        result.to_excel(tmp_path / "banner.xlsx")
    assert not (tmp_path / "banner.xlsx").exists()
