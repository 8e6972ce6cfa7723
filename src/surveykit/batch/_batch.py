"""``send_batch``: one message per DataFrame row, every outcome kept, resumable."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from os import PathLike
from typing import TYPE_CHECKING, Any

import pandas as pd
from typing_extensions import Unpack

from surveykit._util.dual import returns
from surveykit.batch._journal import DONE, IN_FLIGHT, Journal, JournalRow, row_key
from surveykit.batch._options import Progress, SendOptions, documented, resolve
from surveykit.batch._plan import DEFINITE_FAILURES, OUTCOMES, RowPlan, plan_rows, skip_mask
from surveykit.batch._result import (
    COLUMNS,
    LOCAL_COLUMNS,
    SEND_FIELDS,
    BatchResult,
    client_region,
    platform_clock,
    platform_now,
    platform_zone,
)
from surveykit.batch._runner import RowOutcome, TokenBucket, row_flow
from surveykit.batch._spec import BatchSpec, Skip, make_spec
from surveykit.client import AsyncClient
from surveykit.client._flow import Flow, drive_async, drive_sync, run_async, run_sync
from surveykit.errors import BatchInterrupted, SurveykitError
from surveykit.optouts import as_opt_outs

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

LINK_CHUNK = 100


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="send", unit="msg")


class _Batch:
    """Everything about one batch run that is not I/O."""

    def __init__(
        self,
        df: pd.DataFrame,
        spec: BatchSpec,
        *,
        journal: str | PathLike[str] | None,
        journal_timeout: float | None = 0.0,
        only: str | None,
        resend_unknown: bool,
        skip: Skip | None,
        lookups: pd.DataFrame | None,
        rate: float | None,
        concurrency: int,
        progress: bool | Progress,
        start: datetime | None = None,
        opted_out: Callable[[str], bool] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if only not in (None, "failed"):
            raise ValueError(f"only: expected None or 'failed', got {only!r}")
        if only is not None and journal is None:
            raise ValueError("only='failed' needs the journal of the earlier run")
        if concurrency < 1:
            raise ValueError("concurrency: must be at least 1")
        self.df, self.spec, self.only, self.resend_unknown = df, spec, only, resend_unknown
        self.concurrency = concurrency
        self.progress = bool(progress) and not callable(progress)
        self.on_row: Progress | None = progress if callable(progress) else None
        self.bucket = TokenBucket(rate)
        self.skip = skip_mask(df, skip, lookups)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.journal = (
            Journal(journal, timeout=journal_timeout, clock=self.clock)
            if journal is not None
            else None
        )
        self.known: dict[str, JournalRow] = {}
        if self.journal is not None:
            try:
                self.journal.check_fingerprint(spec.fingerprint())
                self.known = self.journal.load()
            except BaseException:
                self.journal.close()
                raise
        self.keys = {label: row_key(label) for label in df.index}
        self.links: dict[str, str] = {
            key: row.link for key, row in self.known.items() if row.link is not None
        }
        self.rows: dict[str, dict[str, Any]] = {}
        self.start = start
        self.opted_out = opted_out
        self.sent_now = 0
        self.requested_now = 0
        self.bar: Any = None
        self.counts: Counter[str] = Counter()
        # Rows decided without a request tick from the thread taking the next row, sent rows
        # from the one finishing theirs: one lock keeps the counts and the calls in order.
        self.tick_lock = threading.Lock()

    # Short links

    def link_flow(self) -> Flow[None]:
        """Register the short links rows still need, in chunks, remembering each."""
        if not self.spec.links:
            return
        pending: list[tuple[str, str]] = []
        for label, url in self.df[self.spec.links].items():
            key = self.keys[label]
            if key in self.links or url is None or (not isinstance(url, str) and pd.isna(url)):
                continue
            if self._previous(key) is not None:
                continue
            pending.append((key, str(url)))
        for start in range(0, len(pending), LINK_CHUNK):
            chunk = pending[start : start + LINK_CHUNK]
            urls = [url for _, url in chunk]

            def call(
                client: Any, urls: list[str] = urls, reuse: bool | None = self.spec.reuse_links
            ) -> Any:
                return client.tinyurl.register_list(urls, reuse=reuse)

            result = yield call
            if isinstance(result, SurveykitError):
                raise result
            for (key, _), link in zip(chunk, result, strict=True):
                self.links[key] = link
                if self.journal is not None:
                    self.journal.save_link(key, None, link)

    # Rows

    def _previous(self, key: str) -> JournalRow | None:
        known = self.known.get(key)
        if known is None or known.state not in (DONE, IN_FLIGHT):
            return None
        return known

    def plans(self) -> Iterator[RowPlan]:
        """Every row's plan (rendered with its short link)."""
        return iter(
            plan_rows(
                self.df,
                self.spec,
                links=self.links,
                skip=self.skip,
                start=self.start,
                rate=self.bucket.rate,
                keys=row_key,
            )
        )

    def flows(self) -> Iterator[Flow[RowOutcome]]:
        """Row flows to run; rows decided without sending are recorded on the way."""
        for plan in self.plans():
            previous = self._previous(plan.key)
            if previous is not None:
                outcome = previous.outcome if previous.state == DONE else "unknown"
                if previous.state == IN_FLIGHT:
                    previous.error = "in flight when an earlier run stopped; not resent"
                resend = (self.only == "failed" and outcome in DEFINITE_FAILURES) or (
                    self.resend_unknown and outcome == "unknown"
                )
                if not resend or plan.request is None:
                    self._keep(plan, previous, outcome)
                    continue
            elif self.only == "failed":
                self._record(
                    plan,
                    plan.outcome or "skipped",
                    {"error": plan.error or "not sent before; only='failed'"},
                    0,
                )
                continue
            if plan.request is None:
                self._record(plan, plan.outcome or "rejected", {"error": plan.error}, 0)
                continue
            self.rows[plan.key] = {"plan": plan}
            yield row_flow(
                plan,
                journal=self.journal,
                bucket=self.bucket,
                test=self.spec.test,
                attempts=previous.attempts if previous else 0,
                opted_out=self.opted_out,
            )

    def _now(self) -> str:
        return self.clock().astimezone(UTC).isoformat(timespec="milliseconds")

    def _keep(self, plan: RowPlan, previous: JournalRow, outcome: str | None) -> None:
        fields = {
            "message_id": previous.message_id,
            "status": previous.status,
            "carrier": previous.carrier,
            "reachable": previous.reachable,
            "number_type": previous.number_type,
            "error": previous.error,
        }
        plan.text = previous.text or plan.text
        self._record(
            plan, outcome or "unknown", fields, previous.attempts, time=previous.updated_at
        )

    def _record(
        self,
        plan: RowPlan,
        outcome: str,
        fields: dict[str, Any],
        attempts: int,
        time: str | None = None,
    ) -> None:
        self.rows[plan.key] = {
            "plan": plan,
            "outcome": outcome,
            "fields": fields,
            "attempts": attempts,
            "time": time or self._now(),
        }
        self._tick(outcome)

    def done(self, result: RowOutcome) -> None:
        """Record a row sent by this run."""
        entry = self.rows[result.key]
        entry.update(
            outcome=result.outcome,
            fields=result.fields,
            attempts=result.attempts,
            time=self._now(),
        )
        entry["sent_now"] = result.sent_now
        if result.sent_now:  # an opted-out row made no request
            self.requested_now += 1
            if result.outcome == "sent":
                self.sent_now += 1
        self._tick(result.outcome)

    def _tick(self, outcome: str) -> None:
        with self.tick_lock:
            self.counts[outcome] += 1
            if self.bar is not None:
                self.bar.update(1)
                self.bar.set_postfix(dict(self.counts), refresh=False)
            if self.on_row is not None:
                self.on_row(dict(self.counts))

    def result(self, *, interrupted: bool = False) -> BatchResult:
        """The per-row result frame, indexed like the input."""
        records = []
        for label in self.df.index:
            entry = self.rows.get(self.keys[label])
            plan: RowPlan | None = entry["plan"] if entry else None
            if entry is None or "outcome" not in entry:
                records.append(
                    {
                        "destination": plan.destination if plan else None,
                        "number_check": plan.check if plan else None,
                        "text": plan.text if plan else None,
                        "segments": plan.segments if plan else None,
                        "outcome": "skipped" if interrupted else "unknown",
                        "error": "interrupted" if interrupted else "no outcome recorded",
                        "attempts": 0,
                    }
                )
                continue
            assert plan is not None
            fields = entry["fields"]
            records.append(
                {
                    "destination": plan.destination,
                    "number_check": plan.check,
                    "text": plan.text,
                    "segments": plan.segments,
                    "outcome": entry["outcome"],
                    **{k: fields.get(k) for k in SEND_FIELDS},
                    "attempts": entry["attempts"],
                    "time": entry["time"],
                }
            )
        local = self.spec.zones is not None
        if local:
            for label, record in zip(self.df.index, records, strict=True):
                entry = self.rows.get(self.keys[label])
                plan = entry["plan"] if entry else None
                sent = entry is not None and entry.get("sent_now", False)
                record["timezone"] = plan.zone if plan else None
                record["local_send_time"] = plan.local_time if plan and sent else None
                record["when"] = plan.send_at if plan and sent else None
        columns = COLUMNS + LOCAL_COLUMNS if local else COLUMNS
        frame = pd.DataFrame.from_records(records, index=self.df.index, columns=columns)
        if local:
            frame["when"] = pd.to_datetime(frame["when"], utc=True)
        frame["segments"] = frame["segments"].astype("Int64")
        frame["attempts"] = frame["attempts"].astype("Int64")
        frame["reachable"] = frame["reachable"].astype("boolean")
        frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601")
        frame["outcome"] = pd.Categorical(frame["outcome"], categories=list(OUTCOMES))
        return BatchResult(
            frame,
            self.sent_now,
            self.journal.path if self.journal else None,
            self.requested_now,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.journal is not None:
            self.journal.close()


def _send_sync(client: Client, batch: _Batch) -> BatchResult:
    try:
        drive_sync(client, batch.link_flow())
        batch.bar = _progress(len(batch.df), batch.progress)
        try:
            run_sync(client, batch.flows(), concurrency=batch.concurrency, on_done=batch.done)
        except KeyboardInterrupt:
            raise BatchInterrupted(batch.result(interrupted=True)) from None
        return batch.result()
    finally:
        batch.close()


async def _send_async(client: AsyncClient, batch: _Batch) -> BatchResult:
    try:
        await drive_async(client, batch.link_flow())
        batch.bar = _progress(len(batch.df), batch.progress)
        try:
            await run_async(
                client, batch.flows(), concurrency=batch.concurrency, on_done=batch.done
            )
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise BatchInterrupted(batch.result(interrupted=True)) from None
        return batch.result()
    finally:
        batch.close()


def _opt_out_check(opt_outs: Any) -> Callable[[str], bool] | None:
    """The per-row check of ``opt_outs``: one indexed SQLite read per row."""
    if opt_outs is None:
        return None

    return as_opt_outs(opt_outs).check


@returns(BatchResult)
@documented(SendOptions, leading=("client", "df"))
def send_batch(
    client: Client | AsyncClient, df: pd.DataFrame, **options: Unpack[SendOptions]
) -> BatchResult | Awaitable[BatchResult]:
    """Send one personalised message to each row of ``df`` and return every row's outcome.

    With a :class:`~surveykit.Client` it returns a :class:`BatchResult`; with an
    :class:`~surveykit.AsyncClient` an awaitable of one (``await sk.send_batch(...)`` in a
    notebook cell). Call it as ``sk.send_batch(client, df, message=..., source=..., ...)``;
    every option is keyword-only and documented once, in
    :data:`surveykit.batch._options.OPTIONS`.

    Args:
        client: the platform or sandbox client.
        df: one row per recipient; its index labels the result (must be unique).
        **options: the batch's options:
        {options}

    Outcomes: sent, tested (``test=True``), blocked, opted_out (on ``opt_outs``), landline,
    invalid, rejected (refused by a rule, before sending or by the platform with a 400: a
    missing template value, a branded source with replies, no email route, no time inside
    the windows in every zone of a number), failed (definitely not sent, worth retrying
    with ``only="failed"``), unknown (may or may not have been sent), skipped.
    """
    given = resolve(SendOptions, options, function="send_batch")
    spec = make_spec(
        df, given, platform=platform_zone(client), default_region=client_region(client)
    )
    batch = _Batch(
        df,
        spec,
        journal=given["journal"],
        journal_timeout=given["journal_timeout"],
        only=given["only"],
        resend_unknown=given["resend_unknown"],
        skip=given["skip"],
        lookups=given["lookups"],
        rate=given["rate"],
        concurrency=given["concurrency"],
        progress=given["progress"],
        start=platform_now(client),
        clock=platform_clock(client),
        opted_out=_opt_out_check(given["opt_outs"]),
    )

    if isinstance(client, AsyncClient):
        return _send_async(client, batch)
    return _send_sync(client, batch)
