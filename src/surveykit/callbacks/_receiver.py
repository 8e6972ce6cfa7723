"""The callback receiver: an ASGI (Starlette) app that validates, stores and answers callbacks.

Order of work for one request (see ``docs/callbacks.md`` for the wire contract):

1. size (413), signature (401), content type (415), JSON (400), payload fields (422);
2. the delivery is committed to the :class:`EventStore` (a duplicate only bumps its count);
   a STOP or UNSTOP is then applied to the opt-out list; when the list is locked for more
   than ``opt_out_wait`` seconds it is answered all the same (it is on disk in the store)
   and applied in the background as soon as the lock is free;
3. status-type callbacks are answered 200 with an empty body at once; their handler, if
   any, runs after the answer;
4. Message and Keyword callbacks run their handler (once per event, with a timeout), the
   reply is committed with the event, and the answer's body is that reply.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread
import orjson
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from surveykit.callbacks._events import OptOutSink
from surveykit.callbacks._replies import Handler as Handler
from surveykit.callbacks._replies import Reply as Reply
from surveykit.callbacks._replies import _short, _validation_errors
from surveykit.callbacks._replies import build_reply as build_reply
from surveykit.callbacks._requests import _json_kind, _problem, _Rejected, query_fields
from surveykit.callbacks._store import EventStore, Recorded, ReplyState, delivery_identity
from surveykit.callbacks._verify import (
    DEFAULT_REPLAY_WINDOW,
    DEFAULT_SIGNATURE_DIGEST,
    DEFAULT_SIGNATURE_HEADER,
    SignatureCheck,
)
from surveykit.models import RESPONSE_TYPES, CallbackPayload, CallbackType

logger = logging.getLogger("surveykit.callbacks")

DEFAULT_MAX_BODY: Final = 64 * 1024
"""Default largest callback body, in bytes. A payload's message is at most 2,000
characters, so even fully escaped with MetaData it stays well below this."""

DEFAULT_PATH: Final = "/callbacks"
"""Default URL path the receiver answers on."""

DEFAULT_HANDLER_TIMEOUT: Final = 20.0
"""Seconds a handler may take; the platform waits at most 30 s for an answer."""

DEFAULT_BODY_TIMEOUT: Final = 10.0
"""Seconds a callback's whole body may take to arrive (a slow sender gets 408)."""

DEFAULT_OPT_OUT_WAIT: Final = 5.0
"""Seconds a STOP waits for a locked opt-out list before it is answered and queued."""

DEFAULT_OPT_OUT_RETRY: Final = 0.5
"""Seconds between attempts to apply queued STOPs to a locked opt-out list."""

H = TypeVar("H", bound=Handler)

_ANY: Final = "*"
_JSON_TYPES = frozenset({"application/json", "text/json"})


def _type_key(value: CallbackType | str) -> str:
    return str(value).lower()


class _Failed:
    """Marks an in-flight reply whose first delivery failed to be stored."""


_FAILED: Final = _Failed()


class Receiver:
    """The callback receiver: validates, stores and answers the platform's callbacks.

    ``receiver.app`` is a Starlette (ASGI) app; :func:`~surveykit.callbacks.listen` serves
    it in a background thread, and any ASGI server can serve it too.

    Args:
        db: the SQLite file of the :class:`EventStore`, or a store; ``None`` uses a
            temporary file that :meth:`close` deletes.
        secret: when given, every callback must carry a valid signature header (401
            otherwise); see :func:`~surveykit.callbacks.callback_signature`.
        max_body: largest accepted body in bytes (413 above it; checked while reading).
        path: the URL path callbacks are posted to.
        handler_timeout: seconds a handler may run before the callback is answered
            without a reply (the platform waits at most 30 s).
        signature_header: the header carrying the signature.
        signature_digest: the hash function of the HMAC (hashlib name).
        replay_window: seconds a timestamped signature (``t=...``) may be from the
            receiver's clock, either way (401 outside it); None for no limit.
        require_timestamp: refuse signatures that carry no timestamp (401).
        body_timeout: seconds the whole body may take to arrive (408 after it, without
            reading further), so a slow sender cannot hold the receiver.
        opt_outs: an :class:`~surveykit.OptOutList` that every STOP and UNSTOP callback
            updates (after it is stored, before it is answered); inbound Message callbacks
            are given to it too, for opt-outs in other words (its ``words`` setting).
        opt_out_wait: seconds a STOP or UNSTOP waits while another connection holds the
            opt-out list's lock; then it is answered (it is already committed to the
            store) and applied in the background as soon as the lock is free.
        opt_out_retry: seconds between those background attempts.

    Example:
        >>> receiver = Receiver()
        >>> @receiver.on("Keyword")
        ... def thanks(payload):
        ...     return f"Thanks, we got {payload.message!r}"
        >>> receiver.close()
    """

    def __init__(
        self,
        db: str | os.PathLike[str] | EventStore | None = None,
        *,
        secret: str | bytes | None = None,
        max_body: int = DEFAULT_MAX_BODY,
        path: str = DEFAULT_PATH,
        handler_timeout: float = DEFAULT_HANDLER_TIMEOUT,
        signature_header: str = DEFAULT_SIGNATURE_HEADER,
        signature_digest: str = DEFAULT_SIGNATURE_DIGEST,
        replay_window: float | None = DEFAULT_REPLAY_WINDOW,
        require_timestamp: bool = False,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        opt_outs: OptOutSink | None = None,
        opt_out_wait: float = DEFAULT_OPT_OUT_WAIT,
        opt_out_retry: float = DEFAULT_OPT_OUT_RETRY,
    ) -> None:
        if not 0 <= opt_out_wait <= 20:
            raise ValueError(
                f"opt_out_wait: expected 0 <= seconds <= 20 (the platform waits 30 s), "
                f"got {opt_out_wait!r}"
            )
        if not opt_out_retry > 0:
            raise ValueError(f"opt_out_retry: expected seconds > 0, got {opt_out_retry!r}")
        if not body_timeout > 0:
            raise ValueError(f"body_timeout: expected seconds > 0, got {body_timeout!r}")
        if isinstance(max_body, bool) or not isinstance(max_body, int) or max_body < 1:
            raise ValueError(f"max_body: expected a positive number of bytes, got {max_body!r}")
        if not path.startswith("/"):
            raise ValueError(f"path: must start with '/', got {path!r}")
        if not 0 < handler_timeout <= 600:
            raise ValueError(f"handler_timeout: expected 0 < seconds <= 600, got {handler_timeout}")
        self._check = (
            None
            if secret is None
            else SignatureCheck.build(
                secret,
                header=signature_header,
                digest=signature_digest,
                replay_window=replay_window,
                require_timestamp=require_timestamp,
            )
        )
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.path = path
        self.handler_timeout = handler_timeout
        self.opt_outs = opt_outs
        self.opt_out_wait = opt_out_wait
        self.opt_out_retry = opt_out_retry
        # STOP/UNSTOP events stored but not yet on the locked opt-out list, by event id.
        self._pending: dict[int, CallbackPayload] = {}
        self._retrying: asyncio.Task[None] | None = None
        self._handlers: dict[str, Handler] = {}
        self._inflight: dict[str, asyncio.Future[dict[str, Any] | _Failed | None]] = {}
        self._owns_store = not isinstance(db, EventStore)
        self._cleanup: weakref.finalize[[str], Receiver] | None = None
        self._store: EventStore
        if isinstance(db, EventStore):
            self._store = db
        elif db is None:
            folder = tempfile.mkdtemp(prefix="surveykit-callbacks-")
            # Deleted on close(), or when the receiver is garbage collected, or at exit.
            self._cleanup = weakref.finalize(self, _remove_tree, folder)
            self._store = EventStore(Path(folder) / "events.sqlite")
        else:
            self._store = EventStore(db)
        self._app = Starlette(
            routes=[Route(path, self._endpoint, methods=["GET", "POST"])],
            exception_handlers={HTTPException: self._http_error},
        )

    @property
    def app(self) -> Starlette:
        """The ASGI application."""
        return self._app

    @property
    def store(self) -> EventStore:
        """The event store."""
        return self._store

    @property
    def temporary(self) -> bool:
        """Whether the store is a temporary file deleted by :meth:`close`."""
        return self._cleanup is not None

    @property
    def signed(self) -> bool:
        """Whether callbacks must carry a valid signature."""
        return self._check is not None

    def __repr__(self) -> str:
        types = ", ".join(sorted(self._handlers)) or "none"
        signed = "signed" if self.signed else "unsigned"
        return f"<Receiver {self.path} {signed}, handlers: {types}, db={str(self.store.path)!r}>"

    def on(self, *types: CallbackType | str) -> Callable[[H], H]:
        """Register a handler for callback types (any letter case); use as a decorator.

        With no type the handler is the fallback for every type without its own handler.
        Registering a type again replaces its handler (re-running a notebook cell is safe).
        For Message and Keyword callbacks the handler's return value is the reply (see
        :func:`build_reply`); for the other types it runs after the answer and its return
        value is ignored.

        Example:
            >>> @receiver.on("Message", "Keyword")   # doctest: +SKIP
            ... async def answer(payload):
            ...     return "Thanks!"
        """
        keys = [_type_key(t) for t in types] or [_ANY]
        for key in keys:
            if not key:
                raise ValueError("on(): a callback type must not be empty")

        def register(handler: H) -> H:
            if not callable(handler):
                raise TypeError(f"on(): {handler!r} is not callable")
            for key in keys:
                self._handlers[key] = handler
            return handler

        return register

    def handler_for(self, type_: CallbackType | str | None) -> Handler | None:
        """The handler that a callback of this type runs, if any."""
        if type_ is not None and (handler := self._handlers.get(_type_key(type_))):
            return handler
        return self._handlers.get(_ANY)

    @property
    def pending_opt_outs(self) -> int:
        """STOP/UNSTOP events stored but not yet applied to the (locked) opt-out list."""
        return len(self._pending)

    def close(self) -> None:
        """Close the store (and delete it when it is temporary). Safe to call twice.

        STOP/UNSTOP events still waiting for a locked opt-out list stay in the store;
        the next ``listen(opt_outs=...)`` on it applies them at start.
        """
        if self._pending:
            logger.warning(
                "%d STOP/UNSTOP events wait for the locked opt-out list; they are in the "
                "event store %s, and listen(db=..., opt_outs=...) applies them at start",
                len(self._pending),
                self._store.path,
            )
        if self._retrying is not None:
            self._retrying.cancel()
        if self._owns_store:
            self._store.close()
        if self._cleanup is not None:
            self._cleanup()

    # -- reading a request ----------------------------------------------------------------

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        allowed = {"Allow": "GET, POST"} if status == 405 else None
        phrase = HTTPStatus(status).phrase
        detail = f"{request.method} {request.url.path}: {phrase}"
        return _problem(_Rejected(status, phrase, detail, headers=allowed))

    async def _read_body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise _Rejected(400, "Bad request", f"Content-Length {declared!r} is not a number")
            if int(declared) > self.max_body:
                raise self._too_large(f"Content-Length is {int(declared)} bytes")
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > self.max_body:
                        # Stop reading here: the rest of the body is never buffered.
                        raise self._too_large(f"more than {self.max_body} bytes were sent")
                    chunks.append(chunk)
        except ClientDisconnect:
            raise _Rejected(400, "Bad request", "the client disconnected mid-body") from None
        except TimeoutError:
            raise _Rejected(
                408,
                "Request timeout",
                f"the body did not arrive within {self.body_timeout:g} s ({size} bytes came)",
                headers={"Connection": "close"},
            ) from None
        return b"".join(chunks)

    def _too_large(self, what: str) -> _Rejected:
        return _Rejected(
            413,
            "Body too large",
            f"{what}; this receiver accepts callback bodies of at most {self.max_body} bytes",
        )

    def _verify(self, request: Request, signed: bytes) -> None:
        if self._check is None:
            return
        problem = self._check.problem(request.headers.get(self._check.header), signed)
        if problem is not None:
            raise _Rejected(
                401,
                "Signature required",
                problem,
                headers={"WWW-Authenticate": f'HMAC header="{self._check.header}"'},
            )

    def _json_body(self, request: Request, body: bytes) -> dict[str, Any]:
        content_type = request.headers.get("content-type")
        if content_type is None:
            raise _Rejected(
                415, "Unsupported media type", "Content-Type is missing; send application/json"
            )
        media, _, params = content_type.partition(";")
        media = media.strip().lower()
        if media not in _JSON_TYPES and not (
            media.startswith("application/") and media.endswith("+json")
        ):
            raise _Rejected(
                415,
                "Unsupported media type",
                f"Content-Type {media!r} is not accepted; send application/json",
            )
        charset = re.search(r"charset\s*=\s*\"?([\w-]+)", params, re.IGNORECASE)
        if charset and charset.group(1).lower().replace("-", "") != "utf8":
            raise _Rejected(
                415, "Unsupported media type", f"charset {charset.group(1)!r}: send UTF-8 JSON"
            )
        if not body.strip():
            raise _Rejected(400, "Not JSON", "the body is empty; send the callback payload")
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise _Rejected(400, "Not JSON", f"the body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise _Rejected(
                422,
                "Invalid callback payload",
                f"the body must be a JSON object (the callback payload), got {_json_kind(data)}",
                errors=[{"field": "body", "message": "expected a JSON object"}],
            )
        return data

    async def _payload(self, request: Request) -> CallbackPayload:
        if request.method == "GET":
            query = request.scope.get("query_string", b"")
            if len(query) > self.max_body:
                raise self._too_large(f"the query string is {len(query)} bytes")
            self._verify(request, query)
            data = query_fields(request.query_params.multi_items())
        else:
            if self._check is not None and self._check.header not in request.headers:
                self._verify(request, b"")  # refuse before reading an unsigned body
            body = await self._read_body(request)
            self._verify(request, body)
            data = self._json_body(request, body)
        try:
            payload = CallbackPayload.model_validate(data)
        except ValidationError as exc:
            errors = _validation_errors(exc)
            detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
            raise _Rejected(422, "Invalid callback payload", detail, errors=errors) from None
        if payload.type is None or not str(payload.type):
            raise _Rejected(
                422,
                "Invalid callback payload",
                "Type is missing: every callback names its type (Receipt, Message, ...)",
                errors=[{"field": "Type", "message": "required"}],
            )
        return payload

    # -- answering ------------------------------------------------------------------------

    async def _endpoint(self, request: Request) -> Response:
        try:
            payload = await self._payload(request)
        except _Rejected as rejected:
            return _problem(rejected)
        if payload.type not in RESPONSE_TYPES:
            return await self._status_callback(payload, request.method)
        return await self._response_callback(payload, request.method)

    async def _status_callback(self, payload: CallbackPayload, method: str) -> Response:
        recorded = await self._store.arecord(payload, method=method, reply_state="none")
        if self.opt_outs is not None and _type_key(payload.type or "") in ("stop", "unstop"):
            await self._opt_out(payload, recorded.event_id)
        handler = self.handler_for(payload.type)
        if handler is None or not recorded.is_new:
            return Response(status_code=200)
        task = BackgroundTask(self._run_status_handler, handler, payload, recorded)
        return Response(status_code=200, background=task)

    async def _opt_out(self, payload: CallbackPayload, event_id: int) -> None:
        """Apply a stored STOP/UNSTOP now, or queue it while the opt-out list is locked.

        The event is already committed to the store, so answering it is safe either way;
        queued events are applied as soon as the lock is free (in event order, and
        applying one twice changes nothing).
        """
        if self._pending:  # the list is locked: queue behind the others, without waiting
            self._queue_opt_out(payload, event_id)
            return
        try:
            await self._apply_opt_out(payload, event_id, self.opt_out_wait)
        except sqlite3.OperationalError as exc:
            logger.warning(
                "callback event %d: the opt-out list is busy (%s); applying it as soon as "
                "the lock is free",
                event_id,
                exc,
            )
            self._queue_opt_out(payload, event_id)
        except Exception as exc:  # a bad number: retrying cannot help
            logger.warning("callback event %d: opt-out list: %s", event_id, exc)

    def _queue_opt_out(self, payload: CallbackPayload, event_id: int) -> None:
        self._pending[event_id] = payload
        if self._retrying is None or self._retrying.done():
            self._retrying = asyncio.get_running_loop().create_task(self._retry_opt_outs())

    async def _apply_opt_out(self, payload: CallbackPayload, event_id: int, wait: float) -> None:
        sink = self.opt_outs
        if sink is not None:
            await anyio.to_thread.run_sync(
                lambda: sink.apply(payload, event_id, timeout=wait), abandon_on_cancel=True
            )

    async def _retry_opt_outs(self) -> None:
        while self._pending:
            await asyncio.sleep(self.opt_out_retry)
            for event_id in sorted(self._pending):
                try:
                    await self._apply_opt_out(self._pending[event_id], event_id, self.opt_out_wait)
                except sqlite3.OperationalError:
                    break  # still locked: try again after the pause
                except Exception as exc:
                    logger.warning("callback event %d: opt-out list: %s", event_id, exc)
                del self._pending[event_id]

    async def _run_status_handler(
        self, handler: Handler, payload: CallbackPayload, recorded: Recorded
    ) -> None:
        _, error = await self._call(handler, payload)
        if error is not None:
            await self._store.aset_outcome(recorded.event_id, error=error, finish=False)

    async def _response_callback(self, payload: CallbackPayload, method: str) -> Response:
        identity = delivery_identity(payload)
        waiting = self._inflight.get(identity)
        if waiting is not None:
            # A retry while the first delivery's handler still runs: count it, share the reply.
            await self._store.arecord(payload, method=method)
            reply = await asyncio.shield(waiting)
        else:
            future: asyncio.Future[dict[str, Any] | _Failed | None]
            future = asyncio.get_running_loop().create_future()
            self._inflight[identity] = future
            try:
                reply = await self._first_reply(payload, method)
            except BaseException:
                future.set_result(_FAILED)
                raise
            else:
                future.set_result(reply)
            finally:
                del self._inflight[identity]
        if isinstance(reply, _Failed):
            return _problem(
                _Rejected(503, "Not stored", "the first delivery of this callback failed; retry")
            )
        if reply is None:
            return Response(status_code=200)
        return JSONResponse(reply, status_code=200)

    async def _first_reply(self, payload: CallbackPayload, method: str) -> dict[str, Any] | None:
        handler = self.handler_for(payload.type)
        state: ReplyState = "pending" if handler is not None else "done"
        recorded = await self._store.arecord(payload, method=method, reply_state=state)
        if self.opt_outs is not None and _type_key(payload.type or "") == "message":
            # An opt-out in other words ("please stop texting me"): the list decides.
            await self._opt_out(payload, recorded.event_id)
        if recorded.reply_state == "done":
            # Answered before (possibly by an earlier process): the same reply again.
            return recorded.reply
        if handler is None:
            # Left pending by a process that stopped mid-handler; no handler now, so the
            # answer is final: no reply, now and on every later delivery.
            await self._store.aset_outcome(recorded.event_id)
            return None
        result, error = await self._call(handler, payload)
        reply: dict[str, Any] | None = None
        if error is None:
            try:
                request = build_reply(payload, result)
            except (TypeError, ValidationError) as exc:
                error = _short(exc)
                logger.warning("callback event %d: %s", recorded.event_id, error)
            else:
                reply = None if request is None else request.to_wire()
        await self._store.aset_outcome(recorded.event_id, reply=reply, error=error)
        return reply

    async def _call(self, handler: Handler, payload: CallbackPayload) -> tuple[Reply, str | None]:
        try:
            with anyio.fail_after(self.handler_timeout):
                if inspect.iscoroutinefunction(handler):
                    result: Any = await handler(payload)
                else:
                    result = await anyio.to_thread.run_sync(
                        handler, payload, abandon_on_cancel=True
                    )
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            error = (
                f"the handler did not return within {self.handler_timeout:g} s; "
                "the callback was answered without a reply"
            )
            logger.warning("callback handler %s: %s", _name(handler), error)
            return None, error
        except Exception as exc:
            logger.exception("callback handler %s failed", _name(handler))
            return None, f"the handler raised {_short(exc)}"
        return result, None


def _remove_tree(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _name(handler: Handler) -> str:
    return str(getattr(handler, "__qualname__", None) or repr(handler))
