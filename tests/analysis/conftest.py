"""Fixtures of the analysis tests: R's figures and the designs they were computed on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from surveykit import analysis

FIXTURES = Path(__file__).parent / "fixtures"


def read_data(name: str) -> pd.DataFrame:
    """A data set of ``fixtures/data`` (empty cells are missing values)."""
    return pd.read_csv(FIXTURES / "data" / name)


@pytest.fixture(scope="session")
def tbg_oracle() -> dict[str, Any]:
    """R's svychisq and svyttest figures (tools/r_reference/tests_between_groups.R)."""
    with open(FIXTURES / "r_tests_between_groups.json", encoding="utf-8") as file:
        oracle: dict[str, Any] = json.load(file)
    return oracle


@pytest.fixture(scope="session")
def tbg_designs(tbg_oracle: dict[str, Any]) -> dict[str, analysis.Design]:
    """The designs of tests_between_groups.R, by the names it gives them."""
    strat = read_data("tbg_apistrat.csv")
    clus1 = read_data("tbg_apiclus1.csv")
    sms = read_data("tbg_sms.csv")
    designs = {
        "apistrat": analysis.Design(strat, weights="pw", strata="stype", fpc="fpc"),
        "apiclus1": analysis.Design(clus1, weights="pw", psu="dnum", fpc="fpc"),
        "sms": analysis.Design(sms, weights="w", strata="region", psu="household", fpc="fpc"),
        "sms_weights": analysis.Design(sms, weights="w"),
        "sms_waves": analysis.Design(sms, weights="w", strata="wave"),
    }
    designs["apiclus1_raked"] = designs["apiclus1"].rake(
        tbg_oracle["rake_targets"], max_iter=1000, tol=1e-12
    )
    return designs
