"""Raking and weight summaries, checked against weightipy and numpy on the same data."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import surveykit as sk
from surveykit.analysis.weights import (
    RakingConvergenceError,
    RakingError,
    WeightsError,
    rake,
    summary,
)


def sample(n: int = 3000, seed: int = 7) -> pd.DataFrame:
    """Three correlated columns, so raking needs many iterations (not one pass)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["North", "South", "East", "West"], n, p=[0.4, 0.3, 0.2, 0.1])
    young = np.where(region == "North", 0.6, 0.3)
    age = np.where(rng.random(n) < young, "18-34", rng.choice(["35-54", "55+"], n))
    gender = np.where((age == "55+") & (rng.random(n) < 0.3), "F", rng.choice(["F", "M"], n))
    return pd.DataFrame({"region": region, "age": age, "gender": gender})


TARGETS: dict[str, dict[Any, float]] = {
    "region": {"North": 0.25, "South": 0.25, "East": 0.3, "West": 0.2},
    "age": {"18-34": 0.3, "35-54": 0.35, "55+": 0.35},
    "gender": {"F": 0.52, "M": 0.48},
}


def weighted_shares(df: pd.DataFrame, weights: np.ndarray, column: str) -> dict[Any, float]:
    codes, levels = pd.factorize(df[column])
    totals = np.bincount(codes, weights=weights)
    return dict(zip(levels, totals / weights.sum(), strict=True))


def assert_margins(df: pd.DataFrame, weights: np.ndarray, targets: Any, tol: float) -> None:
    for column, levels in targets.items():
        shares = weighted_shares(df, weights, column)
        total = sum(levels.values())
        for level, share in levels.items():
            assert abs(shares.get(level, 0.0) - share / total) <= tol, (column, level)


def test_weights_equal_weightipy_on_the_same_data() -> None:
    import weightipy

    df = sample()
    weights = rake(df, TARGETS, tol=1e-12, max_iter=2000)
    percent = {c: {k: 100 * v for k, v in levels.items()} for c, levels in TARGETS.items()}
    scheme = weightipy.scheme_from_dict(
        percent, rim_params={"max_iterations": 2000, "convcrit": 1e-12}
    )
    oracle = weightipy.weight_dataframe(df, scheme, weight_column="w")["w"].to_numpy()
    assert weights.attrs["iterations"] > 3  # the data really needed raking
    np.testing.assert_allclose(weights.to_numpy(), oracle, rtol=1e-8)


def test_every_margin_within_tol_mean_one_and_aligned() -> None:
    df = sample().set_index(pd.Index([f"r{i}" for i in range(3000)][::-1], name="id"))
    for tol in (1e-4, 1e-6, 1e-9):
        weights = rake(df, TARGETS, tol=tol)
        assert weights.name == "weight"
        assert weights.index.equals(df.index)
        assert weights.mean() == pytest.approx(1, rel=1e-12)
        assert weights.attrs["max_gap"] <= tol
        assert_margins(df, weights.to_numpy(), TARGETS, tol)


def test_categorical_and_integer_levels() -> None:
    df = sample()
    df["region"] = df["region"].astype("category")
    df["age"] = df["age"].map({"18-34": 1, "35-54": 2, "55+": 3})
    df["gender"] = df["gender"].astype("string")
    targets = {**TARGETS, "age": {1: 0.3, 2: 0.35, 3: 0.35}}
    weights = rake(df, targets)
    np.testing.assert_allclose(weights.to_numpy(), rake(sample(), TARGETS).to_numpy())
    assert_margins(df, weights.to_numpy(), targets, 1e-6)


def test_same_weights_whatever_the_row_order() -> None:
    df = sample(500)
    shuffled = df.sample(frac=1, random_state=3)
    weights = rake(df, TARGETS, tol=1e-12, max_iter=1000)
    again = rake(shuffled, TARGETS, tol=1e-12, max_iter=1000)
    np.testing.assert_allclose(again.reindex(df.index).to_numpy(), weights.to_numpy(), rtol=1e-9)


def test_a_sample_that_already_matches_gets_weights_of_exactly_one() -> None:
    df = pd.DataFrame(list(itertools.product(["a", "b"], ["x", "y", "z", "z"])), columns=["p", "q"])
    weights = rake(df, {"p": {"a": 0.5, "b": 0.5}, "q": {"x": 0.25, "y": 0.25, "z": 0.5}})
    assert (weights.to_numpy() == 1.0).all()
    assert weights.attrs["iterations"] == 0


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_property_raking_hits_every_margin(data: st.DataObject) -> None:
    columns = data.draw(st.integers(1, 3), label="columns")
    sizes = [data.draw(st.integers(2, 4), label=f"levels{i}") for i in range(columns)]
    extra = data.draw(st.integers(0, 200), label="extra rows")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    # Every combination once (so the targets are reachable), then skewed random rows.
    rows = [list(c) for c in itertools.product(*(range(k) for k in sizes))]
    skew = [rng.dirichlet(np.full(k, 0.5)) for k in sizes]
    rows += [
        [int(rng.choice(k, p=p)) for k, p in zip(sizes, skew, strict=True)] for _ in range(extra)
    ]
    df = pd.DataFrame(rows, columns=[f"c{i}" for i in range(columns)])
    targets = {}
    for i, k in enumerate(sizes):
        shares = data.draw(
            st.lists(st.floats(0.02, 1.0), min_size=k, max_size=k), label=f"shares{i}"
        )
        targets[f"c{i}"] = {level: s / sum(shares) for level, s in enumerate(shares)}
    tol = data.draw(st.sampled_from([1e-6, 1e-9]), label="tol")
    weights = rake(df, targets, tol=tol, max_iter=5000)
    assert weights.mean() == pytest.approx(1, rel=1e-9)
    assert (weights > 0).all()
    assert_margins(df, weights.to_numpy(), targets, tol)


def test_trim_bounds_hold_and_margins_still_hit() -> None:
    df = sample()
    free = rake(df, TARGETS)
    assert free.max() > 2.2 and free.min() < 0.5  # so the bounds below really bite
    weights = rake(df, TARGETS, trim=(0.5, 2.2), max_iter=1000)
    assert weights.min() >= 0.5 and weights.max() <= 2.2
    assert weights.mean() == pytest.approx(1, rel=1e-9)
    assert_margins(df, weights.to_numpy(), TARGETS, 1e-6)
    upper_only = rake(df, TARGETS, trim=(None, 2.3), max_iter=1000)
    assert upper_only.max() <= 2.3
    assert_margins(df, upper_only.to_numpy(), TARGETS, 1e-6)


def test_trim_that_cannot_hold_with_the_margins_is_an_error() -> None:
    df = sample()
    with pytest.raises(RakingConvergenceError, match=r"trim=\(0\.95, 1\.05\)") as info:
        rake(df, TARGETS, trim=(0.95, 1.05), max_iter=50)
    error = info.value
    assert error.column in TARGETS and error.level in TARGETS[error.column]
    assert error.gap > 1e-6
    assert f"column {error.column!r}, level {error.level!r}" in str(error)
    assert error.weights.between(0.95 - 1e-9, 1.05 + 1e-9).all()


@pytest.mark.parametrize("trim", [(1.2, 2.0), (0.5, 0.9), (-0.1, 2), (0.5,), "0.5,2", (0.5, "2")])
def test_bad_trim(trim: Any) -> None:
    with pytest.raises(RakingError, match="trim"):
        rake(sample(100), TARGETS, trim=trim)


def test_not_converging_names_the_worst_margin_and_its_gap() -> None:
    # Nobody is both "a" and "y": p=a 50% with q=y 90% is impossible.
    df = pd.DataFrame({"p": ["a", "a", "b", "b"], "q": ["x", "x", "y", "y"]})
    targets = {"p": {"a": 0.5, "b": 0.5}, "q": {"x": 0.1, "y": 0.9}}
    with pytest.raises(RakingConvergenceError) as info:
        rake(df, targets, max_iter=20)
    error = info.value
    assert isinstance(error, RakingError) and isinstance(error, ValueError)
    assert isinstance(error, sk.SurveykitError)
    message = str(error)
    assert "20 iterations" in message and f"column {error.column!r}" in message
    assert f"level {error.level!r}" in message and f"gap {error.gap:.3g}" in message
    # The named gap is the worst one on the last weights, computed here with numpy.
    gaps = {
        (c, level): abs(share - weighted_shares(df, error.weights.to_numpy(), c)[level])
        for c, levels in targets.items()
        for level, share in levels.items()
    }
    assert max(gaps.values()) == pytest.approx(error.gap)
    assert gaps[(error.column, error.level)] == pytest.approx(error.gap)


@pytest.mark.parametrize(
    ("targets", "pattern", "column", "level"),
    [
        (
            {"region": {"North": 0.5, "South": 0.3, "East": 0.3, "West": 0.1}},
            "sum to 1.2",
            "region",
            None,
        ),
        (
            {"region": {"North": 25, "South": 25, "East": 30, "West": 20}},
            "look like percentages",
            "region",
            None,
        ),
        (
            {"region": {"North": 0.5, "South": 0.5, "East": 0.0}},
            "'West' is in the data but not",
            "region",
            "West",
        ),
        (
            {"gender": {"F": 0.5, "M": 0.4, "X": 0.1}},
            "level 'X': target share 0.1 but no respondent",
            "gender",
            "X",
        ),
        ({"gender": {"F": 1.0, "M": 0.0}}, "level 'M': target share 0 but", "gender", "M"),
        ({"gender": {"F": 1.2, "M": -0.2}}, "level 'M': the target share must be", "gender", "M"),
        ({"gender": {"F": "half", "M": 0.5}}, "level 'F': the target share must be", "gender", "F"),
        ({"gender": {"F": float("nan"), "M": 0.5}}, "level 'F'", "gender", "F"),
        ({"income": {"low": 1.0}}, "column 'income', which is not in the frame", "income", None),
        ({"gender": {}}, "no levels", "gender", None),
        ({"gender": [0.5, 0.5]}, "must map level -> share", "gender", None),
    ],
)
def test_bad_targets_name_column_and_level(
    targets: Any, pattern: str, column: str, level: Any
) -> None:
    with pytest.raises(RakingError, match=pattern) as info:
        rake(sample(500), targets)
    assert info.value.column == column and info.value.level == level
    assert f"column {column!r}" in str(info.value)


def test_a_level_with_share_zero_and_no_respondents_is_fine() -> None:
    df = sample(500)
    targets = {"gender": {"F": 0.5, "M": 0.5, "X": 0.0}}
    assert_margins(df, rake(df, targets).to_numpy(), targets, 1e-6)


def test_missing_value_names_the_row() -> None:
    df = sample(50).set_index(pd.Index([f"R{i}" for i in range(50)]))
    df.loc["R17", "age"] = None
    df.loc["R30", "age"] = None
    with pytest.raises(
        RakingError, match=r"column 'age' has 2 missing value\(s\), first at row 'R17'"
    ) as info:
        rake(df, TARGETS)
    assert info.value.row == "R17" and info.value.column == "age"


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"max_iter": 0}, "max_iter"),
        ({"max_iter": 2.5}, "max_iter"),
        ({"tol": 0}, "tol"),
        ({"tol": float("nan")}, "tol"),
    ],
)
def test_bad_arguments(kwargs: Any, pattern: str) -> None:
    with pytest.raises(RakingError, match=pattern):
        rake(sample(50), TARGETS, **kwargs)


def test_empty_frame_and_empty_targets() -> None:
    with pytest.raises(RakingError, match="empty frame"):
        rake(sample(50).iloc[:0], TARGETS)
    with pytest.raises(RakingError, match="non-empty"):
        rake(sample(50), {})


def test_summary_against_numpy() -> None:
    weights = rake(sample(), TARGETS)
    w = weights.to_numpy()
    result = summary(weights)
    n_eff = w.sum() ** 2 / (w**2).sum()
    cv = np.std(w, ddof=0) / np.mean(w)
    assert result.name == "weight"
    assert list(result.index) == ["n", "n_eff", "design_effect", "cv", "min", "max", "mean"]
    assert result["n"] == len(w)
    assert result["n_eff"] == pytest.approx(n_eff, rel=1e-12)
    assert result["cv"] == pytest.approx(cv, rel=1e-12)
    assert result["design_effect"] == pytest.approx(1 + cv**2, rel=1e-12)
    assert result["design_effect"] == pytest.approx(len(w) / n_eff, rel=1e-12)
    assert (result["min"], result["max"]) == (w.min(), w.max())
    assert result["mean"] == pytest.approx(w.mean(), rel=1e-12)


def test_summary_of_plain_numbers_and_equal_weights() -> None:
    result = summary(np.full(10, 2.5))
    assert (result["n"], result["n_eff"], result["design_effect"], result["cv"]) == (10, 10, 1, 0)
    named = summary(pd.Series([1.0, 3.0], name="w2"))
    assert named.name == "w2" and named["n_eff"] == pytest.approx(16 / 10)


@pytest.mark.parametrize(
    ("weights", "pattern"),
    [
        (pd.Series([1.0, np.nan, 2.0], index=["a", "b", "c"]), "missing, first at row 'b'"),
        (pd.Series([1.0, 2.0, -0.5], index=["a", "b", "c"]), "negative, first at row 'c'"),
        (pd.Series([1.0, np.inf]), "infinite, first at row 1"),
        (pd.Series([0.0, 0.0]), "sum to zero"),
        (pd.Series([], dtype=float), "non-empty"),
        (pd.Series(["x", "y"]), "must be numbers"),
    ],
)
def test_summary_rejects_bad_weights(weights: pd.Series, pattern: str) -> None:
    with pytest.raises(WeightsError, match=pattern):
        summary(weights)


def test_rake_starts_from_base_weights_like_a_raked_design() -> None:
    """sk.weights.rake(base_weights=) gives the weights of Design(...).rake (IPF from base)."""
    rng = np.random.default_rng(11)
    n = 500
    df = pd.DataFrame(
        {
            "region": rng.choice(["N", "S", "E"], n, p=[0.5, 0.3, 0.2]),
            "sex": rng.choice(["f", "m"], n),
            "base": rng.lognormal(0, 0.7, n),
        }
    )
    targets = {"region": {"N": 0.3, "S": 0.3, "E": 0.4}, "sex": {"f": 0.52, "m": 0.48}}
    raked = sk.weights.rake(df, targets, base_weights="base", tol=1e-12, max_iter=500)
    assert raked.sum() == pytest.approx(df["base"].sum(), rel=1e-12)
    for column, shares in targets.items():
        got = raked.groupby(df[column]).sum() / raked.sum()
        for level, share in shares.items():
            assert got[level] == pytest.approx(share, abs=1e-11)
    design = sk.Design(df, weights="base").rake(targets)
    np.testing.assert_allclose(raked.to_numpy(), design.weights_array, rtol=1e-9)
    # Not the same as raking from equal weights: the base weights matter.
    plain = sk.weights.rake(df, targets, tol=1e-12, max_iter=500)
    assert np.abs(plain / plain.sum() - raked / raked.sum()).max() > 1e-4


def test_rake_base_weights_errors_name_the_row() -> None:
    df = pd.DataFrame({"g": ["a", "b"], "w": [1.0, -2.0]}, index=["r1", "r2"])
    with pytest.raises(sk.weights.RakingError, match=r"base_weights: row 'r2' has -2\.0"):
        sk.weights.rake(df, {"g": {"a": 0.5, "b": 0.5}}, base_weights="w")
    with pytest.raises(sk.weights.RakingError, match="no column 'nope'"):
        sk.weights.rake(df, {"g": {"a": 0.5, "b": 0.5}}, base_weights="nope")


@pytest.mark.parametrize(
    "targets",
    [
        {"sortOrder": {"0": 0.2, "1": 0.3, "2": 0.1, "3": 0.4}},
        {"sortOrder": {0: 0.2, 1: 0.3, 2: 0.1, 3: 0.4}},
        {"sortOrder": {0.0: 0.2, "1": 0.3, " 2 ": 0.1, 3: 0.4}},
    ],
    ids=["text", "int", "mixed"],
)
def test_targets_match_a_numeric_column_by_value(targets: dict) -> None:
    """A numeric column raked with text or number targets ("3" or 3 for the answer 3)."""
    df = pd.DataFrame({"sortOrder": [0, 1, 1, 2, 3, 3, 3, 0, 1, 2]})
    w = rake(df, targets, tol=1e-12, max_iter=500)
    shares = w.groupby(df["sortOrder"]).sum() / w.sum()
    assert shares.tolist() == pytest.approx([0.2, 0.3, 0.1, 0.4], abs=1e-10)
    design = sk.Design(df).rake(targets)
    assert (sk.analysis.proportions(design, "sortOrder")["se"] < 1e-12).all()


def test_two_targets_of_one_value_are_refused() -> None:
    df = pd.DataFrame({"q": [1, 2]})
    with pytest.raises(RakingError, match="targets '1' and 1 are the same level"):
        rake(df, {"q": {"1": 0.25, 1: 0.25, 2: 0.5}})
