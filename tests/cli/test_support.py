"""The files the command line writes: text stays text, and the umask sets the permissions."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from surveykit.cli import app
from surveykit.cli._support import guard_for_spreadsheets, spreadsheet_text
from tests.helpers.files import FORMULA_ANSWERS, mode, umask
from tests.helpers.sandbox_server import ServedSandbox

runner = CliRunner()
ENV = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_OPTOUTS": ""}
SOURCE = "447700900999"
ANSWERS = FORMULA_ANSWERS


def run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args), env=ENV)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


def cells(path: Path) -> list[list[tuple[Any, str]]]:
    """Every row of the workbook's one sheet: (value, openpyxl data type) of each cell."""
    sheet = load_workbook(path).worksheets[0]
    return [[(cell.value, cell.data_type) for cell in row] for row in sheet.iter_rows()]


def column(path: Path, name: str) -> list[tuple[Any, str]]:
    rows = cells(path)
    at = [value for value, _ in rows[0]].index(name)
    return [row[at] for row in rows[1:]]


@pytest.fixture(scope="module")
def answered(served: ServedSandbox) -> dict[str, str]:
    """The environment of a served sandbox whose respondents answered ANSWERS to CSAT's Q3."""
    admin = {"Authorization": f"Basic {served.token}"}
    for n, answer in enumerate(ANSWERS, start=1):
        body = {"surveyReference": "CSAT-SMS-2026", "respondent": str(4101000000 + n),
                "answers": {"Q3": answer}}  # fmt: skip
        posted = httpx.post(f"{served.base_url}/_sandbox/simulate/answers", json=body,
                            headers=admin)  # fmt: skip
        assert posted.status_code < 300, posted.text
    return {**ENV, "SURVEYKIT_BASE_URL": served.base_url, "SURVEYKIT_TOKEN": served.token}


def results(env: dict[str, str], *args: str) -> str:
    """``surveykit results CSAT-SMS-2026 ARGS`` on the platform ``env`` names."""
    result = runner.invoke(app, ["results", "CSAT-SMS-2026", *args], env=env)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return result.output


def people(tmp_path: Path) -> Path:
    """A send list whose first names are ANSWERS."""
    source = tmp_path / "list.csv"
    numbers = [f"4479111230{n:02d}" for n in range(1, len(ANSWERS) + 1)]
    frame = pd.DataFrame({"mobileNumber": numbers, "firstName": ANSWERS})
    frame.to_csv(source, index=False, quoting=csv.QUOTE_ALL)  # pandas quotes no lone CR
    return source


def test_results_xlsx_writes_answers_as_the_same_text(
    tmp_path: Path, answered: dict[str, str]
) -> None:
    out = tmp_path / "r.xlsx"
    results(answered, "--out", str(out))
    assert column(out, "Q3")[: len(ANSWERS)] == [(answer, "s") for answer in ANSWERS]
    assert not [cell for row in cells(out) for cell in row if cell[1] in ("f", "e")]
    assert {kind for _, kind in column(out, "Q1") if _ is not None} == {"n"}  # numbers stay


def test_send_outcome_xlsx_writes_rendered_text_as_the_same_text(tmp_path: Path) -> None:
    out = tmp_path / "sent.xlsx"
    run("send", str(people(tmp_path)), "--message", "{firstName}", "--source", SOURCE,
        "--test", "--out", str(out))  # fmt: skip
    assert column(out, "text") == [(answer, "s") for answer in ANSWERS]
    assert column(out, "row") == [(n, "n") for n in range(1, len(ANSWERS) + 1)]


def test_optouts_list_xlsx_writes_reasons_as_the_same_text(tmp_path: Path) -> None:
    db, out = str(tmp_path / "o.sqlite"), tmp_path / "o.xlsx"
    for n, reason in enumerate(ANSWERS, start=1):
        run("optouts", "add", f"4477009001{n:02d}", "--reason", reason, "--db", db)
    run("optouts", "list", "--out", str(out), "--db", db)
    assert sorted(column(out, "reason")) == sorted((reason, "s") for reason in ANSWERS)


UMASK = 0o027
"""Group may read, others nothing: a mode of 0o640, unlike both 0o600 and 0o644."""


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".parquet", ".json"])
def test_results_files_get_the_permissions_the_umask_gives(tmp_path: Path, suffix: str) -> None:
    out, chart = tmp_path / f"r{suffix}", tmp_path / "funnel.png"
    with umask(UMASK):
        run("results", "CSAT-SMS-2026", "--out", str(out), "--chart", str(chart))
    assert (mode(out), mode(chart)) == (0o640, 0o640)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_send_and_import_outcomes_get_the_permissions_the_umask_gives(tmp_path: Path) -> None:
    source = people(tmp_path)
    with umask(UMASK):
        run("send", str(source), "--message", "Hi", "--source", SOURCE, "--test")
        run("import", "CSAT-SMS-2026", str(source))
    assert mode(tmp_path / "list.csv.sent.csv") == 0o640
    assert mode(tmp_path / "list.csv.import.csv") == 0o640


def test_the_optouts_list_gets_the_permissions_the_umask_gives(tmp_path: Path) -> None:
    db, out = str(tmp_path / "o.sqlite"), tmp_path / "o.csv"
    run("optouts", "add", "447700900101", "--db", db)
    with umask(0o002):
        run("optouts", "list", "--out", str(out), "--db", db)
    assert mode(out) == 0o664


# ---------------------------------------------------------------- CSV for spreadsheets

GUARDED = [f"'{answer}" if answer[0] in "=+-@\t\r" else answer for answer in ANSWERS]


def read_csv_text(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV file as the csv module reads them: text, nothing converted."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_results_csv_keeps_answers_exactly_by_default(
    tmp_path: Path, answered: dict[str, str]
) -> None:
    out = tmp_path / "r.csv"
    results(answered, "--out", str(out))
    rows = read_csv_text(out)
    assert [row["Q3"] for row in rows[: len(ANSWERS)]] == ANSWERS  # a lone CR too
    assert len(rows) == 12
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert table["Q3"].tolist()[: len(ANSWERS)] == ANSWERS


def test_results_csv_for_spreadsheets_quotes_what_a_spreadsheet_would_compute(
    tmp_path: Path, answered: dict[str, str]
) -> None:
    out = tmp_path / "r.csv"
    results(answered, "--out", str(out), "--for-spreadsheets")
    rows = read_csv_text(out)
    assert [row["Q3"] for row in rows[: len(ANSWERS)]] == GUARDED
    assert rows[0]["respondentId"] == "4101000001" and rows[0]["Q1"] == "5"  # data as it was


def test_send_and_optouts_csv_for_spreadsheets(tmp_path: Path) -> None:
    source, sent = people(tmp_path), tmp_path / "sent.csv"
    args = ["send", str(source), "--message", "{firstName}", "--source", SOURCE, "--test"]
    run(*args, "--out", str(sent), "--for-spreadsheets")
    assert [row["text"] for row in read_csv_text(sent)] == GUARDED
    run(*args, "--out", str(sent), "--no-journal")
    assert [row["text"] for row in read_csv_text(sent)] == ANSWERS
    db, listed = str(tmp_path / "o.sqlite"), tmp_path / "o.csv"
    run("optouts", "add", "447700900101", "--reason", "=1+1", "--db", db)
    run("optouts", "list", "--out", str(listed), "--db", db, "--for-spreadsheets")
    assert [row["reason"] for row in read_csv_text(listed)] == ["'=1+1"]


@pytest.mark.parametrize(
    "args",
    [
        ["results", "--out", "{tmp}/r.parquet"],
        ["results", "--out", "{tmp}/r.json"],
        ["results"],
        ["send", "{tmp}/list.csv", "--message", "Hi", "--source", SOURCE, "--test",
         "--out", "{tmp}/sent.json"],
        ["import", "CSAT-SMS-2026", "{tmp}/list.csv", "--out", "{tmp}/outcome.parquet"],
        ["optouts", "list", "--db", "{tmp}/o.sqlite", "--out", "{tmp}/o.json"],
        ["optouts", "list", "--db", "{tmp}/o.sqlite"],
    ],
)  # fmt: skip
def test_for_spreadsheets_is_refused_without_a_csv_out(tmp_path: Path, args: list[str]) -> None:
    people(tmp_path)
    run("optouts", "add", "447700900101", "--db", str(tmp_path / "o.sqlite"))
    before = sorted(path.name for path in tmp_path.iterdir())
    said = run(*(a.format(tmp=tmp_path) for a in args), "--for-spreadsheets", code=2)
    assert "--for-spreadsheets" in said and "--out" in said
    assert sorted(path.name for path in tmp_path.iterdir()) == before  # nothing written


def test_guard_for_spreadsheets_quotes_text_of_every_kind_and_leaves_numbers() -> None:
    frame = pd.DataFrame(
        {
            "=name": ["=1+1", "ok"],
            "string": pd.array(["@SUM(A1)", None], dtype="string"),
            "category": pd.Categorical(["-2+3", "+1"]),
            "number": [-2, 3],
            "float": [-0.5, None],
        }
    )
    guarded = guard_for_spreadsheets(frame)
    assert guarded.columns.tolist() == ["'=name", "string", "category", "number", "float"]
    assert guarded["'=name"].tolist() == ["'=1+1", "ok"]
    assert guarded["string"].tolist()[0] == "'@SUM(A1)" and pd.isna(guarded["string"][1])
    assert guarded["category"].tolist() == ["'-2+3", "'+1"]
    kept = ["string", "number", "float"]
    assert guarded[kept].dtypes.tolist() == frame[kept].dtypes.tolist()
    assert isinstance(guarded["category"].dtype, pd.CategoricalDtype)
    assert guarded["number"].tolist() == [-2, 3]
    assert frame["=name"].tolist() == ["=1+1", "ok"]  # the frame itself is not changed
    assert [spreadsheet_text(t) for t in ("\t1", "\r1", "a=1", "")] == ["'\t1", "'\r1", "a=1", ""]


def test_text_an_xlsx_file_cannot_hold_is_one_line_naming_where(tmp_path: Path) -> None:
    source, out = tmp_path / "list.csv", tmp_path / "sent.xlsx"
    source.write_text('mobileNumber,firstName\n447911123001,Ana\n447911123002,"a\x0bb"\n')
    said = run("send", str(source), "--message", "{firstName}", "--source", SOURCE, "--test",
               "--out", str(out), code=1)  # fmt: skip
    assert "'text', row 2" in said and "U+000B" in said and ".csv" in said
    assert sorted(path.name for path in tmp_path.iterdir()) == ["list.csv"]
