"""Domain estimates: the (PSU, domain) cell path of means equals the general path.

A design neither calibrated nor replicated takes its means by several domains from one
table of (PSU, domain) cells; every other design goes through the influence values. The
general path is checked against R elsewhere (``test_design_r.py``); here the two paths are
run on the same data, with zero weights, missing answers, rows in no group, an empty group
and a lonely PSU, and must give the same figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import surveykit as sk
from surveykit.analysis import _domains
from surveykit.analysis import _reliability as reliability


class _General(sk.Design):
    """The same design, told to be calibrated so that means take the general path."""

    @property
    def calibrated(self) -> bool:
        return True


def _frame(zero_weights: bool) -> pd.DataFrame:
    rng = np.random.default_rng(17)
    rows = 900
    df = pd.DataFrame(
        {
            "stratum": rng.integers(0, 6, rows),
            "psu": rng.integers(0, 12, rows),
            "w": rng.lognormal(0.0, 1.0, rows),
            "y": np.where(rng.random(rows) < 0.15, np.nan, rng.normal(50, 10, rows)),
            "g": rng.integers(0, 5, rows),
        }
    )
    df["psu"] = df["stratum"] * 100 + df["psu"]
    df.loc[df.index[:3], ["stratum", "psu"]] = [9, 900]  # a lonely PSU
    df.loc[df["g"] == 4, "g"] = 3  # group 4 is empty
    if zero_weights:
        df.loc[rng.random(rows) < 0.2, "w"] = 0.0
    return df


@pytest.mark.parametrize("zero_weights", [False, True], ids=["positive", "some-zero"])
@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_means_by_cells_equal_means_by_influence_values(zero_weights: bool, fpc: bool) -> None:
    df = _frame(zero_weights)
    if fpc:
        df["N"] = 40 + df["stratum"] * 3
    kwargs = {"weights": "w", "strata": "stratum", "psu": "psu", "lonely_psu": "adjust"}
    if fpc:
        kwargs["fpc"] = "N"
    cells, general = sk.Design(df, **kwargs), _General(df, **kwargs)
    ids = np.where(np.arange(len(df)) % 50 == 7, -1, df["g"]).astype(np.int64)  # some in none
    fast = _domains.means(cells, df["y"].to_numpy(), ids, 5)
    slow = _domains.means(general, df["y"].to_numpy(), ids, 5)
    assert fast.domain_dof is not None and slow.domain_dof is None  # the paths differ
    for name in ("estimate", "variance", "deff", "n", "answered", "sum_w", "count"):
        np.testing.assert_allclose(
            getattr(fast, name), getattr(slow, name), rtol=1e-12, equal_nan=True, err_msg=name
        )
    np.testing.assert_allclose(fast.vcov, slow.vcov, rtol=1e-10, atol=1e-12)
    assert slow.domains is not None
    expected_dof = reliability.domain_codes_degrees_of_freedom(general, slow.domains, 5)
    np.testing.assert_array_equal(fast.domain_dof, expected_dof)
    assert np.isnan(fast.estimate[4, 0]) and fast.n[4] == 0  # the empty group


def test_means_by_cells_only_where_their_tables_are_short() -> None:
    """Without PSUs every row is one: the cells' tables would outgrow the rows, so the
    general path runs (same figures); with a few PSUs per domain the cells' path runs."""
    df = _frame(False)
    y, ids = df["y"].to_numpy(), df["g"].to_numpy().astype(np.int64)
    no_psu = _domains.means(sk.Design(df, weights="w"), y, ids, 5)
    clustered = _domains.means(sk.Design(df, weights="w", psu="psu"), y, ids, 5)
    # 900 PSUs x 6 cells > 2 per row; about 70 PSUs x 6 cells < 2 per row
    assert no_psu.domain_dof is None and clustered.domain_dof is not None


@pytest.mark.parametrize("replicated", [False, True], ids=["linearised", "jk1"])
def test_nobody_answered_gives_the_same_empty_figures_on_every_design(replicated: bool) -> None:
    """No answers: no option rows for proportions and an NPS or means with se NaN, the same
    whether the variance is linearised or from replicates (a replicate design failed)."""
    df = pd.DataFrame(
        {
            "w": [1.0] * 6,
            "psu": [1, 2, 3, 4, 5, 6],
            "q": [None] * 6,
            "s": [np.nan] * 6,
            "g": ["a", "b"] * 3,
        }
    )
    design = sk.Design(df, weights="w", psu="psu")
    if replicated:
        design = design.replicates("jk1")
    assert sk.analysis.proportions(design, "q").empty
    assert sk.analysis.proportions(design, "q", by="g").empty
    nps = sk.analysis.nps(design, "s")
    means = sk.analysis.means(design, "s", by="g")
    assert len(nps) == 1 and nps["se"].isna().all() and nps["n"].tolist() == [0]
    assert len(means) == 2 and means["se"].isna().all() and means["n"].tolist() == [0, 0]


def test_a_design_of_no_rows_gives_empty_tables() -> None:
    empty = pd.DataFrame(
        {
            "w": pd.Series([], dtype=float),
            "y": pd.Series([], dtype=float),
            "g": pd.Series([], dtype=np.int64),
            "q": pd.Series([], dtype=object),
        }
    )
    design = sk.Design(empty, weights="w")
    assert sk.analysis.means(design, "y", by="g").empty
    assert sk.analysis.totals(design, "y", by="g").empty
    assert sk.analysis.proportions(design, "q", by="g").empty
