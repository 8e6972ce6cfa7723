"""Nothing lost on a failed write: every file goes to a temporary name, then into place.

Downloads are cut part-way by a real uvicorn server; writes fail part-way by injection.
After each failure the old good file is byte for byte what it was, and no temporary file
is left beside it.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit._util.atomic import atomic_path, check_writable
from surveykit.cli import app as cli_app
from tests.helpers.files import mode, umask
from tests.helpers.http_servers import serve_asgi, serve_raw

TOKEN = "atomic-test-token"


def csv_rows(n: int, start: int = 0) -> bytes:
    lines = [f"{i},SURVEY,{i % 11}" for i in range(start, start + n)]
    return ("respondentId,surveyReference,q1\n" + "\n".join(lines) + "\n").encode()


def xml_rows(n: int) -> bytes:
    """Results as XML, which the reader parses as it arrives (CSV is read whole first)."""
    frame = pd.DataFrame(
        {
            "respondentId": [str(i) for i in range(n)],
            "surveyReference": "SURVEY",
            "q1": [i % 11 for i in range(n)],
        }
    )
    return b"".join(sk.write_results(frame, "XML"))


class ResultsApp:
    """GetResults answers in the mode the test sets: good, cut part-way, or counted."""

    def __init__(self) -> None:
        self.mode = "good"
        self.body = csv_rows(31)
        self.count: int | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        while (await receive()).get("more_body"):
            pass
        body = self.body
        headers = [(b"content-type", b"text/csv")]
        if self.count is not None:
            headers.append((b"x-total-count", str(self.count).encode()))
        if self.mode == "chunked":
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for start in range(0, len(body), 1000):
                chunk = body[start : start + 1000]
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if self.mode == "cut":  # half the promised body, then the connection is dropped
            half = body[: len(body) // 2]
            await send({"type": "http.response.body", "body": half, "more_body": True})
            raise ConnectionResetError("cut for the test")
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def results_server() -> Iterator[tuple[str, ResultsApp]]:
    results_app = ResultsApp()
    with serve_asgi(results_app) as url:
        yield url, results_app


@pytest.fixture
def server(results_server: tuple[str, ResultsApp]) -> Iterator[tuple[sk.Client, ResultsApp]]:
    url, results_app = results_server
    results_app.mode, results_app.body, results_app.count = "good", csv_rows(31), None
    with sk.Client(url, TOKEN, max_retries=0) as client:
        yield client, results_app


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


def test_a_cut_download_leaves_the_good_parquet_file_in_place(
    server: tuple[sk.Client, ResultsApp], tmp_path: Path
) -> None:
    client, results_app = server
    target = tmp_path / "results.parquet"
    assert client.surveys.results_to_parquet(target, chunksize=10) == 31
    good = target.read_bytes()
    # 100,000 rows of XML (10 MB), cut after half: row groups of 1,000 rows are written
    # as they arrive, so without the temporary file a valid partial file would be left.
    results_app.mode, results_app.body = "cut", xml_rows(100_000)
    with pytest.raises(sk.APIConnectionError, match="broke off"):
        client.surveys.results_to_parquet(target, format="XML", chunksize=1000)
    assert target.read_bytes() == good
    assert len(pd.read_parquet(target)) == 31
    assert leftovers(tmp_path) == []


def test_a_parse_failure_part_way_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "results.parquet"
    sk.results_to_parquet(csv_rows(31), target)
    good = target.read_bytes()
    # 20,000 good rows (written as row groups as they are parsed), then broken XML.
    good_part = xml_rows(20_000).removesuffix(b"</Results>\n")
    broken = good_part + b"<Result><respondentId>x</respondentId><q1>1</Result>\n"
    with pytest.raises(sk.ResultsParseError):
        sk.results_to_parquet(broken, target, format="XML", chunksize=1000)
    assert target.read_bytes() == good
    assert leftovers(tmp_path) == []


def test_a_row_count_header_that_disagrees_raises_and_keeps_the_file(
    server: tuple[sk.Client, ResultsApp], tmp_path: Path
) -> None:
    client, results_app = server
    target = tmp_path / "results.parquet"
    client.surveys.results_to_parquet(target)
    good = target.read_bytes()
    results_app.mode, results_app.body, results_app.count = "chunked", csv_rows(40), 45
    with pytest.raises(sk.APIConnectionError, match=r"40 rows arrived but .* says 45"):
        client.surveys.results_to_parquet(target)
    with pytest.raises(sk.APIConnectionError, match="X-Total-Count says 45"):
        client.surveys.results()
    assert target.read_bytes() == good and leftovers(tmp_path) == []
    results_app.count = 40
    frame = client.surveys.results()
    assert len(frame) == 40
    assert frame.attrs["complete"] is True and frame.attrs["reported_rows"] == 40


def test_framed_answers_are_marked_complete(server: tuple[sk.Client, ResultsApp]) -> None:
    client, results_app = server
    assert client.surveys.results().attrs["complete"] is True  # Content-Length
    results_app.mode = "chunked"
    frame = client.surveys.results()
    assert frame.attrs["complete"] is True and len(frame) == 31
    embedded = sk.Client.sandbox().surveys.results()  # in-process: nothing to lose
    assert embedded.attrs["complete"] is True


def test_an_unframed_answer_cut_on_a_row_boundary_says_it_was_not_checked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # 100 rows were promised (nothing says so); the server closes after 60, between rows.
    body = csv_rows(100)
    cut = body[: body.index(b"\n60,SURVEY") + 1]
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nConnection: close\r\n\r\n"
    with (
        serve_raw(lambda request: head + cut) as url,
        sk.Client(url, TOKEN) as client,
        caplog.at_level(logging.WARNING, logger="surveykit"),
    ):
        frame = client.surveys.results()
    assert len(frame) == 60
    assert frame.attrs["complete"] is None
    assert "could not be checked" in frame.attrs["completeness"]
    assert "could not be checked" in caplog.text
    # The same answer with a row count header is found short.
    counted = head.replace(b"Connection", b"X-Total-Count: 100\r\nConnection")
    with (
        serve_raw(lambda request: counted + cut) as url,
        sk.Client(url, TOKEN) as client,
        pytest.raises(sk.APIConnectionError, match="60 rows arrived"),
    ):
        client.surveys.results()


def test_atomic_path_replaces_only_on_success(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")

    def write_half_then_fail() -> None:
        with atomic_path(target) as temporary:
            assert temporary.parent == tmp_path and temporary.suffix == ".csv"
            temporary.write_text("half")
            raise RuntimeError("writer failed")

    with pytest.raises(RuntimeError, match="writer failed"):
        write_half_then_fail()
    assert target.read_text() == "old\n" and leftovers(tmp_path) == []
    with atomic_path(target) as temporary:
        temporary.write_text("new\n")
    assert target.read_text() == "new\n" and leftovers(tmp_path) == []
    # A new file gets the permissions open() would give it (the umask decides).
    fresh = tmp_path / "fresh.txt"
    with atomic_path(fresh) as temporary:
        temporary.write_text("x")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask


def test_check_writable_fails_before_anything_is_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(NotADirectoryError):
        check_writable(blocker / "out.csv")
    with pytest.raises(IsADirectoryError):
        check_writable(tmp_path)
    check_writable(tmp_path / "new" / "out.csv")
    assert leftovers(tmp_path / "new") == []


KILLED_WRITER = """
import os, signal, sys, time
from pathlib import Path
from surveykit._util.atomic import atomic_path

with atomic_path(sys.argv[1]) as temporary:
    temporary.write_bytes(b"x" * 100_000)  # a large export, part-way
    if sys.argv[2] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    print("writing", flush=True)
    sys.stdin.readline()  # a live writer, still at work
"""


def writer(tmp_path: Path, target: Path, how: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    return subprocess.Popen(
        [sys.executable, str(script), str(target), how],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )


def test_temporary_files_of_killed_writes_are_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "survey.sav"
    for _ in range(3):
        killed = writer(tmp_path, target, "kill")
        assert killed.wait(timeout=60) == -signal.SIGKILL
    # Each killed write left a file; each next write removed the one before it.
    assert len(leftovers(tmp_path)) == 1
    other = tmp_path / "other.sav"
    killed = writer(tmp_path, other, "kill")
    assert killed.wait(timeout=60) == -signal.SIGKILL
    with atomic_path(target) as temporary:
        temporary.write_bytes(b"whole")
    assert target.read_bytes() == b"whole"
    # Only this target's leftovers go; another target's wait for a write to that target.
    assert [name.startswith(".other.sav.") for name in leftovers(tmp_path)] == [True]


def test_a_live_writers_temporary_file_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "survey.sav"
    live = writer(tmp_path, target, "wait")
    try:
        assert live.stdout is not None and live.stdout.readline() == "writing\n"
        with atomic_path(target) as temporary:
            temporary.write_bytes(b"mine")
        assert len(leftovers(tmp_path)) == 1, "the live writer's file is still there"
        live.communicate("go\n", timeout=60)
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()
    assert live.returncode == 0
    assert target.read_bytes() == b"x" * 100_000 and leftovers(tmp_path) == []


def test_leftovers_named_before_the_writers_pid_was_kept_go_when_older_than_the_process(
    tmp_path: Path,
) -> None:
    target = tmp_path / "survey.sav"
    old = tmp_path / ".survey.sav.0a1b2c3d.tmp.sav"  # the earlier naming: no writer known
    recent = tmp_path / ".survey.sav.4e5f6a7b.tmp.sav"
    for path in (old, recent):
        path.write_bytes(b"x")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    with atomic_path(target) as temporary:
        temporary.write_bytes(b"whole")
    assert leftovers(tmp_path) == [recent.name]


# The command line.

runner = CliRunner()
ENV = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""}


def failing_to_csv(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make DataFrame.to_csv write half its text, then fail as a full disk does."""
    original = pd.DataFrame.to_csv

    def half_then_fail(self: pd.DataFrame, path: Any = None, *args: Any, **kwargs: Any) -> Any:
        text = original(self, None, *args, **kwargs)
        half = text[: len(text) // 2]
        if hasattr(path, "write"):  # the command line writes through an open stream
            path.write(half.encode() if "b" in getattr(path, "mode", "") else half)
        else:
            Path(path).write_text(half)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)


def test_results_out_failing_part_way_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results.csv"
    first = runner.invoke(cli_app, ["results", "--out", str(out)], env=ENV)
    assert first.exit_code == 0, first.output
    good = out.read_bytes()
    failing_to_csv(monkeypatch)
    again = runner.invoke(cli_app, ["results", "--out", str(out)], env=ENV)
    assert again.exit_code != 0
    assert out.read_bytes() == good and leftovers(tmp_path) == []


def people(tmp_path: Path, n: int = 3) -> Path:
    source = tmp_path / "people.csv"
    rows = "".join(f"4479111230{i:02d},P{i}\n" for i in range(n))
    source.write_text("mobileNumber,firstName\n" + rows, encoding="utf-8")
    return source


SEND = ["--message", "Hi {firstName}", "--source", "447700900999"]


def accepted(served: Any) -> int:
    """Messages to this module's numbers the served sandbox accepted."""
    answer = httpx.get(
        f"{served.base_url}/_sandbox/journal",
        params={"kind": "message"},
        headers={"Authorization": f"Basic {served.token}"},
    ).json()
    entries = answer["entries"] if isinstance(answer, dict) else answer
    return sum(e["destination"].startswith("4479111230") for e in entries)


def test_send_checks_out_before_sending(tmp_path: Path, served: Any) -> None:
    source = people(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = {"SURVEYKIT_BASE_URL": served.base_url, "SURVEYKIT_TOKEN": served.token}
    before = accepted(served)
    result = runner.invoke(
        cli_app, ["send", str(source), *SEND, "--out", str(blocker / "out.csv")], env=env
    )
    assert result.exit_code == 1
    assert f"--out {blocker / 'out.csv'}: {blocker} is not a folder" in result.output
    assert not (tmp_path / "people.csv.journal.sqlite").exists(), "nothing was started"
    assert accepted(served) == before, "nothing was sent"


def test_send_journals_by_default_so_a_rerun_sends_nothing(
    tmp_path: Path, served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = people(tmp_path, 4)
    env = {"SURVEYKIT_BASE_URL": served.base_url, "SURVEYKIT_TOKEN": served.token}
    before = accepted(served)
    # The first run sends, then fails to write its outcome file (a full disk).
    with monkeypatch.context() as patch:
        failing_to_csv(patch)
        first = runner.invoke(cli_app, ["send", str(source), *SEND], env=env)
    assert first.exit_code != 0
    journal = tmp_path / "people.csv.journal.sqlite"
    assert f"the journal {journal} has every row" in first.output
    assert accepted(served) - before == 4
    assert not (tmp_path / "people.csv.sent.csv").exists() and leftovers(tmp_path) == []
    # The re-run resends nothing and writes the outcome the first run lost.
    again = runner.invoke(cli_app, ["send", str(source), *SEND], env=env)
    assert again.exit_code == 0, again.output
    assert "sent_now=0" in again.output and accepted(served) - before == 4
    assert f"journaled every row in {journal}" in again.output
    outcome = pd.read_csv(tmp_path / "people.csv.sent.csv", dtype=str)
    assert outcome["outcome"].tolist() == ["sent"] * 4
    # --no-journal opts out: the same rows are sent again.
    third = runner.invoke(cli_app, ["send", str(source), *SEND, "--no-journal"], env=env)
    assert third.exit_code == 0, third.output
    assert "journaled" not in third.output and accepted(served) - before == 8


def test_a_writer_that_replaces_the_temporary_file_does_not_set_the_permissions(
    tmp_path: Path,
) -> None:
    # Some writers make their own file (mkstemp: 0o600) and rename it over the path they
    # were given; the target still gets the permissions the umask gives a new file.
    target = tmp_path / "out.bin"
    with umask(0o027), atomic_path(target) as temporary:
        handle, name = tempfile.mkstemp(dir=tmp_path)
        os.close(handle)
        os.replace(name, temporary)
    assert mode(target) == 0o640
    assert leftovers(tmp_path) == []
