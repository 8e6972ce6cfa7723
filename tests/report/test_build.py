"""build_report and `surveykit report`: every table is exactly what sk.analysis gives."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pyreadstat
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app
from surveykit.report import build_report
from tests.helpers.sandbox_server import ServedSandbox

runner = CliRunner()


def _said(output: str) -> str:
    """The output with typer's error box (if any) and line wrapping taken out."""
    return " ".join(output.replace("│", " ").replace("╭", " ").replace("╰", " ").split())


TARGETS = {"channel": {"SMS": 0.4, "WhatsApp": 0.3, "Email": 0.2, "Facebook": 0.1}}


@pytest.fixture(scope="module")
def wave() -> tuple[pd.DataFrame, sk.Codebook]:
    with sk.Sandbox(seed=3) as sandbox:
        sandbox.add_generated_survey("TRACK", 1_200, questions=4, seed=21, wave=1)
        client = sk.Client.sandbox(sandbox)
        with client:
            return client.surveys.results("TRACK"), sandbox.codebook("TRACK")


def test_unweighted_tables_equal_the_analysis_functions(wave: tuple) -> None:
    df, codebook = wave
    report = build_report(df, codebook, by="channel")
    labelled = sk.label(df, codebook)
    assert report.weights is None and "weight" not in report.labelled
    expected = {
        "Q1 NPS": sk.analysis.nps(labelled, "Q1"),
        "Q1 NPS by channel": sk.analysis.nps(labelled, "Q1", by="channel"),
        "Q2 %": sk.analysis.proportions(labelled, "Q2"),
        "Q2 % by channel": sk.analysis.proportions(labelled, "Q2", by="channel"),
        "Q3 %": sk.analysis.proportions(labelled, "Q3"),
        "Q2 x channel": sk.analysis.crosstab(labelled, "Q2", "channel"),
    }
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(report.tables[name], frame, obj=name)
    assert report.tables["Q2 x channel"].attrs["test"] == expected["Q2 x channel"].attrs["test"]
    # Text questions are not estimated; every other question is.
    assert not any(name.startswith("Q4") for name in report.tables)


def test_weighted_tables_use_the_raked_design(wave: tuple) -> None:
    df, codebook = wave
    report = build_report(df, codebook, targets=TARGETS)
    weights = sk.weights.rake(df, TARGETS)
    np.testing.assert_allclose(report.weights.to_numpy(), weights.to_numpy(), rtol=1e-5)
    labelled = sk.label(df, codebook).assign(weight=report.weights.to_numpy())
    design = sk.Design(df).rake(TARGETS).with_data(labelled)
    pd.testing.assert_frame_equal(report.tables["Q1 NPS"], sk.analysis.nps(design, "Q1"))
    summary = report.tables["Weights"].set_index("statistic")["value"]
    w = report.weights
    assert summary["n_eff"] == pytest.approx(w.sum() ** 2 / (w**2).sum())
    described = report.tables["Design"].set_index("item")["value"]
    assert "raked to channel" in described["calibration"]
    assert "linearisation" in described["variance"]
    assert report.tables["Q1 NPS"].attrs["variance"].startswith("Taylor linearisation")


def test_base_weights_strata_and_psus_make_the_design(wave: tuple) -> None:
    """Base weights with raking on top, and the design's strata and PSUs, as R's
    rake(svydesign(ids=~psu, strata=~strata, weights=~w)) would: a raked margin has se 0."""
    df, codebook = wave
    rng = np.random.default_rng(4)
    df = df.assign(
        base=rng.lognormal(0, 0.4, len(df)),
        stratum=rng.choice(["a", "b", "c"], len(df)),
        household=rng.integers(0, 300, len(df)),
    )
    channel_targets = {"channel": TARGETS["channel"]}
    report = build_report(
        df,
        codebook,
        weights="base",
        strata="stratum",
        psu="household",
        targets=channel_targets,
        by="channel",
    )
    assert report.design is not None
    assert report.design.n_strata == 3
    assert report.design.degrees_of_freedom == report.design.n_psu - 3
    design = sk.Design(df, weights="base", strata="stratum", psu="household")
    expected = design.rake(channel_targets).weights.to_numpy()
    np.testing.assert_allclose(report.weights.to_numpy(), expected, rtol=1e-12)
    raked_margin = sk.analysis.proportions(report.design, "channel")
    assert (raked_margin["se"] < 1e-10).all()
    described = report.tables["Design"].set_index("item")["value"]
    assert "3 strata ('stratum')" in described["design"]


def test_build_report_refuses_bad_arguments_naming_them(wave: tuple) -> None:
    df, codebook = wave
    with pytest.raises(sk.SurveykitError, match="'Q9' is not in the codebook"):
        build_report(df, codebook, questions=["Q9"])
    with pytest.raises(sk.SurveykitError, match="psu: no column 'nope'"):
        build_report(df, codebook, psu="nope")


def _invoke(served: ServedSandbox, *args: str) -> object:
    env = {"SURVEYKIT_BASE_URL": served.base_url, "SURVEYKIT_TOKEN": served.token}
    return runner.invoke(app, ["report", *args], env=env)


@pytest.fixture(scope="module")
def generated(served: ServedSandbox) -> str:
    response = httpx.post(
        served.base_url + "/_sandbox/surveys/generate",
        json={"reference": "TRACK-CLI", "rows": 800, "questions": 4, "seed": 5, "wave": 1},
        headers={"Authorization": f"Basic {served.token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return "TRACK-CLI"


@pytest.mark.parametrize("form", ["json", "csv"])
def test_report_command_writes_excel_and_spss(
    served: ServedSandbox, generated: str, tmp_path: Path, form: str
) -> None:
    targets = tmp_path / f"targets.{form}"
    if form == "json":
        targets.write_text(json.dumps(TARGETS))
    else:
        rows = [f"channel,{level},{share}" for level, share in TARGETS["channel"].items()]
        targets.write_text("column,level,share\n" + "\n".join(rows) + "\n")
    codebook = tmp_path / "codebook.xlsx"
    codebook_http = httpx.get(
        f"{served.base_url}/_sandbox/surveys/{generated}/codebook",
        headers={"Authorization": f"Basic {served.token}"},
    ).json()
    sk.Codebook.from_dict(codebook_http).write(codebook)
    out, sav = tmp_path / "report.xlsx", tmp_path / "results.sav"
    result = _invoke(
        served,
        generated,
        "--out",
        str(out),
        "--codebook",
        str(codebook),
        "--targets",
        str(targets),
        "--by",
        "channel",
        "--spss",
        str(sav),
    )
    assert result.exit_code == 0, result.output
    assert "weighted (n_eff" in result.output
    with sk.Client(served.base_url, served.token) as client:
        frame = client.surveys.results(generated)
    expected = build_report(frame, sk.Codebook.read(codebook), targets=TARGETS, by="channel")
    nps = expected.tables["Q1 NPS"].iloc[0]
    assert f"Q1: NPS {nps['estimate']:.2f} [{nps['ci_low']:.2f}, {nps['ci_high']:.2f}]" in (
        result.output
    )
    book = load_workbook(out)
    assert book.sheetnames == ["Cover", "Contents", *expected.tables, "Not tabulated"]
    assert f"wrote {len(expected.tables)} tables and a cover to {out}" in result.output
    data, meta = pyreadstat.read_sav(sav)
    assert len(data) == len(frame)
    assert meta.variable_value_labels["Q2"][1.0] == "Yes"
    assert meta.original_variable_types["Q1"] == "F8.0"
    assert "MDGROUP NAME=$Q3" in sav.with_suffix(".sps").read_text()
    assert f"wrote the multiple-response sets (SPSS syntax) to {sav.with_suffix('.sps')}" in (
        _said(result.output)
    )


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        pytest.param(["--out", "r.csv"], 2, "expected a .xlsx file", id="out-suffix"),
        pytest.param(["--out", "nofolder/r.xlsx"], 2, "no folder", id="out-folder-missing"),
        pytest.param(["--out", "r.xlsx", "--ci", "95"], 2, "--ci", id="ci"),
        pytest.param(["--out", "r.xlsx", "--targets", "t.txt"], 2, "no file", id="targets-missing"),
        pytest.param(["--out", "r.xlsx", "--codebook", "c.json"], 2, "no file", id="codebook"),
    ],
)
def test_report_command_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], code: int, words: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["report", "CSAT-SMS-2026", *args], env={"SURVEYKIT_BASE_URL": ""})
    assert result.exit_code == code, result.output
    assert words in _said(result.output) and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "words"),
    [
        pytest.param("{not json", "not JSON", id="json-syntax"),
        pytest.param('{"channel": 3}', "expected {column: {level: share}}", id="json-shape"),
        pytest.param(
            '{"channel": {"SMS": "lots"}}', "channel.SMS: 'lots' is not a number", id="json-share"
        ),
    ],
)
def test_report_command_bad_targets_name_the_problem(
    tmp_path: Path, content: str, words: str
) -> None:
    targets = tmp_path / "t.json"
    targets.write_text(content)
    result = runner.invoke(
        app,
        ["report", "CSAT-SMS-2026", "--out", str(tmp_path / "r.xlsx"), "--targets", str(targets)],
        env={"SURVEYKIT_BASE_URL": ""},
    )
    assert result.exit_code == 2, result.output
    assert words in _said(result.output) and "Traceback" not in result.output


def test_report_command_unknown_survey_and_unreachable_targets(tmp_path: Path) -> None:
    out = tmp_path / "r.xlsx"
    result = runner.invoke(
        app, ["report", "NOPE", "--out", str(out)], env={"SURVEYKIT_BASE_URL": ""}
    )
    assert result.exit_code == 1 and "NOPE" in result.output
    targets = tmp_path / "t.csv"
    targets.write_text("column,level,share\nchannel,SMS,0.5\nchannel,Email,0.5\n")
    result = runner.invoke(
        app,
        ["report", "CSAT-SMS-2026", "--out", str(out), "--targets", str(targets)],
        env={"SURVEYKIT_BASE_URL": ""},
    )
    # CSAT's respondents are all invited by SMS: an Email target has nobody to weight.
    assert result.exit_code == 1, result.output
    assert "channel" in result.output and "Email" in result.output
    assert not out.exists()


def test_report_command_takes_the_design(
    served: ServedSandbox, generated: str, tmp_path: Path
) -> None:
    """--strata (and --psu, --weights, --fpc) make the report's design; the workbook says it."""
    targets = tmp_path / "targets.json"
    targets.write_text(json.dumps(TARGETS))
    out = tmp_path / "design.xlsx"
    result = _invoke(
        served,
        generated,
        "--out",
        str(out),
        "--targets",
        str(targets),
        "--strata",
        "channel",
    )
    assert result.exit_code == 0, result.output
    assert "Design: 800 respondents, equal weights, 4 strata ('channel')" in result.output
    assert "variance: Taylor linearisation" in result.output
    book = load_workbook(out)
    sheet = next(name for name in book.sheetnames if name.startswith("Design"))
    cells = [c.value for row in book[sheet].iter_rows() for c in row if c.value is not None]
    assert any("raked to channel" in str(value) for value in cells)
    for option in ("--psu", "--weights", "--strata", "--fpc"):
        bad = _invoke(served, generated, "--out", str(out), option, "nope")
        assert bad.exit_code == 2, bad.output
        assert "no column 'nope'" in _said(bad.output) and "Traceback" not in bad.output
