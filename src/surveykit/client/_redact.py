"""Keep credentials out of errors: redact them from quoted bodies, drop them from requests.

A proxy's error page may echo the request's headers, token included; an error that quotes
that body, keeps it, or keeps the request it answered would carry the token into
``str(exc)``, tracebacks, logs and pickles. :func:`scrub_error` is applied to every error
a client raises: each credential the request carried (the ``Authorization`` value and its
credential part, and the client's configured token) is replaced by ``***`` in the message,
the body, the parsed models and the kept response's content and headers, and the
credential headers are removed from the kept request.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote

import httpx

REDACTED: Final = "***"

CREDENTIAL_HEADERS: Final = ("authorization", "proxy-authorization")
"""Request headers that carry credentials: dropped from a request kept on an error."""

MIN_SECRET_LENGTH: Final = 4
"""Shorter values are not searched for (replacing every ``a`` would garble the message)."""


def credentials(request: httpx.Request | None, extra: Iterable[str | None] = ()) -> list[str]:
    """The secret strings to hide: credential header values, their credential part, ``extra``."""
    found: set[str] = {value for value in extra if value}
    if request is not None:
        for name in CREDENTIAL_HEADERS:
            for value in request.headers.get_list(name):
                found.add(value.strip())
                found.add(value.strip().partition(" ")[2].strip())
    variants: set[str] = set()
    for secret in found:
        if len(secret) < MIN_SECRET_LENGTH:
            continue
        # As quoted in JSON and in a URL too (some error pages echo the query or a JSON dump).
        variants.update({secret, json.dumps(secret)[1:-1], quote(secret, safe="")})
    return sorted(variants, key=len, reverse=True)  # longest first: a header before its part


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``***``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _redact_value(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if type(value) is dict:
        return {_redact_value(k, secrets): _redact_value(v, secrets) for k, v in value.items()}
    if type(value) in (list, tuple):  # not subclasses: a namedtuple cannot be rebuilt so
        return type(value)(_redact_value(v, secrets) for v in value)
    return value


def strip_credentials(request: httpx.Request | None) -> None:
    """Remove the credential headers from ``request`` (in place)."""
    if request is None:
        return
    for name in CREDENTIAL_HEADERS:
        if name in request.headers:
            del request.headers[name]


def _clean_response(response: httpx.Response, secrets: list[str]) -> httpx.Response:
    try:
        content = response.content
    except httpx.ResponseNotRead:
        content = b""
    text = content.decode("utf-8", "surrogateescape")
    cleaned = redact(text, secrets).encode("utf-8", "surrogateescape")
    headers = [(k, redact(v, secrets)) for k, v in response.headers.multi_items()]
    extensions: dict[str, Any] = {
        key: response.extensions[key]
        for key in ("http_version", "reason_phrase")
        if key in response.extensions
    }
    fresh = httpx.Response(
        response.status_code,
        headers=headers,
        content=cleaned,
        request=response.request,
        extensions=extensions,
    )
    if "content-length" in response.headers:
        fresh.headers["content-length"] = str(len(cleaned))
    return fresh


def scrub_error(
    error: BaseException, request: httpx.Request | None, extra: Iterable[str | None] = ()
) -> None:
    """Remove the credentials of ``request`` (and ``extra``) from ``error``, in place.

    The message (``args``), ``body``, ``problem``, ``send_response``, ``lookup_response``,
    ``response`` and ``request`` of the error, and of the errors chained to it, are
    cleaned; the request's credential headers are deleted.
    """
    secrets = credentials(request, extra)
    # Whether credentials went with the request outlives their removal (a 401 then says
    # "refused the token" rather than "needs a token").
    with contextlib.suppress(TypeError):
        vars(error).setdefault(
            "credentials_sent", request is not None and "authorization" in request.headers
        )
    strip_credentials(request)
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        _scrub_one(current, secrets)
        current = current.__cause__ or current.__context__


def _scrub_one(error: BaseException, secrets: list[str]) -> None:
    if secrets:
        error.args = tuple(_redact_value(arg, secrets) for arg in error.args)
    attributes = vars(error)
    with contextlib.suppress(AttributeError, RuntimeError):
        strip_credentials(getattr(error, "request", None))
    if not secrets:
        return
    if "body" in attributes:
        attributes["body"] = _redact_value(attributes["body"], secrets)
    for name in ("problem", "send_response", "lookup_response"):
        model = attributes.get(name)
        if model is None:
            continue
        try:
            attributes[name] = type(model).model_validate_json(
                redact(model.model_dump_json(by_alias=True), secrets)
            )
        except (ValueError, TypeError, AttributeError):
            attributes[name] = None
    response = attributes.get("response")
    if isinstance(response, httpx.Response):
        attributes["response"] = _clean_response(response, secrets)
