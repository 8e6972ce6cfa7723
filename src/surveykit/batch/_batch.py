"""``send_batch`` and ``preview_batch``: one message per DataFrame row, every outcome kept."""

from __future__ import annotations

import asyncio
import html
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from os import PathLike
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from surveykit._dual import returns
from surveykit.batch._journal import DONE, IN_FLIGHT, Journal, JournalRow, row_key
from surveykit.batch._plan import (
    DEFINITE_FAILURES,
    OUTCOMES,
    BatchSpec,
    RowPlan,
    Skip,
    Windows,
    make_spec,
    plan_rows,
    skip_mask,
)
from surveykit.batch._runner import (
    OPTED_OUT,
    Flow,
    RowOutcome,
    TokenBucket,
    drive_async,
    drive_sync,
    row_flow,
    run_async,
    run_sync,
)
from surveykit.errors import SurveykitError
from surveykit.models import CallbackSettings

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

COLUMNS = [
    "destination",
    "text",
    "segments",
    "outcome",
    "message_id",
    "status",
    "carrier",
    "reachable",
    "number_type",
    "error",
    "attempts",
    "time",
]

LINK_CHUNK = 100

Progress = Callable[[dict[str, int]], None]
"""A ``progress=`` function: called with the rows per outcome so far, once per finished row."""


class BatchInterrupted(KeyboardInterrupt):
    """A batch stopped by Ctrl-C or a kernel interrupt; ``result`` holds every row so far.

    Rows in flight when the interrupt came were finished and journaled; rows not started
    have outcome ``skipped`` with error ``interrupted``. Re-run with the same journal to go on.
    """

    def __init__(self, result: BatchResult) -> None:
        super().__init__("batch interrupted; the journal is consistent, re-run to resume")
        self.result = result


@dataclass
class BatchResult:
    """The outcome of every row of a batch.

    Attributes:
        frame: indexed like the input DataFrame; columns destination, text, segments,
            outcome, message_id, status, carrier, reachable, number_type, error, attempts,
            time.
        sent_now: how many rows this run got sent: the platform accepted them (outcome
            ``sent``). Rows resumed from a journal are not counted, nor a request the
            platform refused (``blocked``, ``landline``, ``rejected``, ``failed``) or whose
            outcome is ``unknown``.
        journal: the journal's path, if the batch kept one.
        requested_now: how many rows this run sent a request for, whatever the answer:
            ``sent_now`` plus the refused, failed, unknown and tested ones.
    """

    frame: pd.DataFrame
    sent_now: int = 0
    journal: str | None = None
    requested_now: int = 0

    @property
    def summary(self) -> pd.Series:
        """Rows per outcome, in the order of :data:`OUTCOMES`, zeros left out."""
        counts = self.frame["outcome"].value_counts()
        return pd.Series(
            {name: int(counts[name]) for name in OUTCOMES if counts.get(name, 0)},
            name="rows",
            dtype="int64",
        )

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}={count}" for name, count in self.summary.items())
        return (
            f"BatchResult(rows={len(self.frame)}, {parts}, sent_now={self.sent_now}, "
            f"requested_now={self.requested_now})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(str(k))}</td><td>{v}</td></tr>" for k, v in self.summary.items()
        )
        return (
            f"<div><b>Batch</b>: {len(self.frame)} rows, {self.sent_now} sent by this run "
            f"({self.requested_now} requests)"
            f"<table><tr><th>outcome</th><th>rows</th></tr>{rows}</table>"
            f"{self.frame.head(10).to_html()}</div>"
        )


@dataclass
class BatchPreview:
    """What a batch would send, without sending anything.

    Attributes:
        frame: indexed like the input: destination, text, segments, encoding, outcome
            (``ready`` or why not), error, send_at.
    """

    frame: pd.DataFrame
    totals: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return "BatchPreview(" + ", ".join(f"{k}={v!r}" for k, v in self.totals.items()) + ")"

    def _repr_html_(self) -> str:
        items = "".join(
            f"<li>{html.escape(str(k))}: {html.escape(str(v))}</li>" for k, v in self.totals.items()
        )
        return f"<div><b>Batch preview</b><ul>{items}</ul>{self.frame.head(10).to_html()}</div>"


def platform_now(client: Any) -> datetime | None:
    """The platform's time when it is known: an embedded sandbox's clock, else None (now)."""
    embedded = getattr(client, "embedded", None)
    now: datetime | None = embedded.now() if embedded is not None else None
    return now


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
        self.journal = Journal(journal, timeout=journal_timeout) if journal is not None else None
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
            "time": time or datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        self._tick(outcome)

    def done(self, result: RowOutcome) -> None:
        """Record a row sent by this run."""
        entry = self.rows[result.key]
        entry.update(
            outcome=result.outcome,
            fields=result.fields,
            attempts=result.attempts,
            time=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )
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
                    "text": plan.text,
                    "segments": plan.segments,
                    "outcome": entry["outcome"],
                    **{
                        k: fields.get(k)
                        for k in (
                            "message_id",
                            "status",
                            "carrier",
                            "reachable",
                            "number_type",
                            "error",
                        )
                    },
                    "attempts": entry["attempts"],
                    "time": entry["time"],
                }
            )
        frame = pd.DataFrame.from_records(records, index=self.df.index, columns=COLUMNS)
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


@returns(BatchResult)
def send_batch(
    client: Client | AsyncClient,
    df: pd.DataFrame,
    *,
    message: str | None = None,
    source: str,
    destination: str | None = None,
    channel: Literal["sms", "whatsapp", "facebook", "whatsapp_template", "email"] = "sms",
    reply: bool = False,
    windows: Windows | None = None,
    lookup: bool = False,
    test: bool = False,
    when: datetime | None = None,
    timeout: int | None = None,
    survey_id: int | None = None,
    on_behalf: str | None = None,
    to: str | None = None,
    subject: str | None = None,
    content: str | None = None,
    metadata: Sequence[str] | Mapping[str, Any] | None = None,
    callback: CallbackSettings | Mapping[str, Any] | None = None,
    links: str | None = None,
    reuse_links: bool | None = None,
    skip: Skip | None = None,
    lookups: pd.DataFrame | None = None,
    only: Literal["failed"] | None = None,
    resend_unknown: bool = False,
    concurrency: int = 8,
    rate: float | None = None,
    journal: str | PathLike[str] | None = None,
    journal_timeout: float | None = 0.0,
    progress: bool | Progress = True,
    opt_outs: Any = None,
) -> BatchResult | Awaitable[BatchResult]:
    """Send one personalised message to each row of ``df`` and return every row's outcome.

    With a :class:`~surveykit.Client` it returns a :class:`BatchResult`; with an
    :class:`~surveykit.AsyncClient` an awaitable of one (``await sk.send_batch(...)`` in a
    notebook cell).

    Args:
        client: the platform or sandbox client.
        df: one row per recipient; its index labels the result (must be unique).
        message: the text template, ``"Hi {firstName}, your survey: {link}"``.
        source: the sender: number, short code or brand (email: the From route).
        destination: the column with E.164 digits (default ``mobileNumber``; for email the
            address column, default ``emailAddress``).
        channel: ``sms``, ``whatsapp``, ``facebook``, ``whatsapp_template`` or ``email``.
        reply: whether recipients can reply (needs a number or short code as source).
            ``reply``, ``timeout``, ``survey_id`` and ``on_behalf`` are refused, by name,
            for email; ``metadata`` and ``callback`` for the other channels.
        lookup: look each destination up before sending (landlines are not sent).
        test: test routing only; nothing is sent (outcome ``tested``).
        when: send later (timezone-aware).
        timeout: minutes the platform keeps each message open for a reply.
        survey_id: the survey the messages belong to.
        on_behalf: the account or organisation sending, where configured.
        windows: Window objects, dicts, or shorthand such as ``"Mon-Fri 09:00-18:00"``. An
            email request has no windows: each email row's When is set to the first moment
            inside one instead.
        to: email recipient template (defaults to the address column).
        subject: email subject template.
        content: email HTML content template (defaults to ``message``).
        metadata: email MetaData: column names (per-row values) or a fixed dict.
        callback: email Callback settings.
        links: a column of URLs to shorten per row (TinyUrl/RegisterList), used as ``{link}``.
        reuse_links: the ``reuse`` flag for short links.
        skip: leave rows out: a boolean Series, or ``{"landline", "unreachable"}`` checked
            against ``lookups``.
        lookups: the frame :func:`lookup_frame` returned, for ``skip``.
        only: ``"failed"`` resends, with the same journal, only rows whose outcome was a
            definite failure.
        resend_unknown: also resend rows whose outcome is unknown (they may have arrived).
        concurrency: requests in flight at once.
        rate: the most requests per second (a token bucket); None for no limit.
        journal: an SQLite file recording every row before and after its request; re-run
            with the same file to resume without sending anything twice. One run at a time
            holds it, across processes (a lock on ``<journal>.lock``, released when the run
            ends, even by SIGKILL).
        journal_timeout: seconds to wait while another run holds the journal; 0 (the
            default) raises :class:`~surveykit.batch.JournalLockedError` at once, naming
            the holder's pid and host; None waits as long as it takes.
        progress: show a progress bar (tqdm) with counts per outcome; False for none; or
            a function to call instead, each time a row gets its outcome, with the rows per
            outcome so far (a new dict each call; the values add up to ``len(df)`` at the
            end). It runs on the thread or task that finished the row, one call at a time,
            so keep it short (widgets use it to move their own bar). With a sync client,
            raising KeyboardInterrupt in it stops the batch as Ctrl-C does.
        opt_outs: an :class:`~surveykit.OptOutList` (or its path): each row's destination
            is checked right before its request, so a STOP that arrives while the batch
            runs still stops the rows after it; those rows get the outcome ``opted_out``
            and no request (they are not journaled: a re-run checks them again).

    Outcomes: sent, tested (``test=True``), blocked, opted_out (on ``opt_outs``), landline,
    invalid, rejected (refused by a rule, before sending or by the platform with a 400: a
    missing template value, a branded source with replies, no email route), failed
    (definitely not sent, worth retrying with ``only="failed"``), unknown (may or may not
    have been sent), skipped.
    """
    spec = make_spec(
        df,
        message=message,
        source=source,
        destination=destination,
        channel=channel,
        reply=reply,
        windows=windows,
        lookup=lookup,
        test=test,
        when=when,
        timeout=timeout,
        survey_id=survey_id,
        on_behalf=on_behalf,
        to=to,
        subject=subject,
        content=content,
        metadata=metadata,
        callback=callback,
        links=links,
        reuse_links=reuse_links,
    )
    batch = _Batch(
        df,
        spec,
        journal=journal,
        journal_timeout=journal_timeout,
        only=only,
        resend_unknown=resend_unknown,
        skip=skip,
        lookups=lookups,
        rate=rate,
        concurrency=concurrency,
        progress=progress,
        start=platform_now(client),
        opted_out=_opt_out_check(opt_outs),
    )
    from surveykit.client import AsyncClient

    if isinstance(client, AsyncClient):
        return _send_async(client, batch)
    return _send_sync(client, batch)


def preview_batch(
    client: Client | AsyncClient | None,
    df: pd.DataFrame,
    *,
    message: str | None = None,
    source: str,
    destination: str | None = None,
    channel: Literal["sms", "whatsapp", "facebook", "whatsapp_template", "email"] = "sms",
    reply: bool = False,
    windows: Windows | None = None,
    when: datetime | None = None,
    start: datetime | None = None,
    rate: float | None = None,
    to: str | None = None,
    subject: str | None = None,
    content: str | None = None,
    metadata: Sequence[str] | Mapping[str, Any] | None = None,
    links: str | None = None,
    link_placeholder: str = "https://sho.rt/AbCd123",
    skip: Skip | None = None,
    lookups: pd.DataFrame | None = None,
    timeout: int | None = None,
    survey_id: int | None = None,
    on_behalf: str | None = None,
    opt_outs: Any = None,
) -> BatchPreview:
    """Render and validate every row without sending anything (no request is made).

    Short links are not registered: ``{link}`` is filled with ``link_placeholder`` so
    segment counts are realistic. Send times assume submission from ``when`` (or ``start``,
    or now) at ``rate`` requests per second, each held until its first allowed window.
    Rows whose destination is on ``opt_outs`` (an :class:`~surveykit.OptOutList` or its
    path) get the outcome ``opted_out``.

    Totals: rows, ready, segments, rejected (by reason), first_send and last_send.
    """
    spec = make_spec(
        df,
        message=message,
        source=source,
        destination=destination,
        channel=channel,
        reply=reply,
        windows=windows,
        lookup=False,
        test=False,
        when=when,
        timeout=timeout,
        survey_id=survey_id,
        on_behalf=on_behalf,
        to=to,
        subject=subject,
        content=content,
        metadata=metadata,
        callback=None,
        links=links,
        reuse_links=None,
    )
    placeholder = {row_key(label): link_placeholder for label in df.index}
    records = []
    for plan in plan_rows(
        df,
        spec,
        links=placeholder if links else None,
        skip=skip_mask(df, skip, lookups),
        start=start or platform_now(client),
        rate=rate,
        keys=row_key,
    ):
        records.append(
            {
                "destination": plan.destination,
                "text": plan.text,
                "segments": plan.segments,
                "encoding": plan.encoding,
                "outcome": plan.outcome or "ready",
                "error": plan.error,
                "send_at": plan.send_at,
            }
        )
    frame = pd.DataFrame.from_records(
        records,
        index=df.index,
        columns=["destination", "text", "segments", "encoding", "outcome", "error", "send_at"],
    )
    frame["segments"] = frame["segments"].astype("Int64")
    frame["send_at"] = pd.to_datetime(frame["send_at"], utc=True)
    if opt_outs is not None:
        from surveykit.campaign._optouts import as_opt_outs

        listed = (frame["outcome"] == "ready") & as_opt_outs(opt_outs).contains(
            frame["destination"]
        )
        frame["outcome"] = frame["outcome"].mask(listed, "opted_out")
        frame["error"] = frame["error"].mask(listed, OPTED_OUT)
        frame["send_at"] = frame["send_at"].mask(listed)
    ready = frame[frame["outcome"] == "ready"]
    not_ready = frame[frame["outcome"] != "ready"]
    reasons = (
        not_ready["outcome"].astype(str) + ": " + not_ready["error"].fillna("").astype(str)
    ).value_counts()
    totals = {
        "rows": len(frame),
        "ready": len(ready),
        "segments": int(ready["segments"].sum()) if len(ready) else 0,
        "rejected": {str(k): int(v) for k, v in reasons.items()},
        "first_send": ready["send_at"].min() if len(ready) else None,
        "last_send": ready["send_at"].max() if len(ready) else None,
    }
    return BatchPreview(frame, totals)


def _opt_out_check(opt_outs: Any) -> Callable[[str], bool] | None:
    """The per-row check of ``opt_outs``: one indexed SQLite read per row."""
    if opt_outs is None:
        return None
    from surveykit.campaign._optouts import as_opt_outs

    return as_opt_outs(opt_outs).check
