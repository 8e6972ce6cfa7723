"""Every command with each bad input: its exit status, one line on stderr, and no traceback.

Usage problems exit with 2, configuration, input, output and platform problems with 1
(docs: DESIGN.md, "Command line"). Most cases run in-process with typer's runner; a few run
``python -m surveykit.cli`` to see the real stderr. The wrong-token cases talk to a served
sandbox over HTTP.
"""

from __future__ import annotations

import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from surveykit.cli import app
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

runner = CliRunner()

NO_CONFIG = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_CALLBACK_SECRET": ""}


@dataclass(frozen=True)
class Files:
    """Inputs good and bad, and places to write, in one folder."""

    root: Path

    def __truediv__(self, name: str) -> str:
        return str(self.root / name)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    root = tmp_path_factory.mktemp("cli-inputs")
    (root / "people.csv").write_text("Phone,First Name\n447911123001,Ana\n", encoding="utf-8")
    (root / "empty.csv").write_bytes(b"")
    (root / "header-only.csv").write_text("Phone,First Name\n", encoding="utf-8")
    (root / "binary.csv").write_bytes(b"Phone\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "latin1.csv").write_bytes("Phone,First Name\n447911123001,José\n".encode("latin-1"))
    (root / "csv-named.xlsx").write_text("Phone\n447911123001\n", encoding="utf-8")
    (root / "csv-named.parquet").write_text("Phone\n447911123001\n", encoding="utf-8")
    (root / "damaged.parquet").write_bytes(b"PAR1" + b"\x00garbage" * 20 + b"PAR1")
    (root / "damaged.xlsx").write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    (root / "people.dat").write_text("Phone\n447911123001\n", encoding="utf-8")
    (root / "folder").mkdir()
    with sqlite3.connect(root / "other.sqlite") as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    return Files(root)


@pytest.fixture(scope="module")
def served_sandbox() -> Iterator[ServedSandbox]:
    with serve_sandbox() as server:
        yield server


def closed_port() -> int:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def run(args: list[str], env: dict[str, str] | None = None) -> Outcome:
    result = runner.invoke(app, args, env={**NO_CONFIG, **(env or {})})
    # Anything but a clean exit would be an exception typer's runner caught: a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception,
        result.stderr,
    )
    return Outcome(result.exit_code, result.stdout, result.stderr)


def assert_one_line(outcome: Outcome, code: int, pattern: str) -> None:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert outcome.code == code, (outcome.code, outcome.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("surveykit"), lines[0]
    assert re.search(pattern, lines[0]), (pattern, lines[0])
    assert "Traceback" not in outcome.stdout + outcome.stderr


# Every command that talks to the platform, with what it needs besides the connection.
NETWORK_COMMANDS: dict[str, Callable[[Files], list[str]]] = {
    "results": lambda f: ["results"],
    "import": lambda f: ["import", "CSAT-SMS-2026", f / "people.csv"],
    "send": lambda f: [
        "send",
        f / "people.csv",
        "--message",
        "Hi",
        "--source",
        "447700900999",
        "--destination",
        "Phone",
    ],
    "lookup": lambda f: ["lookup", "447911123456"],
    "shorten": lambda f: ["shorten", "https://example.org/a"],
    "keywords-list": lambda f: ["keywords", "list"],
    "keywords-create": lambda f: ["keywords", "create", "CLIERR"],
    "keywords-delete": lambda f: ["keywords", "delete", "CLIERR"],
    "webhooks": lambda f: ["webhooks"],
}
NETWORK = pytest.mark.parametrize("command", list(NETWORK_COMMANDS))


@NETWORK
def test_a_base_url_without_a_scheme_is_a_usage_error(files: Files, command: str) -> None:
    args = [*NETWORK_COMMANDS[command](files), "--base-url", "api.example.com", "--token", "t"]
    assert_one_line(
        run(args),
        2,
        r"^surveykit: --base-url \(or SURVEYKIT_BASE_URL\): expected an http\(s\) URL, got "
        r"'api\.example\.com'$",
    )


@NETWORK
def test_an_unreachable_host_is_one_line_naming_the_base_url(files: Files, command: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    args = [*NETWORK_COMMANDS[command](files), "--base-url", url, "--token", "t"]
    assert_one_line(
        run(args),
        1,
        rf"^surveykit: cannot reach the platform: check --base-url or SURVEYKIT_BASE_URL "
        rf"\(\w+ {re.escape(url)}/v3\.2/.*Connection refused",
    )


@NETWORK
def test_plain_http_to_another_machine_needs_the_flag(files: Files, command: str) -> None:
    # 0.0.0.0 is not a loopback address to the client; the kernel answers it as this
    # machine, so with the flag the request is refused at once (nothing listens there).
    url = f"http://0.0.0.0:{closed_port()}"
    args = [*NETWORK_COMMANDS[command](files), "--base-url", url, "--token", "t"]
    assert_one_line(
        run(args),
        2,
        r"refusing to send the token over plain http to 0\.0\.0\.0; use https, or pass "
        r"--allow-insecure-http",
    )
    allowed = run([*args, "--allow-insecure-http"])
    assert_one_line(allowed, 1, r"^surveykit: cannot reach the platform")


@NETWORK
def test_a_wrong_token_names_the_option_and_the_variable(
    files: Files, served_sandbox: ServedSandbox, command: str
) -> None:
    args = [*NETWORK_COMMANDS[command](files), "--base-url", served_sandbox.base_url]
    outcome = run([*args, "--token", "not-the-token"])
    assert_one_line(
        outcome,
        1,
        r"^surveykit: the platform refused the token \(401\): check --token or SURVEYKIT_TOKEN",
    )
    assert "not-the-token" not in outcome.stderr
    missing = run(args)
    assert_one_line(missing, 1, r"^surveykit: the platform needs a token \(401\): check --token")


FILE_COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "import": lambda path: ["import", "CSAT-SMS-2026", path],
    "send": lambda path: ["send", path, "--message", "Hi", "--source", "447700900999"],
}
BAD_INPUTS = [
    pytest.param("empty.csv", 1, r"empty\.csv: the file is empty$", id="empty"),
    pytest.param("header-only.csv", 1, r"header-only\.csv: no rows under the header", id="no-rows"),
    pytest.param(
        "binary.csv",
        1,
        r"binary\.csv: not a text file \(a NUL byte at byte offset 14\)",
        id="binary",
    ),
    pytest.param(
        "latin1.csv",
        1,
        r"latin1\.csv: not UTF-8 text \(byte 0xe9 at byte offset 33, line 2; Latin-1",
        id="latin-1",
    ),
    pytest.param("csv-named.xlsx", 1, r"csv-named\.xlsx: not an Excel workbook", id="xlsx-text"),
    pytest.param("damaged.xlsx", 1, r"damaged\.xlsx: a damaged Excel workbook", id="xlsx-damaged"),
    pytest.param(
        "csv-named.parquet", 1, r"csv-named\.parquet: not a Parquet file", id="parquet-text"
    ),
    pytest.param(
        "damaged.parquet", 1, r"damaged\.parquet: a damaged Parquet file", id="parquet-damaged"
    ),
    pytest.param("missing.csv", 2, r"missing\.csv: no such file$", id="missing"),
    pytest.param("folder", 2, r"folder: is a folder, not a file$", id="folder"),
    pytest.param("people.dat", 2, r"people\.dat: cannot tell how to read a '\.dat' file", id="dat"),
]


@pytest.mark.parametrize("command", list(FILE_COMMANDS))
@pytest.mark.parametrize(("name", "code", "pattern"), BAD_INPUTS)
def test_an_input_the_command_cannot_read_is_one_line(
    files: Files, command: str, name: str, code: int, pattern: str
) -> None:
    outcome = run(FILE_COMMANDS[command](files / name))
    assert_one_line(outcome, code, rf"^surveykit: .*{pattern}")
    assert not list(files.root.glob("*.import.csv")) and not list(files.root.glob("*.sent.csv"))


def _out_cases(option: str) -> list[object]:
    return [
        pytest.param(
            "folder", 1, rf"{option} .*folder: is a folder; give a file name", id="folder"
        ),
        pytest.param(
            "nowhere/out.csv" if option == "--out" else "nowhere/chart.png",
            1,
            rf"{option} .*nowhere/\w+\.\w+: no folder .*nowhere \(it is not created\)",
            id="missing-folder",
        ),
        pytest.param(
            "people.csv/out.csv" if option == "--out" else "people.csv/chart.png",
            1,
            rf"{option} .*: .*people\.csv is not a folder",
            id="under-a-file",
        ),
        pytest.param(
            "out.txt" if option == "--out" else "chart.gif",
            2,
            rf"{option} .*: cannot write a '\.\w+' file; supported: ",
            id="unknown-suffix",
        ),
    ]


OUT_COMMANDS: dict[str, Callable[[Files], list[str]]] = {
    "results": lambda f: ["results", "CSAT-SMS-2026"],
    "import": lambda f: ["import", "CSAT-SMS-2026", f / "people.csv"],
    "send": lambda f: [
        "send",
        f / "people.csv",
        "--message",
        "Hi",
        "--source",
        "447700900999",
        "--destination",
        "Phone",
    ],
}


@pytest.mark.parametrize("command", list(OUT_COMMANDS))
@pytest.mark.parametrize(("target", "code", "pattern"), _out_cases("--out"))
def test_an_out_file_that_cannot_be_written_is_refused_before_any_work(
    files: Files, command: str, target: str, code: int, pattern: str
) -> None:
    outcome = run([*OUT_COMMANDS[command](files), "--out", files / target])
    assert_one_line(outcome, code, rf"^surveykit: {pattern}")
    assert not (files.root / "nowhere").exists()  # a missing folder is not created


@pytest.mark.parametrize(("target", "code", "pattern"), _out_cases("--chart"))
def test_a_chart_that_cannot_be_written_is_refused_before_any_work(
    files: Files, target: str, code: int, pattern: str
) -> None:
    outcome = run(["results", "CSAT-SMS-2026", "--chart", files / target])
    assert_one_line(outcome, code, rf"^surveykit: {pattern}")


@pytest.mark.parametrize("command", list(OUT_COMMANDS))
def test_a_full_disk_is_reported_not_success(
    files: Files, served_sandbox: ServedSandbox, command: str
) -> None:
    env = {"SURVEYKIT_BASE_URL": served_sandbox.base_url, "SURVEYKIT_TOKEN": served_sandbox.token}
    outcome = run([*OUT_COMMANDS[command](files), "--out", "/dev/full"], env)
    assert_one_line(outcome, 1, r"--out /dev/full: cannot write it: No space left on device")
    assert "wrote" not in outcome.stdout


def test_a_chart_on_a_full_disk_is_reported_not_success(served_sandbox: ServedSandbox) -> None:
    env = {"SURVEYKIT_BASE_URL": served_sandbox.base_url, "SURVEYKIT_TOKEN": served_sandbox.token}
    outcome = run(["results", "CSAT-SMS-2026", "--chart", "/dev/full"], env)
    assert_one_line(outcome, 1, r"^surveykit: --chart /dev/full: cannot write it: No space left")
    assert "wrote the funnel chart" not in outcome.stdout


JOURNALS = [
    pytest.param("folder", r"--journal .*folder: is a folder; give a file name", id="folder"),
    pytest.param("people.csv", r"--journal .*people\.csv: not a surveykit journal", id="csv"),
    pytest.param(
        "other.sqlite", r"--journal .*other\.sqlite: not a surveykit journal", id="other-database"
    ),
    pytest.param(
        "nowhere/batch.journal", r"--journal .*: no folder .*nowhere", id="missing-folder"
    ),
]


@pytest.mark.parametrize(("journal", "pattern"), JOURNALS)
def test_a_journal_that_is_not_one_is_refused(files: Files, journal: str, pattern: str) -> None:
    outcome = run([*OUT_COMMANDS["send"](files), "--journal", files / journal])
    assert_one_line(outcome, 1, rf"^surveykit: {pattern}")
    with sqlite3.connect(files / "other.sqlite") as db:  # nothing was added to it
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
    assert tables == ["invoices"]


def test_a_journal_of_another_batch_is_one_line(files: Files, tmp_path: Path) -> None:
    journal = str(tmp_path / "batch.journal")
    first = run([*OUT_COMMANDS["send"](files), "--test", "--journal", journal])
    assert first.code == 0, first.stderr
    other = run(
        [
            "send",
            files / "people.csv",
            "--message",
            "Other text",
            "--source",
            "447700900999",
            "--destination",
            "Phone",
            "--test",
            "--journal",
            journal,
        ]
    )
    assert_one_line(other, 1, r"^surveykit: --journal .*belongs to another batch: templates")


@pytest.mark.parametrize(
    ("command", "tables", "pattern"),
    [
        pytest.param(["listen"], "events", "not a surveykit event store", id="listen"),
        pytest.param(
            ["sandbox", "serve", "--port", "0"], "records", "not a sandbox state file", id="serve"
        ),
    ],
)
def test_a_database_file_that_is_not_one_is_refused(
    files: Files, command: list[str], tables: str, pattern: str
) -> None:
    assert_one_line(run([*command, "--db", files / "folder"]), 1, r"--db .*folder: is a folder")
    assert_one_line(run([*command, "--db", files / "people.csv"]), 1, rf"--db .*: {pattern}")
    assert_one_line(run([*command, "--db", files / "other.sqlite"]), 1, rf"--db .*: {pattern}")


USAGE = [
    pytest.param(
        ["send", "people.csv", "--source", "1"],
        r"^surveykit send: Missing option "
        r"'--message' \(see 'surveykit send --help'\)$",
        id="send-missing-option",
    ),
    pytest.param(
        ["results", "--bogus"], r"^surveykit results: No such option: --bogus", id="unknown-option"
    ),
    pytest.param(["nonsense"], r"^surveykit: No such command 'nonsense'", id="unknown-command"),
    pytest.param(
        ["results", "--format", "XLS"],
        r"--format: 'XLS' is not one of CSV, PIPE",
        id="results-format",
    ),
    pytest.param(
        ["results", "--since", "yesterday"], r"Invalid value for '--since'", id="results-since"
    ),
    pytest.param(
        ["results", "--sort-order", "many"],
        r"Invalid value for '--sort-order'",
        id="results-sort-order",
    ),
    pytest.param(
        ["import", "R", "people.csv", "--map", "nonsense"],
        r"--map 'nonsense': expected COLUMN=property",
        id="import-map",
    ),
    pytest.param(
        ["import", "R", "people.csv", "--chunk-size", "0"],
        r"Invalid value for '--chunk-size'",
        id="import-chunk-size",
    ),
    pytest.param(["import", "R", "people.csv", "--region", "XX"], r"XX", id="import-region"),
    pytest.param(
        ["sandbox", "serve", "--port", "99999"],
        r"Invalid value for '--port'",
        id="sandbox-port",  # was an OverflowError traceback from bind()
    ),
    pytest.param(["listen", "--port", "-1"], r"Invalid value for '--port'", id="listen-port"),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi {name",
            "--source",
            "1",
            "--test",
            "--destination",
            "Phone",
        ],
        r"message: expected '\}' before end of string",
        id="send-template",
    ),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi",
            "--source",
            "1",
            "--channel",
            "pigeon",
            "--test",
            "--destination",
            "Phone",
        ],
        r"channel: 'pigeon' is not one of sms, whatsapp",
        id="send-channel",
    ),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi",
            "--source",
            "1",
            "--window",
            "someday",
            "--test",
            "--destination",
            "Phone",
        ],
        r"window 'someday': expected something like 'Mon-Fri 09:00-18:00'",
        id="send-window",
    ),
    pytest.param(
        ["send", "people.csv", "--message", "Hi", "--source", "1", "--test"],
        r"destination: no column 'mobileNumber'; columns are \['Phone', 'First Name'\]",
        id="send-destination",
    ),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi",
            "--source",
            "surveys",
            "--channel",
            "email",
            "--subject",
            "S",
            "--destination",
            "Phone",
            "--reply",
            "--test",
        ],
        r"^surveykit: reply: not for channel='email'",
        id="send-email-reply",
    ),
    pytest.param(
        ["lookup", "+44 7911 12"],
        r"^surveykit: NUMBER '\+44 7911 12' cannot be read as a phone number \(too short.*\); "
        r"expected E\.164 digits",
        id="lookup-number",
    ),
    pytest.param(
        ["lookup", "07911 123456"],
        r"^surveykit: NUMBER '07911 123456' cannot be read .*no region given.*--region",
        id="lookup-national-without-region",
    ),
    pytest.param(
        ["lookup", "07700 900123", "--region", "GB", "--strict"],
        r"^surveykit: NUMBER '07700 900123' cannot be read .*unverified, refused as strict=True",
        id="lookup-strict",
    ),
    pytest.param(
        ["lookup", "07911 123456", "--region", "XX"],
        r"^surveykit: --region: 'XX' is not a region phonenumbers knows",
        id="lookup-region",
    ),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi",
            "--source",
            "1",
            "--test",
            "--no-journal",
            "--timezone",
            "Mars/Olympus",
            "--window",
            "Mon-Fri 09:00-18:00",
        ],
        r"^surveykit: --timezone: 'Mars/Olympus' is neither 'auto', a column",
        id="send-timezone",
    ),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi",
            "--source",
            "1",
            "--test",
            "--no-journal",
            "--when",
            "2026-03-02T09:00",
        ],
        r"^surveykit: --when: a timezone-aware datetime is required",
        id="send-naive-when",
    ),
    pytest.param(
        [
            "send",
            "people.csv",
            "--message",
            "Hi",
            "--source",
            "1",
            "--test",
            "--no-journal",
            "--region",
            "XX",
        ],
        r"^surveykit: --region: 'XX' is not a region phonenumbers knows",
        id="send-region",
    ),
    pytest.param(
        ["import", "CSAT-SMS-2026", "people.csv", "--region", "QQ", "--dry-run"],
        r"^surveykit: --region: 'QQ' is not a region phonenumbers knows",
        id="import-region",
    ),
    pytest.param(
        ["listen", "--max-body", "0"], r"Invalid value for '--max-body'", id="listen-max-body"
    ),
    pytest.param(
        ["sandbox", "serve", "--generate", "nope"],
        r"--generate: expected REF:ROWS",
        id="serve-generate",
    ),
]


@pytest.mark.parametrize(("args", "pattern"), USAGE)
def test_usage_problems_exit_with_2_in_one_line(
    files: Files, args: list[str], pattern: str
) -> None:
    args = [files / arg if arg == "people.csv" else arg for arg in args]
    assert_one_line(run(args), 2, pattern)


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        pytest.param(
            ["keywords", "create", ""],
            r"^surveykit: keyword: '' is too short; "
            r"expected at least 1 character\.$",
            id="keyword-empty",
        ),
        pytest.param(
            ["shorten", "notaurl"],
            r"^surveykit: full_url: expected an http\(s\) URL",
            id="shorten-url",
        ),
    ],
)
def test_arguments_the_client_refuses_are_usage_errors(
    served_sandbox: ServedSandbox, args: list[str], pattern: str
) -> None:
    env = {"SURVEYKIT_BASE_URL": served_sandbox.base_url, "SURVEYKIT_TOKEN": served_sandbox.token}
    assert_one_line(run(args, env), 2, pattern)


@pytest.mark.parametrize(
    ("args", "writes"),
    [
        pytest.param(["keywords", "create", "CLIEMBED"], True, id="keywords-create"),
        pytest.param(
            [
                "send",
                "people.csv",
                "--message",
                "Hi",
                "--source",
                "447700900999",
                "--destination",
                "Phone",
            ],
            True,
            id="send",
        ),
        pytest.param(["import", "CSAT-SMS-2026", "people.csv"], True, id="import"),
        pytest.param(
            [
                "send",
                "people.csv",
                "--message",
                "Hi",
                "--source",
                "447700900999",
                "--destination",
                "Phone",
                "--preview",
            ],
            False,
            id="send-preview",
        ),
        pytest.param(["keywords", "list"], False, id="keywords-list"),
    ],
)
def test_writes_on_the_embedded_sandbox_say_nothing_persists(
    files: Files, tmp_path: Path, args: list[str], writes: bool
) -> None:
    args = [files / arg if arg == "people.csv" else arg for arg in args]
    if args[0] in ("send", "import"):
        args += ["--out", str(tmp_path / "outcome.csv")]
    outcome = run(args)
    assert outcome.code == 0, outcome.stderr
    notes = [line for line in outcome.stderr.splitlines() if "embedded sandbox" in line]
    assert len(notes) == 1
    assert ("nothing it writes persists after this command" in notes[0]) is writes


def test_send_and_import_name_their_outcome_files_alike(tmp_path: Path) -> None:
    source = tmp_path / "people.xlsx"
    pd.DataFrame({"Phone": ["447911123001", "447911123001"]}).to_excel(source, index=False)
    assert run(["import", "CSAT-SMS-2026", str(source)]).code == 0
    assert (
        run(
            [
                "send",
                str(source),
                "--message",
                "Hi",
                "--source",
                "447700900999",
                "--destination",
                "Phone",
                "--test",
            ]
        ).code
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "people.xlsx",
        "people.xlsx.import.csv",
        "people.xlsx.sent.csv",
    ]
    imported = pd.read_csv(tmp_path / "people.xlsx.import.csv")
    sent = pd.read_csv(tmp_path / "people.xlsx.sent.csv")
    for outcome in (imported, sent):
        assert outcome.columns[0] == "row" and outcome["row"].tolist() == [1, 2]
        assert not any(str(column).startswith("Unnamed") for column in outcome.columns)
    # The second row repeats the first's number: duplicate_of names row 1, as an integer.
    assert imported["duplicate_of"].isna().tolist() == [True, False]
    assert imported.loc[1, "duplicate_of"] == 1


def test_duplicate_of_is_a_nullable_integer_in_parquet(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    source.write_text("Phone\n447911123001\n447911123001\n447911123002\n", encoding="utf-8")
    out = tmp_path / "outcome.parquet"
    assert run(["import", "CSAT-SMS-2026", str(source), "--out", str(out)]).code == 0
    outcome = pd.read_parquet(out)
    assert str(outcome["duplicate_of"].dtype) == "Int64"
    assert outcome["duplicate_of"].tolist() == [pd.NA, 1, pd.NA]


def test_the_help_shows_readable_metavars() -> None:
    result = runner.invoke(app, ["send", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = result.stdout
    for metavar in ("FILE", "TEMPLATE", "SENDER", "COLUMN", "WINDOW", "PER_SECOND", "URL", "TOKEN"):
        assert re.search(rf"\s{metavar}\s", text), metavar
    for raw in ("<str>", "<list[str]>", "<path>]", "<float>", "<int>"):
        assert raw not in text.replace("<path>  File", ""), raw
    assert "--allow-insecure-http" in text


def test_listen_help_default_is_the_receivers() -> None:
    from surveykit.callbacks import DEFAULT_MAX_BODY
    from surveykit.cli._account import _LISTEN_MAX_BODY

    assert _LISTEN_MAX_BODY == DEFAULT_MAX_BODY


# A few cases through a real process: what a person sees on the terminal's stderr.
PROCESS_CASES = [
    pytest.param(
        ["results", "--base-url", "api.example.com"], 2, "expected an http(s) URL", id="no-scheme"
    ),
    pytest.param(["import", "CSAT-SMS-2026", "latin1.csv"], 1, "not UTF-8 text", id="latin-1"),
    pytest.param(
        ["send", "people.csv", "--source", "1"],
        2,
        "Missing option '--message'",
        id="missing-option",
    ),
    pytest.param(["results", "--out", "folder"], 1, "is a folder", id="out-folder"),
]


@pytest.mark.parametrize(("args", "code", "words"), PROCESS_CASES)
def test_in_a_real_process_stderr_is_one_line(
    files: Files, args: list[str], code: int, words: str
) -> None:
    args = [files / arg if arg in ("people.csv", "latin1.csv", "folder") else arg for arg in args]
    done = subprocess.run(
        [sys.executable, "-m", "surveykit.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, **NO_CONFIG},
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, done.stderr
    assert len(lines) == 1 and lines[0].startswith("surveykit") and words in lines[0], lines
    assert "Traceback" not in done.stdout + done.stderr


def test_a_wrong_token_in_a_real_process(served_sandbox: ServedSandbox) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "surveykit.cli", "webhooks"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **__import__("os").environ,
            "SURVEYKIT_BASE_URL": served_sandbox.base_url,
            "SURVEYKIT_TOKEN": "wrong",
        },
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "surveykit: the platform refused the token (401): check --token or SURVEYKIT_TOKEN"
    )
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_python_dash_m_runs_the_same_command_line() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "surveykit", "sandbox", "serve", "--port", "x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--port" in done.stderr
