"""Write the seeded SMS-survey data set that the regression and quantile oracles share.

600 respondents in 4 regions (strata), 12 to 18 clusters (PSUs, ids reused across regions)
per region, unequal weights, an fpc (clusters in the region's population), and answers with
gaps: age, channel, nps (0-10), satisfaction (1-5, many ties), renew (0/1), spend.

Also rq_ties.csv: six answers 0..5 of equal weight 33.847, where the share at the median
is exactly 1/2 only when the weights are summed in long double, as R sums them.

Run: python tools/r_reference/rq_sms_data.py  (writes tests/analysis/fixtures/data/rq_*.csv)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[2] / "tests/analysis/fixtures/data/rq_sms.csv"


def main() -> None:
    rng = np.random.default_rng(20261126)
    rows = []
    regions = {"North": 12, "South": 18, "East": 14, "West": 15}
    for region, clusters in regions.items():
        base = {"North": 40.0, "South": 25.0, "East": 60.0, "West": 33.0}[region]
        for cluster in range(1, clusters + 1):
            for _ in range(int(rng.integers(6, 14))):
                rows.append(
                    {
                        "region": region,
                        "cluster": cluster,
                        "fpc": clusters * 4,
                        "w": round(base * float(rng.lognormal(0.0, 0.35)), 4),
                    }
                )
    df = pd.DataFrame(rows)
    n = len(df)
    cluster_effect = rng.normal(0.0, 0.6, size=200)[df["cluster"] * 3 + df["region"].str.len()]
    df["age"] = rng.integers(18, 80, size=n).astype(float)
    df["channel"] = rng.choice(["sms", "email", "whatsapp"], size=n, p=[0.5, 0.3, 0.2])
    latent = 6.5 + 0.02 * (df["age"] - 45) + cluster_effect + rng.normal(0, 2.0, size=n)
    latent += np.where(df["channel"] == "whatsapp", 0.8, 0.0)
    df["nps"] = np.clip(np.round(latent), 0, 10)
    df["satisfaction"] = np.clip(np.round(1 + df["nps"] / 2.5 + rng.normal(0, 0.7, n)), 1, 5)
    logit = -4.0 + 0.45 * df["nps"] + 0.01 * (df["age"] - 45)
    df["renew"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    df["spend"] = np.round(20 + 0.3 * df["age"] + 4 * df["nps"] + rng.normal(0, 12, n), 2)
    for column, share in {"age": 0.05, "nps": 0.08, "satisfaction": 0.1, "renew": 0.05}.items():
        df.loc[rng.random(n) < share, column] = np.nan
    df.loc[rng.random(n) < 0.04, "spend"] = np.nan
    OUT.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT, index=False)
    ties = pd.DataFrame({"x": np.arange(6.0), "w": 33.847})
    ties.to_csv(OUT.with_name("rq_ties.csv"), index=False)


if __name__ == "__main__":
    main()
