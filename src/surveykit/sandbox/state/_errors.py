"""Error answers of the sandbox, raised by the state and rendered by the routes.

The state raises two kinds: a :class:`Rejection`, the platform's refusal of a send or a
lookup, which carries the answer's body (a SendResponse or LookupResponse) and no HTTP
status; and a :class:`Problem` (or :class:`TextError`), an error answer in the platform's
own forms. The routes render both (a Rejection as 400).
"""

from __future__ import annotations

from typing import Any

PROBLEM_TYPES = {
    400: "https://tools.ietf.org/html/rfc9110#section-15.5.1",
    401: "https://tools.ietf.org/html/rfc9110#section-15.5.2",
    403: "https://tools.ietf.org/html/rfc9110#section-15.5.4",
    404: "https://tools.ietf.org/html/rfc9110#section-15.5.5",
    405: "https://tools.ietf.org/html/rfc9110#section-15.5.6",
    409: "https://tools.ietf.org/html/rfc9110#section-15.5.10",
    413: "https://tools.ietf.org/html/rfc9110#section-15.5.14",
    415: "https://tools.ietf.org/html/rfc9110#section-15.5.16",
    429: "https://tools.ietf.org/html/rfc6585#section-4",
    500: "https://tools.ietf.org/html/rfc9110#section-15.6.1",
    502: "https://tools.ietf.org/html/rfc9110#section-15.6.3",
    503: "https://tools.ietf.org/html/rfc9110#section-15.6.4",
    504: "https://tools.ietf.org/html/rfc9110#section-15.6.5",
}

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}

VALIDATION_TITLE = "One or more validation errors occurred."


class SandboxHTTPError(Exception):
    """An error answer: status, body and how to render it (``json`` or ``text``)."""

    def __init__(
        self,
        status: int,
        body: Any,
        *,
        kind: str = "json",
        headers: dict[str, str] | None = None,
        root: str = "ProblemDetails",
    ) -> None:
        super().__init__(f"{status}: {body!r}")
        self.status = status
        self.body = body
        self.kind = kind
        self.headers = headers or {}
        self.root = root


def problem_body(
    status: int,
    detail: str | None = None,
    *,
    title: str | None = None,
    instance: str | None = None,
    errors: dict[str, list[str]] | None = None,
    extensions: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ProblemDetails body (RFC 9457), with ``errors`` for validation failures.

    ``extensions`` are extra members (RFC 9457 section 3.2), such as the ``references`` a
    404 for an unknown survey lists so the client can suggest the closest.
    """
    body: dict[str, Any] = {
        "type": PROBLEM_TYPES.get(status, "about:blank"),
        "title": title or TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "instance": instance,
    }
    if errors is not None:
        body["errors"] = errors
    body.update(extensions or {})
    return body


class Problem(SandboxHTTPError):
    """An error answered with a ProblemDetails body."""

    def __init__(
        self,
        status: int,
        detail: str | None = None,
        *,
        title: str | None = None,
        errors: dict[str, list[str]] | None = None,
        headers: dict[str, str] | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        body = problem_body(status, detail, title=title, errors=errors, extensions=extensions)
        root = "ValidationProblemDetails" if errors is not None else "ProblemDetails"
        super().__init__(status, body, headers=headers, root=root)


def validation(errors: dict[str, list[str]]) -> Problem:
    """A 400 validation failure, ASP.NET style: messages by field name."""
    return Problem(
        400, "See the errors property for details.", title=VALIDATION_TITLE, errors=errors
    )


class Rejection(Exception):
    """A send or lookup the platform refused by its rules, with the body it answers.

    The sandbox's own control flow (the routes turn it into a 400), not a
    :class:`~surveykit.SurveykitError`.

    A destination on the stop list or blocked, a landline or a failed lookup when the send
    asked for one, a problem sending, a lookup that failed. ``body`` is the SendResponse
    (or LookupResponse) body; the routes answer it with :data:`REJECTION_STATUS`.
    """

    def __init__(self, body: dict[str, Any]) -> None:
        status = body.get("Status", body.get("status"))
        super().__init__(f"refused with Status {status}")
        self.body = body


REJECTION_STATUS = 400
"""The HTTP status of a :class:`Rejection` (with an account callback, a destination check's
refusal is instead a 200 and a Lookup event: that is the state's decision, not an error)."""


class TextError(SandboxHTTPError):
    """An error answered with a plain-text message (SendEmail's controller failures)."""

    def __init__(self, text: str, status: int = 400) -> None:
        super().__init__(status, text, kind="text")


def errors_of(exc: ValueError) -> dict[str, list[str]]:
    """Pydantic errors as ASP.NET-style ``{field: [messages]}`` (wire field names)."""
    errors: dict[str, list[str]] = {}
    raw = getattr(exc, "errors", None)
    if not callable(raw):
        return {"": [str(exc)]}
    for error in raw():
        loc = [str(part) for part in error.get("loc", ())]
        message = str(error.get("msg", "invalid"))
        message = message.removeprefix("Value error, ")
        if loc:
            name = ".".join(loc)
        else:
            head, sep, _ = message.partition(":")
            name = head if sep and " " not in head else ""
        errors.setdefault(name, []).append(message)
    return errors
