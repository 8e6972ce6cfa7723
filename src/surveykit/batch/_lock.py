"""One run at a time per journal: an OS lock on the journal file itself, whatever its name.

The lock is ``flock(LOCK_EX)`` on the journal file (the inode, not a name beside it),
taken before SQLite opens it and held until it is closed. A lock belongs to the file, so a
symlink or a hard link to a held journal is refused like the journal's own name: a lock
derived from the path given let two runs through two names send the same rows twice. The
kernel drops the lock when the process ends in any way (SIGKILL included), so a dead run
never leaves the journal locked. Who holds it (pid, host, since) is recorded in the journal
itself, so a refused run names the holder whichever name each of them used.

Where the lock holds:

* one machine, any local file system: always. Linux keeps ``flock`` locks apart from the
  POSIX (``fcntl``) locks SQLite takes on the same file, so neither disturbs the other;
* several machines on NFS: Linux clients turn ``flock`` into an NFS byte-range lock on the
  whole file, kept by the server (NLM for NFSv3, the protocol itself for NFSv4), the same
  mechanism that SQLite's own locking relies on there. A crashed machine's lock is released
  when the server notices (the NFSv4 lease, typically 90 s). File systems without working
  locks (some FUSE and SMB mounts) give no protection: keep journals on a local disk there.
* Windows: ``msvcrt.locking`` on one byte at 1 TiB, far past any data and past the bytes
  SQLite locks (Windows locks are mandatory: a locked byte SQLite reads would fail).

Within one process a registry of held files (device, inode) refuses a second open before
the file is opened again: closing a second descriptor of a file drops every POSIX lock the
process holds on it, SQLite's included.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Final

from surveykit.errors import JournalLockedError

POLL_SECONDS: Final = 0.05
"""How often a waiting run tries the lock again."""

_WINDOWS_LOCK_OFFSET: Final = 1 << 40

_held: set[tuple[int, int]] = set()
_held_lock = threading.Lock()


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
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

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def file_key(path: str) -> tuple[int, int]:
    """The file's identity (device, inode), through any symlink: one key for every name."""
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino


class JournalLock:
    """The exclusive right to run a journal; :meth:`release` (or process exit) gives it up.

    Args:
        journal: the journal's path (the file must exist: it is the file that is locked).
        timeout: seconds to wait for another run to finish; 0 refuses at once, None waits
            as long as it takes.
        holder: reads who holds the journal, for the refusal's message.

    Raises:
        JournalLockedError: another run holds the journal (after ``timeout``).
        ValueError: a negative timeout.
    """

    _fd: int | None = None  # class defaults: __del__ runs even when __init__ raised
    _key: tuple[int, int] | None = None

    def __init__(
        self,
        journal: str,
        *,
        timeout: float | None = 0.0,
        holder: Callable[[], dict[str, object] | None] = lambda: None,
    ) -> None:
        if timeout is not None and timeout < 0:
            raise ValueError(f"journal timeout: expected seconds >= 0 or None, got {timeout!r}")
        self.journal = journal
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        fd: int | None = None
        try:
            while True:
                fd = self._take(fd)
                if self._key is not None:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    raise JournalLockedError(
                        journal, holder(), round(time.monotonic() - started, 1)
                    )
                time.sleep(POLL_SECONDS)
        except BaseException:
            if fd is not None and self._key is None:
                os.close(fd)
            raise
        self._fd = fd

    def _take(self, fd: int | None) -> int | None:
        """One try; sets ``_key`` when taken. Returns the descriptor to try again with."""
        with _held_lock:
            if file_key(self.journal) in _held:
                return fd  # held in this process: do not even open it (see the module doc)
            if fd is None:
                fd = os.open(self.journal, os.O_RDWR)
            stat = os.fstat(fd)
            key = (stat.st_dev, stat.st_ino)
            if key in _held or not _try_lock(fd):
                return fd
            _held.add(key)
            self._key = key
            return fd

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def __del__(self) -> None:
        # A batch built but never run (an async send never awaited) must not keep it.
        with contextlib.suppress(Exception):  # at interpreter exit the OS releases it
            self.release()

    def release(self) -> None:
        """Give the journal up to the next run."""
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
