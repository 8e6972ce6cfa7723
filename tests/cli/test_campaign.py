"""``surveykit optouts`` and ``surveykit remind``: in-process, on the embedded sandbox."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app

runner = CliRunner()
ENV = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_OPTOUTS": ""}
SOURCE = "447700900999"


def run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args), env=ENV)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


def test_optouts_add_list_remove_import(tmp_path: Path) -> None:
    db = str(tmp_path / "o.sqlite")
    assert "added 2 of 2" in run(
        "optouts", "add", "+44 7700 900123", "447700900124", "--reason", "phone", "--db", db
    )
    listed = run("optouts", "list", "--db", db)
    assert "447700900123" in listed and "447700900124" in listed and "phone" in listed
    assert "removed 1 of 1" in run("optouts", "remove", "447700900124", "--db", db)
    source = tmp_path / "stops.csv"
    pd.DataFrame({"phone": ["07700 900200", "07700 900201"], "x": [1, 2]}).to_csv(
        source, index=False
    )
    out = run("optouts", "import", str(source), "--region", "GB", "--db", db)
    assert "imported 2 numbers" in out
    with sk.OptOutList(db) as lst:
        assert set(lst.frame["number"]) == {"447700900123", "447700900200", "447700900201"}
        assert set(lst.frame["reason"]) == {"phone", "imported from stops.csv"}
    written = tmp_path / "list.csv"
    run("optouts", "list", "--out", str(written), "--db", db)
    assert len(pd.read_csv(written)) == 3


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["optouts", "add", "not-a-number"], 1, "value 0 ('not-a-number')"),
        (["optouts", "list", "--db", "{tmp}/missing.sqlite"], 1, "no opt-out list"),
        (["optouts", "import", "{tmp}/nope.csv"], 2, "no such file"),
        (["optouts", "import", "{tmp}/stops.csv", "--column", "zz"], 1, "no column 'zz'"),
        (
            [
                "remind",
                "CSAT-SMS-2026",
                "--journal",
                "{tmp}/nope.sqlite",
                "--message",
                "x",
                "--source",
                SOURCE,
            ],
            1,
            "nope.sqlite: no such file",
        ),
        (
            [
                "remind",
                "CSAT-SMS-2026",
                "--journal",
                "{tmp}/stops.csv",
                "--message",
                "x",
                "--source",
                SOURCE,
            ],
            1,
            "is not a batch journal",
        ),
        (
            [
                "remind",
                "CSAT-SMS-2026",
                "--journal",
                "{tmp}/stops.csv",
                "--message",
                "x",
                "--source",
                SOURCE,
                "--min-gap",
                "soon",
            ],
            2,
            "'soon' is not a duration",
        ),
    ],
)
def test_user_mistakes_are_one_line(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    (tmp_path / "stops.csv").write_text("phone\n447700900200\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if args[0] == "optouts" and "--db" not in args:
        args += ["--db", str(tmp_path / "o.sqlite")]
    output = run(*args, code=code)
    assert message in output


def test_remind_sends_once_and_resumes(tmp_path: Path) -> None:
    # Wave 1, sent by the analyst with a journal (the embedded sandbox starts the same).
    client = sk.Client.sandbox()
    results = client.surveys.results("CSAT-SMS-2026")
    people = results.set_index("respondentId")[["mobileNumber", "firstName"]]
    wave1 = tmp_path / "wave1.sqlite"
    sk.send_batch(
        client, people, message="Hi {firstName}", source=SOURCE, journal=wave1, progress=False
    )
    optouts = tmp_path / "o.sqlite"
    open_numbers = results.loc[results["completed"].isna(), "mobileNumber"].tolist()
    run("optouts", "add", open_numbers[0], "--db", str(optouts))
    args = [
        "remind",
        "CSAT-SMS-2026",
        "--journal",
        str(wave1),
        "--message",
        "Hi {firstName}, a reminder",
        "--source",
        SOURCE,
        "--min-gap",
        "0h",
        "--optouts",
        str(optouts),
    ]
    first = run(*args)
    remind = len(open_numbers) - 1
    assert f"remind {remind}," in first and "opted out 1" in first
    assert f"sent={remind}" in first and f"sent_now={remind}" in first
    outcome = pd.read_csv(tmp_path / "wave2.sent.csv", dtype=str)
    assert set(outcome["destination"]) == set(open_numbers[1:])
    assert outcome["text"].str.endswith(", a reminder").all()
    again = run(*args)
    assert "sent_now=0" in again and f"sent={remind}" in again
    too_soon = run(*args[:-4], "--optouts", str(optouts))  # default gap of 48h
    assert "remind 0" in too_soon and "contacted too recently" in too_soon
    # The wave's journal cut to 0 bytes knows no one: refused in one line, nothing sent.
    (tmp_path / "wave2.sqlite").write_bytes(b"")
    emptied = run(*args, code=1)
    assert emptied.strip().splitlines()[-1].startswith(
        f"surveykit: journal {tmp_path / 'wave2.sqlite'}: the file is empty"
    )
    assert "sent_now" not in emptied


def test_optouts_review_lists_unsure_replies_and_writes_them_as_text(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    from surveykit.models import CallbackPayload

    db = str(tmp_path / "o.sqlite")
    assert run("optouts", "review", "--db", db, code=1).strip().endswith("no opt-out list " + db)
    reply = '=HYPERLINK("http://x") No. Stop.'
    payload = CallbackPayload.model_validate(
        {
            "Type": "Message",
            "Source": "447911000004",
            "Destination": "447700900123",
            "Message": reply,
            "Timestamp": "2026-03-02T10:00:00+00:00",
            "Inbound": True,
            "MessageID": "MS1",
        }
    )
    with sk.OptOutList(db) as lst:
        lst.apply(payload, 1)
        assert "447911000004" not in lst  # unsure: a person decides
    listed = run("optouts", "review", "--db", db)
    assert "447911000004" in listed and "No. Stop." in listed
    out = tmp_path / "unsure.xlsx"
    assert "wrote 1 replies" in run("optouts", "review", "--db", db, "--out", str(out))
    cells = {c.value: c.data_type for row in load_workbook(out).active.iter_rows() for c in row}
    assert cells[reply] == "s"  # text, never a formula
