"""sk.report.banner on a design: estimates and letters against R's survey package.

R's figures come from tools/r_reference/banner.R (fixtures/r_banner.json): ``svyby`` /
``svymean`` for every cell, ``svyttest`` on each pair of columns (``test="columns"``) and of
each column against the rest of the sample (``test="total"``), and ``p.adjust`` within each
row and banner variable.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import surveykit as sk

REL = 1e-6
ALPHA = 0.05
DATA = Path(__file__).parents[1] / "analysis" / "fixtures" / "data"
ORACLE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "fixtures" / "r_banner.json").read_text("utf-8")
)
QUESTIONS = {"sms": ["q_choice", "q_sat"], "apiclus1_raked": ["awards", "api00"]}
BANNERS = {"sms": ["channel", "wave"], "apiclus1_raked": ["stype", "both"]}
NETS = {"q_choice": {"Not price": ["Service", "Speed"]}}
CORRECTIONS = {"bonferroni": "bonferroni", "holm": "holm", "fdr_bh": "fdr_bh"}


@cache
def _design(name: str) -> sk.Design:
    if name.startswith("sms"):
        sms = pd.read_csv(DATA / "tbg_sms.csv")
        if name == "sms_weights":
            return sk.Design(sms, weights="w")
        return sk.Design(sms, weights="w", strata="region", psu="household", fpc="fpc")
    clus1 = pd.read_csv(DATA / "tbg_apiclus1.csv")
    design = sk.Design(clus1, weights="pw", psu="dnum", fpc="fpc")
    return design.rake(ORACLE["rake_targets"], max_iter=1000, tol=1e-12)


@cache
def _banner(name: str, test: str, correction: str) -> pd.DataFrame:
    family = "sms" if name.startswith("sms") else name
    result = sk.report.banner(
        _design(name),
        QUESTIONS[family],
        banner=BANNERS[family],
        nets=NETS if family == "sms" else None,
        top_box=2 if family == "sms" else None,
        test=test,  # type: ignore[arg-type]
        correction=correction,  # type: ignore[arg-type]
        min_base=0,
    )
    return result.frame


def _one(frame: pd.DataFrame, **where: str) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in where.items():
        mask &= frame[column] == value
    found = frame[mask]
    assert len(found) == 1, where
    return found.iloc[0]


def _by_design(cases: list[dict[str, Any]]) -> list[Any]:
    return [
        pytest.param(c, id=f"{c['design']}-{c['question']}-{c['row']}-{c['banner']}") for c in cases
    ]


def _rows(kind: str) -> list[Any]:
    seen: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for case in ORACLE[kind]:
        key = (case["design"], case["question"], case["row"], case["banner"])
        seen.setdefault(key, []).append(case)
    return [pytest.param(v, id="-".join(k)) for k, v in seen.items()]


@pytest.mark.parametrize("r", _by_design(ORACLE["estimates"]))
def test_cells_are_rs_domain_estimates(r: dict[str, Any]) -> None:
    frame = _banner(r["design"], "columns", "bonferroni")
    cell = _one(frame, question=r["question"], row=r["row"], banner=r["banner"],
                column=r["column"])  # fmt: skip
    assert cell["estimate"] == pytest.approx(r["estimate"], rel=REL)


@pytest.mark.parametrize("correction", list(CORRECTIONS))
@pytest.mark.parametrize("pairs", _rows("columns"))
def test_column_tests_are_rs_svyttest_and_p_adjust(
    pairs: list[dict[str, Any]], correction: str
) -> None:
    first = pairs[0]
    frame = _banner(first["design"], "columns", correction)
    tests = frame.attrs["tests"]
    letters: dict[str, str] = {}
    keys = frame.attrs["column_letters"][first["banner"]]
    for r in pairs:
        mine = _one(tests, question=r["question"], row=r["row"], banner=r["banner"],
                    column_a=r["a"], column_b=r["b"])  # fmt: skip
        assert mine["statistic"] == pytest.approx(-r["statistic"], rel=REL)  # R: b - a
        assert mine["p_value"] == pytest.approx(r["p_value"], rel=REL)
        assert mine["p_adjusted"] == pytest.approx(r["p_adjusted"][correction], rel=REL)
        if r["p_adjusted"][correction] < ALPHA:
            big, small = (r["b"], r["a"]) if r["difference"] > 0 else (r["a"], r["b"])
            letters[big] = letters.get(big, "") + keys[small]
    for level in keys:
        cell = _one(frame, question=first["question"], row=first["row"], banner=first["banner"],
                    column=level)  # fmt: skip
        assert cell["letters"] == "".join(sorted(letters.get(level, "")))


@pytest.mark.parametrize("correction", list(CORRECTIONS))
@pytest.mark.parametrize("columns", _rows("total"))
def test_total_tests_are_rs_svyttest_against_the_rest(
    columns: list[dict[str, Any]], correction: str
) -> None:
    first = columns[0]
    frame = _banner(first["design"], "total", correction)
    tests = frame.attrs["tests"]
    for r in columns:
        mine = _one(tests, question=r["question"], row=r["row"], banner=r["banner"],
                    column_a=r["a"])  # fmt: skip
        assert mine["column_b"] == "(rest)"
        assert mine["statistic"] == pytest.approx(r["statistic"], rel=REL)
        assert mine["p_value"] == pytest.approx(r["p_value"], rel=REL)
        assert mine["p_adjusted"] == pytest.approx(r["p_adjusted"][correction], rel=REL)
        cell = _one(frame, question=r["question"], row=r["row"], banner=r["banner"],
                    column=r["a"])  # fmt: skip
        significant = r["p_adjusted"][correction] < ALPHA
        expected = ("+" if r["difference"] > 0 else "-") if significant else ""
        assert cell["letters"] == expected


def test_the_oracle_holds_significant_letters() -> None:
    # the comparison above means something only if R finds differences
    assert any(c["p_adjusted"]["holm"] < ALPHA for c in ORACLE["columns"])
    assert any(c["p_adjusted"]["holm"] < ALPHA for c in ORACLE["total"])


def test_multi_choice_on_a_design_is_each_options_indicator() -> None:
    # a multiple-response set's option is the share of answerers who chose it: the same
    # domain estimate and test as a 0/1 question of the answerers (R-checked above)
    design = _design("sms")
    sms = design.data.copy()
    ticks = {"Price": "Price;Speed", "Service": "Service", "Speed": ""}
    sms["q_multi"] = sms["q_choice"].map(ticks)
    sms["speed"] = sms["q_multi"].map(lambda a: None if pd.isna(a) else ("Speed" in a) * 1.0)
    multi = sk.report.banner(design.with_data(sms), ["q_multi", "speed"], banner="channel",
                             min_base=0)  # fmt: skip
    codebook_frame = multi.frame
    speed = codebook_frame[(codebook_frame["question"] == "q_multi")
                           & (codebook_frame["row"] == "Speed")]  # fmt: skip
    indicator = codebook_frame[(codebook_frame["question"] == "speed")
                               & (codebook_frame["row"] == "Mean")]  # fmt: skip
    assert speed["estimate"].to_numpy() == pytest.approx(
        indicator["estimate"].to_numpy(), rel=1e-12, nan_ok=True
    )
    tests = multi.frame.attrs["tests"]
    p_multi = tests[(tests["question"] == "q_multi") & (tests["row"] == "Speed")]["p_value"]
    p_speed = tests[(tests["question"] == "speed") & (tests["row"] == "Mean")]["p_value"]
    assert p_multi.to_numpy() == pytest.approx(p_speed.to_numpy(), rel=1e-9)
