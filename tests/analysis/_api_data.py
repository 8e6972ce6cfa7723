"""R's ``api`` data as the replicate tests read it: the CSVs in ``fixtures/data/`` (rep_*.csv)
and the two designs on them that both replicate test files start from."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import surveykit as sk

FIXTURES = Path(__file__).parent / "fixtures"


def data(name: str) -> pd.DataFrame:
    """The fixture ``rep_<name>.csv``."""
    return pd.read_csv(FIXTURES / "data" / f"rep_{name}.csv")


def clus1() -> sk.Design:
    """``apiclus1``: one stage of 15 districts with fpc, R's ``svydesign(id=~dnum, fpc=~fpc)``."""
    return sk.Design(data("apiclus1"), weights="pw", psu="dnum", fpc="fpc")


def strat() -> sk.Design:
    """``apistrat``: stratified by school type with fpc."""
    return sk.Design(data("apistrat"), weights="pw", strata="stype", fpc="fpc")
