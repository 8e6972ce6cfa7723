"""Incremental results: a local Parquet store per survey, refreshed with only what is new.

The store is a folder; each survey has ``<reference>.parquet`` (the latest row of every
respondent) and ``<reference>.json`` (its watermark). A sync asks the platform for results
``since`` the watermark minus an overlap, de-duplicates by respondent (the newest row wins)
and replaces the Parquet file atomically, so a failed download or a crash leaves the store
as it was. The watermark is the latest ``invited``/``started``/``completed`` time seen; the
platform's ``since`` is inclusive and the overlap covers rows whose change carries no newer
timestamp of its own.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from surveykit._util.atomic import atomic_path
from surveykit._util.dual import returns

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

TIME_COLUMNS = ("invited", "started", "completed")


@dataclass(frozen=True)
class SyncReport:
    """What one :func:`sync_results` call did.

    Attributes:
        survey: the survey reference.
        fetched: rows the platform returned.
        added: respondents new to the store.
        updated: respondents whose row changed.
        total: respondents in the store now.
        watermark: the latest time seen, asked for next time (None before any data).
        path: the Parquet file.
    """

    survey: str
    fetched: int
    added: int
    updated: int
    total: int
    watermark: datetime | None
    path: Path

    def __str__(self) -> str:
        return (
            f"{self.survey}: fetched {self.fetched}, added {self.added}, updated "
            f"{self.updated}, {self.total} in the store (watermark {self.watermark})"
        )


def _name(reference: str) -> str:
    return "_all" if reference == "*" else re.sub(r"[^A-Za-z0-9._-]", "_", reference)


def _keys(frame: pd.DataFrame, reference: str) -> list[str]:
    if "respondentId" not in frame.columns:
        raise ValueError("results have no respondentId column to de-duplicate by")
    if reference == "*" and "surveyReference" in frame.columns:
        return ["surveyReference", "respondentId"]
    return ["respondentId"]


def _watermark(frame: pd.DataFrame, previous: datetime | None) -> datetime | None:
    latest = [previous] if previous is not None else []
    for column in TIME_COLUMNS:
        if column in frame.columns:
            values = pd.to_datetime(frame[column], utc=True, errors="coerce").dropna()
            if len(values):
                latest.append(values.max().to_pydatetime())
    return max(latest) if latest else None


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    # Categories from different downloads do not concatenate; keep their values as text.
    return frame.astype(
        {c: "string" for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    )


class _Sync:
    def __init__(
        self, reference: str, store: str | os.PathLike[str], overlap: timedelta, full: bool
    ) -> None:
        self.reference = reference
        self.folder = Path(store)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.data = self.folder / f"{_name(reference)}.parquet"
        self.meta = self.folder / f"{_name(reference)}.json"
        self.watermark: datetime | None = None
        if self.meta.exists() and self.data.exists() and not full:
            saved = json.loads(self.meta.read_text(encoding="utf-8"))
            if saved.get("survey") != reference:
                raise ValueError(f"store {self.meta} belongs to survey {saved.get('survey')!r}")
            if saved.get("watermark"):
                self.watermark = datetime.fromisoformat(saved["watermark"])
        self.since = self.watermark - overlap if self.watermark is not None else None

    def merge(self, fetched: pd.DataFrame) -> SyncReport:
        old = pd.read_parquet(self.data) if self.data.exists() and self.since is not None else None
        new = _plain(fetched)
        keys = _keys(new, self.reference) if len(new.columns) else ["respondentId"]
        added = updated = 0
        if old is None:
            merged = new.drop_duplicates(subset=keys, keep="last")
            added = len(merged)
        elif len(new):
            old = _plain(old)
            index_old = old.set_index(keys)
            index_new = new.drop_duplicates(subset=keys, keep="last").set_index(keys)
            seen = index_new.index.isin(index_old.index)
            added = int((~seen).sum())
            common = index_new.index[seen]
            if len(common):
                before = index_old.loc[common, index_new.columns].astype("string")
                after = index_new.loc[common].astype("string")
                changed = ~(before.fillna("\0").eq(after.fillna("\0")).all(axis=1))
                updated = int(changed.sum())
            merged = pd.concat([index_old[~index_old.index.isin(index_new.index)], index_new])
            merged = merged.reset_index()
        else:
            merged = old
        watermark = _watermark(fetched, self.watermark)
        with atomic_path(self.data) as temporary:
            merged.to_parquet(temporary, index=False)
        with atomic_path(self.meta) as temporary:
            temporary.write_text(
                json.dumps(
                    {
                        "survey": self.reference,
                        "watermark": watermark.isoformat() if watermark else None,
                        "synced_at": datetime.now(UTC).isoformat(),
                        "rows": len(merged),
                    }
                ),
                encoding="utf-8",
            )
        return SyncReport(
            self.reference, len(fetched), added, updated, len(merged), watermark, self.data
        )


@returns(SyncReport)
def sync_results(
    client: Client | AsyncClient,
    /,
    survey_reference: str,
    *,
    store: str | os.PathLike[str],
    overlap: timedelta = timedelta(hours=1),
    full: bool = False,
    format: str = "CSV",
) -> SyncReport | Any:
    """Bring the local store of ``survey_reference`` up to date; fetch only what is new.

    The first call fetches everything; later calls fetch results since the watermark (minus
    ``overlap``), so running it twice in a row adds nothing. ``full=True`` fetches all again.
    A failed download raises and leaves the store as it was.

    Example:
        >>> report = sk.sync_results(client, "CSAT-SMS-2026", store="results/")  # doctest: +SKIP
        >>> pd.read_parquet(report.path)                                        # doctest: +SKIP
    """
    job = _Sync(survey_reference, store, overlap, full)
    fetched = client.surveys.results(survey_reference, format=format, since=job.since)
    if isinstance(fetched, pd.DataFrame):
        return job.merge(fetched)
    return _merge_async(job, fetched)


async def _merge_async(job: _Sync, fetched: Any) -> SyncReport:
    return job.merge(await fetched)
