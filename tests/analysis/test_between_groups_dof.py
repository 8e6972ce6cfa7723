"""pair_degrees_of_freedom: R's degf() of each pair of groups' rows, against a loop."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from surveykit import analysis
from surveykit.analysis._between_groups import pair_degrees_of_freedom


def by_loop(df: pd.DataFrame, ids: np.ndarray, inside: np.ndarray, groups: int) -> np.ndarray:
    """Distinct PSUs minus distinct strata of the pair's counted rows, minus 1."""
    counted = inside & (ids >= 0) & (df["w"].to_numpy() != 0)
    psus: list[set[tuple[int, int]]] = [set() for _ in range(groups)]
    strata: list[set[int]] = [set() for _ in range(groups)]
    for group, stratum, psu in zip(
        ids[counted], df["stratum"][counted], df["psu"][counted], strict=True
    ):
        psus[group].add((stratum, psu))
        strata[group].add(stratum)
    out = np.zeros((groups, groups))
    for a, b in combinations(range(groups), 2):
        out[a, b] = out[b, a] = len(psus[a] | psus[b]) - len(strata[a] | strata[b]) - 1
    return out


@pytest.mark.parametrize(
    ("rows", "psus", "groups"),
    [(3000, 60, 5), (2000, None, 600)],
    ids=["clusters-dense-table", "every-row-a-psu-sparse-table"],
)
def test_pairs_match_a_loop(rows: int, psus: int | None, groups: int) -> None:
    rng = np.random.default_rng(rows)
    df = pd.DataFrame(
        {
            "stratum": rng.integers(0, 4, rows),
            "w": np.where(rng.random(rows) < 0.05, 0.0, rng.uniform(0.5, 2, rows)),
        }
    )
    df["psu"] = rng.integers(0, psus, rows) if psus else np.arange(rows)
    design = analysis.Design(df, weights="w", strata="stratum", psu="psu" if psus else None)
    ids = rng.integers(-1, groups, rows)
    inside = rng.random(rows) < 0.9
    got = pair_degrees_of_freedom(design, ids, groups, inside)
    expected = by_loop(df, ids, inside, groups)
    upper = np.triu_indices(groups, 1)
    np.testing.assert_array_equal(got[upper], expected[upper])
