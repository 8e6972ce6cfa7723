"""Files the tests check: the permissions a new file gets under a given umask."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def umask(mask: int) -> Iterator[None]:
    """Run the block under ``mask`` (this process's umask), then put the old one back."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    """The permission bits of ``path`` (``0o640``)."""
    return path.stat().st_mode & 0o777


FORMULA_ANSWERS: list[str] = [
    "=1+1",
    '=HYPERLINK("http://x","y")',
    "+1",
    "-2+3",
    "@SUM(A1)",
    "\t=1+1",
    "\r=1+1",
    "#N/A",
]
"""What respondents may write that a spreadsheet would run: formulas, a link, signs, an at,
a tab, a CR, an error code. Every writer must store them as these very strings."""
