"""Synthetic SMS-survey data sets for the R `survey` reference fixtures.

Writes ``tests/analysis/fixtures/data/sms.csv`` (600 rows) and
``sms_lonely.csv`` (the same rows plus a fifth stratum "Lonely" holding one
PSU of 3 respondents).  Deterministic: a fixed seed, fixed rounding and a
fixed CSV layout, so re-running gives byte-identical files.

Run from the repository root:  python tools/r_reference/make_data.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20261126
N_ROWS = 600
OUT = Path(__file__).resolve().parents[2] / "tests" / "analysis" / "fixtures" / "data"

REGIONS = ["North", "South", "East", "West"]
PSUS_PER_REGION = {"North": 52, "South": 47, "East": 38, "West": 33}
REGION_WEIGHT = {"North": 180.0, "South": 150.0, "East": 120.0, "West": 210.0, "Lonely": 90.0}
CHANNELS = ["sms", "whatsapp", "email"]
CHANNEL_P = {
    "North": [0.55, 0.30, 0.15],
    "South": [0.40, 0.45, 0.15],
    "East": [0.45, 0.20, 0.35],
    "West": [0.60, 0.25, 0.15],
    "Lonely": [0.50, 0.30, 0.20],
}
CHOICES = ["Price", "Quality", "Service", "Speed"]
REGION_EFFECT = {"North": 0.3, "South": -0.2, "East": 0.0, "West": 0.5, "Lonely": 0.0}


def psu_sizes(rng: np.random.Generator) -> list[tuple[str, str]]:
    """(region, hh) for every respondent: 1-5 per PSU, 600 in all, some PSUs of 1."""
    plan: list[tuple[str, str, int]] = []
    for region in REGIONS:
        k = PSUS_PER_REGION[region]
        sizes = rng.integers(1, 6, size=k)
        sizes[0] = 1  # at least one singleton PSU per region
        sizes[1] = 1
        for j, s in enumerate(sizes, start=1):
            plan.append((region, f"{region[0]}{j:03d}", int(s)))
    total = sum(s for _, _, s in plan)
    # adjust to exactly N_ROWS, never touching the forced singletons
    adjustable = [i for i, p in enumerate(plan) if not p[1].endswith(("001", "002"))]
    while total != N_ROWS:
        i = adjustable[int(rng.integers(len(adjustable)))]
        region, hh, s = plan[i]
        if total < N_ROWS and s < 5:
            plan[i] = (region, hh, s + 1)
            total += 1
        elif total > N_ROWS and s > 1:
            plan[i] = (region, hh, s - 1)
            total -= 1
    rows: list[tuple[str, str]] = []
    for region, hh, s in plan:
        rows.extend([(region, hh)] * s)
    return rows


def respondents(
    rng: np.random.Generator, rows: list[tuple[str, str]], first_id: int
) -> pd.DataFrame:
    n = len(rows)
    region = np.array([r for r, _ in rows], dtype=object)
    hh = np.array([h for _, h in rows], dtype=object)
    w = np.round(rng.lognormal(0.0, 0.6, size=n) * np.array([REGION_WEIGHT[r] for r in region]), 4)
    channel = np.array([CHANNELS[rng.choice(3, p=CHANNEL_P[r])] for r in region], dtype=object)
    wave = rng.integers(1, 3, size=n)
    age = rng.integers(18, 81, size=n)
    # NPS 0-10, depending on channel and age
    base = (
        6.8
        + 0.02 * (age - 45)
        + np.where(channel == "email", -0.8, 0.0)
        + np.where(channel == "whatsapp", 0.6, 0.0)
    )
    q_nps_full = np.clip(np.round(base + rng.normal(0.0, 2.3, size=n)), 0, 10).astype(int)
    q_sat_full = np.clip(
        np.round(1.0 + q_nps_full / 2.8 + rng.normal(0.0, 0.8, size=n)), 1, 5
    ).astype(int)
    choice_p = np.array([0.35, 0.25, 0.25, 0.15])
    q_choice = np.array([CHOICES[rng.choice(4, p=choice_p)] for _ in range(n)], dtype=object)
    # renew from a logistic model on age, region, q_nps (filled with 7 where missing)
    nps_missing = rng.random(n) < 0.09
    nps_fill = np.where(nps_missing, 7, q_nps_full)
    eta = -2.2 + 0.015 * (age - 45) + np.array([REGION_EFFECT[r] for r in region]) + 0.3 * nps_fill
    renew = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    sat_missing = rng.random(n) < 0.05
    choice_missing = rng.random(n) < 0.06
    df = pd.DataFrame(
        {
            "id": np.arange(first_id, first_id + n),
            "region": region,
            "hh": hh,
            "w": w,
            "one": 1.0,
            "channel": channel,
            "wave": wave,
            "age": age,
            "q_nps": pd.array(np.where(nps_missing, -1, q_nps_full), dtype="Int64"),
            "q_sat": pd.array(np.where(sat_missing, -1, q_sat_full), dtype="Int64"),
            "q_choice": q_choice,
            "renew": renew,
            "tiny": "big",
        }
    )
    df.loc[nps_missing, "q_nps"] = pd.NA
    df.loc[sat_missing, "q_sat"] = pd.NA
    df.loc[choice_missing, "q_choice"] = None
    return df


def write(df: pd.DataFrame, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT / name, index=False, na_rep="", lineterminator="\n", float_format="%.4f")


def main() -> None:
    rng = np.random.default_rng(SEED)
    sms = respondents(rng, psu_sizes(rng), first_id=1)
    # tiny: exactly one row "one" and two rows "two"
    picks = rng.choice(len(sms), size=3, replace=False)
    sms.loc[picks[0], "tiny"] = "one"
    sms.loc[picks[1:], "tiny"] = "two"
    assert len(sms) == N_ROWS
    write(sms, "sms.csv")

    lonely = respondents(rng, [("Lonely", "L001")] * 3, first_id=N_ROWS + 1)
    write(pd.concat([sms, lonely], ignore_index=True), "sms_lonely.csv")


if __name__ == "__main__":
    main()
