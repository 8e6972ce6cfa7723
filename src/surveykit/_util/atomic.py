"""Write a file whole or not at all: a temporary name beside the target, then a rename.

Every file surveykit writes goes through :func:`atomic_path`: the writer writes a fresh
file in the target's folder, and only when it returns is that file flushed to disk and
renamed over the target (``os.replace``, atomic on POSIX and Windows within one folder).
A writer that fails (an exception, a cut download, Ctrl-C) leaves the old target as it was
and its temporary file deleted; a process killed mid-write leaves at most a hidden
``.<name>.<random>.tmp<suffix>`` file, never a partial target.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

TEMP_MARKER: Final = ".tmp"
"""Temporary files are named ``.<target name>.<random hex>.tmp<target suffix>``."""


def temporary_name(target: Path) -> Path:
    """A fresh hidden name beside ``target`` that keeps its suffix (writers pick formats by it)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}{TEMP_MARKER}{target.suffix}")


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":  # pragma: no cover - folders cannot be opened on Windows
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], *, mkdir: bool = False) -> Iterator[Path]:
    """Give a temporary path to write; move it onto ``target`` only if the block succeeds.

    Args:
        target: the file to (re)place.
        mkdir: create the target's folder (and parents) first.

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
