"""The exceptions surveykit raises: every public one is defined here, and exported as ``sk.*``.

The names in parentheses below say where each is raised. Exceptions a module uses for its
own control flow (the command line's one-line errors, the sandbox's refusals, a parser's
"step aside") are private to that module and are not a :class:`SurveykitError`.

Everything derives from :class:`SurveykitError`, so ``except sk.SurveykitError`` catches every
error of surveykit's own; the errors about bad input are also :class:`ValueError`::

    SurveykitError
    ├── ValidationError             arguments refused before anything was sent (also a
    │                               ValueError): one sentence per field, the field, the
    │                               value's problem and the expected form
    ├── ConfigurationError          bad settings (a base URL without a scheme, a token over
    │                               plain http to another machine, ...) (also a ValueError)
    ├── ColumnMappingError          DataFrame columns that cannot be mapped to import fields
    │                               (also a ValueError)
    ├── TemplateError               a message template that cannot be used (also a ValueError;
    │                               surveykit.batch)
    ├── JournalError                a batch journal that cannot be trusted: empty, not a
    │   │                           journal, damaged, or unwritable (a full disk); names
    │   │                           the file and the problem (surveykit.batch)
    │   ├── JournalMismatchError    a batch journal written by another batch (also a
    │   │                           ValueError)
    │   └── JournalLockedError      a journal another run holds, by any of the file's
    │                               names (names its pid and host; also a RuntimeError)
    ├── StoreClosedError            an event store used after it was closed (also a
    │                               RuntimeError; surveykit.callbacks)
    ├── APIConnectionError          the request provably never reached the server
    ├── APITimeoutError             a read-only request timed out (after its retries)
    ├── OutcomeUnknownError         a send may or may not have reached the server
    ├── APIStatusError              the server answered with an error status
    │   ├── BadRequestError             400
    │   │   ├── SendRejectedError       400 with a Send response (landline, blocked, stop list)
    │   │   └── LookupFailedError       400 with a LookupResponse (the lookup failed)
    │   ├── AuthenticationError         401
    │   ├── PermissionDeniedError       403
    │   ├── NotFoundError               404
    │   ├── ConflictError               409 (a keyword that exists, a slashtag in use)
    │   ├── RateLimitError              429
    │   ├── ServerError                 5xx
    │   │   └── ServerOutcomeUnknownError   500, 502, 504 to a send (also an OutcomeUnknownError)
    │   └── UnexpectedResponseError     a success status with a body that cannot be read
    ├── ResultsParseError           results that cannot be read (format, record, byte offset)
    │                               (also a ValueError)
    ├── AnalysisInputError          data an estimate cannot use (names the column, row, value)
    ├── CodebookError               a codebook or codebook file that is not valid (names the
    │                               question, field or row; surveykit.report)
    ├── LabelError                  an answer the codebook does not know (.column, .row,
    │                               .value; surveykit.report)
    ├── ExportError                 data SPSS, Stata or Excel cannot take (surveykit.report)
    ├── RakingError                 targets or data that raking cannot use (names the column
    │   │                           and level; sk.weights)
    │   └── RakingConvergenceError  margins not all met within max_iter (names the worst)
    ├── WeightsError                weights that are missing, negative or sum to zero
    ├── PlotError                   a chart that cannot be drawn from the data (sk.plots)
    ├── OptOutError                 an opt-out list or number it cannot use (surveykit.optouts)
    ├── DispositionError            an AAPOR disposition code it cannot use (sk.outcome_rates)
    └── ImportStoppedError          import_frame stopped at a 404 (surveykit.respondents):
                                    .result has every row, .cause is the NotFoundError; it is
                                    not a NotFoundError, so catch it by name

One exception stands outside the tree on purpose::

    KeyboardInterrupt
    └── BatchInterrupted            a batch stopped by Ctrl-C or a kernel interrupt
                                    (surveykit.batch): .result has every row so
                                    far. Were it a SurveykitError it would be an Exception,
                                    and ``except Exception`` would swallow the interrupt

Warnings are not errors: ``surveykit.results.ResultsNotice`` (a ``UserWarning``) tells what a
reader decided for the caller, such as ``column_1``... names for a headerless payload.

A 500, 502 or 504 in answer to a send (message, email, import, keyword, short link) may come
after the platform acted on it, so its :class:`ServerOutcomeUnknownError` is both a
:class:`ServerError` (status, body, response) and an :class:`OutcomeUnknownError` (never
retried; check before resending). A 503 means the platform did not take the request
(RFC 9110: "currently unable to handle the request"): a plain :class:`ServerError`.

A :class:`ValidationError` keeps the error it was made from (pydantic's, for the models'
rules) as ``__cause__``; its own message names no library.

Every exception here pickles and unpickles with its type, message and fields (``request``,
``response``, ``body``, ``result``...), so it travels back from a ``multiprocessing`` or
``concurrent.futures`` worker, or joblib: pickle rebuilds it without calling ``__init__``
(its fields are keyword-only), from its ``args`` and attributes. As with any exception,
``__cause__``, ``__context__`` and the traceback stay behind.

Errors never carry a credential the client was given: the token, a password in the base
URL, or a header whose name says it holds one (``Authorization``, ``Cookie``, ``X-Api-Key``,
``Proxy-Authorization``, a name with ``token``, ``secret``, ``key``, ``auth``...). Requests
are described by method and URL only (the URL holds no password); each credential is
replaced by ``***`` in messages, bodies and kept responses, also when a server echoed it
URL-encoded or in base64; the kept request has no credential header. Their pickles neither.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (10 ms at startup)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import httpx
    import pandas as pd

    from surveykit.batch import BatchResult
    from surveykit.models import LookupResponse, ProblemDetails, SendResponse

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AnalysisInputError",
    "AuthenticationError",
    "BadRequestError",
    "BatchInterrupted",
    "CodebookError",
    "ColumnMappingError",
    "ConfigurationError",
    "ConflictError",
    "DispositionError",
    "ExportError",
    "ImportStoppedError",
    "JournalError",
    "JournalLockedError",
    "JournalMismatchError",
    "LabelError",
    "LookupFailedError",
    "NotFoundError",
    "OptOutError",
    "OutcomeUnknownError",
    "PermissionDeniedError",
    "PlotError",
    "RakingConvergenceError",
    "RakingError",
    "RateLimitError",
    "ResultsParseError",
    "SendRejectedError",
    "ServerError",
    "ServerOutcomeUnknownError",
    "StoreClosedError",
    "SurveykitError",
    "TemplateError",
    "UnexpectedResponseError",
    "ValidationError",
    "WeightsError",
]


def _rebuild(cls: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    # Like BaseException's own unpickling, but without calling __init__ (whose fields are
    # keyword-only): pickle then restores the attributes from the state.
    return cls.__new__(cls, *args)


class _Travels(BaseException):
    """Pickles as its type, ``args`` and attributes: rebuilt without calling ``__init__``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), self.args), vars(self) or None


class SurveykitError(_Travels, Exception):
    """Base class of every error surveykit raises."""


class ConfigurationError(SurveykitError, ValueError):
    """The client was configured in a way that is unsafe or incomplete."""


class ValidationError(SurveykitError, ValueError):
    """Arguments refused before anything was sent: one sentence per field.

    Each sentence names the field, what is wrong with the value, and the form expected,
    for example ``destination: '+447911123456' is not in the expected form; expected E.164
    digits without '+' or leading zeros (for example 447911123456).``

    Attributes:
        problems: ``(field, sentence)`` pairs in the order they were found; the message is
            the sentences joined by spaces.
    """

    problems: tuple[tuple[str, str], ...]

    def __init__(self, problems: Sequence[tuple[str, str]] | str) -> None:
        if isinstance(problems, str):
            field, _, _ = problems.partition(":")
            problems = [(field.strip() if _ else "", problems)]
        self.problems = tuple(problems)
        super().__init__(" ".join(sentence for _, sentence in self.problems))

    @property
    def fields(self) -> list[str]:
        """The fields named, in order, each once."""
        return list(dict.fromkeys(field for field, _ in self.problems))


class ColumnMappingError(SurveykitError, ValueError):
    """The columns of a DataFrame cannot be mapped to import properties unambiguously."""


class AnalysisInputError(SurveykitError, ValueError):
    """Data an estimate in :mod:`surveykit.analysis` cannot use.

    A question or grouping column that is not in the frame, a rating with text answers,
    weights that are missing, negative or sum to zero: the message names the column and,
    where there is one, the row label and the value.
    """


def _describe(request: httpx.Request | None) -> str:
    # Method and URL only: headers carry the token.
    return f"{request.method} {request.url}" if request is not None else "request"


class APIConnectionError(SurveykitError):
    """The request could not be delivered, and provably never reached the server.

    Raised after the retries allowed for the request were used up.
    """

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class APITimeoutError(SurveykitError):
    """A read-only request timed out, after the retries it was allowed."""

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class OutcomeUnknownError(SurveykitError):
    """A non-idempotent request (a send) failed in a way that leaves its outcome unknown.

    The request may have reached the server and been acted on (for example a timeout after
    the body was sent, a connection reset before the response, or a gateway's 502 or 504:
    see :class:`ServerOutcomeUnknownError`). surveykit never retries it by itself: check the
    platform (or the sandbox journal) before sending again.

    Attributes:
        request: the :class:`httpx.Request` whose outcome is unknown.
        cause: the transport error, or None when the server answered with an error status.
    """

    request: httpx.Request | None
    cause: BaseException | None

    def __init__(
        self, message: str, *, request: httpx.Request | None = None, cause: BaseException | None
    ) -> None:
        super().__init__(message)
        self.request = request
        self.cause = cause


class APIStatusError(SurveykitError):
    """The server answered with an error status.

    Attributes:
        status_code: the HTTP status.
        body: the parsed JSON body, or the text body when it is not JSON.
        problem: the body as :class:`~surveykit.models.ProblemDetails` when it is one.
        response: the :class:`httpx.Response`.
        request: the :class:`httpx.Request` that was answered.
    """

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        body: Any = None,
        problem: ProblemDetails | None = None,
    ) -> None:
        super().__init__(message)
        self.response = response
        self.request = response.request
        self.status_code = response.status_code
        self.body = body
        self.problem = problem


class BadRequestError(APIStatusError):
    """400: the platform refused the request (validation, routing, problem sending)."""


class SendRejectedError(BadRequestError):
    """400 whose body is a Send response: a landline, a blocked or a stop-listed number.

    ``send_response`` holds the platform's answer (MessageID ``Unknown``, the Status,
    Reachable and NumberType that explain the rejection).
    """

    def __init__(
        self, message: str, *, response: httpx.Response, body: Any, send_response: SendResponse
    ) -> None:
        super().__init__(message, response=response, body=body)
        self.send_response = send_response


class LookupFailedError(BadRequestError):
    """400 whose body is a LookupResponse: the platform could not look the number up.

    ``lookup_response`` holds the platform's answer (its status, ``Error`` or another,
    and whatever carrier, reachability and number type it still reports).
    """

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        body: Any,
        lookup_response: LookupResponse,
    ) -> None:
        super().__init__(message, response=response, body=body)
        self.lookup_response = lookup_response


class AuthenticationError(APIStatusError):
    """401: authentication missing or invalid."""


class PermissionDeniedError(APIStatusError):
    """403: the account lacks a permitted role (sa, Admin or Organization for email)."""


class NotFoundError(APIStatusError):
    """404: for example an import reference the platform does not know.

    ``suggestions`` holds the known references closest to an unknown survey or import
    reference (when the platform listed them, as the sandbox does), best first.
    """

    suggestions: tuple[str, ...] = ()


class ConflictError(APIStatusError):
    """409: the request conflicts with what exists (a duplicate keyword or slashtag)."""


class RateLimitError(APIStatusError):
    """429: too many requests. ``retry_after`` is the server's wait in seconds, if given."""

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        body: Any = None,
        problem: ProblemDetails | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, response=response, body=body, problem=problem)
        self.retry_after = retry_after


class ServerError(APIStatusError):
    """5xx: the platform failed."""


# The ignore: ``request`` is ``Request | None`` on OutcomeUnknownError and ``Request`` on
# APIStatusError; here it is always the answered request, which satisfies both.
class ServerOutcomeUnknownError(OutcomeUnknownError, ServerError):  # type: ignore[misc]
    """500, 502 or 504 in answer to a send: it may have been acted on before the failure.

    A gateway's 502 or 504 can come after it forwarded the request and the platform acted
    on it; a 500 after the platform handed a message to routing. So this is an
    :class:`OutcomeUnknownError` (never retried; check before resending; ``unknown`` in a
    batch) and a :class:`ServerError` (``status_code``, ``body``, ``response``). Read-only
    requests get a plain :class:`ServerError` after their retries.
    """

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        body: Any = None,
        problem: ProblemDetails | None = None,
    ) -> None:
        ServerError.__init__(self, message, response=response, body=body, problem=problem)
        self.cause = None


class UnexpectedResponseError(APIStatusError):
    """The server answered with a success status but a body surveykit cannot read."""


class ResultsParseError(SurveykitError, ValueError):
    """Survey results that cannot be read.

    Attributes:
        detail: the message without the location that follows it.
        format: the format being read (CSV, PIPE, TAB, XML or JSON).
        offset: the byte offset in the payload where the problem was seen, if known.
        line: the 1-based line number, if known.
        record: the 0-based record (row) number, if known.
    """

    def __init__(
        self,
        message: str,
        *,
        format: str,
        offset: int | None = None,
        line: int | None = None,
        record: int | None = None,
    ) -> None:
        where = [f"format {format}"]
        if line is not None:
            where.append(f"line {line}")
        if record is not None:
            where.append(f"record {record}")
        if offset is not None:
            where.append(f"byte offset {offset}")
        super().__init__(f"{message} ({', '.join(where)})")
        self.detail = message  # the message without its location
        self.format = format
        self.offset = offset
        self.line = line
        self.record = record


def describe_request(request: httpx.Request | None) -> str:
    """Describe a request for an error message: method and URL, never headers."""
    return _describe(request)


class TemplateError(SurveykitError, ValueError):
    """A template that cannot be used (bad syntax, or a field that no column provides)."""


class JournalError(SurveykitError):
    """A batch journal that cannot be trusted to know what was sent, so nothing is sent.

    The message names the file, what was found (empty, not a surveykit journal, damaged,
    a write that failed) and how to go on. A raw ``sqlite3`` error never reaches the caller.

    Attributes:
        journal: the journal's path, as given.
        problem: what is wrong with it (the message without the path).
    """

    def __init__(self, journal: str, problem: str) -> None:
        super().__init__(f"journal {journal}: {problem}")
        self.journal = journal
        self.problem = problem


class JournalMismatchError(JournalError, ValueError):
    """The journal file was written by a different batch (other template, source, ...)."""


class JournalLockedError(JournalError, RuntimeError):
    """The journal is held by another run (this process or another one), by any name.

    A journal is locked by the file itself, so a symlink or a hard link to a held journal
    is refused too.

    Attributes:
        journal: the journal's path, as given.
        holder: what the holder recorded in the journal (pid, host, since), if readable.
    """

    def __init__(self, journal: str, holder: dict[str, object] | None, waited: float) -> None:
        if holder:
            who = (
                f"process {holder.get('pid')} on host {holder.get('host')}"
                f" (since {holder.get('since')})"
            )
        else:
            who = "another process"
        how = f"after waiting {waited:g} s" if waited else "and journal_timeout is 0"
        # The sentence starts "journal X is in use", not "journal X: ...": kept as it was.
        SurveykitError.__init__(
            self,
            f"journal {journal} is in use by {who}; refused {how}. A journal is held by "
            "one run at a time, whatever name it is opened by: wait for that run to finish "
            "(or stop it), or pass a journal timeout to wait for it",
        )
        self.journal = journal
        self.problem = str(self).removeprefix(f"journal {journal} ")
        self.holder = holder


class BatchInterrupted(_Travels, KeyboardInterrupt):
    """A batch stopped by Ctrl-C or a kernel interrupt; ``result`` holds every row so far.

    Rows in flight when the interrupt came were finished and journaled; rows not started
    have outcome ``skipped`` with error ``interrupted``. Re-run with the same journal to go on.
    """

    def __init__(self, result: BatchResult) -> None:
        super().__init__("batch interrupted; the journal is consistent, re-run to resume")
        self.result = result


class StoreClosedError(SurveykitError, RuntimeError):
    """The event store was closed; nothing more can be written to it."""


class CodebookError(SurveykitError, ValueError):
    """A codebook, or a codebook file, that is not valid; the message names the row or field."""


class LabelError(SurveykitError, ValueError):
    """An answer the codebook does not know.

    Attributes:
        column: the question (column) holding the answer.
        row: the row label of the first such answer.
        value: the answer.
    """

    def __init__(self, message: str, *, column: str, row: object, value: object) -> None:
        super().__init__(message)
        self.column = column
        self.row = row
        self.value = value


class ExportError(SurveykitError, ValueError):
    """A frame (or its codebook) that cannot be written in the asked format."""


class RakingError(SurveykitError, ValueError):
    """Targets or data that :func:`rake` cannot use; the message names column and level.

    Attributes:
        column: the raking column concerned (None when the problem is not one column's).
        level: the level concerned, if any.
        row: the row label concerned, if any.
    """

    def __init__(
        self, message: str, *, column: Any = None, level: Any = None, row: Any = None
    ) -> None:
        super().__init__(message)
        self.column = column
        self.level = level
        self.row = row


class RakingConvergenceError(RakingError):
    """The margins (and trim bounds) were not all met within ``max_iter`` iterations.

    ``column`` and ``level`` name the worst margin; ``gap`` is its distance from the target
    (as a share) and ``weights`` the last weights tried (a Series, for inspection only).
    """

    def __init__(
        self, message: str, *, column: Any, level: Any, gap: float, weights: pd.Series
    ) -> None:
        super().__init__(message, column=column, level=level)
        self.gap = gap
        self.weights = weights


class WeightsError(SurveykitError, ValueError):
    """Weights that :func:`summary` cannot describe (missing, negative, zero sum...)."""


class PlotError(SurveykitError, ValueError):
    """Data a chart cannot show as asked (names the question)."""


class OptOutError(SurveykitError, ValueError):
    """A value given to the opt-out list is not a number or an email address."""



class DispositionError(SurveykitError, ValueError):
    """An AAPOR disposition code or argument the rates cannot use (the message names it)."""

class ImportStoppedError(SurveykitError):
    """The import stopped early: the platform does not know the reference (404).

    ``result`` holds every row's outcome (the rows not sent say why, and the rows of
    earlier chunks keep the platform's answers); ``cause`` is the
    :class:`~surveykit.NotFoundError` that stopped it (also ``__cause__``).

    It is a :class:`~surveykit.SurveykitError` but not a :class:`~surveykit.NotFoundError`:
    ``except sk.NotFoundError`` does not catch it. Catch it by name::

        try:
            outcome = sk.import_frame(client, "CSAT-2026", df)
        except sk.ImportStoppedError as exc:
            outcome = exc.result  # every row of df
            status = exc.cause.status_code  # 404
    """

    def __init__(self, message: str, *, result: pd.DataFrame, cause: NotFoundError) -> None:
        super().__init__(message)
        self.result = result
        self.cause = cause
