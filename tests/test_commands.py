"""The command line, run in-process with typer's runner (and over HTTP for state)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

from _sandbox_server import ServedSandbox
from surveykit.callbacks import EventStore
from surveykit.cli import app

runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""})
    assert result.exit_code == 0, result.output
    return result.output


def test_main_job_results_summary_table_and_chart(tmp_path: Path) -> None:
    out, chart = tmp_path / "results.csv", tmp_path / "chart.png"
    output = invoke("results", "--out", str(out), "--chart", str(chart))
    assert "using the embedded sandbox" in output
    assert "all surveys: 31 respondents, 16 columns" in output
    assert "CSAT-SMS-2026   completed" in output
    assert "NPS-WA-Q1-2026 Q1: 9 ratings, mean 6.4, NPS -11" in output
    assert "CSAT-SMS-2026 Q1" in output and "CSAT-SMS-2026 Q1: 10 ratings, mean 3.6\n" in output
    table = pd.read_csv(out, dtype=str)
    assert len(table) == 31 and table.columns[0] == "respondentId"
    assert chart.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("suffix", [".parquet", ".json", ".xlsx"])
def test_results_table_formats(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"r{suffix}"
    invoke("results", "NPS-WA-Q1-2026", "--format", "XML", "--out", str(out))
    read = {".parquet": pd.read_parquet, ".json": pd.read_json, ".xlsx": pd.read_excel}[suffix]
    assert len(read(out)) == 11


def test_results_of_an_unknown_survey_fails_clearly() -> None:
    result = runner.invoke(app, ["results", "NOPE"], env={"SURVEYKIT_BASE_URL": ""})
    assert result.exit_code == 1
    assert "404" in result.output and "NOPE" in result.output


def test_results_with_an_unknown_format_is_a_usage_error_naming_the_choices() -> None:
    result = runner.invoke(
        app, ["results", "CSAT-SMS-2026", "--format", "bogus"], env={"SURVEYKIT_BASE_URL": ""}
    )
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "'--format'" in result.output and "'bogus'" in result.output
    assert all(name in result.output for name in ("CSV", "PIPE", "TAB", "XML", "JSON"))


def test_results_format_is_case_insensitive() -> None:
    assert "survey CSAT-SMS-2026: 12 respondents" in invoke(
        "results", "CSAT-SMS-2026", "--format", "tab"
    )


def test_results_since_keeps_only_recent_respondents() -> None:
    everyone = invoke("results", "CSAT-SMS-2026")
    recent = invoke("results", "CSAT-SMS-2026", "--since", "2026-02-17")
    assert "survey CSAT-SMS-2026: 12 respondents" in everyone
    assert "survey CSAT-SMS-2026: 8 respondents" in recent


def test_results_chart_as_svg(tmp_path: Path) -> None:
    chart = tmp_path / "charts" / "funnel.svg"
    output = invoke("results", "CSAT-SMS-2026", "--chart", str(chart))
    assert f"wrote the funnel chart to {chart}" in output
    svg = chart.read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "<svg" in svg
    assert "Response funnel: survey CSAT-SMS-2026" in svg


def test_import_writes_every_rows_outcome(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    source.write_text(
        "Given name,Phone,Email\nAna,07911 123001,ana@example.org\n"
        "Bo,12345,bo@example.org\nCy,07911 123001,cy@example.org\n",
        encoding="utf-8",
    )
    output = invoke(
        "import",
        "CSAT-SMS-2026",
        str(source),
        "--region",
        "GB",
        "--map",
        "Given name=firstName",
        "--map",
        "Email=",
    )
    assert "'Given name' -> firstName (mapped)" in output
    assert "'Email' -> - (left out)" in output
    assert "outcome: " in output
    outcome = pd.read_csv(tmp_path / "people.import.csv", dtype=str)
    assert outcome["status"].tolist() == ["Success", "rejected", "rejected"]
    assert "duplicate" in outcome.loc[2, "reason"]


def test_import_bad_map_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "p.csv"
    source.write_text("Phone\n07911 123001\n", encoding="utf-8")
    result = runner.invoke(app, ["import", "R", str(source), "--map", "nonsense"])
    assert result.exit_code != 0
    assert "COLUMN=property" in result.output


def test_send_preview_and_test(tmp_path: Path) -> None:
    source = tmp_path / "list.csv"
    source.write_text("mobileNumber,firstName\n447911123001,Ana\n447911123002,\n", encoding="utf-8")
    preview = invoke(
        "send",
        str(source),
        "--message",
        "Hi {firstName}",
        "--source",
        "447700900999",
        "--window",
        "Mon-Fri 09:00-18:00",
        "--preview",
    )
    assert "ready=1" in preview and "Hi Ana" in preview
    sent = invoke(
        "send", str(source), "--message", "Hi {firstName}", "--source", "447700900999", "--test"
    )
    assert "BatchResult(rows=2, tested=1, rejected=1" in sent
    outcome = pd.read_csv(tmp_path / "list.sent.csv", dtype=str)
    assert outcome["outcome"].tolist() == ["tested", "rejected"]


def test_lookup_and_shorten() -> None:
    looked = invoke("lookup", "447700900901", "447911123456")
    assert "VoIP" in looked and "Mobile" in looked
    links = invoke("shorten", "https://example.org/a", "https://example.org/b")
    lines = links.strip().splitlines()[-2:]
    assert lines[0].endswith("  https://example.org/a")
    assert lines[0].split()[0] != lines[1].split()[0]


def test_keywords_and_webhooks_over_http(served: ServedSandbox) -> None:
    env = {"SURVEYKIT_BASE_URL": served.base_url, "SURVEYKIT_TOKEN": served.token}
    run = lambda *args: runner.invoke(app, list(args), env=env)  # noqa: E731
    assert run("keywords", "create", "CLITEST", "--response", "Thanks").exit_code == 0
    listed = run("keywords", "list")
    assert "CLITEST" in listed.output
    duplicate = run("keywords", "create", "CLITEST")
    assert duplicate.exit_code == 1 and "409" in duplicate.output
    assert run("keywords", "delete", "CLITEST").exit_code == 0
    assert "CLITEST" not in run("keywords", "list").output
    hooks = run("webhooks")
    assert hooks.exit_code == 0 and "https://" in hooks.output


def test_listen_prints_its_url_and_stops(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "surveykit.cli", "listen", "--db", str(tmp_path / "ev.sqlite")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("Listening for callbacks at http://127.0.0.1:")
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert (tmp_path / "ev.sqlite").exists()


def test_listen_max_body_sets_the_receivers_limit(tmp_path: Path) -> None:
    db = tmp_path / "ev.sqlite"
    process = subprocess.Popen(
        [sys.executable, "-m", "surveykit.cli", "listen", "--db", str(db), "--max-body", "300"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip().rpartition(" ")[2]
        small = {"Type": "Receipt", "MessageID": "MS1", "Status": "Sent"}
        large = {**small, "MessageID": "MS2", "Message": "x" * 400}  # under the 64 KiB default
        with httpx.Client(trust_env=False, timeout=30) as http:
            assert http.post(url, json=small).status_code == 200
            refused = http.post(url, json=large)
        assert refused.status_code == 413
        assert "at most 300 bytes" in refused.json()["detail"]
    finally:
        process.terminate()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    with EventStore(db) as store:
        assert list(store.frame()["message_id"]) == ["MS1"]


def test_listen_refuses_a_max_body_below_one_byte() -> None:
    result = runner.invoke(app, ["listen", "--max-body", "0"])
    assert result.exit_code == 2
    assert "--max-body" in result.output


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".parquet"])
def test_import_reads_csv_excel_and_parquet(tmp_path: Path, suffix: str) -> None:
    people = pd.DataFrame({"First Name": ["Ana", "Bo"], "Phone": ["07911 123001", "12345"]})
    source = tmp_path / f"people{suffix}"
    {
        ".csv": lambda p: people.to_csv(p, index=False),
        ".xlsx": lambda p: people.to_excel(p, index=False),
        ".parquet": lambda p: people.to_parquet(p, index=False),
    }[suffix](source)
    invoke("import", "CSAT-SMS-2026", str(source), "--region", "GB")
    outcome = pd.read_csv(tmp_path / "people.import.csv", dtype=str)
    assert outcome["status"].tolist() == ["Success", "rejected"]
