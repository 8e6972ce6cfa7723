"""The linearised variance when every PSU is one row: sums over rows, no PSU-totals matrix.

:func:`surveykit.analysis._variance.by_rows` must give :func:`_stratified` of the PSU
totals (R's ``onestage``, checked against R in ``test_design_r.py``) on the same influence
values, for strata, fpc, every lonely-PSU rule, rows in no domain and zero weights, without
making the rows x domains matrix of PSU totals.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

import surveykit as sk
from surveykit.analysis import _variance
from surveykit.analysis._influence import Basis, Influence


def _with_peak(
    estimate: Callable[..., pd.DataFrame], df: pd.DataFrame, question: str
) -> tuple[pd.DataFrame, int]:
    """``estimate`` by ``g`` on a weights-only design of ``df``, and its peak memory (bytes),
    after a warm call on 50 rows (imports and caches do not count)."""
    estimate(sk.Design(df.head(50), weights="w"), question, by="g")
    design = sk.Design(df, weights="w")
    tracemalloc.start()
    try:
        out = estimate(design, question, by="g")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def _design(lonely: str, fpc: bool) -> tuple[sk.Design, pd.DataFrame]:
    rng = np.random.default_rng(23)
    rows = 400
    df = pd.DataFrame(
        {
            "stratum": rng.integers(0, 4, rows),
            "w": np.where(rng.random(rows) < 0.1, 0.0, rng.lognormal(0, 1, rows)),
            "g": rng.integers(0, 7, rows),
        }
    )
    df.loc[0, "stratum"] = 9  # a stratum of one row: a lonely PSU
    df["N"] = 500 + 10 * df["stratum"]
    extra = {"fpc": "N"} if fpc else {}
    return sk.Design(df, weights="w", strata="stratum", lonely_psu=lonely, **extra), df


@pytest.mark.parametrize("lonely", ["adjust", "certainty", "remove"])
@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_by_rows_is_the_stratified_variance_of_the_psu_totals(lonely: str, fpc: bool) -> None:
    design, df = _design(lonely, fpc)
    rng = np.random.default_rng(5)
    codes = np.where(rng.random(len(df)) < 0.2, 7, df["g"]).astype(np.int64)  # some in none
    x = Influence(7)
    x.add(rng.normal(0, 1, len(df)) * df["w"].to_numpy(), Basis.one_hot(codes, 7))
    s = design.structure
    assert _variance.rows_are_psus(s)
    expected = _variance._stratified(design.psu_totals(x), s)
    full = _variance.by_rows(x, s)
    assert full is not None
    np.testing.assert_allclose(full, expected, rtol=1e-10, atol=1e-12)
    diagonal = _variance.by_rows(x, s, diagonal=True)
    assert diagonal is not None
    np.testing.assert_allclose(diagonal, np.diag(expected), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(design.vcov(x), expected, rtol=1e-10, atol=1e-12)


def test_by_rows_leaves_other_influence_values_to_the_psu_totals() -> None:
    design, df = _design("adjust", False)
    two_terms = Influence(1)
    two_terms.add(np.ones(len(df)), Basis.constant())
    two_terms.add(-np.ones(len(df)), Basis.constant())
    assert _variance.by_rows(two_terms, design.structure) is None
    assert np.allclose(design.vcov(two_terms), 0.0)


def test_means_by_many_domains_without_psus_make_no_rows_by_domains_matrix() -> None:
    """200,000 rows by 200 domains: the PSU totals would be 320 MB; the figures need a
    few passes over the rows (each 1.6 MB) and tables of 200 domains."""
    rng = np.random.default_rng(2)
    rows = 200_000
    df = pd.DataFrame(
        {
            "w": rng.lognormal(0, 0.5, rows),
            "y": rng.normal(3, 1, rows),
            "g": rng.integers(0, 200, rows),
        }
    )
    out, peak = _with_peak(sk.analysis.means, df, "y")
    assert len(out) == 200 and out["se"].gt(0).all()
    assert peak < 40 * 2**20  # MiB: a rows x domains float matrix alone is 305
    one = df[df["g"] == 17]  # the textbook se of one domain's mean, as a check
    resid = one["w"] * (one["y"] - np.average(one["y"], weights=one["w"])) / one["w"].sum()
    z = np.zeros(rows)
    z[one.index] = resid
    se = np.sqrt(rows / (rows - 1) * ((z - z.mean()) ** 2).sum())
    assert out.set_index("g").loc[17, "se"] == pytest.approx(se, rel=1e-9)


@pytest.mark.parametrize("lonely", ["adjust", "certainty", "remove"])
@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_by_row_blocks_is_the_stratified_variance_of_any_influence(
    lonely: str, fpc: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terms on one-hot, dense and constant bases with coefficients, a raking's residuals,
    made in blocks of 37 rows (a block boundary inside strata)."""
    monkeypatch.setattr(_variance, "BLOCK_CELLS", 37 * 6)
    design, df = _design(lonely, fpc)
    rng = np.random.default_rng(8)
    n = len(df)
    x = Influence(6)
    x.add(
        rng.normal(size=n),
        Basis.one_hot(df["g"].to_numpy().astype(np.int64), 7),
        rng.normal(size=(7, 6)),
    )
    x.add(rng.normal(size=n), Basis.dense(rng.normal(size=(n, 3))), rng.normal(size=(3, 6)))
    x.add(rng.normal(size=n), Basis.constant(), rng.normal(size=(1, 6)))
    s = design.structure
    expected = _variance._stratified(design.psu_totals(x), s)
    np.testing.assert_allclose(_variance.by_row_blocks(x, s), expected, rtol=1e-10, atol=1e-12)
    diagonal = _variance.by_row_blocks(x, s, diagonal=True)
    np.testing.assert_allclose(diagonal, np.diag(expected), rtol=1e-10, atol=1e-12)
    # a raked margin (the raking's residual terms, made in blocks) has se 0
    positive = df[df["w"] > 0]
    extra = {"fpc": "N"} if fpc else {}
    kwargs = {"weights": "w", "strata": "stratum", "lonely_psu": lonely, **extra}
    raked = sk.Design(positive, **kwargs).rake({"g": {g: 1 / 7 for g in range(7)}})
    assert _variance.rows_are_psus(raked.structure)
    margin = sk.analysis.proportions(raked, "g")
    assert len(margin) == 7 and (margin["se"] < 1e-12).all()


def test_proportions_by_many_domains_without_psus_stay_in_blocks() -> None:
    """100,000 rows, 100 domains x 5 options: 500 estimates, whose PSU totals would be
    382 MiB at once; blocks of rows keep the peak small."""
    rng = np.random.default_rng(3)
    rows = 100_000
    df = pd.DataFrame(
        {
            "w": rng.lognormal(0, 0.5, rows),
            "q": pd.Categorical(rng.choice(list("abcde"), rows)),
            "g": rng.integers(0, 100, rows),
        }
    )
    out, peak = _with_peak(sk.analysis.proportions, df, "q")
    assert len(out) == 500 and out["se"].gt(0).all()
    assert peak < 40 * 2**20  # MiB
