"""One run at a time per journal: an OS lock on a sidecar file, ``<journal>.lock``.

The lock is ``flock(LOCK_EX)`` on ``<journal>.lock``, taken before the journal is opened
and held until it is closed. The kernel drops it when the process ends in any way (SIGKILL
included), so a dead run never leaves the journal locked. The file itself is never deleted
(deleting a lock file lets two runs lock two different files of the same name); it holds
the last holder's pid, host and start time, which a refused run quotes.

Where the lock holds:

* one machine, any local file system: always (``flock`` is per open file, so two journals
  opened on the same file in one process are refused too);
* several machines on NFS: Linux clients turn ``flock`` into an NFS byte-range lock, kept
  by the server (NLM for NFSv3, the protocol itself for NFSv4), the same mechanism that
  SQLite's own locking relies on there. A crashed machine's lock is released when the
  server notices (the NFSv4 lease, typically 90 s). File systems without working locks
  (some FUSE and SMB mounts) give no protection: keep journals on a local disk there.
* Windows: ``msvcrt.locking`` on the lock file's first byte, released by the OS too.

Within one process a registry of held files also refuses a second open, whatever the
file system does with locks taken twice by one process.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Final

from surveykit.errors import JournalLockedError

LOCK_SUFFIX: Final = ".lock"
"""The lock file is the journal's path with this appended (``j.sqlite.lock``)."""

POLL_SECONDS: Final = 0.05
"""How often a waiting run tries the lock again."""

_held: set[tuple[int, int]] = set()
_held_lock = threading.Lock()


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(path: str) -> dict[str, object] | None:
    try:
        with open(path, encoding="utf-8") as file:
            value = json.loads(file.read(4096) or "null")
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _me() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class JournalLock:
    """The exclusive right to run a journal; :meth:`release` (or process exit) gives it up.

    Args:
        journal: the journal's path (the lock file is beside it).
        timeout: seconds to wait for another run to finish; 0 refuses at once, None waits
            as long as it takes.

    Raises:
        JournalLockedError: another run holds the journal (after ``timeout``).
        ValueError: a negative timeout.
    """

    _fd: int | None = None  # class defaults: __del__ runs even when __init__ raised
    _key: tuple[int, int] | None = None

    def __init__(self, journal: str, *, timeout: float | None = 0.0) -> None:
        if timeout is not None and timeout < 0:
            raise ValueError(f"journal timeout: expected seconds >= 0 or None, got {timeout!r}")
        self.journal = journal
        self.path = journal + LOCK_SUFFIX
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            stat = os.fstat(fd)
            key = (stat.st_dev, stat.st_ino)
            while not self._take(fd, key):
                if deadline is not None and time.monotonic() >= deadline:
                    raise JournalLockedError(
                        journal,
                        _holder(self.path),
                        round(time.monotonic() - started, 1),
                        lock_file=self.path,
                    )
                time.sleep(POLL_SECONDS)
        except BaseException:
            os.close(fd)
            raise
        self._fd, self._key = fd, key
        record = json.dumps(_me()).encode()
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, record)

    @staticmethod
    def _take(fd: int, key: tuple[int, int]) -> bool:
        with _held_lock:
            if key in _held:
                return False
            if not _try_lock(fd):
                return False
            _held.add(key)
            return True

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def __del__(self) -> None:
        # A batch built but never run (an async send never awaited) must not keep it.
        with contextlib.suppress(Exception):  # at interpreter exit the OS releases it
            self.release()

    def release(self) -> None:
        """Give the journal up (the lock file stays, for the next run to lock)."""
        fd, key = self._fd, self._key
        if fd is None:
            return
        self._fd = self._key = None
        with _held_lock:
            try:
                _unlock(fd)
            finally:
                os.close(fd)
                _held.discard(key)
