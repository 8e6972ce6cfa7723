"""Write the SMS-like data set of the tests between groups (a fixed seed).

``tests/analysis/fixtures/data/tbg_sms.csv``: 3 strata (regions) of clustered PSUs
(households), unequal weights, a stratum population size in PSUs (fpc), two waves, a
channel with some missing values, a group of 1 and a group of 2 respondents (``tiny``),
and answers with some missing: a 1-5 score, a 0-10 recommendation, a single choice.
Both the R oracle (``tests_between_groups.R``) and the pytest suite read it.

Run: ``python tools/r_reference/make_tests_between_groups_data.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20261126
OUT = Path(__file__).resolve().parents[2] / "tests/analysis/fixtures/data/tbg_sms.csv"


def main() -> None:
    rng = np.random.default_rng(SEED)
    regions = {"north": 9, "south": 7, "west": 11}  # PSUs sampled per stratum
    population = {"north": 120, "south": 80, "west": 200}  # PSUs in the population
    rows = []
    for region, psus in regions.items():
        for household in range(1, psus + 1):
            size = int(rng.integers(2, 9))
            effect = rng.normal(0, 0.6)
            for _ in range(size):
                rows.append((region, household, effect))
    df = pd.DataFrame(rows, columns=["region", "household", "effect"])
    n = len(df)
    df.insert(0, "id", np.arange(1, n + 1))
    df["w"] = np.round(rng.lognormal(3.0, 0.5, n), 3)
    df["fpc"] = df["region"].map(population)
    df["wave"] = np.where(rng.random(n) < 0.5, "W1", "W2")
    channel = rng.choice(np.array(["sms", "email", "web"]), n, p=[0.5, 0.3, 0.2])
    df["channel"] = np.where(rng.random(n) < 0.08, None, channel)
    tiny = np.full(n, "rest", dtype=object)
    picks = rng.choice(n, 3, replace=False)
    tiny[picks[0]] = "solo"
    tiny[picks[1:]] = "pair"
    df["tiny"] = tiny
    shift = (df["wave"] == "W2") * 0.3 + (df["channel"] == "sms") * 0.4 + df["effect"]
    score = np.clip(np.round(3 + shift + rng.normal(0, 1.1, n)), 1, 5)
    df["q_sat"] = np.where(rng.random(n) < 0.15, np.nan, score)
    rec = np.clip(np.round(7 + 1.5 * shift + rng.normal(0, 2.2, n)), 0, 10)
    df["q_nps"] = np.where(rng.random(n) < 0.1, np.nan, rec)
    latent = shift.to_numpy() + rng.normal(0, 1, n)
    choice = np.where(latent > 0.9, "Speed", np.where(latent > -0.1, "Service", "Price"))
    df["q_choice"] = np.where(rng.random(n) < 0.12, None, choice)
    # the group of 1 and of 2 answer everything, differently (a column of one has answers)
    df.loc[picks, "q_sat"] = [5.0, 2.0, 4.0]
    df.loc[picks, "q_nps"] = [10.0, 3.0, 8.0]
    df.loc[picks, "q_choice"] = ["Speed", "Price", "Service"]
    df = df.drop(columns="effect")
    df.to_csv(OUT, index=False, na_rep="")


if __name__ == "__main__":
    main()
