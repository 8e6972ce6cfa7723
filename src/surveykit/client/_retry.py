"""When a failed request may be sent again, and how long to wait first."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from surveykit.errors import RateLimitError

# Error statuses after which a write may have been acted on: the platform's rule.
from surveykit.rules.outcomes import OUTCOME_UNKNOWN_STATUSES

# Failures after which the server provably never saw the request: nothing was written to
# a connection (refused, DNS, TLS handshake, connect timeout, no free pooled connection).
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)

# Failures where the HTTP library refused to write the request (an illegal header value or
# request line): nothing went on the wire, and sending it again would fail the same way.
NOT_SENDABLE = (httpx.LocalProtocolError,)

RETRY_STATUSES = frozenset({429, 502, 503, 504})


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Read a Retry-After header: delay seconds (integer or decimal) or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds)


@dataclass
class RetryPolicy:
    """How many times and how patiently requests are retried.

    Idempotent requests (GET, DELETE, GetResults) are retried on connection errors,
    timeouts, 429, 502, 503 and 504. Sends (Message, SendEmail, Import, Keyword create and
    update, TinyUrl) are retried only when the request provably never reached the server;
    see :data:`NEVER_SENT`. A request the HTTP library refuses to write (an illegal header
    value, :data:`NOT_SENDABLE`) is never retried: it would fail the same way again.

    Attributes:
        max_retries: retries after the first attempt (0 disables retrying).
        backoff_base: the first wait in seconds; it doubles with each retry.
        backoff_max: the longest wait between attempts, in seconds.
        max_retry_after: a server's Retry-After longer than this is not waited for: the
            error is raised instead, with its ``retry_after``.
    """

    max_retries: int = 2
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_retry_after: float = 60.0
    _random: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")

    def backoff(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (1-based): exponential, with jitter."""
        ceiling = min(self.backoff_max, self.backoff_base * float(2 ** (attempt - 1)))
        # "Equal jitter": at least half the ceiling, so waits still grow.
        return ceiling / 2 + self._random.uniform(0, ceiling / 2)

    def delay_after_error(self, exc: Exception, attempt: int, *, idempotent: bool) -> float | None:
        """Seconds to wait before retrying after a transport error, or None to give up."""
        if attempt > self.max_retries or isinstance(exc, NOT_SENDABLE):
            return None
        if isinstance(exc, NEVER_SENT):
            return self.backoff(attempt)
        if (
            idempotent
            and isinstance(exc, httpx.TransportError)
            and not isinstance(exc, httpx.UnsupportedProtocol)
        ):
            return self.backoff(attempt)
        return None

    def delay_after_status(
        self, response: httpx.Response, attempt: int, *, idempotent: bool
    ) -> float | None:
        """Seconds to wait before retrying after an error status, or None to give up."""
        if not idempotent or attempt > self.max_retries:
            return None
        if response.status_code not in RETRY_STATUSES:
            return None
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        if retry_after is None:
            return self.backoff(attempt)
        return float(retry_after) if retry_after <= self.max_retry_after else None


MAX_RATE_LIMITED = 5
"""How many 429 answers one row of a batch waits out before its outcome is decided."""


def delay_after_rate_limit(
    result: object, times: int, *, limit: int = MAX_RATE_LIMITED
) -> float | None:
    """Seconds a batch waits before sending a row again after a 429, or None not to.

    A 429 is a refusal the platform did not act on, so even a send (not idempotent, which
    :class:`RetryPolicy` never sends twice) may go again; the batch does, between its other
    rows, rather than the client within one call. The wait is the answer's Retry-After,
    else 2, 4, 8, ... seconds.

    Args:
        result: what the row's send gave (a response, or the error it raised).
        times: how many 429s the row has already waited out.
        limit: how many it waits out at most.
    """
    if not isinstance(result, RateLimitError) or times >= limit:
        return None
    return result.retry_after if result.retry_after is not None else 2.0 ** (times + 1)


__all__ = [
    "MAX_RATE_LIMITED",
    "NEVER_SENT",
    "NOT_SENDABLE",
    "OUTCOME_UNKNOWN_STATUSES",
    "RETRY_STATUSES",
    "RetryPolicy",
    "delay_after_rate_limit",
    "parse_retry_after",
]
