"""Delivering events to callback receivers: one background thread per sandbox, FIFO.

The state hands every event that has a callback target to :meth:`CallbackDelivery.submit`
(under its lock, so in event order). A daemon thread, started with the first event, takes
them one at a time and makes the HTTP requests with a sync ``httpx.Client``; request
handlers never wait for it. Rules (``docs/sandbox.md``, "Callback delivery"):

* the URLs are tried in order; each gets ``retries`` attempts (at least one); an attempt
  succeeds on any 2xx answer; anything else (another status, a refused connection, a
  timeout) is a failed attempt, journaled as a ``callback`` entry like a success;
* ``timeout_ms`` bounds each attempt and ``total_timeout_ms`` all attempts of one event
  (real time: the sandbox clock plays no part in network timeouts);
* POST sends the payload as a JSON body; GET sends its fields in the query string
  (booleans ``true``/``false``, MetaData as JSON, absent fields left out);
* with a secret, every request carries ``X-Surveykit-Signature: sha256=<hex>``, the HMAC
  of the body (POST) or the raw query string (GET) that ``surveykit.callbacks`` verifies;
* when every attempt failed, each failure action (Email, Sms) is journaled as an ``alert``;
* a 2xx answer to a Message or Keyword callback may carry a send request: the sandbox
  sends it to the respondent, keeping the original message's MessageID.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Final

import httpx

from surveykit.models import SendRequest
from surveykit.rules.signing import DEFAULT_SIGNATURE_HEADER, callback_signature
from surveykit.sandbox.http._routes import parse_send_request
from surveykit.sandbox.state import SandboxState
from surveykit.sandbox.state._errors import REJECTION_STATUS, Rejection, SandboxHTTPError
from surveykit.sandbox.state._records import CallbackTarget, Event, JournalEntry

RESPONSE_TYPES: Final = frozenset({"Message", "Keyword"})
"""Callback types whose answer may carry a message to send (the reference)."""
MAX_REPLY_BODY: Final = 64 * 1024
"""The largest answer body read from a receiver; a larger reply is refused."""
RETRY_DELAY: Final = 0.05
"""Seconds before the second attempt; doubled after each failure, at most 1 s."""
_USER_AGENT: Final = "surveykit-sandbox-callbacks"


@dataclass(frozen=True)
class _Job:
    """One event to deliver, with everything needed (the state may change meanwhile)."""

    generation: int
    seq: int
    type: str
    payload: dict[str, Any]
    target: CallbackTarget


class _ReplyTooLarge(Exception):
    """The receiver's answer body is larger than :data:`MAX_REPLY_BODY`."""


def query_params(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """A payload as GET query parameters, in the form the receiver reads.

    Booleans are ``true``/``false``, numbers their decimal form, MetaData compact JSON;
    fields that are null (and an empty MetaData) are left out.
    """
    params: list[tuple[str, str]] = []
    for name, value in payload.items():
        if value is None or (name == "MetaData" and not value):
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, list | dict):
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        else:
            text = str(value)
        params.append((name, text))
    return params


class CallbackDelivery:
    """The delivery worker of one sandbox (see the module's docstring for the rules).

    Args:
        state: the sandbox state (journal, events, sends of replies).
        retry_delay: seconds before the second attempt of a URL (then doubled, at most 1).
    """

    def __init__(self, state: SandboxState, *, retry_delay: float = RETRY_DELAY) -> None:
        self._state = state
        self._retry_delay = retry_delay
        self._cond = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._unfinished = 0
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def pending(self) -> int:
        """Events queued or being delivered."""
        with self._cond:
            return self._unfinished

    def submit(self, event: Event) -> None:
        """Queue an event (called by the state under its lock, so in event order)."""
        if not event.callback:
            return
        job = _Job(
            self._state.generation,
            event.seq,
            event.type,
            event.payload(),
            CallbackTarget.from_json(event.callback),
        )
        with self._cond:
            if self._closed:
                return
            self._queue.append(job)
            self._unfinished += 1
            if self._thread is None:
                # Started lazily: a sandbox that never delivers never has a thread.
                self._thread = threading.Thread(
                    target=self._run, daemon=True, name="surveykit-sandbox-callbacks"
                )
                self._thread.start()
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued event was delivered (or gave up); False on timeout.

        Messages sent in answer to callbacks make events of their own; those are waited
        for too, since they are queued before the answered event counts as finished.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._unfinished and not self._closed:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return self._unfinished == 0

    def close(self, timeout: float = 5.0) -> None:
        """Stop the worker; events not yet delivered stay undelivered. Safe to call twice.

        Waits at most ``timeout`` seconds for an attempt in flight (it cannot be cut short);
        the thread is a daemon, so it never keeps the process alive.
        """
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the worker thread ----------------------------------------------------------------

    def _run(self) -> None:
        # trust_env=False: a proxy set in the environment must not catch loopback receivers.
        with httpx.Client(
            trust_env=False, follow_redirects=False, headers={"User-Agent": _USER_AGENT}
        ) as client:
            while True:
                with self._cond:
                    while not self._queue and not self._closed:
                        self._cond.wait()
                    if self._closed:
                        self._unfinished = 0
                        self._cond.notify_all()
                        return
                    job = self._queue.popleft()
                try:
                    if job.generation == self._state.generation:
                        self._deliver(client, job)
                except Exception as exc:  # the worker must outlive any one event
                    self._journal(
                        job,
                        None,
                        None,
                        attempt=0,
                        url_attempt=0,
                        error=f"sandbox error: {type(exc).__name__}: {exc}",
                    )
                finally:
                    with self._cond:
                        self._unfinished = max(0, self._unfinished - 1)
                        self._cond.notify_all()

    def _sleep(self, seconds: float) -> bool:
        """Wait between attempts; False when the worker is being closed."""
        with self._cond:
            if not self._closed and seconds > 0:
                self._cond.wait(seconds)
            return not self._closed

    def _deliver(self, client: httpx.Client, job: _Job) -> None:
        target = job.target
        deadline = time.monotonic() + target.total_timeout_ms / 1000
        attempt = 0
        error = "no URL to deliver to"
        for url in target.urls:
            delay = self._retry_delay
            for url_attempt in range(1, max(1, target.retries) + 1):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    error = f"TotalTimeout of {target.total_timeout_ms} ms reached"
                    self._alert(job, attempt, error)
                    return
                attempt += 1
                timeout = min(target.timeout_ms / 1000, remaining)
                status: int | None = None
                body = b""
                try:
                    status, body = self._request(client, job, url, timeout)
                except httpx.TimeoutException:
                    error = f"no answer within {timeout * 1000:.0f} ms"
                except _ReplyTooLarge:
                    status, error = 200, "the answer body is over 64 KiB: reply refused"
                    body = b""
                except httpx.HTTPError as exc:
                    error = f"{type(exc).__name__}: {exc}"
                else:
                    error = "" if 200 <= status < 300 else f"HTTP {status}"
                if status is not None and 200 <= status < 300:
                    entry_error = error or None
                    self._succeeded(job, url, status, body, attempt, url_attempt, entry_error)
                    return
                self._journal(
                    job, url, status, attempt=attempt, url_attempt=url_attempt, error=error
                )
                if url_attempt < max(1, target.retries) or url != target.urls[-1]:
                    if not self._sleep(min(delay, max(0.0, deadline - time.monotonic()))):
                        return
                    delay = min(delay * 2, 1.0)
        self._alert(job, attempt, error)

    def _request(
        self, client: httpx.Client, job: _Job, url: str, timeout: float
    ) -> tuple[int, bytes]:
        secret = job.target.secret
        if job.target.method == "GET":
            request = client.build_request(
                "GET", url, params=tuple(query_params(job.payload)), timeout=timeout
            )
            signed = request.url.query  # the raw query string, exactly as it is sent
        else:
            signed = json.dumps(job.payload, ensure_ascii=False, separators=(",", ":")).encode()
            request = client.build_request(
                "POST",
                url,
                content=signed,
                timeout=timeout,
                headers={"Content-Type": "application/json"},
            )
        if secret:
            request.headers[DEFAULT_SIGNATURE_HEADER] = callback_signature(signed, secret)
        response = client.send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_REPLY_BODY:
                    # Read no further: an oversized answer is refused, not buffered.
                    raise _ReplyTooLarge
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)
        finally:
            response.close()

    def _succeeded(
        self,
        job: _Job,
        url: str,
        status: int,
        body: bytes,
        attempt: int,
        url_attempt: int,
        error: str | None,
    ) -> None:
        self._state.mark_delivered(job.seq, job.generation)
        entry = self._journal(
            job, url, status, attempt=attempt, url_attempt=url_attempt, error=error
        )
        if job.type not in RESPONSE_TYPES or entry is None or not body.strip():
            return
        # A response-type callback answered with a send request: send it to the respondent.
        reply: dict[str, Any]
        try:
            request = _parse_reply(body)
        except ValueError as exc:
            reply = {"outcome": "refused", "error": str(exc)}
        else:
            try:
                sent = self._state.send_callback_reply(job.seq, job.generation, request)
            except Rejection as refused:
                code, answer = REJECTION_STATUS, refused.body
            else:
                if sent is None:
                    return
                code, answer = 200, sent
            reply = {
                "outcome": "sent"
                if code == 200 and answer["MessageID"] != "Unknown"
                else "rejected",
                "status": code,
                "response": answer,
            }
        with self._state.transaction():
            entry.body = {**entry.body, "reply": reply}
        self._state.save_entry(entry)

    def _journal(
        self,
        job: _Job,
        url: str | None,
        status: int | None,
        *,
        attempt: int,
        url_attempt: int,
        error: str | None,
    ) -> JournalEntry | None:
        with self._state.transaction():
            if job.generation != self._state.generation:
                return None
            return self._state.record(
                "callback",
                method=job.target.method,
                path=url,
                status=status,
                message_id=job.payload.get("MessageID"),
                destination=job.payload.get("Destination"),
                source=job.payload.get("Source"),
                body={
                    "event": job.seq,
                    "type": job.type,
                    "attempt": attempt,
                    "urlAttempt": url_attempt,
                    "error": error or None,
                },
            )

    def _alert(self, job: _Job, attempts: int, error: str) -> None:
        with self._state.transaction():
            if job.generation != self._state.generation:
                return
            for action in job.target.actions:
                self._state.record(
                    "alert",
                    text=action,
                    message_id=job.payload.get("MessageID"),
                    body={
                        "action": action,
                        "event": job.seq,
                        "type": job.type,
                        "urls": list(job.target.urls),
                        "attempts": attempts,
                        "error": error,
                    },
                )


def _parse_reply(body: bytes) -> SendRequest:
    """The receiver's answer as a send request; ``ValueError`` says why it is refused."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ValueError(f"the answer is not JSON: {exc}") from None
    try:
        return parse_send_request(data)
    except SandboxHTTPError as exc:
        errors = exc.body.get("errors") if isinstance(exc.body, dict) else None
        detail = "; ".join(
            f"{name or 'body'}: {' '.join(messages)}" for name, messages in (errors or {}).items()
        ) or str(exc)
        raise ValueError(f"the answer is not a valid send request ({detail})") from None
