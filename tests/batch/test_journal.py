"""A journal proves it is whole before anything is sent, or is refused in one line.

Each case damages a real journal file the way it happens to people: only the main file
copied after a crash (its write-ahead log left behind), a file cut to 0 bytes, a flipped
byte, an older copy of one page, a disk that fills up. A damaged journal raises
``JournalError`` naming the file and the problem, never a raw ``sqlite3`` error, and a
resumed batch never treats the rows it knew as new.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import surveykit as sk
from surveykit.batch import Journal
from surveykit.batch._journal import DONE, IN_FLIGHT

PAGE = 4096


def keys(n: int) -> list[str]:
    return [f'"row-{i:04d}"' for i in range(n)]


def fill(journal: Journal, n: int, start: int = 0) -> None:
    """Rows as a batch leaves them: in flight, then done (the last one still in flight)."""
    for i, key in enumerate(keys(start + n)[start:], start=start):
        journal.mark_in_flight(key, f"4479110{i:05d}", "Survey time", 1)
        if i < start + n - 1:
            journal.record(key, "sent", {"message_id": f"m{i}", "status": "Queued"}, 1)


KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from surveykit.batch import Journal

    journal = Journal(sys.argv[1])
    journal.check_fingerprint({"batch": "wave 1"})
    for i in range(int(sys.argv[2])):
        key = f'"row-{i:04d}"'
        journal.mark_in_flight(key, f"4479110{i:05d}", "Survey time", 1)
        journal.record(key, "sent", {"message_id": f"m{i}"}, 1)
    os.kill(os.getpid(), signal.SIGKILL)  # a crash: nothing closed, nothing checkpointed
    """
)


def killed_run(path: Path, n: int) -> None:
    """A real process journals ``n`` sent rows and is SIGKILLed."""
    script = path.parent / "killed.py"
    script.write_text(KILLED)
    done = subprocess.run([sys.executable, str(script), str(path), str(n)], timeout=60)
    assert done.returncode == -signal.SIGKILL


def test_only_the_main_file_copied_after_a_crash_still_knows_every_row(tmp_path: Path) -> None:
    crashed = tmp_path / "crashed" / "j.sqlite"
    crashed.parent.mkdir()
    killed_run(crashed, 129)
    copy = tmp_path / "copy" / "j.sqlite"
    copy.parent.mkdir()
    shutil.copy2(crashed, copy)  # what a person copies: the one file they know of
    journal = Journal(copy)
    try:
        journal.check_fingerprint({"batch": "wave 1"})
        rows = journal.load()
    finally:
        journal.close()
    assert len(rows) == 129 and {row.state for row in rows.values()} == {DONE}


def test_an_empty_file_is_refused_not_taken_for_a_new_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    path.write_bytes(b"")
    with pytest.raises(sk.JournalError, match=f"journal {path}: the file is empty"):
        Journal(path)
    assert path.read_bytes() == b"", "the evidence is left as it was"


@pytest.mark.parametrize(
    "content",
    [pytest.param(b"phone,name\n447911000001,Ana\n", id="text"),
     pytest.param(b"SQLite format 3\x00" + b"\x00" * 40, id="cut-header")],
)
def test_a_file_that_is_not_a_journal_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "j.sqlite"
    path.write_bytes(content)
    with pytest.raises(sk.JournalError, match=f"journal {path}: not a surveykit journal"):
        Journal(path)
    assert path.read_bytes() == content


def test_another_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    before = path.read_bytes()
    with pytest.raises(sk.JournalError, match=f"journal {path}: not a surveykit journal"):
        Journal(path)
    assert path.read_bytes() == before


def journal_bytes(tmp_path: Path, n: int) -> tuple[Path, bytearray]:
    path = tmp_path / "j.sqlite"
    journal = Journal(path)
    journal.check_fingerprint({"batch": "wave 1"})
    fill(journal, n)
    journal.close()
    return path, bytearray(path.read_bytes())


def table_offset(data: bytearray, key: str) -> int:
    """Where ``key`` is stored in the rows table (not in its index): the one followed by text."""
    found = [i for i in range(len(data)) if data.startswith(key.encode(), i)]
    for at in found:
        if b"Survey time" in data[at : at + 80]:
            return at
    raise AssertionError(f"{key} not found in the table")


def test_a_flipped_key_byte_is_found_not_resent(tmp_path: Path) -> None:
    path, data = journal_bytes(tmp_path, 20)
    at = table_offset(data, keys(20)[3]) + len('"row-00')
    data[at] ^= 0x08  # row-0003 reads as row-0;03: row 3 would look new, and be sent again
    path.write_bytes(bytes(data))
    with pytest.raises(sk.JournalError, match=f"journal {path}: damaged"):
        Journal(path)


def test_a_flipped_state_byte_is_found(tmp_path: Path) -> None:
    path, data = journal_bytes(tmp_path, 20)
    at = data.index(IN_FLIGHT.encode())
    data[at] ^= 0x20  # in_flight -> In_flight: the state of a row no run knows
    path.write_bytes(bytes(data))
    with pytest.raises(sk.JournalError, match=f"journal {path}: damaged.*In_flight"):
        Journal(path)


def test_an_older_copy_of_the_rows_pages_is_found_by_the_count_kept_apart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    journal = Journal(path)
    journal.check_fingerprint({"batch": "wave 1"})
    fill(journal, 5)
    journal.close()
    old = path.read_bytes()
    journal = Journal(path)
    fill(journal, 5, start=5)
    journal.close()
    new = bytearray(path.read_bytes())
    assert len(new) == len(old)
    # A lost write: every page that holds rows goes back to what it was before rows 5-9
    # (the table and its index agree, so SQLite's own check sees nothing wrong).
    for page in range(1, len(new) // PAGE):
        at = slice(page * PAGE, (page + 1) * PAGE)
        if b"row-" in new[at] and b"row_count" not in new[at]:
            new[at] = old[at]
    path.write_bytes(bytes(new))
    with pytest.raises(sk.JournalError, match=f"journal {path}: damaged.*10 rows.*5"):
        Journal(path)


def test_a_damaged_journal_is_a_journal_error_not_an_sqlite_error(tmp_path: Path) -> None:
    path, data = journal_bytes(tmp_path, 20)
    data[PAGE + 5 : PAGE + 40] = b"\xff" * 35  # the first table page's header, overwritten
    path.write_bytes(bytes(data))
    with pytest.raises(sk.JournalError, match=f"journal {path}: damaged") as caught:
        Journal(path)
    assert not isinstance(caught.value, sqlite3.Error)
    assert "delete" in str(caught.value) or "restore" in str(caught.value)


def test_journal_errors_are_one_family() -> None:
    assert issubclass(sk.JournalLockedError, sk.JournalError)
    assert issubclass(sk.JournalMismatchError, sk.JournalError)
    assert issubclass(sk.JournalError, sk.SurveykitError)
    assert issubclass(sk.JournalMismatchError, ValueError)


def test_a_write_that_fails_is_a_journal_error_naming_the_file(tmp_path: Path) -> None:
    # A full disk at the SQLite layer: the journal may not grow past its size now.
    path = tmp_path / "j.sqlite"
    journal = Journal(path)
    try:
        journal.check_fingerprint({"batch": "wave 1"})
        journal._db.execute("PRAGMA max_page_count=" + str(os.path.getsize(path) // PAGE))
        with pytest.raises(sk.JournalError, match=f"journal {path}: cannot write.*full"):
            fill(journal, 500)
    finally:
        journal.close()


def test_a_journal_of_the_earlier_version_is_resumed_and_leaves_its_log(tmp_path: Path) -> None:
    from surveykit.batch._journal import _SCHEMA

    path = tmp_path / "run" / "j.sqlite"
    path.parent.mkdir()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")  # as version 1 kept it, its rows in j.sqlite-wal
    db.executescript(_SCHEMA)
    db.execute("INSERT INTO meta VALUES ('fingerprint', '{}')")
    db.execute(
        "INSERT INTO rows (row_key, state, outcome, updated_at) VALUES ('\"a\"', ?, 'sent', 'x')",
        (DONE,),
    )
    # While that run still has it open, the file is not taken from under it.
    with pytest.raises(sk.JournalError, match=f"journal {path}: in use by another program"):
        Journal(path)
    copy = tmp_path / "copy" / "j.sqlite"  # as left by a crash: the file and its log
    copy.parent.mkdir()
    shutil.copy2(path, copy)
    shutil.copy2(f"{path}-wal", f"{copy}-wal")
    db.close()
    journal = Journal(copy)
    try:
        assert list(journal.load()) == ['"a"']
        assert journal._db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    finally:
        journal.close()
    assert not Path(f"{copy}-wal").exists()
    Journal(copy).close()  # the count it now keeps agrees


def test_two_runs_creating_one_journal_at_once_get_one_file(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    link = tmp_path / "link.sqlite"
    link.symlink_to(path)  # a symlink to a journal not made yet: the journal is made there
    script = tmp_path / "create.py"
    script.write_text(
        "import os, sys, time\nfrom surveykit.batch import Journal, JournalLockedError\n"
        "while not os.path.exists(sys.argv[2]):\n    time.sleep(0.005)\n"
        "try:\n    j = Journal(sys.argv[1])\nexcept JournalLockedError:\n    sys.exit(3)\n"
        "time.sleep(1)\nj.close()\n"
    )
    go = tmp_path / "go"
    runs = [
        subprocess.Popen([sys.executable, str(script), str(p), str(go)]) for p in (path, link)
    ]
    time.sleep(0.5)
    go.touch()  # both start at the same moment
    codes = sorted(run.wait(timeout=60) for run in runs)
    assert codes == [0, 3]
    assert path.is_file() and not path.is_symlink() and link.is_symlink()
    Journal(link).close()
