"""``import_frame``: a DataFrame into POST /v3.2/Data/Import in chunks, results joined back."""

from __future__ import annotations

import logging
import sys
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from surveykit._util.dual import returns
from surveykit.client import AsyncClient
from surveykit.client._flow import Flow, drive_async, drive_sync
from surveykit.errors import (
    APIConnectionError,
    ImportStoppedError,
    NotFoundError,
    OutcomeUnknownError,
    SurveykitError,
)
from surveykit.respondents._join import join_import_results
from surveykit.respondents._plan import ImportPlan, build_import_list
from surveykit.rules.outcomes import outcome_unknown

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

logger = logging.getLogger("surveykit.frames")  # the name it was published under


def _plan_attrs(plan: ImportPlan) -> dict[str, Any]:
    """The plan in plain values (JSON-able), for ``result.attrs["plan"]``."""
    # Not the ImportPlan itself: pandas deep-copies attrs into every frame derived from the
    # result, and writes them as JSON into Parquet files.
    s = plan.summary
    return {
        "rows": s.rows,
        "records": s.records,
        "rejected": s.rejected,
        "rejected_by_reason": dict(s.rejected_by_reason),
        "warnings": s.warnings,
        "unverified": s.unverified,
        "mapping": {str(column): target for column, target in plan.mapping.items()},
        "inferred": {str(column): target for column, target in s.inferred.items()},
    }


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where stderr is painted as an error)."""
    ipython = sys.modules.get("IPython")  # never imported here: only if already loaded
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def _show(plan: ImportPlan, reference: str, progress: bool) -> None:
    """Show a plan import_frame built itself: nobody has seen its mapping yet.

    In a notebook it is displayed as ordinary output (the plan's HTML table), since
    JupyterLab paints stderr as an error block; on a terminal it goes to stderr, above the
    progress bar and apart from what a script prints to stdout.
    """
    logger.info("import into %r: %r", reference, plan)
    if not progress:
        return
    if _in_notebook():
        from IPython.display import display

        display(plan)  # type: ignore[no-untyped-call]
    else:
        print(repr(plan), file=sys.stderr, flush=True)


def _chunk_outcome(error: SurveykitError) -> tuple[str, str]:
    if isinstance(error, APIConnectionError):
        return "not sent", f"never reached the platform: {error}"
    if not outcome_unknown(error):
        return "failed", str(error)
    if isinstance(error, OutcomeUnknownError):
        return "unknown", f"may or may not have been imported ({error}); not sent again"
    return "unknown", f"the platform failed ({error}); it may have imported some records"


class _Import:
    def __init__(self, plan: ImportPlan, reference: str, chunk_size: int, progress: bool) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size: must be at least 1")
        self.plan, self.reference, self.chunk_size = plan, reference, chunk_size
        self.results: list[Any] = []
        # (first record, past-the-last record, status, reason) for records without a result
        self.overrides: list[tuple[int, int, str, str]] = []
        self.bar: Any = None
        if progress and len(plan.records):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=len(plan.records), desc="import", unit="row")

    def flow(self) -> Flow[None]:
        records = self.plan.records
        for start in range(0, len(records), self.chunk_size):
            chunk = records[start : start + self.chunk_size]

            def call(client: Any, chunk: list[dict[str, Any]] = chunk) -> Any:
                return client.data.import_records(self.reference, chunk)

            answer = yield call
            if isinstance(answer, NotFoundError):
                self.results.extend([None] * (len(records) - len(self.results)))
                self.overrides.append(
                    (
                        start,
                        len(records),
                        "not sent",
                        f"the import stopped: the platform does not know reference "
                        f"{self.reference!r} (404)",
                    )
                )
                done = start
                where = (
                    "nothing was imported"
                    if done == 0
                    else (f"{done} records in earlier chunks were imported; the rest were not sent")
                )
                raise ImportStoppedError(
                    f"Data/Import: the platform does not know reference {self.reference!r} "
                    f"({answer}); {where}",
                    result=self.frame(),
                    cause=answer,
                ) from answer
            if isinstance(answer, SurveykitError):
                status, reason = _chunk_outcome(answer)
                self.overrides.append((start, start + len(chunk), status, reason))
                self.results.extend([None] * len(chunk))
            else:
                got = list(answer)
                if len(got) < len(chunk):
                    self.overrides.append(
                        (
                            start + len(got),
                            start + len(chunk),
                            "unknown",
                            "the platform returned no result for this record",
                        )
                    )
                self.results.extend((got + [None] * len(chunk))[: len(chunk)])
            if self.bar is not None:
                self.bar.update(len(chunk))

    def frame(self) -> pd.DataFrame:
        frame = join_import_results(self.plan, self.results)
        frame.attrs["plan"] = _plan_attrs(self.plan)
        for first, stop, status, reason in self.overrides:
            labels = frame.index[self.plan.positions[first:stop]]
            frame.loc[labels, "status"] = status
            frame.loc[labels, "reason"] = reason
        return frame

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@returns(pd.DataFrame)
def import_frame(
    client: Client | AsyncClient,
    /,
    reference: str,
    df: pd.DataFrame,
    *,
    mapping: Mapping[Hashable, str | None] | None = None,
    default_region: str | None = None,
    strict: bool = False,
    chunk_size: int = 1000,
    progress: bool = True,
    plan: ImportPlan | None = None,
    **plan_options: Any,
) -> pd.DataFrame | Any:
    """Import the respondents of ``df`` into the survey import definition ``reference``.

    Builds the plan with :func:`build_import_list` (``mapping``, ``default_region``,
    ``strict`` and ``plan_options`` go to it) unless ``plan`` is given, sends the records in
    chunks of ``chunk_size`` with a progress bar, and returns a DataFrame indexed like ``df``:
    ``status`` (``Success``/``Error`` from the platform; ``rejected`` for rows the plan left
    out; ``unknown`` for a chunk whose outcome is unknown, never sent again; ``not sent``;
    ``failed``), ``message``, ``when``, ``reason``, and for rejected rows ``column``,
    ``value`` and ``duplicate_of``, and ``number_check`` (``valid``; ``unverified`` for a
    number phonenumbers finds possible but not valid, kept unless ``strict=True``; see
    :func:`join_import_results`).

    When it builds the plan itself, it shows it (counts, rejections and the column mapping,
    guessed entries marked ``(inferred)``): logged at INFO on the ``surveykit.respondents``
    logger, and shown when ``progress`` is true: as ordinary output in a notebook, on
    stderr above the progress bar elsewhere. Either way ``result.attrs["plan"]`` describes
    the plan in plain, JSON-able values: ``rows``, ``records``, ``rejected``,
    ``rejected_by_reason``, ``warnings``, ``unverified``, ``mapping`` (every column, as
    text, -> property or None) and ``inferred`` (column -> guessed property).
    To check the plan before anything is sent, build it with :func:`build_import_list` and
    pass it as ``plan``.

    An unknown reference (404) stops the import before the rest is sent: it raises
    :class:`ImportStoppedError` (not a :class:`~surveykit.NotFoundError`; the 404 is its
    ``cause``), whose ``result`` holds every row (those not sent say why).

    With an :class:`~surveykit.AsyncClient` it returns an awaitable.
    """
    if not df.index.is_unique:
        raise ValueError("df: the index must be unique, to join results back to rows")
    if plan is None:
        plan = build_import_list(
            df, mapping, default_region=default_region, strict=strict, **plan_options
        )
        _show(plan, reference, progress)
    elif not plan.source_index.equals(df.index):
        raise ValueError("plan: it was built from another DataFrame (the index differs)")
    job = _Import(plan, reference, chunk_size, progress)

    if isinstance(client, AsyncClient):
        return _import_async(client, job)
    try:
        drive_sync(client, job.flow())
        return job.frame()
    finally:
        job.close()


async def _import_async(client: AsyncClient, job: _Import) -> pd.DataFrame:
    try:
        await drive_async(client, job.flow())
        return job.frame()
    finally:
        job.close()
