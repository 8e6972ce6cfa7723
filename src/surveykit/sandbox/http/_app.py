"""The ASGI application: credentials and size, the journal and fault injection around the routes.

:class:`SandboxApp` is a Starlette app whose ``__call__`` first checks the access token
(``/v3.2`` and ``/_sandbox``) and the declared size, then reads the body with a cap,
records the request in the journal, applies an injected fault (latency, an error status,
a dropped connection), and then routes it. Refused requests leave only a fixed-size
summary (``journal("refused")``). Nothing is started at import or on lifespan events
(``httpx.ASGITransport`` sends none).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import Message, Receive, Scope, Send

from surveykit.sandbox.http import _control, _control_respondents, _openapi, _routes
from surveykit.sandbox.http._streams import StreamAborted
from surveykit.sandbox.http._wire import MAX_BODY, loads_json
from surveykit.sandbox.state import Fault, SandboxState
from surveykit.sandbox.state._errors import problem_body

if TYPE_CHECKING:
    from surveykit.sandbox.runtime._delivery import CallbackDelivery

JOURNAL_BODY_LIMIT: Final = 64 * 1024
"""Request bodies longer than this are journaled cut, as text."""


def _journal_body(raw: bytes) -> Any:
    if not raw:
        return None
    if len(raw) <= JOURNAL_BODY_LIMIT:
        try:
            return loads_json(raw)
        except ValueError:
            pass
    return raw[:JOURNAL_BODY_LIMIT].decode("utf-8", errors="replace")


async def _problem(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else None
    return JSONResponse(problem_body(status, detail, instance=request.url.path), status_code=status)


async def _openapi_route(request: Request) -> Response:
    return JSONResponse(_openapi.document())


class DroppedConnection(Exception):
    """Raised in-process when no httpx error fits (never reaches httpx users)."""


async def _drop(send: Send, phase: str) -> None:
    # Under uvicorn, ``send`` is bound to the request cycle: abort its transport so the
    # client sees the connection close with no response. In-process (httpx's
    # ASGITransport) there is no socket: raise the error httpx raises in that case.
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is not None and hasattr(transport, "abort"):
        transport.abort()
        if cycle is not None and hasattr(cycle, "disconnected"):
            cycle.disconnected = True  # so uvicorn does not try to answer 500 instead
        return
    if phase == "before":
        raise httpx.ConnectError(
            "sandbox fault: connection refused (dropped before the request was processed)"
        )
    raise httpx.RemoteProtocolError(
        "sandbox fault: server disconnected without sending a response "
        "(dropped after the request was processed)"
    )


class SandboxApp(Starlette):
    """The sandbox's Starlette app; ``sandbox_state`` is its :class:`SandboxState`."""

    def __init__(self, state: SandboxState) -> None:
        super().__init__(
            routes=[
                Route("/openapi.json", _openapi_route, methods=["GET"]),
                *_control.routes(),
                *_control_respondents.routes(),
                *_routes.routes(),
                *_routes.link_routes(),
            ],
            exception_handlers={HTTPException: _problem},
        )
        self.sandbox_state = state
        self.results_layout = "documented"
        """The layout GetResults answers in (see :data:`surveykit.results.LAYOUTS`)."""
        self.sandbox_delivery: CallbackDelivery | None = None
        """The callback delivery worker (set by :class:`~surveykit.sandbox.Sandbox`)."""
        self.stopping = threading.Event()
        """Set when the server shuts down: streamed answers stop at their next chunk."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Credentials and size first, then the body (capped), journal, faults, the routes.

        Nothing of a request that is refused before its body is read (no or a wrong
        token, a declared or streamed size over :data:`MAX_BODY`) is read or kept beyond
        a fixed-size summary in the ring of refused requests.
        """
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        path: str = scope["path"]
        method: str = scope["method"]
        api = path == "/v3.2" or path.startswith("/v3.2/")
        control = path.startswith("/_sandbox")
        state = self.sandbox_state
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        declared, framing = _declared_size(headers)
        if not (api or control):
            await self._public(scope, receive, send, declared, framing)
            return
        user = state.user_for(headers.get("authorization"))
        refusal = _refusal(user, control, declared, framing, path)
        if refusal is not None:
            code, reason, response = refusal
            state.refuse(method, path, code, declared, reason)
            await response(scope, receive, send)
            return
        try:
            raw = await _read_capped(receive, MAX_BODY)
        except _TooLarge as exc:
            state.refuse(method, path, 413, exc.size, "streamed body over the cap")
            await _too_large(path)(scope, receive, send)
            return
        replay = _replay(raw, receive)
        scope["sandbox.user"] = user
        if control:
            await super().__call__(scope, replay, send)
            return
        assert user is not None
        with state.transaction():
            entry = state.record(
                "request",
                method=method,
                path=path,
                query=scope.get("query_string", b"").decode("latin-1") or None,
                user=user.name,
                body=_journal_body(raw),
            )
        fault = state.faults.pick(method, path)
        if fault is not None and fault.latency > 0:
            await anyio.sleep(fault.latency)
        if fault is not None and fault.drop == "before":
            entry.fault = "drop-before"
            state.save_entry(entry)
            await _drop(send, "before")
            return
        if fault is not None and fault.status is not None:
            entry.fault, entry.status = f"status-{fault.status}", fault.status
            state.save_entry(entry)
            await _fault_response(fault, path)(scope, replay, send)
            return
        status: list[int] = []
        dropping = fault is not None and fault.drop == "after"

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            if not dropping:
                await send(message)

        try:
            await super().__call__(scope, replay, capture)
        except StreamAborted:
            entry.fault = "shutdown"
            await _drop(send, "after")
        entry.status = status[0] if status else None
        if dropping:
            entry.fault = "drop-after"
        state.save_entry(entry)
        if dropping:
            await _drop(send, "after")

    async def _public(
        self, scope: Scope, receive: Receive, send: Send, declared: int | None, framing: bool
    ) -> None:
        """Routes without a token (short links, the OpenAPI document): GET and HEAD only.

        They take no body; what they refuse goes to the ring of refused requests. Routing
        comes first: an unknown path or method is the 404 or 405 it is without a body
        (``POST /api/v3.2/Message`` is a 404, as the platform answers a route it does not
        have), and only a request a route would take is a 413 for its body. A body is never
        read here; when one was sent, the answer closes the connection.
        """
        state, path, method = self.sandbox_state, scope["path"], scope["method"]
        has_body = framing and declared != 0
        if has_body and self._routed(scope):
            state.refuse(method, path, 413, declared, "a body on a route that takes none")
            await _too_large(path, limit=0)(scope, receive, send)
            return
        status: list[int] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                if has_body:  # the body is left unread: close rather than read it
                    headers = [
                        (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                    ]
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await super().__call__(scope, receive, capture)
        code = status[0] if status else None
        if code is not None and code >= 400:
            state.refuse(method, path, code, declared, "refused by the route")
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        user = state.user_for(headers.get("authorization"))
        with state.transaction():
            state.record(
                "request",
                method=method,
                path=path,
                query=scope.get("query_string", b"").decode("latin-1") or None,
                user=user.name if user else None,
                status=code,
            )

    def _routed(self, scope: Scope) -> bool:
        """Whether a route takes this path and method (so its handler would run)."""
        return any(route.matches(scope)[0] == Match.FULL for route in self.router.routes)


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _declared_size(headers: dict[str, str]) -> tuple[int | None, bool]:
    """The Content-Length (None when absent or unreadable), and whether a body is framed."""
    chunked = "transfer-encoding" in headers
    text = headers.get("content-length")
    if text is None:
        return None, chunked
    try:
        size = int(text)
    except ValueError:
        return None, True
    return (size if size >= 0 else None), True


def _refusal(
    user: Any, control: bool, declared: int | None, framing: bool, path: str
) -> tuple[int, str, Response] | None:
    """The answer to a request refused on its headers alone, or None."""
    if user is None:
        response: Response = JSONResponse(
            problem_body(401, "Send Authorization: Basic <access token>.", instance=path),
            status_code=401,
            headers={"WWW-Authenticate": 'Basic realm="v3.2"', **_close(framing)},
        )
        return 401, "no valid access token", response
    if control and user.name != "admin":
        response = JSONResponse(
            problem_body(403, "The control API needs the admin token.", instance=path),
            status_code=403,
            headers=_close(framing),
        )
        return 403, "control API without the admin token", response
    if declared is not None and declared > MAX_BODY:
        return 413, "declared body over the cap", _too_large(path)
    return None


def _close(framing: bool) -> dict[str, str]:
    # A body left unread: close the connection rather than read it to reach the next request.
    return {"Connection": "close"} if framing else {}


def _too_large(path: str, limit: int = MAX_BODY) -> Response:
    detail = (
        f"The body is larger than {limit} bytes." if limit else "This route takes no request body."
    )
    return JSONResponse(
        problem_body(413, detail, instance=path), status_code=413, headers={"Connection": "close"}
    )


def _fault_response(fault: Fault, path: str) -> Response:
    status = fault.status or 500
    headers = {}
    if status in (429, 503):
        headers["Retry-After"] = str(int(fault.retry_after if fault.retry_after is not None else 1))
    body = problem_body(
        status, f"sandbox fault #{fault.id} injected on {fault.route}", instance=path
    )
    return JSONResponse(body, status_code=status, headers=headers)


async def _read_capped(receive: Receive, limit: int) -> bytes:
    """The request body, read as it arrives; :class:`_TooLarge` as soon as it passes ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge(size)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(raw: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay
