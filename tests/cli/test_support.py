"""The files the command line writes: text stays text, and the umask sets the permissions."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app
from surveykit.client import Client
from tests.helpers.files import mode, umask

runner = CliRunner()
ENV = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_OPTOUTS": ""}
SOURCE = "447700900999"
# What respondents may write: formulas, a link, signs, an at, a tab, a CR, an error code.
ANSWERS = [
    "=1+1",
    '=HYPERLINK("http://x","y")',
    "+1",
    "-2+3",
    "@SUM(A1)",
    "\t=1+1",
    "\r=1+1",
    "#N/A",
]


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


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> Iterator[sk.Sandbox]:
    """`surveykit results` on a sandbox whose respondents answered ANSWERS to CSAT's Q3."""
    sandbox = sk.Sandbox(seed=0)
    for n, answer in enumerate(ANSWERS, start=1):
        sandbox.simulate_answers("CSAT-SMS-2026", str(4101000000 + n), {"Q3": answer})
    monkeypatch.setattr(
        "surveykit.cli._data.make_client", lambda *args, **kwargs: Client.sandbox(sandbox)
    )
    yield sandbox
    sandbox.close()


def people(tmp_path: Path) -> Path:
    """A send list whose first names are ANSWERS."""
    source = tmp_path / "list.csv"
    numbers = [f"4479111230{n:02d}" for n in range(1, len(ANSWERS) + 1)]
    frame = pd.DataFrame({"mobileNumber": numbers, "firstName": ANSWERS})
    frame.to_csv(source, index=False, quoting=csv.QUOTE_ALL)  # pandas quotes no lone CR
    return source


def test_results_xlsx_writes_answers_as_the_same_text(tmp_path: Path, answered: Any) -> None:
    out = tmp_path / "r.xlsx"
    run("results", "CSAT-SMS-2026", "--out", str(out))
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
