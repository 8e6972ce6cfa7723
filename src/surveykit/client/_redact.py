"""Keep credentials out of everything surveykit writes or raises: the one home of redaction.

A client knows the credentials it was given (:class:`Secrets`): the token, a password in the
base URL, and the values of headers whose names say they carry one (``Authorization``,
``Cookie``, ``X-Api-Key``, ``Proxy-Authorization``, any name with ``token``, ``secret``,
``key``, ``auth``, ``session``...). A proxy's error page may echo them, plainly or encoded;
an error that quotes that page, keeps it, or keeps the request it answered would carry them
into ``str(exc)``, tracebacks, logs, pickles and a batch journal's ``error`` column. So:

* :func:`scrub_error` is applied to every error a client raises: each credential, in every
  form :class:`Secrets` recognises, is replaced by ``***`` in the message, the body, the
  parsed models and the kept response's content and headers (of the error and of those
  chained to it), and the credential headers are removed from the kept request;
* :func:`guard_logs` installs, while a client is open, a filter on the loggers of httpx,
  httpcore, aiohttp and surveykit that rewrites each record's message the same way (httpcore
  logs response headers verbatim at DEBUG, and a server may echo a credential in one);
* the doctor's bundle redacts each answer with the same :class:`Secrets` before cutting it.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import html
import json
import logging
import re
import threading
import traceback
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote, quote_plus

import httpx

REDACTED: Final = "***"

CREDENTIAL_HEADERS: Final = ("authorization", "proxy-authorization", "cookie", "x-api-key")
"""Request headers that carry credentials, whatever else :func:`is_credential_header` finds."""

_SECRET_NAME: Final = re.compile(
    r"auth|token|secret|passw|pwd|api-?key|apikey|access-?key|private-?key|session|cookie"
    r"|credential|signature",
    re.IGNORECASE,
)

MIN_SECRET_LENGTH: Final = 4
"""Shorter values are not searched for (replacing every ``a`` would garble the message)."""

MIN_FRAGMENT_LENGTH: Final = 8
"""Shortest base64 fragment searched for inside a longer base64 text."""

_B64_ALPHABET: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
)

LOGGERS: Final = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "aiohttp.client",
    "aiohttp.internal",
    "surveykit",
)
"""The loggers a client's requests write to (a logger's filter does not apply to its children,
so each is named)."""


def is_credential_header(name: str) -> bool:
    """Whether a header named ``name`` carries a credential (by its name)."""
    return name.lower() in CREDENTIAL_HEADERS or _SECRET_NAME.search(name) is not None


def header_secrets(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The credential values of ``headers``, found by the headers' names.

    Each value, its part after a scheme word (``Basic <token>``), and each cookie's value.
    """
    found: list[str] = []
    for name, value in headers:
        if not is_credential_header(name):
            continue
        value = value.strip()
        found += [value, value.partition(" ")[2].strip()]
        if name.lower() == "cookie":
            found += [part.partition("=")[2].strip() for part in value.split(";")]
    return found


def _b64_forms(secret: str, usernames: frozenset[str]) -> set[str]:
    """``secret`` in base64: whole, after a user name, or as a part of a longer text."""
    raw = secret.encode("utf-8", "surrogateescape")
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        # Whole: the token, and a Basic pair (``user:token``) for each known user.
        for prefix in ("", ":", *(f"{user}:" for user in usernames)):
            forms.add(encode(prefix.encode() + raw).decode().rstrip("="))
        # Anywhere in a longer base64 text: the characters that only the secret's bytes
        # decide, for each of its three alignments (:meth:`Secrets.redact` takes the groups
        # on either side too, which mix a few of its bytes with their neighbours').
        for skip in range(3):
            middle = raw[skip:]
            core = encode(middle[: len(middle) // 3 * 3]).decode()
            if len(core) >= MIN_FRAGMENT_LENGTH:
                forms.add(core)
    return forms


@functools.lru_cache(maxsize=64)
def _compiled(
    values: frozenset[str], usernames: frozenset[str]
) -> tuple[re.Pattern[str], frozenset[str]] | None:
    """One pattern of every form of ``values`` (literals: fast), and the base64 ones."""
    literals: set[str] = set()
    encoded: set[str] = set()
    for secret in values:
        # As quoted in JSON, in a URL, in HTML (error pages echo a query or a JSON dump).
        literals.update(
            {
                secret,
                json.dumps(secret)[1:-1],
                quote(secret, safe=""),
                quote(secret),
                quote_plus(secret),
                html.escape(secret),
            }
        )
        encoded.update(_b64_forms(secret, usernames))
    if not literals:
        return None
    # Longest first: a header value before its credential part.
    forms = sorted(literals | encoded, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, forms))), frozenset(encoded - literals)


def _widen(text: str, start: int, end: int, floor: int) -> tuple[int, int]:
    # A base64 form's neighbouring group (up to 4 characters each side) and its padding.
    reach = start
    while reach > max(floor, start - 4) and text[reach - 1] in _B64_ALPHABET:
        reach -= 1
    stop = end
    while stop < min(len(text), end + 4) and text[stop] in _B64_ALPHABET:
        stop += 1
    while stop < min(len(text), end + 6) and text[stop] == "=":
        stop += 1
    return reach, stop


class Secrets:
    """The credentials to hide, and every form of them :meth:`redact` recognises.

    Forms: plain; quoted in JSON, in a URL (``%XX`` or ``+``) and in HTML; base64 and
    URL-safe base64 of the value, of ``:value`` and of ``user:value`` for each known user
    name, and the part of any longer base64 text that encodes the value. Values shorter than
    :data:`MIN_SECRET_LENGTH` characters are not searched for. The repr shows no value.
    """

    __slots__ = ("usernames", "values")

    def __init__(self, values: Iterable[str | None] = (), usernames: Iterable[str | None] = ()):
        cleaned = (value.strip() for value in values if value)
        self.values = frozenset(value for value in cleaned if len(value) >= MIN_SECRET_LENGTH)
        self.usernames = frozenset(name for name in usernames if name)

    def __or__(self, other: Secrets) -> Secrets:
        return Secrets(self.values | other.values, self.usernames | other.usernames)

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return f"<Secrets: {len(self.values)} hidden>"

    def redact(self, text: str) -> str:
        """``text`` with every form of every secret replaced by ``***``."""
        compiled = _compiled(self.values, self.usernames)  # once per set of secrets
        if compiled is None:
            return text
        pattern, encoded = compiled
        pieces: list[str] = []
        done = 0
        for match in pattern.finditer(text):
            start, end = match.span()
            if end <= done:
                continue
            if match.group() in encoded:
                start, end = _widen(text, start, end, done)
            pieces += [text[done : max(start, done)], REDACTED]
            done = end
        return "".join(pieces) + text[done:] if pieces else text


def credentials(
    request: httpx.Request | None,
    extra: Iterable[str | None] = (),
    usernames: Iterable[str | None] = (),
) -> Secrets:
    """The secrets to hide: ``request``'s credential header values, and ``extra``."""
    found = list(extra)
    if request is not None:
        found += header_secrets(request.headers.multi_items())
    return Secrets(found, usernames)


def redact(text: str, secrets: Secrets) -> str:
    """``text`` with every form of every secret replaced by ``***``."""
    return secrets.redact(text)


def _redact_value(value: Any, secrets: Secrets) -> Any:
    if isinstance(value, str):
        return secrets.redact(value)
    if type(value) is dict:
        return {_redact_value(k, secrets): _redact_value(v, secrets) for k, v in value.items()}
    if type(value) in (list, tuple):  # not subclasses: a namedtuple cannot be rebuilt so
        return type(value)(_redact_value(v, secrets) for v in value)
    return value


def strip_credentials(request: httpx.Request | None) -> None:
    """Remove the credential headers from ``request`` (in place)."""
    if request is None:
        return
    for name in {name for name in request.headers if is_credential_header(name)}:
        del request.headers[name]


def clean_response(response: httpx.Response, secrets: Secrets) -> httpx.Response:
    """A copy of ``response`` (read) whose content and headers hold no form of ``secrets``."""
    try:
        content = response.content
    except httpx.ResponseNotRead:
        content = b""
    text = content.decode("utf-8", "surrogateescape")
    cleaned = secrets.redact(text).encode("utf-8", "surrogateescape")
    headers = [(k, secrets.redact(v)) for k, v in response.headers.multi_items()]
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
    error: BaseException, request: httpx.Request | None, known: Secrets | None = None
) -> None:
    """Remove the credentials of ``request`` (and the ``known`` ones) from ``error``, in place.

    The message (``args``), ``body``, ``problem``, ``send_response``, ``lookup_response``,
    ``response`` and ``request`` of the error, and of the errors chained to it, are
    cleaned; the request's credential headers are deleted.
    """
    secrets = credentials(request)
    if known is not None:
        secrets = known | secrets
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


def _scrub_one(error: BaseException, secrets: Secrets) -> None:
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
                secrets.redact(model.model_dump_json(by_alias=True))
            )
        except (ValueError, TypeError, AttributeError):
            attributes[name] = None
    response = attributes.get("response")
    if isinstance(response, httpx.Response):
        attributes["response"] = clean_response(response, secrets)


class _LogRedactor(logging.Filter):
    """Rewrites each record's message (and traceback) without the open clients' secrets.

    Opening and closing a client only adds or removes its entry; the union of the secrets
    is built when a record is first filtered after a change (records are only filtered at
    the levels someone logs at, DEBUG for httpcore).
    """

    def __init__(self) -> None:
        super().__init__()
        # Reentrant: a client collected unclosed releases from a finalizer, which the
        # garbage collector may run in this thread while it holds the lock.
        self._lock = threading.RLock()
        self._held: dict[int, Secrets] = {}
        self._all: Secrets | None = None
        self._installed = False

    def hold(self, key: int, secrets: Secrets) -> None:
        with self._lock:
            self._held[key] = secrets
            self._all = None
            if not self._installed:
                for name in self._logger_names():
                    logging.getLogger(name).addFilter(self)
                self._installed = True

    def release(self, key: int) -> None:
        with self._lock:
            if self._held.pop(key, None) is None:
                return
            self._all = None
            if not self._held and self._installed:
                for name in self._logger_names():
                    logging.getLogger(name).removeFilter(self)
                self._installed = False

    def _secrets(self) -> Secrets:
        secrets = self._all
        if secrets is None:
            with self._lock:  # built and kept together, so no change is missed
                held = list(self._held.values())
                values = frozenset().union(*(each.values for each in held))
                usernames = frozenset().union(*(each.usernames for each in held))
                secrets = self._all = Secrets(values, usernames)
        return secrets

    @staticmethod
    def _logger_names() -> set[str]:
        known = logging.Logger.manager.loggerDict
        return set(LOGGERS) | {
            name for name in known if name.startswith(("httpx.", "httpcore.", "surveykit."))
        }

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; never drop it."""
        secrets = self._secrets()
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format is logging's to report, not ours
            return True
        clean = secrets.redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            record.exc_text = secrets.redact(text)
        return True


_LOG_REDACTOR: Final = _LogRedactor()


def guard_logs(key: int, secrets: Secrets) -> None:
    """Keep ``secrets`` out of the HTTP libraries' and surveykit's log records.

    Until :func:`release_logs` is called with ``key`` (a client's id, while it is open).
    """
    if secrets:
        _LOG_REDACTOR.hold(key, secrets)


def release_logs(key: int) -> None:
    """Stop guarding the logs for ``key``; the filter goes when no open client needs it."""
    _LOG_REDACTOR.release(key)
