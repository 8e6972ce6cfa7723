"""An httpx transport that sends over aiohttp: the async client's default for remote servers.

httpx stays the client's interface (requests, auth, responses, errors); only the wire work
moves to aiohttp, whose HTTP parser is compiled. At 32 sends in flight that halves the
client's CPU per message against httpcore (``benchmarks/bench_batch.py``).

Errors are mapped to httpx's so that "never sent twice" keeps holding: only a failure to
get a connection (refused, DNS, TLS handshake, connect or pool timeout) becomes an
``httpx.ConnectError``/``ConnectTimeout``, which callers may retry; anything that happens
once the request may have left (a hang-up, a reset, a read timeout, a bad response) becomes
an error whose outcome is unknown. aiohttp resends a request by itself only when it is
idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) and a reused connection turned out to
be closed; never a POST, which every send is.

Under an event loop other than asyncio's (trio through anyio), requests go through
:class:`~surveykit.client._pool.AsyncShardedTransport` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from collections.abc import AsyncIterator

import aiohttp
import httpx
import sniffio
from yarl import URL

from surveykit.client._base import STREAM_EXTENSION
from surveykit.client._pool import AsyncShardedTransport

#: Bytes per chunk of a streamed body (results downloads).
CHUNK_SIZE = 64 * 1024

# Order matters: the first class that matches wins, so subclasses come before their bases.
_NEVER_SENT: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.InvalidURL, httpx.LocalProtocolError),
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
)
_MAYBE_SENT: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.ReadError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),
    (aiohttp.ClientOSError, httpx.ReadError),
    (aiohttp.ClientError, httpx.RemoteProtocolError),
    (asyncio.TimeoutError, httpx.ReadTimeout),
)


def httpx_error(exc: BaseException, request: httpx.Request) -> httpx.TransportError | None:
    """The httpx error for an aiohttp one (None for anything that is not a transport error)."""
    for source, target in (*_NEVER_SENT, *_MAYBE_SENT):
        if isinstance(exc, source):
            return target(f"{type(exc).__name__}: {exc}", request=request)
    return None


def client_timeout(request: httpx.Request, *, streamed: bool = False) -> aiohttp.ClientTimeout:
    """The aiohttp timeouts of ``request``: pool wait plus connect, connect, and read.

    aiohttp has no write timeout, so an answer read whole must also come within the sum
    of httpx's four timeouts (a peer that stops reading a large body cannot hang a send).
    A streamed download has no overall limit; each read still has one.
    """
    timeout: dict[str, float | None] = request.extensions.get("timeout", {})
    pool, connect = timeout.get("pool"), timeout.get("connect")
    acquire = None if pool is None or connect is None else pool + connect
    parts = [timeout.get(name) for name in ("pool", "connect", "write", "read")]
    total = None if streamed or None in parts else sum(p for p in parts if p is not None)
    return aiohttp.ClientTimeout(
        total=total, connect=acquire, sock_connect=connect, sock_read=timeout.get("read")
    )


class _Body(httpx.AsyncByteStream):
    """A streamed response body, read from aiohttp in chunks."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_chunked(CHUNK_SIZE):
                yield chunk
        except Exception as exc:
            mapped = httpx_error(exc, self._request)
            if mapped is None:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        self._response.release()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Send httpx requests over an aiohttp session (one per event loop, made on first use).

    Args:
        limits: the most connections in all and how long an idle one is kept (aiohttp keeps
            every idle connection until then, so ``max_keepalive_connections`` is not used).
        verify: the TLS context for https (default: httpx's, with certifi's roots).
    """

    def __init__(self, limits: httpx.Limits, *, verify: ssl.SSLContext | None = None) -> None:
        self._limits = limits
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._fallback: AsyncShardedTransport | None = None
        self._tls = verify if verify is not None else httpx.create_ssl_context()

    def _session_for(self, loop: asyncio.AbstractEventLoop) -> aiohttp.ClientSession:
        # A session belongs to the loop it was made in: each loop (a second asyncio.run,
        # another thread's loop) gets its own, and those of closed loops are let go.
        for old in [old for old in self._sessions if old.is_closed()]:
            _let_go(self._sessions.pop(old))
        session = self._sessions.get(loop)
        if session is None or session.closed:
            keepalive = {} if self._limits.keepalive_expiry is None else {
                "keepalive_timeout": self._limits.keepalive_expiry}
            connector = aiohttp.TCPConnector(
                limit=self._limits.max_connections or 0, limit_per_host=0, ssl=self._tls,
                **keepalive,  # type: ignore[arg-type]
            )
            session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),  # httpx keeps the cookies
                auto_decompress=False,  # httpx decodes Content-Encoding itself
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
                trust_env=False,  # httpx routes proxied URLs to its own transports
            )
            self._sessions[loop] = session
        return session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the body is read whole unless it has :data:`STREAM_EXTENSION`."""
        if not on_asyncio():
            if self._fallback is None:
                self._fallback = AsyncShardedTransport(self._limits)
            return await self._fallback.handle_async_request(request)
        session = self._session_for(asyncio.get_running_loop())
        streamed = bool(request.extensions.get(STREAM_EXTENSION))
        headers = _headers(request)  # refuses what cannot be sent, before connecting
        if not isinstance(request.stream, httpx.ByteStream):
            # A streamed request body is read whole: it goes with a length, not chunked.
            headers = [(k, v) for k, v in headers if k.lower() != "transfer-encoding"]
        body = await request.aread()
        try:
            response = await session.request(
                request.method,
                URL(str(request.url), encoded=True),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=client_timeout(request, streamed=streamed),
            )
            answer_headers = list(response.raw_headers)
            extensions = {
                "http_version": b"HTTP/1.1",
                "reason_phrase": (response.reason or "").encode("latin-1", "replace"),
            }
            if streamed:
                return httpx.Response(
                    response.status, headers=answer_headers, stream=_Body(response, request),
                    extensions=extensions,
                )
            try:
                content = await response.read()
            finally:
                response.release()
        except Exception as exc:
            mapped = httpx_error(exc, request)
            if mapped is None:
                raise
            raise mapped from exc
        return httpx.Response(
            response.status, headers=answer_headers, stream=httpx.ByteStream(content),
            extensions=extensions,
        )

    async def aclose(self) -> None:
        """Close the connections (of every loop this transport was used in)."""
        running = asyncio.get_running_loop()
        sessions, self._sessions = self._sessions, {}
        for loop, session in sessions.items():
            if session.closed:
                continue
            if loop is running:
                await session.close()
            elif loop.is_running():  # another thread's loop: close it there
                asyncio.run_coroutine_threadsafe(session.close(), loop)
            else:
                _let_go(session)
        if self._fallback is not None:
            await self._fallback.aclose()

    def __del__(self) -> None:
        # A client dropped without aclose() (common in notebooks) closes its sockets here
        # rather than leave aiohttp to print "Unclosed client session" at exit.
        for session in getattr(self, "_sessions", {}).values():
            if not session.closed:
                _let_go(session)


def _let_go(session: aiohttp.ClientSession) -> None:
    """Close a session's sockets without awaiting (its loop may be gone or not running)."""
    connector = session.connector
    session.detach()
    if connector is not None and not connector.closed:
        with contextlib.suppress(Exception):
            connector._close()


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio's (aiohttp runs on nothing else)."""
    return sniffio.current_async_library() == "asyncio"


# What aiohttp refuses in a header (RFC 9110 5.5), checked before anything is sent.
_FORBIDDEN_IN_HEADERS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _headers(request: httpx.Request) -> list[tuple[str, str]]:
    pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
    for name, value in pairs:
        if _FORBIDDEN_IN_HEADERS.search(name) or _FORBIDDEN_IN_HEADERS.search(value):
            # The value is not quoted: it may be a credential.
            raise httpx.LocalProtocolError(
                f"header {name!r} has a control character; nothing was sent", request=request
            )
    return pairs
