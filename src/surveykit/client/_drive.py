"""Multi-step flows over a client's calls, written once and driven sync or async.

A flow (chunked import, batch send, list cleaning) is a generator that yields steps, either
:class:`Wait` or a call ``f(client)``, and receives each call's result or the
:class:`~surveykit.SurveykitError` it raised. :func:`drive_sync` runs the calls directly,
:func:`drive_async` awaits them; nothing else differs. :func:`run_sync` and
:func:`run_async` run many flows at a given concurrency (threads or tasks).

One level up from the request-level generator of :mod:`surveykit.client._base` (whose steps
are HTTP sends and sleeps): these steps are whole client calls, each with its own retries.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from surveykit.errors import SurveykitError

T = TypeVar("T")


@dataclass(frozen=True)
class Wait:
    """A step: sleep this many seconds."""

    seconds: float


Call = Callable[[Any], Any]
CallFlow = Generator[Wait | Call, Any, T]


def drive_sync(client: Any, flow: CallFlow[T], stop: threading.Event | None = None) -> T:
    """Run a flow with a sync client."""
    value: Any = None
    while True:
        try:
            step = flow.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        if isinstance(step, Wait):
            if stop is not None and stop.wait(step.seconds):
                flow.close()
                raise KeyboardInterrupt
            value = None
            continue
        try:
            value = step(client)
        except SurveykitError as exc:
            value = exc


async def drive_async(client: Any, flow: CallFlow[T]) -> T:
    """Run a flow with an async client."""
    value: Any = None
    while True:
        try:
            step = flow.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        if isinstance(step, Wait):
            await asyncio.sleep(step.seconds)
            value = None
            continue
        try:
            value = await step(client)
        except SurveykitError as exc:
            value = exc


def run_sync(
    client: Any,
    flows: Iterator[CallFlow[T]],
    *,
    concurrency: int,
    on_done: Callable[[T], None],
) -> None:
    """Run row flows on ``concurrency`` worker threads pulling from one iterator.

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
    flows: Iterator[CallFlow[T]],
    *,
    concurrency: int,
    on_done: Callable[[T], None],
) -> None:
    """Run row flows as ``concurrency`` worker tasks pulling from one iterator.

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


__all__ = ["Call", "CallFlow", "Wait", "drive_async", "drive_sync", "run_async", "run_sync"]
