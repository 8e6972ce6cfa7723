"""A journal is held by one run at a time, across processes; a killed holder releases it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit.batch import Journal, JournalLockedError
from surveykit.cli import app as cli_app
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    import pandas as pd
    import surveykit as sk
    from surveykit.batch import JournalLockedError

    base_url, token, journal, prefix, n, go = sys.argv[1:7]
    timeout = None if sys.argv[7] == "none" else float(sys.argv[7])
    df = pd.DataFrame({"mobileNumber": [f"{prefix}{i:05d}" for i in range(int(n))]})
    client = sk.Client(base_url, token)
    while not os.path.exists(go):  # both processes start sending at the same moment
        time.sleep(0.005)
    try:
        result = sk.send_batch(client, df, message="Survey time", source="447700900999",
                               journal=journal, journal_timeout=timeout, concurrency=4,
                               progress=False)
    except JournalLockedError as exc:
        print(json.dumps({"locked": str(exc)}), flush=True)
        sys.exit(3)
    print(json.dumps({"sent_now": result.sent_now,
                      "outcomes": result.summary.to_dict()}), flush=True)
    """
)


@pytest.fixture(scope="module")
def served() -> Iterator[ServedSandbox]:
    with serve_sandbox() as server:
        # Every message takes 20 ms, so a run holds its journal long enough to be met.
        httpx.post(
            f"{server.base_url}/_sandbox/faults",
            json={"route": "/v3.2/Message", "latency": 0.02},
            headers={"Authorization": f"Basic {server.token}"},
        ).raise_for_status()
        yield server


def accepted(served: ServedSandbox, prefix: str) -> Counter[str]:
    """Messages the served sandbox accepted, per destination starting with ``prefix``."""
    answer = httpx.get(
        f"{served.base_url}/_sandbox/journal",
        params={"kind": "message"},
        headers={"Authorization": f"Basic {served.token}"},
    ).json()
    entries: list[dict[str, Any]] = answer["entries"] if isinstance(answer, dict) else answer
    return Counter(e["destination"] for e in entries if e["destination"].startswith(prefix))


def start(
    served: ServedSandbox, tmp_path: Path, journal: Path, prefix: str, n: int, timeout: str
) -> subprocess.Popen[str]:
    script = tmp_path / "batch.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [
            sys.executable,
            str(script),
            served.base_url,
            served.token,
            str(journal),
            prefix,
            str(n),
            str(tmp_path / "go"),
            timeout,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, out, err


def test_two_processes_resuming_one_journal_send_each_row_once(
    served: ServedSandbox, tmp_path: Path
) -> None:
    prefix, n = "4479113", 120
    journal = tmp_path / "campaign.sqlite"
    # An earlier run sent the first 20 rows; two runs then resume it at the same moment.
    first = pd.DataFrame({"mobileNumber": [f"{prefix}{i:05d}" for i in range(20)]})
    sk.send_batch(
        sk.Client(served.base_url, served.token),
        first,
        message="Survey time",
        source="447700900999",
        journal=journal,
        progress=False,
    )
    runs = [start(served, tmp_path, journal, prefix, n, "none") for _ in range(2)]
    (tmp_path / "go").touch()
    results = [finish(p) for p in runs]
    assert [code for code, _, _ in results] == [0, 0], [err for _, _, err in results]
    got = accepted(served, prefix)
    assert len(got) == n and max(got.values()) == 1, "every row sent once, none twice"
    # One run sent the 100 rows left; the other waited for it and then sent nothing.
    sent_now = sorted(int(out.split('"sent_now": ')[1].split(",")[0]) for _, out, _ in results)
    assert sent_now == [0, n - 20]


def test_a_held_journal_is_refused_naming_the_holder(served: ServedSandbox, tmp_path: Path) -> None:
    journal = tmp_path / "campaign.sqlite"
    held = Journal(journal)  # this test process holds it
    try:
        (tmp_path / "go").touch()
        code, out, err = finish(start(served, tmp_path, journal, "4479114", 5, "0"))
        assert code == 3, err
        assert f"journal {journal} is in use by process {os.getpid()}" in out
        assert f"on host {socket.gethostname()}" in out
        assert not accepted(served, "4479114"), "the refused run sent nothing"
        # In the same process too: a second open is refused, the first is unaffected.
        with pytest.raises(JournalLockedError, match=f"process {os.getpid()}"):
            Journal(journal)
        assert held.load() == {}
    finally:
        held.close()
    Journal(journal).close()  # closing gave it up


def test_waiting_gives_up_after_the_timeout(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    held = Journal(journal)
    try:
        with pytest.raises(JournalLockedError, match=r"after waiting 0\.2 s"):
            Journal(journal, timeout=0.2)
        with pytest.raises(ValueError, match="journal timeout"):
            Journal(journal, timeout=-1)
    finally:
        held.close()


HOLDER = textwrap.dedent(
    """
    import sys, time
    from surveykit.batch import Journal

    journal = Journal(sys.argv[1])
    print("held", flush=True)
    time.sleep(60)
    """
)


def test_a_sigkilled_holder_releases_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    process = subprocess.Popen(
        [sys.executable, str(script), str(journal)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        with pytest.raises(JournalLockedError, match=f"process {process.pid} "):
            Journal(journal)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    Journal(journal).close()  # no wait: the kernel dropped the dead holder's lock


# The command line.

runner = CliRunner()


def test_send_refuses_a_journal_held_by_another_run(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    source.write_text("mobileNumber\n447911600001\n", encoding="utf-8")
    journal = tmp_path / "people.csv.journal.sqlite"
    held = Journal(journal)
    try:
        result = runner.invoke(
            cli_app,
            ["send", str(source), "--message", "Hi", "--source", "447700900999"],
            env={"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""},
        )
    finally:
        held.close()
    assert result.exit_code == 1
    assert f"journal {journal} is in use by process {os.getpid()}" in result.output
    assert not (tmp_path / "people.sent.csv").exists()


def test_send_journal_options_conflict_and_a_changed_message_names_the_way_out(
    tmp_path: Path,
) -> None:
    source = tmp_path / "people.csv"
    source.write_text("mobileNumber\n447911600002\n", encoding="utf-8")
    env = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""}
    base = ["send", str(source), "--source", "447700900999"]
    both = runner.invoke(
        cli_app, [*base, "--message", "Hi", "--journal", "j.sqlite", "--no-journal"], env=env
    )
    assert both.exit_code == 2 and "choose one" in both.output
    assert runner.invoke(cli_app, [*base, "--message", "Hi"], env=env).exit_code == 0
    changed = runner.invoke(cli_app, [*base, "--message", "Hello"], env=env)
    assert changed.exit_code == 1
    assert "belongs to another batch" in changed.output and "--no-journal" in changed.output


def test_a_lock_dropped_without_release_frees_the_journal(tmp_path: Path) -> None:
    import gc

    from surveykit.batch._lock import JournalLock

    journal = str(tmp_path / "j.sqlite")
    Path(journal).touch()  # the lock is on the journal file itself
    lock = JournalLock(journal)
    with pytest.raises(JournalLockedError):
        JournalLock(journal)
    del lock
    gc.collect()
    JournalLock(journal).release()


# Every name of one file is one journal.


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_two_runs_through_two_names_of_one_journal_send_each_row_once(
    served: ServedSandbox, tmp_path: Path, link: str
) -> None:
    prefix, n = "4479115" if link == "symlink" else "4479116", 120
    journal = tmp_path / "campaign.sqlite"
    other = tmp_path / "elsewhere" / "same.sqlite"
    other.parent.mkdir()
    first = pd.DataFrame({"mobileNumber": [f"{prefix}{i:05d}" for i in range(20)]})
    sk.send_batch(
        sk.Client(served.base_url, served.token),
        first,
        message="Survey time",
        source="447700900999",
        journal=journal,
        progress=False,
    )
    if link == "symlink":
        other.symlink_to(journal)
    else:
        os.link(journal, other)
    runs = [start(served, tmp_path, path, prefix, n, "0") for path in (journal, other)]
    (tmp_path / "go").touch()
    results = [finish(p) for p in runs]
    got = accepted(served, prefix)
    assert len(got) == n and max(got.values()) == 1, "every row sent once, none twice"
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 3], [err for _, _, err in results]
    names = (journal, other)
    refused = [(out, name) for (code, out, _), name in zip(results, names, strict=True) if code]
    assert f"journal {refused[0][1]} is in use by process" in refused[0][0]


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_another_name_of_a_held_journal_is_refused_in_this_process(
    tmp_path: Path, link: str
) -> None:
    journal = tmp_path / "j.sqlite"
    other = tmp_path / "other.sqlite"
    held = Journal(journal)
    try:
        if link == "symlink":
            other.symlink_to(journal)
        else:
            os.link(journal, other)
        with pytest.raises(JournalLockedError, match=f"journal {other} is in use by process"):
            Journal(other)
        assert held.load() == {}
    finally:
        held.close()
    Journal(other).close()


KILLED_BATCH = textwrap.dedent(
    """
    import os, signal, sys
    import pandas as pd
    import surveykit as sk

    base_url, token, journal, prefix, n, stop = sys.argv[1:7]
    df = pd.DataFrame({"mobileNumber": [f"{prefix}{i:05d}" for i in range(int(n))]})

    def progress(counts):
        if sum(counts.values()) >= int(stop):  # a crash part-way: nothing closed
            os.kill(os.getpid(), signal.SIGKILL)

    sk.send_batch(sk.Client(base_url, token), df, message="Survey time",
                  source="447700900999", journal=journal, concurrency=1, progress=progress)
    """
)


def test_a_crashed_run_resumed_from_its_main_file_alone_resends_nothing(
    served: ServedSandbox, tmp_path: Path
) -> None:
    prefix, n = "4479117", 60
    journal = tmp_path / "crashed" / "j.sqlite"
    journal.parent.mkdir()
    script = tmp_path / "killed.py"
    script.write_text(KILLED_BATCH)
    args = [served.base_url, served.token, str(journal), prefix, str(n), "40"]
    run = subprocess.run([sys.executable, str(script), *args], timeout=60, capture_output=True)
    assert run.returncode == -signal.SIGKILL, run.stderr
    sent_before = accepted(served, prefix)
    assert 40 <= len(sent_before) < n
    copy = tmp_path / "copied" / "j.sqlite"
    copy.parent.mkdir()
    shutil.copy2(journal, copy)  # what a person copies after a crash: the file they know of
    df = pd.DataFrame({"mobileNumber": [f"{prefix}{i:05d}" for i in range(n)]})
    sk.send_batch(
        sk.Client(served.base_url, served.token),
        df,
        message="Survey time",
        source="447700900999",
        journal=copy,
        progress=False,
    )
    got = accepted(served, prefix)
    assert len(got) == n and max(got.values()) == 1, "every row sent once, none twice"


def test_send_refuses_an_empty_journal_file_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    source.write_text(
        "mobileNumber\n" + "".join(f"4479116{i:05d}\n" for i in range(40)), encoding="utf-8"
    )
    journal = tmp_path / "j.sqlite"
    journal.write_bytes(b"")  # a journal cut to nothing: it knew rows, it knows none now
    result = runner.invoke(
        cli_app,
        ["send", str(source), "--message", "Hi", "--source", "447700900999",
         "--journal", str(journal)],
        env={"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""},
    )
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"journal {journal}: the file is empty" in lines[0]
    assert journal.read_bytes() == b""
    assert not (tmp_path / "people.csv.sent.csv").exists()


FULL_DISK = textwrap.dedent(
    """
    import resource, runpy, signal, sys
    # The disk fills up: no file may grow past this size (EFBIG instead of SIGXFSZ).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv.pop(1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    sys.argv[0] = "surveykit"
    runpy.run_module("surveykit.cli", run_name="__main__")
    """
)


def test_send_on_a_full_disk_stops_in_one_line_and_resumes_without_resending(
    served: ServedSandbox, tmp_path: Path
) -> None:
    prefix, n = "4479118", 300
    source = tmp_path / "people.csv"
    source.write_text(
        "mobileNumber\n" + "".join(f"{prefix}{i:05d}\n" for i in range(n)), encoding="utf-8"
    )
    journal = tmp_path / "j.sqlite"
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK)
    command = ["send", str(source), "--message", "Hi", "--source", "447700900999",
               "--journal", str(journal), "--base-url", served.base_url,
               "--token", served.token]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    full = subprocess.run(
        [sys.executable, str(script), str(24 * 1024), *command],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr
    line = full.stderr.strip().splitlines()[-1]
    assert line.startswith(f"surveykit: journal {journal}: cannot write"), full.stderr
    assert 0 < len(accepted(served, prefix)) < n
    again = subprocess.run(
        [sys.executable, "-m", "surveykit.cli", *command],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert again.returncode == 0, again.stderr
    got = accepted(served, prefix)
    assert max(got.values()) == 1, "nothing sent twice"
    assert len(got) >= n - 8  # rows in flight when the disk filled are unknown, not resent
