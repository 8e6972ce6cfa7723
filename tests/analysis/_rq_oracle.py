"""R's figures for regress() and quantiles(), and the designs they were computed on.

``tools/r_reference/regression_quantiles.R`` wrote ``fixtures/r_regression_quantiles.json``
from the CSVs in ``fixtures/data/`` (rq_*.csv); the suite reads both and needs no R.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from surveykit.analysis import Design

FIXTURES = Path(__file__).parent / "fixtures"


@cache
def oracle() -> dict[str, Any]:
    return json.loads((FIXTURES / "r_regression_quantiles.json").read_text())


def data(name: str) -> pd.DataFrame:
    frame = pd.read_csv(FIXTURES / "data" / f"rq_{name}.csv")
    if "sch.wide" in frame.columns:
        frame["yes"] = frame["sch.wide"] == "Yes"
    return frame


@cache
def designs() -> dict[str, Design]:
    clus1 = Design(data("apiclus1"), weights="pw", psu="dnum", fpc="fpc")
    targets = oracle()["rake_targets"]
    raked = clus1.rake(
        {"stype": targets["stype"], "sch.wide": targets["sch.wide"]}, max_iter=1000, tol=1e-12
    )
    return {
        "strat": Design(data("apistrat"), weights="pw", strata="stype", fpc="fpc"),
        "clus1": clus1,
        "raked": raked,
        "clus1_e": clus1.subset(clus1.data["stype"] == "E"),
        "raked_e": raked.subset(raked.data["stype"] == "E"),
        "sms": Design(data("sms"), weights="w", strata="region", psu="cluster", fpc="fpc"),
        "ties": Design(data("ties"), weights="w"),
    }


def values(items: list[Any]) -> np.ndarray:
    """R's numbers (jsonlite writes NaN as the string "NaN", NA as null)."""
    return np.array([np.nan if v is None else float(v) for v in items], dtype=np.float64)
