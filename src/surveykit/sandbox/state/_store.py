"""Where the sandbox keeps its state: in memory only, or also in a SQLite file.

The state calls :meth:`Store.put` and :meth:`Store.delete` as records change and
:meth:`Store.commit` at the end of each operation; a SQLite store writes the pending
changes in one transaction, so a restart with the same file finds everything again.
Callers hold the state's lock, so one connection is shared between threads.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any


class MemoryStore:
    """Keeps nothing: the state lives in memory and ends with the process."""

    persistent = False

    def load(self) -> dict[str, dict[str, dict[str, Any]]] | None:
        """Nothing was saved."""
        return None

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        """Nothing to save."""

    def delete(self, kind: str, key: str) -> None:
        """Nothing to delete."""

    def clear(self) -> None:
        """Nothing to clear."""

    def commit(self) -> None:
        """Nothing to write."""

    def close(self) -> None:
        """Nothing to close."""


class SQLiteStore:
    """Keeps every record as JSON in one SQLite table, keyed by kind and key."""

    persistent = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS records ("
            " kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
            " PRIMARY KEY (kind, key))"
        )
        self._pending: dict[tuple[str, str], str | None] = {}
        self._clear = False

    def load(self) -> dict[str, dict[str, dict[str, Any]]] | None:
        """Every saved record by kind and key, or None for a new file."""
        rows = self._db.execute("SELECT kind, key, value FROM records").fetchall()
        if not rows:
            return None
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for kind, key, value in rows:
            out.setdefault(kind, {})[key] = json.loads(value)
        return out

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        """Save a record at the next commit."""
        self._pending[(kind, key)] = json.dumps(value, ensure_ascii=False)

    def delete(self, kind: str, key: str) -> None:
        """Delete a record at the next commit."""
        self._pending[(kind, key)] = None

    def clear(self) -> None:
        """Delete everything at the next commit (before the pending writes)."""
        self._pending.clear()
        self._clear = True

    def commit(self) -> None:
        """Write the pending changes in one transaction."""
        if not self._pending and not self._clear:
            return
        pending, self._pending = self._pending, {}
        clear, self._clear = self._clear, False
        self._db.execute("BEGIN")
        try:
            if clear:
                self._db.execute("DELETE FROM records")
            self._db.executemany(
                "INSERT OR REPLACE INTO records (kind, key, value) VALUES (?, ?, ?)",
                [(k, key, v) for (k, key), v in pending.items() if v is not None],
            )
            self._db.executemany(
                "DELETE FROM records WHERE kind = ? AND key = ?",
                [(k, key) for (k, key), v in pending.items() if v is None],
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        """Write what is pending and close the file."""
        self.commit()
        self._db.close()


Store = MemoryStore | SQLiteStore
