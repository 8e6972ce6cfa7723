"""Running a batch: the per-row flow written once, and the outcome of each row's send.

A row's flow is a :data:`~surveykit.client._flow.Flow` of the client's sans-IO engine
(steps: :class:`~surveykit.client._flow.Sleep` or a call ``f(client)``), driven by threads
(sync) or tasks (async) with the drivers of :mod:`surveykit.client._flow`, the same ones
that run every request of the clients.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from surveykit.batch._journal import Journal
from surveykit.batch._plan import RowPlan
from surveykit.client._flow import Flow, Sleep
from surveykit.client._retry import MAX_RATE_LIMITED, delay_after_rate_limit
from surveykit.errors import (
    BadRequestError,
    SendRejectedError,
    SurveykitError,
)
from surveykit.models import EmailRequest, NumberType, SendResponse, SendStatus
from surveykit.rules.outcomes import outcome_unknown

T = TypeVar("T")

OPTED_OUT = "on the opt-out list"
"""The error of a row given the outcome ``opted_out``."""


class TokenBucket:
    """A thread-safe token bucket: ``rate`` requests per second, bursts of ``burst``."""

    def __init__(self, rate: float | None, burst: int = 1) -> None:
        if rate is not None and rate <= 0:
            raise ValueError("rate: requests per second must be positive")
        self.rate = rate
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token; return how long to wait before using it (0 when one is free)."""
        if self.rate is None:
            return 0.0
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


def classify(result: Any, *, test: bool) -> tuple[str, dict[str, Any]]:
    """Turn a send's result (a SendResponse or an error) into a row outcome and fields."""
    if isinstance(result, SendResponse):
        fields = _send_fields(result)
        if result.status == SendStatus.BLOCKED:
            return "blocked", fields
        if result.number_type == NumberType.LANDLINE and result.status != SendStatus.SENT:
            return "landline", fields
        return ("tested" if test else "sent"), fields
    if isinstance(result, SendRejectedError):
        fields = _send_fields(result.send_response) | {"error": str(result)}
        sent = result.send_response
        if sent.status == SendStatus.BLOCKED:
            return "blocked", fields
        if sent.number_type == NumberType.LANDLINE:
            return "landline", fields
        return "failed", fields
    if isinstance(result, BadRequestError):
        # The platform refused the request by its rules (validation, no email route, bad
        # MetaData): sending it again unchanged would be refused again, so not "failed".
        text = str(result).lower()
        if "destination" in text and "invalid" in text:
            return "invalid", {"error": str(result)}
        return "rejected", {"error": str(result)}
    if not isinstance(result, SurveykitError):
        return "unknown", {"error": f"{type(result).__name__}: {result}"}
    # Provably not taken (never reached the platform, a 4xx, a 503): "failed", worth
    # sending again; anything else may have been acted on: "unknown", never resent.
    return ("unknown" if outcome_unknown(result) else "failed"), {"error": str(result)}


def _send_fields(response: SendResponse) -> dict[str, Any]:
    return {
        "message_id": response.message_id,
        "status": None if response.status is None else str(response.status),
        "carrier": response.carrier,
        "reachable": response.reachable,
        "number_type": None if response.number_type is None else str(response.number_type),
    }


@dataclass
class RowOutcome:
    """How one row ended in this run."""

    key: str
    outcome: str
    fields: dict[str, Any]
    attempts: int
    sent_now: bool


def row_flow(
    plan: RowPlan,
    *,
    journal: Journal | None,
    bucket: TokenBucket,
    test: bool,
    attempts: int,
    max_rate_limited: int = MAX_RATE_LIMITED,
    opted_out: Callable[[str], bool] | None = None,
) -> Flow[RowOutcome]:
    """Send one planned row: journal, rate limit, 429 handling, outcome. Never sends twice.

    ``opted_out`` is asked about the destination right before each request: a STOP that
    arrived after planning still stops the row (outcome ``opted_out``, nothing sent).
    """
    request = plan.request
    assert request is not None and plan.destination is not None
    if isinstance(request, EmailRequest):
        email = request

        def call(client: Any) -> Any:
            return client.messages.send_email(email)
    else:
        message = request

        def call(client: Any) -> Any:
            return client.messages.send(message)

    limited = 0
    while True:
        delay = bucket.reserve()
        if delay > 0:
            yield Sleep(delay)
        if opted_out is not None and opted_out(plan.destination):
            return RowOutcome(plan.key, "opted_out", {"error": OPTED_OUT}, attempts, False)
        attempts += 1
        if journal is not None:
            journal.mark_in_flight(plan.key, plan.destination, plan.text or "", attempts)
        result = yield call
        wait = delay_after_rate_limit(result, limited, limit=max_rate_limited)
        if wait is not None:
            # 429: the platform refused it without acting on it; wait as told and try again.
            limited += 1
            if journal is not None:
                journal.mark_pending(plan.key)
            yield Sleep(wait)
            continue
        outcome, fields = classify(result, test=test)
        if journal is not None:
            journal.record(plan.key, outcome, fields, attempts)
        return RowOutcome(plan.key, outcome, fields, attempts, sent_now=True)
