"""The bug-report bundle of ``sk.doctor``: every HTTP exchange, without credentials.

:class:`Recorder` keeps the client's requests and responses while the checks run (httpx
event hooks); :func:`write_bundle` writes the checks and, per exchange, the request line
and headers and the answer's status, headers and first 4 KiB, into a folder or a
``.zip``, with the credential headers dropped and every secret replaced by ``***``.

Each body is redacted whole and only then cut to its first 4 KiB: cut first, a token
straddling the cut would no longer be found, and its first characters would stay.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx

from surveykit._util.atomic import atomic_path
from surveykit.client._redact import Secrets, is_credential_header

BODY_BYTES: Final = 4096
"""How much of each answer (and request body) the bundle keeps."""


@dataclass
class Exchange:
    """One HTTP exchange of a check: the request, its answer or why none came."""

    label: str
    request: httpx.Request | None = None
    response: httpx.Response | None = None
    error: str | None = None


@dataclass
class Recorder:
    """Keeps every request and response of the client while the checks run (event hooks)."""

    http: httpx.Client
    exchanges: list[Exchange] = field(default_factory=list)
    label: str = ""
    _saved: dict[str, list[Any]] = field(default_factory=dict)

    def __enter__(self) -> Recorder:
        self._saved = {name: list(hooks) for name, hooks in self.http.event_hooks.items()}
        self.http.event_hooks = {
            "request": [*self._saved.get("request", []), self._request],
            "response": [*self._saved.get("response", []), self._response],
        }
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.event_hooks = self._saved

    def _request(self, request: httpx.Request) -> None:
        self.exchanges.append(Exchange(self.label, request=request))

    def _response(self, response: httpx.Response) -> None:
        for exchange in reversed(self.exchanges):
            if exchange.request is response.request:
                exchange.response = response
                return
        self.exchanges.append(Exchange(self.label, request=response.request, response=response))

    def failed(self, error: BaseException) -> None:
        """Note a call that got no answer on its last request."""
        for exchange in reversed(self.exchanges):
            if exchange.label == self.label and exchange.response is None:
                exchange.error = str(error)
                return
        self.exchanges.append(Exchange(self.label, error=str(error)))


def _headers(headers: httpx.Headers) -> list[str]:
    return [
        f"{name}: {value}"
        for name, value in headers.multi_items()
        if not is_credential_header(name)
    ]


def _head(content: bytes, secrets: Secrets) -> str:
    # Redact the whole body, then cut it: never the other way round.
    clean = secrets.redact(content.decode("utf-8", "replace")).encode("utf-8")
    text = clean[:BODY_BYTES].decode("utf-8", "ignore")  # no half character at the cut
    more = len(clean) - BODY_BYTES
    return text + (f"\n[... {more:,} more bytes]" if more > 0 else "")


def _exchange_text(exchange: Exchange, secrets: Secrets) -> str:
    lines = [f"# check: {exchange.label}"]
    request = exchange.request
    if request is not None:
        lines += [f"{request.method} {request.url}", *_headers(request.headers)]
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = b""
        if body:
            lines += ["", _head(body, secrets)]
    response = exchange.response
    lines.append("")
    if response is not None:
        version = response.extensions.get("http_version", b"HTTP/1.1")
        lines += [
            f"{bytes(version).decode()} {response.status_code} {response.reason_phrase}",
            *_headers(response.headers),
        ]
        try:
            lines += ["", _head(response.content, secrets)]
        except httpx.ResponseNotRead:
            lines += ["", "[body streamed; not kept]"]
    else:
        lines.append(f"no answer: {exchange.error or 'unknown'}")
    return "\n".join(lines) + "\n"


def bundle_files(
    lines: list[str], checks: list[dict[str, Any]], exchanges: list[Exchange], secrets: Secrets
) -> dict[str, str]:
    """The files of a bundle by name: the checks, then one file per HTTP exchange.

    Each body is redacted of ``secrets`` before it is cut to :data:`BODY_BYTES`.
    """
    files = {
        "checks.txt": "\n".join(lines) + "\n",
        "checks.json": json.dumps(checks, indent=1) + "\n",
    }
    for number, exchange in enumerate(exchanges, start=1):
        slug = "".join(ch if ch.isalnum() else "-" for ch in exchange.label).strip("-")
        files[f"{number:02d}-{slug}.txt"] = _exchange_text(exchange, secrets)
    return files


def write_bundle(target: Path, files: dict[str, str], secrets: Secrets) -> None:
    """Write the files, every secret replaced, into a folder or a ``.zip`` (atomically)."""
    clean = {name: secrets.redact(text) for name, text in files.items()}
    if target.suffix.lower() == ".zip":
        with (
            atomic_path(target, mkdir=True) as temporary,
            zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive,
        ):
            for name, text in clean.items():
                archive.writestr(f"{target.stem}/{name}", text)
        return
    if target.exists() and not target.is_dir():
        raise ValueError(f"bundle: {target} exists and is not a folder")
    target.mkdir(parents=True, exist_ok=True)
    for name, text in clean.items():
        with atomic_path(target / name) as temporary:
            temporary.write_text(text, encoding="utf-8")


__all__ = ["BODY_BYTES", "Exchange", "Recorder", "bundle_files", "write_bundle"]
