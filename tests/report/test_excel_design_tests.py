"""to_excel of a design-based crosstab: the Rao-Scott test and the letters' test by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

import surveykit as sk
from surveykit import analysis


def test_a_design_crosstab_sheet_names_its_tests(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame(
        {
            "region": rng.choice(["North", "South", "West"], n),
            "Q": rng.choice(["Good", "Fair", "Poor"], n),
            "w": rng.uniform(0.5, 3.0, n),
        }
    )
    table = analysis.crosstab(df, "Q", "region", weights="w")
    path = tmp_path / "design.xlsx"
    sk.to_excel({"Crosstab": table}, path)
    sheet = load_workbook(path)["Crosstab"]
    labels = {sheet.cell(r, 1).value: sheet.cell(r, 2).value for r in range(1, sheet.max_row + 1)}
    test = table.attrs["test"]
    assert labels["Rao-Scott F (R svychisq)"] == pytest.approx(test["statistic"], rel=1e-14)
    assert labels["numerator df"] == pytest.approx(test["ndf"], rel=1e-14)
    assert labels["denominator df"] == pytest.approx(test["ddf"], rel=1e-14)
    assert labels["p-value"] == pytest.approx(test["p_value"], rel=1e-14)
    assert "Pearson chi-square" not in labels
    footnote = next(v for v in labels if isinstance(v, str) and v.startswith("Letters:"))
    assert "design-based t-test" in footnote
    chisq = analysis.crosstab(df, "Q", "region", weights="w", statistic="Chisq")
    sk.to_excel({"Crosstab": chisq}, path)
    sheet = load_workbook(path)["Crosstab"]
    labels = {sheet.cell(r, 1).value for r in range(1, sheet.max_row + 1)}
    assert "denominator df" not in labels
