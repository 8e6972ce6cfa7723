"""Write a file whole or not at all: a temporary name beside the target, then a rename.

Every file surveykit writes goes through :func:`atomic_path`: the writer writes a fresh
file in the target's folder, and only when it returns is that file flushed to disk and
renamed over the target (``os.replace``, atomic on POSIX and Windows within one folder).
A writer that fails (an exception, a cut download, Ctrl-C) leaves the old target as it was
and its temporary file deleted; a process killed mid-write leaves at most a hidden
``.<name>.sk<host>-<pid>-<random>.tmp<suffix>`` file, never a partial target. The next
write to the same target removes such leftovers: those of a writer that is no longer
running on this machine, and those older than the current process that do not say whose
they are (another machine's, or named before the writer's pid was kept); a live writer's
file is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

TEMP_MARKER: Final = ".tmp"
"""Temporary files are named ``.<target name>.sk<host>-<pid>-<random hex>.tmp<target suffix>``."""

_STARTED: Final = time.time()
"""When this process loaded the module: leftovers older than this are not another run's."""

_HOST: Final = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def temporary_name(target: Path) -> Path:
    """A fresh hidden name beside ``target`` that keeps its suffix (writers pick formats by it).

    The name says whose it is (this machine, this process), so a later write to the same
    target can tell a dead writer's leftover from a live writer's file.
    """
    token = f"sk{_HOST}-{os.getpid()}-{secrets.token_hex(4)}"
    return target.with_name(f".{target.name}.{token}{TEMP_MARKER}{target.suffix}")


def _alive(pid: int) -> bool:
    if os.name != "posix":  # pragma: no cover - on Windows, os.kill(pid, 0) ends the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process, or a platform that cannot tell: keep it
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the leftovers of killed writes to ``target``; return what was removed.

    A leftover of this machine is removed when its writer's pid is no longer running; one
    that does not say (another machine's, or the earlier ``.<name>.<hex>.tmp<suffix>``
    naming) when it is older than this process. Errors are ignored: a leftover that cannot
    be removed now is tried again on the next write.
    """
    pattern = re.compile(
        rf"\.{re.escape(target.name)}\.(?:sk(?P<host>[0-9a-f]{{6}})-(?P<pid>\d+)-)?[0-9a-f]{{8}}"
        rf"{re.escape(TEMP_MARKER)}{re.escape(target.suffix)}"
    )
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            match = pattern.fullmatch(entry.name)
            if match is None:
                continue
            with contextlib.suppress(OSError):
                if match["host"] == _HOST and os.name == "posix":
                    stale = not _alive(int(match["pid"]))
                else:
                    stale = entry.stat(follow_symlinks=False).st_mtime < _STARTED
                if stale and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":  # pragma: no cover - folders cannot be opened on Windows
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _link_into_place(temporary: Path, final: Path) -> None:
    try:
        os.link(temporary, final)  # fails if the target exists, unlike a rename
    except FileExistsError:
        raise
    except OSError:
        # No hard links here (FAT, some network mounts): a rename after a look, which two
        # writers racing to the very same moment could both pass.
        if os.path.lexists(final):
            raise FileExistsError(17, "File exists", str(final)) from None
        os.replace(temporary, final)
        return
    os.unlink(temporary)


@contextlib.contextmanager
def atomic_path(
    target: str | os.PathLike[str], *, mkdir: bool = False, exclusive: bool = False
) -> Iterator[Path]:
    """Give a temporary path to write; move it onto ``target`` only if the block succeeds.

    Leftovers of earlier killed writes to the same target are removed first
    (:func:`remove_stale_temporaries`).

    Args:
        target: the file to (re)place.
        mkdir: create the target's folder (and parents) first.
        exclusive: never replace an existing target: the finished file is linked into
            place, and ``FileExistsError`` is raised (the temporary file deleted) if a file
            is there by then.

    Yields:
        The temporary path: write the whole file there (it is created empty, with the
        permissions a new file would get: ``0o666`` less the umask). The target gets
        those permissions even if the writer replaced the file with one of its own.

    Example:
        >>> with atomic_path("out.parquet") as tmp:  # doctest: +SKIP
        ...     frame.to_parquet(tmp)
    """
    final = Path(target)
    if mkdir:
        final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(final)
    temporary = temporary_name(final)
    # O_EXCL: never reuse another writer's file; 0o666 so the umask decides, as for open().
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        permissions = stat.S_IMODE(os.fstat(fd).st_mode)  # 0o666 & ~umask
    finally:
        os.close(fd)
    try:
        yield temporary
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
            replaced = stat.S_IMODE(os.fstat(written.fileno()).st_mode) != permissions
        if replaced:  # the writer made a file of its own (mkstemp: 0o600): the umask's
            os.chmod(temporary, permissions)
        if exclusive:
            _link_into_place(temporary, final)
        else:
            os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_folder(final.parent)


def check_writable(target: str | os.PathLike[str]) -> None:
    """Raise ``OSError`` now if ``target`` could not be written later (folder, permissions).

    Creates and removes a temporary file beside it, exactly as :func:`atomic_path` will;
    the folder is created if missing. The target itself is not touched.
    """
    final = Path(target)
    if final.is_dir():
        raise IsADirectoryError(21, "is a folder, not a file", str(final))
    for folder in (final.parent, *final.parent.parents):
        if folder.exists():
            if not folder.is_dir():
                raise NotADirectoryError(20, f"{folder} is a file, not a folder", str(final))
            break
    final.parent.mkdir(parents=True, exist_ok=True)
    probe = temporary_name(final)
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    os.unlink(probe)
