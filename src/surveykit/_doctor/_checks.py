"""``sk.doctor``: read-only checks of a configured platform, and a bundle for a bug report.

Each check is one line: the address and TLS, the token (``GET /v3.2/Webhook``), GetResults
of a survey in every format (each read by :func:`surveykit.read_results`), the formats
compared with one another (the first deviation: format, column, row and respondent,
values), a lookup and a ``test: true`` send when asked. Every HTTP exchange is recorded;
the bundle keeps the first kilobytes of each answer and its headers, with the
Authorization header and the token removed.
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import httpx

from surveykit._doctor._bundle import Recorder, bundle_files, write_bundle
from surveykit._doctor._compare import first_deviation
from surveykit.client import Client
from surveykit.client._redact import credentials
from surveykit.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    LookupFailedError,
    PermissionDeniedError,
    SendRejectedError,
    SurveykitError,
)
from surveykit.models import E164_DIGITS
from surveykit.results import read_results

if TYPE_CHECKING:
    import pandas as pd

    from surveykit.client import Client

FORMATS: Final = ("CSV", "PIPE", "TAB", "XML", "JSON")
"""The formats GetResults is asked for, in this order (the first readable one is the base)."""
OPTIONAL_FORMATS: Final = frozenset({"TAB"})
"""Formats the reference does not name: a platform that refuses one (400) passes."""
TEST_SOURCE: Final = "surveykit"
"""The branded source of the ``test: true`` send (nothing is sent)."""


@dataclass(frozen=True)
class DoctorCheck:
    """One check: its name, whether it passed, and what was found (or the first problem)."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """The check as one printed line: ``ok``/``FAIL``, its name, the detail."""
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.name:<13} {self.detail}"


@dataclass(frozen=True)
class DoctorReport:
    """What :func:`doctor` found: one :class:`DoctorCheck` per check, in order.

    Attributes:
        checks: the checks.
        bundle: where the bug-report bundle was written, or None.
    """

    checks: tuple[DoctorCheck, ...]
    bundle: Path | None = None

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return all(check.ok for check in self.checks)

    def __getitem__(self, name: str) -> DoctorCheck:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"no check {name!r}; checks are {[c.name for c in self.checks]}")

    def __iter__(self) -> Iterator[DoctorCheck]:
        return iter(self.checks)

    def __len__(self) -> int:
        return len(self.checks)

    def lines(self) -> list[str]:
        """One line per check, as ``surveykit doctor`` prints them."""
        return [check.line() for check in self.checks]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_frame(self) -> pd.DataFrame:
        """The checks as a DataFrame (name, ok, detail)."""
        import pandas as pd

        rows = [asdict(check) for check in self.checks]
        return pd.DataFrame(rows, columns=["name", "ok", "detail"])


def _loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _tls_problem(error: BaseException) -> str | None:
    """The certificate or handshake problem behind a connection error, in plain words."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return f"the server's certificate was refused: {current.verify_message or current}"
        if isinstance(current, ssl.SSLError):
            return f"the TLS handshake failed: {current.reason or current}"
        text = str(current)
        if "CERTIFICATE_VERIFY_FAILED" in text:
            return f"the server's certificate was refused: {text}"
        current = current.__cause__ or current.__context__
    return None


def _status_detail(error: APIStatusError) -> str:
    text = str(error)
    _, _, tail = text.partition(f"-> {error.status_code}: ")
    return f"HTTP {error.status_code}: {tail or text}"


def _number(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not E164_DIGITS.fullmatch(value):
        raise ValueError(
            f"{name}: expected E.164 digits without '+' (pattern ^[1-9][0-9]{{1,14}}$), "
            f"got {value!r}"
        )
    return value


class _Doctor:
    def __init__(self, client: Client, recorder: Recorder) -> None:
        self.client = client
        self.recorder = recorder
        self.checks: list[DoctorCheck] = []

    def add(self, name: str, ok: bool, detail: str) -> None:
        self.checks.append(DoctorCheck(name, ok, detail))

    def call(self, label: str, operation: Any) -> Any:
        """Run one client call under ``label``; its exception is returned, not raised."""
        self.recorder.label = label
        try:
            return operation()
        except (SurveykitError, httpx.HTTPError) as error:
            if not isinstance(error, APIStatusError):
                self.recorder.failed(error)
            return error

    # ------------------------------------------------------------------ the checks

    def connection(self) -> bool:
        """address, tls and token; whether the platform answered and took the token."""
        base = self.client.base_url or ""
        parts = urlsplit(base)
        embedded = self.client.embedded is not None
        answer = self.call("token", self.client.webhooks.list)
        tls_problem = _tls_problem(answer) if isinstance(answer, BaseException) else None
        unreachable = isinstance(answer, APIConnectionError | APITimeoutError | httpx.HTTPError)
        if embedded:
            self.add("address", True, f"{base}: the in-process sandbox (no network)")
            self.add("tls", True, "not used: the in-process sandbox has no network")
        elif parts.scheme not in ("http", "https"):
            self.add("address", False, f"{base}: the scheme must be http or https")
            self.add("tls", False, "not checked: no usable address")
            unreachable = True
        elif tls_problem is not None:
            self.add("address", True, f"{base}: {parts.hostname} accepts connections")
            self.add("tls", False, f"{parts.hostname}: {tls_problem}")
        elif unreachable:
            self.add("address", False, f"{base}: no answer: {answer}")
            self.add("tls", False, "not checked: the address did not answer")
        else:
            status = answer.status_code if isinstance(answer, APIStatusError) else 200
            self.add("address", True, f"{base}: answers (HTTP {status})")
            if parts.scheme == "https":
                self.add("tls", True, f"https: the certificate of {parts.hostname} is valid")
            elif _loopback(parts.hostname):
                self.add("tls", True, "plain http on loopback: nothing crosses the network")
            else:
                self.add(
                    "tls",
                    False,
                    f"plain http to {parts.hostname}: the token crosses the network "
                    "unencrypted; use https",
                )
        if tls_problem is not None or unreachable:
            self.add("token", False, "not checked: the platform did not answer")
            return False
        if isinstance(answer, AuthenticationError):
            self.add(
                "token",
                False,
                f"refused: GET /v3.2/Webhook answered 401; check --token or SURVEYKIT_TOKEN "
                f"({_status_detail(answer)})",
            )
            return False
        if isinstance(answer, PermissionDeniedError):
            self.add("token", False, f"GET /v3.2/Webhook answered 403: {_status_detail(answer)}")
            return True
        if isinstance(answer, BaseException):
            self.add("token", False, f"GET /v3.2/Webhook: {answer}")
            return True
        self.add("token", True, f"accepted: GET /v3.2/Webhook lists {len(answer)} webhooks")
        return True

    def results(self, survey: str) -> None:
        """One line per format, then the formats compared."""
        frames: dict[str, pd.DataFrame] = {}
        for fmt in FORMATS:
            name = f"results {fmt}"
            text = self.call(name, lambda fmt=fmt: self.client.surveys.get_results(survey, fmt))
            if isinstance(text, APIStatusError):
                if fmt in OPTIONAL_FORMATS and text.status_code == 400:
                    self.add(
                        name, True, f"not offered (HTTP 400); {fmt} is not in the reference"
                    )
                else:
                    self.add(name, False, f"GetResults {survey!r}: {_status_detail(text)}")
                continue
            if isinstance(text, BaseException):
                self.add(name, False, f"GetResults {survey!r}: {text}")
                continue
            try:
                frame = read_results(text, fmt)
            except (SurveykitError, ValueError) as error:
                self.add(name, False, f"unreadable as {fmt}: {error}")
                continue
            except Exception as error:  # a reader's bug is a finding too, not a traceback
                self.add(name, False, f"unreadable as {fmt}: {type(error).__name__}: {error}")
                continue
            frames[fmt] = frame
            self.add(name, True, f"{len(frame)} rows, {len(frame.columns)} columns")
        if len(frames) < 2:
            self.add("results agree", False, "not compared: fewer than two formats were read")
            return
        (base_name, base), *others = frames.items()
        for other_name, other in others:
            deviation = first_deviation(base_name, base, other_name, other)
            if deviation is not None:
                self.add("results agree", False, deviation)
                return
        self.add(
            "results agree",
            True,
            f"{', '.join(frames)} give the same {len(base)} rows, {len(base.columns)} "
            "columns and values",
        )

    def lookup(self, number: str) -> None:
        answer = self.call("lookup", lambda: self.client.messages.lookup(number))
        if isinstance(answer, LookupFailedError):
            looked = answer.lookup_response
            self.add("lookup", False, f"{number}: the lookup failed (status {looked.status})")
        elif isinstance(answer, APIStatusError):
            self.add("lookup", False, f"{number}: {_status_detail(answer)}")
        elif isinstance(answer, BaseException):
            self.add("lookup", False, f"{number}: {answer}")
        else:
            reach = "reachable" if answer.reachable else "unreachable"
            self.add(
                "lookup",
                True,
                f"{number}: {answer.status}, {answer.number_type}, {answer.carrier}, {reach}",
            )

    def test_send(self, number: str, source: str) -> None:
        answer = self.call(
            "test send",
            lambda: self.client.messages.send(
                destination=number,
                source=source,
                message="surveykit doctor: a routing test (test: true, nothing is sent)",
                reply=False,
                test=True,
            ),
        )
        if isinstance(answer, SendRejectedError):
            sent = answer.send_response
            self.add("test send", False, f"{number}: refused (Status {sent.status})")
        elif isinstance(answer, APIStatusError):
            self.add("test send", False, f"{number}: {_status_detail(answer)}")
        elif isinstance(answer, BaseException):
            self.add("test send", False, f"{number}: {answer}")
        elif answer.created:
            self.add(
                "test send",
                False,
                f"{number}: a test send created a transaction ({answer.message_id}); "
                "the reference says nothing is sent",
            )
        else:
            self.add("test send", True, f"{number}: routing found (Status {answer.status})")


# ---------------------------------------------------------------------- the entry point


def doctor(
    client: Client,
    *,
    survey: str | None = None,
    lookup: str | None = None,
    test_send: str | None = None,
    bundle: str | PathLike[str] | None = None,
    test_source: str = TEST_SOURCE,
) -> DoctorReport:
    """Check a configured platform with read-only calls; optionally write a bug-report bundle.

    The checks, one :class:`DoctorCheck` each: ``address`` (scheme, reachable), ``tls``
    (certificate errors in plain words), ``token`` (``GET /v3.2/Webhook``; a 401 names
    ``--token`` and ``SURVEYKIT_TOKEN``), ``results CSV`` ... ``results JSON`` (GetResults
    of ``survey`` in each format, read by :func:`surveykit.read_results`; TAB, not in the
    reference, passes when refused with a 400), ``results agree`` (the first deviation
    between formats: which format, column, row and respondent, which values), ``lookup``
    (with ``lookup``) and ``test send`` (with ``test_send``: a ``test: true`` message,
    which the platform routes but does not send). Checks that need an answer are not run
    when the platform did not answer or refused the token (they fail as "not checked").

    Args:
        client: a :class:`~surveykit.Client` (the sync client).
        survey: the survey reference for GetResults; ``"*"`` (every survey) by default.
        lookup: a number (E.164 digits) to look up.
        test_send: a number (E.164 digits) to send a ``test: true`` message to.
        bundle: a folder, or a ``.zip`` file, to write for a bug report: the checks, and
            for each HTTP exchange its request line and headers and the answer's status,
            headers and first 4 KiB, without the Authorization header or the token.
        test_source: the source of the test send (a branded name by default).

    Returns:
        A :class:`DoctorReport`: ``.ok`` only when every check passed.

    Raises:
        ValueError: ``lookup`` or ``test_send`` is not E.164 digits, or ``bundle`` is a file.
        TypeError: ``client`` is not a sync :class:`~surveykit.Client`.

    Example:
        >>> report = sk.doctor(client, survey="CSAT-SMS-2026", bundle="doctor.zip")
        >>> print(report)
    """
    if not isinstance(client, Client):
        raise TypeError(f"client: expected a surveykit.Client, got {type(client).__name__}")
    lookup = _number(lookup, "lookup")
    test_send = _number(test_send, "test_send")
    target = Path(bundle) if bundle is not None else None
    if target is not None and target.suffix.lower() != ".zip" and target.is_file():
        raise ValueError(f"bundle: {target} exists and is not a folder")
    with Recorder(client._http) as recorder:
        checker = _Doctor(client, recorder)
        if checker.connection():
            checker.results(survey or "*")
            if lookup is not None:
                checker.lookup(lookup)
            if test_send is not None:
                checker.test_send(test_send, test_source)
        else:
            for name in (*(f"results {f}" for f in FORMATS), "results agree"):
                checker.add(name, False, "not checked: see address, tls and token")
            for name, asked in (("lookup", lookup), ("test send", test_send)):
                if asked is not None:
                    checker.add(name, False, "not checked: see address, tls and token")
    report = DoctorReport(tuple(checker.checks), target)
    if target is not None:
        secrets = client._secrets
        for exchange in recorder.exchanges:
            secrets = secrets | credentials(exchange.request)
        checks = [asdict(check) for check in report.checks]
        files = bundle_files(report.lines(), checks, recorder.exchanges, secrets)
        write_bundle(target, files, secrets)
    return report


__all__ = ["DoctorCheck", "DoctorReport", "doctor"]
