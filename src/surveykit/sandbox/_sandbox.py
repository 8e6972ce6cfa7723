"""The :class:`Sandbox`: a stateful simulation of the v3.2 platform, and its controls."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from surveykit.models import CallbackSettings
from surveykit.sandbox._sandbox_respondents import RespondentControls
from surveykit.sandbox.data._behaviour import RespondentModel
from surveykit.sandbox.data._seed import GENERATED_SURVEY_ID, generated_survey
from surveykit.sandbox.http._app import SandboxApp
from surveykit.sandbox.runtime._delivery import CallbackDelivery
from surveykit.sandbox.runtime._ticker import RealtimeTicker
from surveykit.sandbox.state import DEFAULT_START, Fault, SandboxState, callback_target
from surveykit.sandbox.state._records import (
    CallbackTarget,
    Event,
    JournalEntry,
    MessageRecord,
    ShortLink,
    Survey,
)
from surveykit.sandbox.state._store import MemoryStore, SQLiteStore

if TYPE_CHECKING:
    import pandas as pd

    from surveykit.report import Codebook

IN_PROCESS_URL = "http://sandbox.localhost"
"""The base URL of an in-process sandbox (``.localhost`` counts as loopback)."""


class Sandbox(RespondentControls):
    """A stateful, deterministic simulation of the v3.2 platform, as an ASGI app.

    Use it in-process (``Client.sandbox(sandbox)``, no network) or serve it with
    ``surveykit sandbox serve``. It holds the sample surveys, keywords and webhooks of
    ``sample_data/``, applies the reference's rules on every route, and records what it
    received in a journal; faults, the clock and respondents' actions are under your
    control. See ``docs/sandbox.md``.

    Args:
        seed: makes tokens, MessageIDs, short links and generated answers; the same seed
            and the same calls give the same results.
        db: a SQLite file to keep the state in (it survives a restart); memory when None.
        sample_data: start with the sample account data (False: email routes only).
        start: where the clock starts (default Monday 2026-03-02 09:00 UTC).
        realtime: let the clock also move with real time (default: only ``advance``);
            what falls due then happens by itself (a background thread) and before every
            operation and read.
        base_url: the address the app is known by (short links on its own host use the
            address of each request instead).
        results_layout: the layout GetResults answers in: ``"documented"``
            (``docs/results-format.md``) or another one a platform may send (see
            :data:`surveykit.results.LAYOUTS`), to try readers against it.
        respondents: simulate respondents over the clock (default: not); True, a mapping
            of proportions or a :class:`~surveykit.sandbox.RespondentModel`, as
            :meth:`set_respondent_model` takes them.

    Example:
        >>> sandbox = Sandbox(seed=7)
        >>> client = Client.sandbox(sandbox)
        >>> client.messages.send(destination="447700900123", source="447700900100",
        ...                      message="Hi", reply=True).message_id
        'MS...'
        >>> sandbox.journal("message")[0].destination
        '447700900123'
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        db: str | os.PathLike[str] | None = None,
        sample_data: bool = True,
        start: datetime = DEFAULT_START,
        realtime: bool = False,
        base_url: str = IN_PROCESS_URL,
        results_layout: str = "documented",
        respondents: RespondentModel | Mapping[str, Any] | bool | None = None,
    ) -> None:
        from surveykit.results._layouts import check_layout

        store = SQLiteStore(db) if db is not None else MemoryStore()
        self._state = SandboxState(
            seed=seed,
            store=store,
            sample_data=sample_data,
            start=start,
            realtime=realtime,
            respondents=RespondentModel.of(respondents),
        )
        self.app = SandboxApp(self._state)
        """The Starlette ASGI application."""
        self.app.results_layout = check_layout(results_layout)
        self._delivery = CallbackDelivery(self._state)
        self._state.event_sink = self._delivery.submit
        self.app.sandbox_delivery = self._delivery
        self._ticker: RealtimeTicker | None = None
        if realtime:
            self._ticker = RealtimeTicker(self._state)
            self._state.due_sink = self._ticker.wake
            if self._state.next_due() is not None:  # held sends restored from ``db``
                self._ticker.wake()
        self.base_url = base_url
        """Where clients reach the app (in-process: ``http://sandbox.localhost``)."""
        self.seed = seed

    def __repr__(self) -> str:
        now = self.now().isoformat()
        return f"Sandbox(base_url={self.base_url!r}, seed={self.seed}, now={now!r})"

    # ----------------------------------------------------------------- identity

    @property
    def admin_token(self) -> str:
        """The token of the admin user (roles: Admin), which may send email."""
        return self._token("admin")

    @property
    def restricted_token(self) -> str:
        """The token of a user whose account lacks sa, Admin and Organization (no email)."""
        return self._token("restricted")

    def _token(self, name: str) -> str:
        for user in self._state.users.values():
            if user.name == name:
                return user.token
        raise LookupError(name)

    @property
    def state(self) -> SandboxState:
        """The state behind the app (for tests and tools that need more than the controls)."""
        return self._state

    # ----------------------------------------------------------------- controls

    def reset(self) -> None:
        """Back to the sample data, the start time, an empty journal and no faults."""
        self._state.reset()

    def now(self) -> datetime:
        """The sandbox clock (UTC)."""
        return self._state.now()

    def advance(self, by: float | timedelta) -> datetime:
        """Move the clock forward by seconds or a timedelta; return the new time.

        Messages scheduled by ``when`` or ``window`` go out when their time comes, and
        reply windows (``timeout``) close, in time order.
        """
        delta = by if isinstance(by, timedelta) else timedelta(seconds=by)
        return self._state.advance(delta)

    def journal(
        self, kind: str | None = None, *, path: str | None = None, after: int = 0
    ) -> list[JournalEntry]:
        """What the sandbox received and accepted, oldest first.

        Args:
            kind: ``request`` (every HTTP request, with status and injected fault),
                ``message`` or ``email`` (every send accepted: one entry per send),
                ``inbound`` (simulated replies), ``callback`` (every delivery attempt of
                an event: URL in ``path``, ``status``, ``body`` with ``attempt`` and
                ``error``), ``alert`` (failure actions), or None for all; ``refused``:
                the latest requests refused before their body was read (method, path,
                status, ``body={"size": declared}``, the reason in ``text``; a ring of
                ``REFUSED_KEPT``, numbered apart, never with their body).
            path: only requests to this path (``/v3.2/Message``).
            after: only entries with a larger sequence number.
        """
        with self._state.transaction():
            entries = self._state.refused if kind == "refused" else self._state.journal
            return [
                entry
                for entry in entries
                if entry.seq > after
                and (kind is None or entry.kind == kind)
                and (path is None or entry.path == path)
            ]

    def journal_frame(self, kind: str | None = None, *, path: str | None = None) -> pd.DataFrame:
        """:meth:`journal` as a pandas DataFrame, one row per entry."""
        import pandas as pd

        rows = [entry.to_json() for entry in self.journal(kind, path=path)]
        columns = [f.name for f in dataclasses.fields(JournalEntry)]
        frame = pd.DataFrame(rows, columns=columns)
        frame["at"] = pd.to_datetime(frame["at"], utc=True)
        return frame

    def messages(self, *, channel: str | None = None) -> list[MessageRecord]:
        """Every message and email accepted, by MessageID (``channel="Email"`` for email)."""
        with self._state.transaction():
            return [
                m for m in self._state.messages.values() if channel is None or m.channel == channel
            ]

    def events(self, type: str | None = None) -> list[Event]:
        """Messaging events recorded for callbacks (Receipt, Stop, Keyword, Click...).

        ``event.payload()`` is the callback body the platform would send.
        """
        with self._state.transaction():
            return [e for e in self._state.events if type is None or e.type == type]

    def inject_fault(
        self,
        route: str = "*",
        *,
        method: str | None = None,
        status: int | None = None,
        rate: float = 1.0,
        latency: float = 0.0,
        drop: str | None = None,
        times: int | None = None,
        retry_after: float | None = None,
    ) -> Fault:
        """Make matching ``/v3.2`` requests fail.

        Args:
            route: a glob on the path: ``"/v3.2/Message"``, ``"/v3.2/Message/*"``, ``"*"``.
            method: only this HTTP method (None: any).
            status: answer this status (400-599) with a ProblemDetails body, without
                processing the request; 429 and 503 carry ``Retry-After``.
            rate: the probability a matching request is hit (seeded, so repeatable).
            latency: seconds to wait before anything else.
            drop: ``"before"``: close the connection without processing the request;
                ``"after"``: process it (a send is accepted and journaled), then close the
                connection without a response. Served by uvicorn the socket is closed;
                in-process, ``before`` raises ``httpx.ConnectError`` (as if refused) and
                ``after`` raises ``httpx.RemoteProtocolError``.
            times: hit at most this many requests, then the fault is removed.
            retry_after: the ``Retry-After`` seconds of a 429 or 503 (default 1).
        """
        return self._state.faults.add(
            route=route,
            method=method,
            status=status,
            rate=rate,
            latency=latency,
            drop=drop,
            times=times,
            retry_after=retry_after,
        )

    def clear_faults(self) -> None:
        """Remove every injected fault."""
        self._state.faults.clear()

    def faults(self) -> list[Fault]:
        """The faults in force, with how many requests each has hit."""
        with self._state.lock:
            return list(self._state.faults)

    def simulate_reply(self, from_number: str, text: str, *, to: str | None = None) -> Event:
        """A respondent's inbound message arrives; returns the event it produced.

        STOP puts ``from_number`` on the stop list (later sends are Blocked), UNSTOP takes
        it off, HELP and INFO are recorded, a keyword of the account is a Keyword event
        (with the keyword's response sent back), and other text is a Message event about
        the last open reply message sent to that number; if that message has a surveyId,
        the text is recorded as the answer to the respondent's next question.

        Args:
            from_number: the respondent's number, E.164 digits.
            text: what they wrote.
            to: the number they wrote to (default: the source of the last message sent to
                them).
        """
        return self._state.reply(from_number, text, to)

    def simulate_answers(
        self,
        survey_reference: str,
        respondent: str | None = None,
        answers: dict[str, Any] | None = None,
    ) -> str:
        """Survey answers arrive; returns the respondent's id.

        Args:
            survey_reference: the survey.
            respondent: a respondent id, mobile number or email address; None picks the
                first respondent who has not completed.
            answers: question key to answer (``{"Q1": "5"}``); None answers every open
                question with values drawn from the seed.
        """
        return self._state.answers(survey_reference, respondent, answers)

    def follow_link(self, short_url: str, *, by: str | None = None) -> str:
        """A respondent follows a short link: the click is counted; returns the full URL.

        The Click event carries the MessageID of the message the link was sent in: the
        latest one to ``by`` (the respondent's number or address) whose text holds the
        link, or without ``by`` the only message holding it (else ``Unknown``).
        """
        parts = urlsplit(short_url)
        code = parts.path.strip("/")
        link = self._state.find_link(parts.hostname, code)
        if link is None:
            raise KeyError(f"no short link {short_url!r}")
        return self._state.click(link, short_url, by)

    def simulate_status(self, message_id: str, status: str) -> Event:
        """A carrier progress update arrives: a Receipt event with ``status``.

        For example ``Enroute``, ``Buffered``, ``Read``, ``Rejected`` or ``Undeliverable``
        (the reference lists no values); the message's status becomes ``status``.
        """
        return self._state.carrier_status(message_id, status)

    def links(self) -> list[ShortLink]:
        """Every short link, with its click count."""
        with self._state.lock:
            return list(self._state.links.values())

    def stop_list(self) -> list[str]:
        """The numbers and email addresses on the stop list (lower case), sorted."""
        with self._state.lock:
            return sorted(self._state.stop_list)

    def add_to_stop_list(self, address: str) -> None:
        """Put a number or an email address on the stop list."""
        self._state.add_stop(address)

    def remove_from_stop_list(self, address: str) -> bool:
        """Take a number or email address off the stop list; whether it was on it."""
        return self._state.remove_stop(address)

    def set_account_callback(
        self,
        url: str | Sequence[str] | None,
        *,
        method: str = "POST",
        retries: int = 3,
        timeout_ms: int = 30_000,
        total_timeout_ms: int = 90_000,
        action: str | Sequence[str] | None = None,
        secret: str | None = None,
    ) -> CallbackTarget | None:
        """Configure (or, with None, remove) the account's callback; returns the settings.

        Every event without a callback of its own (an email's ``Callback``) is delivered
        with these settings by a background thread (``docs/sandbox.md``). With a callback
        configured, a landline or blocked destination is also answered 200 (not 400) and
        reported as a Lookup event, as the reference describes.

        Args:
            url: the callback URL, or a list of URLs tried in order (fallbacks).
            method: ``POST`` (JSON body) or ``GET`` (payload in the query string).
            retries: attempts per URL (the reference: "number of attempts on an
                individual URL"; 0 counts as 1).
            timeout_ms: the longest one attempt may take, in milliseconds.
            total_timeout_ms: the longest all attempts of one event may take.
            action: failure alerts, ``"Email"``, ``"Sms"`` or both (``"Email,Sms"``),
                journaled as ``alert`` entries when every attempt failed.
            secret: sign every callback (also those to an email's own Callback URL) with
                this shared secret, as ``surveykit.callbacks`` verifies it: the header
                ``X-Surveykit-Signature: sha256=<hex HMAC>`` of the raw body (POST) or the
                raw query string (GET). None sends them unsigned.

        Raises:
            ValueError: a URL that is not http(s), an unknown method or action, a
                negative retry count, a timeout below 1 ms or an empty secret.

        Example:
            >>> with sk.listen(secret="s3cret") as listener:          # doctest: +SKIP
            ...     sandbox.set_account_callback(listener.url, secret="s3cret")
        """
        if url is None:
            self._state.set_account_callback(None)
            return None
        settings = CallbackSettings.model_validate(
            {
                "Url": url if isinstance(url, str) else list(url),
                "Method": method,
                "Retries": retries,
                "Timeout": timeout_ms,
                "TotalTimeout": total_timeout_ms,
                "Action": action if action is None or isinstance(action, str) else list(action),
            }
        )
        target = callback_target(settings, secret=secret)
        self._state.set_account_callback(target)
        return target

    def account_callback(self) -> CallbackTarget | None:
        """The account's callback settings (None when none is set)."""
        with self._state.lock:
            return self._state.account_callback

    def wait_for_deliveries(self, timeout: float = 30.0) -> None:
        """Block until every event queued for delivery was delivered or given up on.

        Events made meanwhile (receipts of a message a receiver answered with) are waited
        for too.

        Raises:
            TimeoutError: when events are still pending after ``timeout`` seconds.
        """
        if not self._delivery.wait(timeout):
            raise TimeoutError(
                f"{self._delivery.pending} callback deliveries still pending after {timeout:g} s"
            )

    def codebook(self, reference: str) -> Codebook:
        """The codebook of a survey: its questions' texts, kinds, value labels, missing codes.

        The platform has no codebook endpoint; the sandbox derives one from the survey's
        questions (see :mod:`surveykit.sandbox.data._codebook`). Over HTTP:
        ``GET /_sandbox/surveys/{reference}/codebook``.

        Raises:
            KeyError: naming a reference no survey has.
        """
        from surveykit.sandbox.data._codebook import survey_codebook

        with self._state.transaction():
            survey = self._state.find_survey(reference)
        if survey is None:
            raise KeyError(f"no survey with the reference {reference!r}")
        return survey_codebook(survey)

    def add_survey(self, survey: Survey) -> None:
        """Add (or replace) a survey and its import definition."""
        self._state.put_survey(survey)

    def add_generated_survey(
        self,
        reference: str,
        rows: int,
        *,
        questions: int = 10,
        seed: int | None = None,
        nasty: bool = False,
        survey_id: int = GENERATED_SURVEY_ID,
        wave: int = 0,
        design: bool = False,
    ) -> Survey:
        """Add a survey of ``rows`` generated respondents, for benchmarks.

        Its results are drawn chunk by chunk from :mod:`surveykit.sandbox.generator` when
        GetResults asks for them, so millions of rows cost no memory here. Over HTTP:
        ``POST /_sandbox/surveys/generate``; served: ``--generate REF:ROWS``.

        Args:
            reference: the survey reference (it replaces the definition of a survey of
                that reference; respondents already imported to it stay).
            rows: how many respondents (0 or more).
            questions: how many questions, ``Q1``..``Qn`` (1 or more).
            seed: the generator's seed (default: the sandbox's).
            nasty: add the hostile values (emoji, delimiters, line breaks in answers...).
            survey_id: the survey's id.
            wave: 0 for uniform ratings; 1, 2, ... for the waves of a tracking survey
                (ratings that differ by channel and rise a little each wave).
            design: draw a panel's stratified, clustered sample: the results get the
                columns ``region`` (strata), ``household`` (PSUs of 1 to 4 respondents who
                answer alike) and ``baseWeight`` (inverse selection probabilities), for
                ``sk.Design(df, weights="baseWeight", strata="region", psu="household")``;
                every other column is the same as without it.

        Raises:
            ValueError: naming the field, for a value out of range or of the wrong type.
        """
        survey = generated_survey(
            reference,
            rows,
            questions=questions,
            seed=self.seed if seed is None else seed,
            nasty=nasty,
            survey_id=survey_id,
            wave=wave,
            design=design,
        )
        self.add_survey(survey)
        return survey

    def close(self) -> None:
        """Stop the background threads, write what is pending, close the SQLite file.

        Events not yet delivered stay undelivered (``event.delivered`` is False).
        """
        if self._ticker is not None:
            self._ticker.close()
        self._delivery.close()
        with self._state.lock:
            self._state.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
