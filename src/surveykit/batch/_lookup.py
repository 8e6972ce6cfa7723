"""List cleaning before a campaign: look every distinct number up once, cached in SQLite."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Awaitable, Iterator
from datetime import UTC, datetime, timedelta
from os import PathLike
from typing import TYPE_CHECKING, Any

import pandas as pd

from surveykit._util.dual import returns
from surveykit.batch._runner import RowOutcome
from surveykit.client import AsyncClient
from surveykit.client._flow import Flow, run_async, run_sync
from surveykit.errors import APIStatusError, SurveykitError
from surveykit.models import LookupResponse
from surveykit.respondents._numbers import normalize_phone_numbers
from surveykit.rules.numbers import region_for

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

LOOKUP_COLUMNS = [
    "number",
    "status",
    "carrier",
    "reachable",
    "number_type",
    "error",
    "cached",
    "number_check",
]


class LookupCache:
    """Successful lookups by number, with the time they were made."""

    def __init__(self, path: str | PathLike[str] | None) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            ":memory:" if path is None else str(path),
            check_same_thread=False,
            isolation_level=None,
        )
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS lookups (number TEXT PRIMARY KEY, response TEXT NOT NULL,"
            " looked_up_at TEXT NOT NULL)"
        )

    def get(self, number: str, *, newer_than: datetime) -> LookupResponse | None:
        """The cached answer for ``number`` if it was looked up after ``newer_than``."""
        with self._lock:
            row = self._db.execute(
                "SELECT response, looked_up_at FROM lookups WHERE number=?", (number,)
            ).fetchone()
        if row is None or datetime.fromisoformat(row[1]) <= newer_than:
            return None
        return LookupResponse.model_validate_json(row[0])

    def put(self, number: str, response: LookupResponse, when: datetime) -> None:
        """Remember an answer."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO lookups VALUES (?, ?, ?)",
                (number, response.model_dump_json(by_alias=True), when.isoformat()),
            )

    def close(self) -> None:
        """Close the file."""
        self._db.close()


def _lookup_flow(number: str, cache: LookupCache) -> Flow[RowOutcome]:
    def call(client: Any) -> Any:
        # "+": the digits are already E.164; a client's default region must not re-read them.
        return client.messages.lookup("+" + number)

    result = yield call
    if isinstance(result, LookupResponse):
        cache.put(number, result, datetime.now(UTC))
        return RowOutcome(number, "ok", {"response": result}, 1, sent_now=True)
    if isinstance(result, APIStatusError):
        return RowOutcome(number, "error", {"error": str(result)}, 1, sent_now=True)
    assert isinstance(result, SurveykitError)
    return RowOutcome(number, "error", {"error": str(result)}, 1, sent_now=True)


class _Lookups:
    def __init__(
        self,
        df: pd.DataFrame,
        column: str,
        cache: str | PathLike[str] | None,
        ttl: timedelta,
        concurrency: int,
        region: str | None,
        strict: bool,
    ) -> None:
        # Imported here: surveykit.respondents imports the batch runner.

        if column not in df.columns:
            raise ValueError(f"column: no column {column!r}; columns are {list(df.columns)}")
        if concurrency < 1:
            raise ValueError("concurrency: must be at least 1")
        self.df, self.column, self.concurrency = df, column, concurrency
        phones = normalize_phone_numbers(df[column], region, strict=strict)
        self.numbers: list[str | None] = [
            None if pd.isna(d) else str(d) for d in phones.digits.tolist()
        ]
        self.reasons: list[str | None] = phones.reason.tolist()
        self.checks: list[str | None] = phones.check.tolist()
        self.cache = LookupCache(cache)
        self.answers: dict[str, dict[str, Any]] = {}
        self.requests = 0
        oldest = datetime.now(UTC) - ttl
        for number in self._distinct():
            hit = self.cache.get(number, newer_than=oldest)
            if hit is not None:
                self.answers[number] = {"response": hit, "cached": True}

    def _distinct(self) -> list[str]:
        return list(dict.fromkeys(n for n in self.numbers if n is not None))

    def flows(self) -> Iterator[Flow[RowOutcome]]:
        for number in self._distinct():
            if number not in self.answers:
                self.requests += 1
                yield _lookup_flow(number, self.cache)

    def done(self, outcome: RowOutcome) -> None:
        self.answers[outcome.key] = {**outcome.fields, "cached": False}

    def frame(self) -> pd.DataFrame:
        records = []
        rows = zip(self.numbers, self.reasons, self.checks, strict=True)
        for number, reason, check in rows:
            answer = self.answers.get(number) if number is not None else None
            response: LookupResponse | None = answer.get("response") if answer else None
            records.append(
                {
                    "number": number,
                    "status": None
                    if response is None or response.status is None
                    else str(response.status),
                    "carrier": response.carrier if response else None,
                    "reachable": response.reachable if response else None,
                    "number_type": None
                    if response is None or response.number_type is None
                    else str(response.number_type),
                    "error": (answer or {}).get("error")
                    if number is not None
                    else (reason or "no number"),
                    "cached": bool((answer or {}).get("cached", False)),
                    "number_check": check,
                }
            )
        frame = pd.DataFrame.from_records(records, index=self.df.index, columns=LOOKUP_COLUMNS)
        frame["reachable"] = frame["reachable"].astype("boolean")
        frame.attrs["requests"] = self.requests
        return frame


@returns(pd.DataFrame)
def lookup_frame(
    client: Client | AsyncClient,
    df: pd.DataFrame,
    *,
    column: str = "mobileNumber",
    cache: str | PathLike[str] | None = None,
    ttl: timedelta = timedelta(days=7),
    concurrency: int = 8,
    region: str | None = None,
    strict: bool = False,
) -> pd.DataFrame | Awaitable[pd.DataFrame]:
    """Look up every distinct number of ``df[column]`` and return the answers per row.

    Numbers are read as the import reads them (:func:`surveykit.normalize_phone_numbers`):
    any punctuation, ``+`` or ``00`` international numbers, national numbers for
    ``region`` (default: the client's ``default_region``). Each distinct number is looked
    up once, concurrently, whatever its spellings; with ``cache`` (an SQLite file),
    answers younger than ``ttl`` are reused and a second run makes no request. Failed
    lookups are not cached.

    Args:
        client: a :class:`~surveykit.Client` or :class:`~surveykit.AsyncClient`.
        df: the list.
        column: its column of numbers.
        cache: an SQLite file of answers, or None.
        ttl: how long a cached answer is reused.
        concurrency: lookups in flight at once.
        region: how national numbers are read (``"GB"``); default the client's.
        strict: refuse numbers phonenumbers finds possible but not valid instead of
            looking them up (marked ``unverified`` otherwise).

    Returns:
        A DataFrame indexed like ``df``: ``number`` (E.164 digits, missing where the value
        cannot be read), status, carrier, reachable, number_type, ``error`` (the lookup's,
        or why the value is not a number, or ``no number``), cached, and
        ``number_check`` (``valid``, ``unverified``, or missing). ``frame.attrs
        ["requests"]`` counts the requests made. Pass it to ``send_batch(...,
        skip={"landline", "unreachable"}, lookups=...)`` to leave such numbers out.

    Raises:
        ValidationError: ``region`` is not a region phonenumbers knows.
    """
    reading = region_for(region, getattr(client, "default_region", None))
    job = _Lookups(df, column, cache, ttl, concurrency, reading, strict)

    if isinstance(client, AsyncClient):
        return _lookup_async(client, job)
    try:
        run_sync(client, job.flows(), concurrency=job.concurrency, on_done=job.done)
        return job.frame()
    finally:
        job.cache.close()


async def _lookup_async(client: AsyncClient, job: _Lookups) -> pd.DataFrame:
    try:
        await run_async(client, job.flows(), concurrency=job.concurrency, on_done=job.done)
        return job.frame()
    finally:
        job.cache.close()
