"""``surveykit report`` carries AAPOR's outcome rates: from a dispositions file or the campaign."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app

runner = CliRunner()
ENV = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_OPTOUTS": ""}
SOURCE = "447700900999"


def run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, ["report", "CSAT-SMS-2026", *args], env=ENV)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


def _rr1(codes: pd.Series) -> float:
    """RR1 from AAPOR's formula: completes over every case but the not eligible (4.x)."""
    codes = codes.astype(str)
    return float((codes == "1.1").sum() / (~codes.str.startswith("4")).sum())


def _sheet_rates(path: Path) -> dict[str, dict[str, float]]:
    sheet = load_workbook(path)["Outcome rates"]
    header = [c.value for c in sheet[3]]
    return {
        str(wave): {
            str(sheet.cell(r, 1).value): sheet.cell(r, c).value for r in range(4, 20)
        }
        for c, wave in enumerate(header, start=1)
        if c > 2
    }


def test_dispositions_file_gives_rates_per_wave(tmp_path: Path) -> None:
    codes = pd.DataFrame(
        {
            "Disposition": ["1.1", "1.1", "2.11", "3.19", "4.70", "1.1", "2.20", "3.30"],
            "wave": ["1", "1", "1", "1", "2", "2", "2", "2"],
        }
    )
    source = tmp_path / "dispositions.csv"
    codes.to_csv(source, index=False)
    out = tmp_path / "r.xlsx"
    said = run("--out", str(out), "--dispositions", str(source))
    overall = _rr1(codes["Disposition"])
    assert f"AAPOR outcome rates, all waves: RR1 {overall:.1%}" in said
    first = _rr1(codes.loc[codes["wave"] == "1", "Disposition"])
    assert f"AAPOR outcome rates, wave 1: RR1 {first:.1%}" in said
    rates = _sheet_rates(out)
    assert list(rates) == ["All", "1", "2"]
    assert rates["All"]["RR1"] == pytest.approx(overall, rel=1e-12)
    assert rates["2"]["RR1"] == pytest.approx(
        _rr1(codes.loc[codes["wave"] == "2", "Disposition"]), rel=1e-12
    )
    cover = load_workbook(out)["Cover"]
    items = {cover.cell(r, 1).value: cover.cell(r, 2).value for r in range(1, cover.max_row + 1)}
    assert items["Outcome rates (AAPOR)"].startswith(f"RR1 {overall:.1%}")


def test_the_campaign_journals_give_the_rates(tmp_path: Path) -> None:
    client = sk.Client.sandbox()
    results = client.surveys.results("CSAT-SMS-2026")
    people = results.set_index("respondentId")[["mobileNumber", "firstName"]]
    wave1 = tmp_path / "wave1.sqlite"
    sk.send_batch(client, people, message="Hi {firstName}", source=SOURCE, journal=wave1,
                  progress=False)
    optouts = tmp_path / "o.sqlite"
    with sk.OptOutList(optouts) as stops:
        stops.add([results.loc[results["completed"].isna(), "mobileNumber"].iloc[0]])
    out = tmp_path / "r.xlsx"
    said = run("--out", str(out), "--journal", str(wave1), "--optouts", str(optouts))
    status = sk.campaign_status(results, sends=[wave1], opt_outs=optouts)
    codes = sk.dispositions(status)["disposition"]
    assert (codes == "2.11").sum() == 1  # the STOP is a refusal
    assert f"AAPOR outcome rates, all waves: RR1 {_rr1(codes):.1%}" in said
    rates = _sheet_rates(out)
    assert list(rates) == ["All", "wave1"]
    assert rates["All"]["RR1"] == pytest.approx(_rr1(codes), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        pytest.param(["--dispositions", "{tmp}/none.csv"], 2, "no such file", id="missing"),
        pytest.param(["--dispositions", "{tmp}/bad.csv"], 2, "no column 'disposition'",
                     id="no-column"),
        pytest.param(["--dispositions", "{tmp}/codes.csv"], 1, "'9.9'", id="not-aapor"),
        pytest.param(["--events", "{tmp}/codes.csv"], 2, "go with --journal", id="events-alone"),
        pytest.param(["--journal", "{tmp}/nope.sqlite"], 2, "no such file", id="journal"),
        pytest.param(["--journal", "{tmp}/codes.csv", "--dispositions", "{tmp}/codes.csv"], 2,
                     "not both", id="both"),
    ],
)
def test_rate_sources_mistakes_are_one_line(
    tmp_path: Path, args: list[str], code: int, words: str
) -> None:
    (tmp_path / "bad.csv").write_text("code\n1.1\n")
    (tmp_path / "codes.csv").write_text("disposition\n1.1\n9.9\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    said = run("--out", str(tmp_path / "r.xlsx"), *args, code=code)
    assert words in " ".join(said.split())
    assert not (tmp_path / "r.xlsx").exists()


def test_banner_and_verbatims_sheets(tmp_path: Path) -> None:
    out = tmp_path / "r.xlsx"
    said = run("--out", str(out), "--banner", "channel,sortOrder", "--top-box", "2",
               "--verbatims")
    assert "a banner table by channel, sortOrder" in said
    book = load_workbook(out)
    assert {"Banner", "Verbatims"} <= set(book.sheetnames)
    texts = [v for row in book["Banner"].iter_rows(values_only=True) for v in row if v]
    assert "Top 2" in texts and "Bottom 2" in texts and "channel" in texts
    assert any(str(t).startswith("Q1: ") for t in texts)
    client = sk.Client.sandbox()
    raw = client.surveys.results("CSAT-SMS-2026")
    results = sk.label(raw, client.embedded.codebook("CSAT-SMS-2026"))  # "N/A" is missing
    given = results["Q3"].astype("string").str.strip().fillna("").ne("")
    rows = list(book["Verbatims"].iter_rows(min_row=4, values_only=True))
    assert [r[2] for r in rows] == results.loc[given, "Q3"].astype(str).tolist()
    assert [r[0] for r in rows] == results.loc[given, "respondentId"].astype(str).tolist()
    contents = [c.value for c in book["Contents"]["A"]]
    assert "Banner" in contents and "Verbatims" in contents


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["--banner", "channel,nope"], "no column 'nope' in the results", id="column"),
        pytest.param(["--banner", " , "], "no column named", id="empty"),
        pytest.param(["--top-box", "2"], "--top-box goes with --banner", id="top-box"),
        pytest.param(["--banner", "channel", "--top-box", "0"], "--top-box", id="zero"),
    ],
)
def test_banner_mistakes_are_one_line(tmp_path: Path, args: list[str], words: str) -> None:
    said = run("--out", str(tmp_path / "r.xlsx"), *args, code=2)
    assert words in " ".join(said.split())
    assert not (tmp_path / "r.xlsx").exists()


def test_a_sparse_crosstab_says_caution(tmp_path: Path) -> None:
    from scipy.stats.contingency import expected_freq

    said = run("--out", str(tmp_path / "r.xlsx"), "--by", "sortOrder", "--by", "channel")
    client = sk.Client.sandbox()
    results = sk.label(
        client.surveys.results("CSAT-SMS-2026"), client.embedded.codebook("CSAT-SMS-2026")
    )
    observed = pd.crosstab(results["Q1"], results["sortOrder"]).to_numpy()
    assert min(observed.shape) >= 2
    expected = expected_freq(observed[observed.sum(axis=1) > 0][:, observed.sum(axis=0) > 0])
    assert (expected < 5).mean() > 0.2  # 10 respondents: Cochran's rule fires
    line = next(x for x in said.splitlines() if x.startswith("Q1 x sortOrder: chi2"))
    assert "caution: " in line and "Cochran's rule" in line
    # one channel among the respondents: no test, said in words (not "chi2 nan")
    line = next(x for x in said.splitlines() if x.startswith("Q1 x channel: "))
    assert line == "Q1 x channel: no test (fewer than two answers or groups with answers)"
