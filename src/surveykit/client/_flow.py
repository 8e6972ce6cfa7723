"""The sans-IO engine: every exchange with the platform, written once as a generator of steps.

A :data:`Flow` is a generator that yields steps and is sent back what each step gave:

========================  ========================================================
step                      what the flow is sent back
========================  ========================================================
:class:`Send`             the :class:`httpx.Response`, or the :class:`httpx.TransportError`
                          sending raised
:class:`Sleep`            None, once the time has passed
a :data:`Call`            ``call(client)``'s value, or the
                          :class:`~surveykit.SurveykitError` it raised
========================  ========================================================

and returns its value (or raises). Flows hold every decision and no I/O:

* :func:`request_flow` runs one :class:`~surveykit.client._base.APIRequest`: it sends,
  asks :class:`~surveykit.client._retry.RetryPolicy` (the one home of the retry rule)
  whether and when to send again, logs, maps a failure to the error tree and parses the
  answer, with no credential left in what it raises. Steps: Send and Sleep.
* The multi-step flows of the layers above (a batch row, short links, chunked import,
  list cleaning) yield whole client calls, each running a request flow of its own, and
  Sleep (rate limit, a 429's Retry-After).

The IO shell is the two drivers, the only code here that waits: :func:`drive_sync` sends
with the client's :class:`httpx.Client` and sleeps on the thread (or on a stop event);
:func:`drive_async` awaits the client's :class:`httpx.AsyncClient`, ``anyio.sleep`` and
the call. A streamed response (``APIRequest.stream``) is closed by the driver once the
flow is done with it. :func:`run_sync` and :func:`run_async` drive many flows at a given
concurrency (threads or tasks pulling from one iterator). ``Client._execute`` and
``AsyncClient._execute`` are ``drive_*(self, request flow)``; ``send_batch``,
``lookup_frame`` and ``import_frame`` drive their flows with the same functions.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import httpx

from surveykit.client._redact import Secrets, clean_response, credentials, scrub_error
from surveykit.client._responses import status_error
from surveykit.client._retry import NEVER_SENT, NOT_SENDABLE, RetryPolicy
from surveykit.errors import (
    APIConnectionError,
    APITimeoutError,
    OutcomeUnknownError,
    SurveykitError,
    UnexpectedResponseError,
    describe_request,
)

if TYPE_CHECKING:
    from surveykit.client._base import APIRequest

logger = logging.getLogger("surveykit")

T = TypeVar("T")


@dataclass(frozen=True)
class Send:
    """A step: send this request; the flow gets the response, or the transport error."""

    request: httpx.Request
    stream: bool = False


@dataclass(frozen=True)
class Sleep:
    """A step: wait this many seconds before the flow goes on."""

    seconds: float


Call = Callable[[Any], Any]
"""A step: a whole client call, ``call(client)`` (itself a request flow with its retries)."""

Flow = Generator[Send | Sleep | Call, Any, T]
"""A generator of steps returning ``T``: what the drivers run."""


# The request flow: one APIRequest, sent, retried, mapped, parsed.


def request_flow(
    spec: APIRequest[T], request: httpx.Request, *, retry: RetryPolicy, secrets: Secrets
) -> Flow[T]:
    """Run ``request`` (built from ``spec``): retries, error mapping, parsing.

    Whatever it raises carries none of ``secrets`` (an error page may echo the headers).
    """
    try:
        return (yield from _attempts(spec, request, retry, secrets))
    except Exception as error:
        scrub_error(error, request, secrets)
        raise


def _attempts(
    spec: APIRequest[T], request: httpx.Request, retry: RetryPolicy, secrets: Secrets
) -> Flow[T]:
    attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        outcome = yield Send(request, spec.stream)
        elapsed = time.perf_counter() - started
        if isinstance(outcome, Exception):
            logger.debug(
                "%s %s failed after %.3fs: %s",
                request.method,
                request.url.raw_path.decode(),
                elapsed,
                type(outcome).__name__,
            )
            delay = retry.delay_after_error(outcome, attempt, idempotent=spec.idempotent)
            if delay is None:
                error = _transport_error(spec, request, outcome)
                if isinstance(outcome, NOT_SENDABLE):
                    # Its text may quote a header value, and headers carry the token.
                    raise error from None
                raise error from outcome
            yield _retrying(delay, type(outcome).__name__)
            continue
        assert isinstance(outcome, httpx.Response)
        response = outcome
        logger.debug(
            "%s %s -> %d in %.3fs",
            request.method,
            request.url.raw_path.decode(),
            response.status_code,
            elapsed,
        )
        if response.is_success:
            try:
                return spec.parse(response)
            except httpx.TransportError as exc:
                raise APIConnectionError(
                    f"{describe_request(request)}: the download broke off: {exc}",
                    request=request,
                ) from exc
            except (UnexpectedResponseError, ValueError):
                if spec.stream:
                    raise
            # Its message may quote the body cut short: read the redacted body instead
            # (out of the except block, so the first error is not kept as the context),
            # and a credential across the cut leaves not even its first characters.
            return spec.parse(_without_secrets(response, request, secrets))
        delay = retry.delay_after_status(response, attempt, idempotent=spec.idempotent)
        if delay is None:
            # Redacted before the error quotes (and cuts) the body, for the same reason.
            raise status_error(spec, _without_secrets(response, request, secrets))
        yield _retrying(delay, f"status {response.status_code}")


def _retrying(seconds: float, reason: str) -> Sleep:
    if logger.isEnabledFor(logging.INFO):
        logger.info("retrying in %.2fs after %s", seconds, reason)
    return Sleep(seconds)


def _without_secrets(
    response: httpx.Response, request: httpx.Request, secrets: Secrets
) -> httpx.Response:
    return clean_response(response, secrets | credentials(request))


def _transport_error(spec: APIRequest[Any], request: httpx.Request, exc: Exception) -> Exception:
    where = describe_request(request)
    if isinstance(exc, NOT_SENDABLE):
        # Raised while the request was being written out, before anything reached the
        # wire. Its text is not quoted: it may contain a header value (the token).
        return APIConnectionError(
            f"{where}: nothing was sent: the HTTP library refused to write the request "
            f"({type(exc).__name__}: an illegal header value or request line; the "
            "details are withheld because headers may carry credentials)",
            request=request,
        )
    if isinstance(exc, NEVER_SENT):
        return APIConnectionError(f"{where}: could not connect: {exc}", request=request)
    if not spec.idempotent:
        return OutcomeUnknownError(
            f"{where}: {type(exc).__name__} after the request may have reached the "
            "platform; it was not sent again. Check before resending.",
            request=request,
            cause=exc,
        )
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"{where}: timed out: {exc}", request=request)
    return APIConnectionError(f"{where}: {type(exc).__name__}: {exc}", request=request)


# The IO shell: the drivers.


def drive_sync(client: Any, flow: Flow[T], stop: threading.Event | None = None) -> T:
    """Run ``flow`` with the sync ``client``.

    A Sleep waits on ``stop`` when one is given: once it is set, the flow is closed and
    KeyboardInterrupt raised (how :func:`run_sync` stops rows between steps).
    """
    value: Any = None
    opened: list[httpx.Response] = []
    try:
        while True:
            try:
                step = flow.send(value)
            except StopIteration as done:
                result: T = done.value
                return result
            if isinstance(step, Send):
                try:
                    value = client._http.send(step.request, stream=step.stream)
                    if step.stream:
                        opened.append(value)
                        if not value.is_success:
                            value.read()
                except httpx.TransportError as exc:
                    value = exc
            elif isinstance(step, Sleep):
                if stop is None:
                    time.sleep(step.seconds)
                elif stop.wait(step.seconds):
                    flow.close()
                    raise KeyboardInterrupt
                value = None
            else:
                try:
                    value = step(client)
                except SurveykitError as exc:
                    value = exc
    finally:
        for response in opened:
            response.close()


async def drive_async(client: Any, flow: Flow[T]) -> T:
    """Run ``flow`` with the async ``client``."""
    value: Any = None
    while True:
        try:
            step = flow.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        if isinstance(step, Send):
            try:
                value = await client._http.send(step.request, stream=step.stream)
                if step.stream:
                    # One copy of the body, in the response; the parser reads it in
                    # chunks through iter_bytes() without joining a second one.
                    try:
                        await value.aread()
                    finally:
                        await value.aclose()
            except httpx.TransportError as exc:
                value = exc
        elif isinstance(step, Sleep):
            await anyio.sleep(step.seconds)
            value = None
        else:
            try:
                value = await step(client)
            except SurveykitError as exc:
                value = exc


def run_sync(
    client: Any,
    flows: Iterator[Flow[T]],
    *,
    concurrency: int,
    on_done: Callable[[T], None],
) -> None:
    """Run flows on ``concurrency`` worker threads pulling from one iterator.

    On KeyboardInterrupt no new row starts; rows already in flight finish and are journaled,
    then the interrupt is raised again. An error in a worker stops the others the same way
    and is raised here.
    """
    stop = threading.Event()
    take, report = threading.Lock(), threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            while not stop.is_set():
                with take:
                    flow = next(flows, None)
                if flow is None:
                    return
                outcome = drive_sync(client, flow, stop)
                with report:
                    on_done(outcome)
        except BaseException as exc:
            failures.append(exc)
            stop.set()

    threads = [
        threading.Thread(target=worker, name=f"surveykit-batch-{n}", daemon=True)
        for n in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(timeout=0.2)
    except KeyboardInterrupt:
        stop.set()
        for thread in threads:
            thread.join()
        raise
    if failures:
        raise failures[0]


async def run_async(
    client: Any,
    flows: Iterator[Flow[T]],
    *,
    concurrency: int,
    on_done: Callable[[T], None],
) -> None:
    """Run flows as ``concurrency`` worker tasks pulling from one iterator.

    A KeyboardInterrupt raised by ``on_done`` (a progress function's way to stop) stops
    the workers between rows, as on the sync side: rows in flight finish, no new row
    starts, and the interrupt is raised here, in the caller's task.
    """
    interrupts: list[KeyboardInterrupt] = []

    async def worker() -> None:
        for flow in flows:  # a shared iterator: each flow is taken by one worker
            if interrupts:
                flow.close()
                return
            outcome = await drive_async(client, flow)
            try:
                on_done(outcome)
            except KeyboardInterrupt as stop:
                # Raised inside a worker task, asyncio would re-raise it out of the
                # event loop itself (the notebook's, with top-level await).
                interrupts.append(stop)
                return

    tasks = [asyncio.ensure_future(worker()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    if interrupts:
        raise interrupts[0]


__all__ = [
    "Call",
    "Flow",
    "Send",
    "Sleep",
    "drive_async",
    "drive_sync",
    "request_flow",
    "run_async",
    "run_sync",
]
