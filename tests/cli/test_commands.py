"""The command line, run in-process with typer's runner (and over HTTP for state)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

from surveykit.callbacks import EventStore
from surveykit.cli import app
from tests.helpers.sandbox_server import ServedSandbox

runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""})
    assert result.exit_code == 0, result.output
    return result.output


def test_main_job_results_summary_table_and_chart(tmp_path: Path) -> None:
    out, chart = tmp_path / "results.csv", tmp_path / "chart.png"
    output = invoke("results", "--out", str(out), "--chart", str(chart))
    assert "using the embedded sandbox" in output
    assert "all surveys: 31 respondents (28 invited, 3 never invited), 16 columns" in output
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
    assert "--format: 'bogus' is not one of" in result.output
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
    chart.parent.mkdir()
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
    outcome = pd.read_csv(tmp_path / "people.csv.import.csv", dtype=str)
    assert outcome["status"].tolist() == ["Success", "rejected", "rejected"]
    assert "duplicate" in outcome.loc[2, "reason"]
    assert outcome.loc[2, ["column", "value", "duplicate_of"]].tolist() == [
        "Phone",
        "07911 123001",
        "1",  # the first row with that number: the file's row 1 (under the header)
    ]
    assert outcome["row"].tolist() == ["1", "2", "3"]
    assert outcome.columns[0] == "row" and not outcome.columns.str.startswith("Unnamed").any()
    assert outcome.loc[1, ["column", "value"]].tolist() == ["Phone", "12345"]
    assert pd.isna(outcome.loc[1, "duplicate_of"])


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
    outcome = pd.read_csv(tmp_path / "list.csv.sent.csv", dtype=str)
    assert outcome["outcome"].tolist() == ["tested", "rejected"]
    assert outcome.columns[0] == "row" and outcome["row"].tolist() == ["1", "2"]


def test_lookup_and_shorten() -> None:
    looked = invoke("lookup", "447700900901", "447911123456")
    assert "VoIP" in looked and "Mobile" in looked
    links = invoke("shorten", "https://example.org/a", "https://example.org/b")
    lines = [line for line in links.splitlines() if line.startswith("http")]
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


PEOPLE = pd.DataFrame({"First Name": ["Ana", "Bo"], "Phone": ["07911 123001", "12345"]})
WRITERS = {
    ".csv": lambda p: PEOPLE.to_csv(p, index=False),
    ".tsv": lambda p: PEOPLE.to_csv(p, index=False, sep="\t"),
    ".TXT": lambda p: PEOPLE.to_csv(p, index=False, sep="\t"),
    ".xlsx": lambda p: PEOPLE.to_excel(p, index=False),
    ".parquet": lambda p: PEOPLE.to_parquet(p, index=False),
}


@pytest.mark.parametrize("suffix", list(WRITERS))
def test_import_reads_csv_tab_separated_excel_and_parquet(tmp_path: Path, suffix: str) -> None:
    source = tmp_path / f"people{suffix}"
    WRITERS[suffix](source)
    output = invoke("import", "CSAT-SMS-2026", str(source), "--region", "GB")
    assert "'Phone' -> mobileNumber (inferred)" in output  # the header was split right
    outcome = pd.read_csv(tmp_path / f"people{suffix}.import.csv", dtype=str)
    assert outcome["status"].tolist() == ["Success", "rejected"]


def test_import_outcome_files_are_named_after_the_full_input_name(tmp_path: Path) -> None:
    for suffix in (".csv", ".xlsx"):
        WRITERS[suffix](tmp_path / f"people{suffix}")
        invoke("import", "CSAT-SMS-2026", str(tmp_path / f"people{suffix}"), "--region", "GB")
    assert sorted(p.name for p in tmp_path.glob("*.import.csv")) == [
        "people.csv.import.csv",
        "people.xlsx.import.csv",
    ]
    chosen = tmp_path / "out" / "outcome.parquet"
    chosen.parent.mkdir()
    output = invoke(
        "import",
        "CSAT-SMS-2026",
        str(tmp_path / "people.csv"),
        "--region",
        "GB",
        "--out",
        str(chosen),
    )
    assert f"wrote the outcome of 2 rows to {chosen}" in output
    assert pd.read_parquet(chosen)["status"].tolist() == ["Success", "rejected"]


@pytest.mark.parametrize("name", ["people.dat", "people"], ids=["unknown-suffix", "no-suffix"])
def test_import_refuses_a_file_type_it_cannot_tell(tmp_path: Path, name: str) -> None:
    source = tmp_path / name
    source.write_text("Phone\t\n07911 123001\n", encoding="utf-8")
    result = runner.invoke(
        app, ["import", "CSAT-SMS-2026", str(source)], env={"SURVEYKIT_BASE_URL": ""}
    )
    assert result.exit_code == 2
    # typer boxes and wraps the error, even inside a long path: compare without spaces
    message = "".join(result.output.replace("│", " ").split())
    assert f"{source}:cannottellhowtoread" in message
    assert "supported:.csv,.tsv,.tab,.txt,.xlsx,.xls,.parquet" in message
    assert not list(tmp_path.glob("*.import.csv"))


def test_import_help_documents_the_outcome_file() -> None:
    result = runner.invoke(app, ["import", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.replace("│", " ").split())
    assert "default FILE.import.csv beside FILE" in text
    assert "people.xlsx -> people.xlsx.import.csv" in text
    assert ".tsv/.tab/.txt (tab-separated)" in text


def test_import_of_an_unknown_reference_fails_after_writing_every_rows_outcome(
    tmp_path: Path,
) -> None:
    source = tmp_path / "people.csv"
    source.write_text(
        "First Name,Phone\nAna,07911 123001\nBo,12345\nCy,07911 123002\n", encoding="utf-8"
    )
    result = runner.invoke(
        app,
        ["import", "NO-SUCH-SURVEY", str(source), "--region", "GB"],
        env={"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""},
    )
    assert result.exit_code == 1, result.output
    assert "surveykit: import stopped:" in result.output
    assert "does not know reference 'NO-SUCH-SURVEY'" in result.output
    assert "nothing was imported" in result.output
    outcome = pd.read_csv(tmp_path / "people.csv.import.csv", dtype=str)
    assert outcome["row"].tolist() == ["1", "2", "3"]  # every row, in file order
    assert outcome["status"].tolist() == ["not sent", "rejected", "not sent"]
    assert outcome["reason"].notna().all()


def test_import_when_the_platform_is_unreachable_fails_before_sending(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = tmp_path / "people.csv"
    source.write_text("First Name,Phone\nAna,07911 123001\nBo,12345\n", encoding="utf-8")
    result = runner.invoke(
        app,
        ["import", "CSAT-SMS-2026", str(source), "--region", "GB"],
        env={"SURVEYKIT_BASE_URL": f"http://127.0.0.1:{port}", "SURVEYKIT_TOKEN": "t"},
    )
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines() == [
        "surveykit: cannot reach the platform: check --base-url or SURVEYKIT_BASE_URL (GET "
        f"http://127.0.0.1:{port}/v3.2/Keyword: could not connect: [Errno 111] Connection "
        "refused); nothing was sent"
    ]
    assert not (tmp_path / "people.csv.import.csv").exists()


def test_results_files_are_written_even_when_the_reader_stops_early(tmp_path: Path) -> None:
    # As `surveykit results --out ... | head -1` when head has already gone: the pipe's
    # reading end is closed before the command prints anything.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "surveykit.cli", "results",
             "--out", str(tmp_path / "r.csv"), "--chart", str(tmp_path / "f.png")],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode != 0  # printing failed, and says so with the exit code
    assert len(pd.read_csv(tmp_path / "r.csv")) == 31
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
