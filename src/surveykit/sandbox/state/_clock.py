"""The sandbox clock and the injected faults: plain objects, no records.

:class:`Clock` only tells the time (what falls due is :mod:`._schedule`'s work);
:class:`Faults` holds the faults injected on matching requests, drawn from a RNG seeded
with the sandbox seed so that the same run hits the same requests.
"""

from __future__ import annotations

import fnmatch
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from surveykit.sandbox.state import _fields as fields

DEFAULT_START: Final = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
"""Where the sandbox clock starts: Monday 2 March 2026, 09:00 UTC."""

MAX_LATENCY: Final = 600.0
"""The longest injected latency, in seconds."""
MAX_RETRY_AFTER: Final = 86_400.0
"""The longest ``Retry-After`` an injected 429/503 may announce, in seconds (a day)."""
FAULT_SETTINGS: Final = (
    "route",
    "method",
    "status",
    "rate",
    "latency",
    "drop",
    "times",
    "retry_after",
)


@dataclass
class Fault:
    """A fault injected on matching requests.

    ``route`` is a glob on the path (``/v3.2/Message``, ``/v3.2/Message/*``, ``*``) and
    ``method`` an HTTP method or None for any. On a match (with probability ``rate``): wait
    ``latency`` seconds, then either answer ``status`` (with a ProblemDetails body and,
    for 429/503, ``Retry-After``), or drop the connection ``before`` or ``after``
    processing the request. ``times`` limits how many requests it hits.
    """

    id: int
    route: str = "*"
    method: str | None = None
    status: int | None = None
    rate: float = 1.0
    latency: float = 0.0
    drop: str | None = None
    times: int | None = None
    retry_after: float | None = None
    hits: int = 0

    def matches(self, method: str, path: str) -> bool:
        """Whether the fault applies to this request."""
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return fnmatch.fnmatchcase(path, self.route)

    def wire(self) -> dict[str, Any]:
        """The fault as the control API shows it."""
        return {
            "id": self.id,
            "route": self.route,
            "method": self.method,
            "status": self.status,
            "rate": self.rate,
            "latency": self.latency,
            "drop": self.drop,
            "times": self.times,
            "retryAfter": self.retry_after,
            "hits": self.hits,
        }


class Clock:
    """The sandbox clock: fixed until advanced (or, if ``realtime``, also moving with time).

    The clock only tells the time; the schedule's ``catch_up`` and the realtime ticker make
    what falls due happen.
    """

    def __init__(self, start: datetime = DEFAULT_START, *, realtime: bool = False) -> None:
        self._start = start
        self._realtime = realtime
        self._t0 = time.monotonic()

    def now(self) -> datetime:
        """The current sandbox time (UTC)."""
        if self._realtime:
            return self._start + timedelta(seconds=time.monotonic() - self._t0)
        return self._start

    def set(self, when: datetime) -> None:
        """Move the clock to ``when``."""
        self._start = when
        self._t0 = time.monotonic()


class Faults:
    """The faults in force, in the order they were added (see :class:`Fault`).

    Guarded by the state's lock; iterating gives a snapshot.
    """

    def __init__(self, seed: int, lock: threading.RLock) -> None:
        self._seed = seed
        self._lock = lock
        self._faults: list[Fault] = []
        self._ids = 0
        self._rng = random.Random(seed)

    def __iter__(self) -> Iterator[Fault]:
        with self._lock:
            return iter(list(self._faults))

    def __len__(self) -> int:
        with self._lock:
            return len(self._faults)

    def add(self, **settings: Any) -> Fault:
        """Add a fault (see :class:`Fault`); ``ValueError`` names a bad setting."""
        unknown = sorted(set(settings) - set(FAULT_SETTINGS))
        if unknown:
            raise ValueError(f"unknown fault settings: {unknown}")
        route = fields.text("route", settings.get("route", "*"), max_length=1024)
        method = fields.text("method", settings.get("method"), optional=True, max_length=16)
        status = fields.whole("status", settings.get("status"), low=400, high=599, optional=True)
        rate = fields.number("rate", settings.get("rate", 1.0), low=0.0, high=1.0)
        latency = fields.number("latency", settings.get("latency", 0.0), low=0.0, high=MAX_LATENCY)
        times = fields.whole("times", settings.get("times"), low=1, high=10**9, optional=True)
        retry_after = fields.number(
            "retryAfter", settings.get("retry_after"), low=0.0, high=MAX_RETRY_AFTER, optional=True
        )
        drop = settings.get("drop")
        if drop not in (None, "before", "after"):
            raise ValueError(f"drop: expected 'before', 'after' or None, got {drop!r}")
        if status is None and drop is None and not latency:
            raise ValueError("a fault needs a status, a drop mode or a latency")
        with self._lock:
            self._ids += 1
            fault = Fault(
                id=self._ids,
                route=route or "*",
                method=method,
                status=status,
                rate=rate if rate is not None else 1.0,
                latency=latency or 0.0,
                drop=drop,
                times=times,
                retry_after=retry_after,
            )
            self._faults.append(fault)
            return fault

    def clear(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()

    def reset(self) -> None:
        """Remove every fault and reseed the RNG: the next run hits the same requests."""
        with self._lock:
            self._faults.clear()
            self._rng = random.Random(self._seed)

    def pick(self, method: str, path: str) -> Fault | None:
        """The fault that hits this request, if any (seeded: the same run, the same hits)."""
        with self._lock:
            for fault in self._faults:
                if not fault.matches(method, path):
                    continue
                if fault.rate < 1.0 and self._rng.random() >= fault.rate:
                    continue
                fault.hits += 1
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
            return None


__all__ = ["DEFAULT_START", "Clock", "Fault", "Faults"]
