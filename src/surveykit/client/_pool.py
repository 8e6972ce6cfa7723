"""Connection pools split into small shards, so a request's cost does not grow with them.

httpcore (1.0) looks at every connection of a pool each time a request starts and each time
a response closes; for an idle connection that look is a ``poll`` system call, and on the
async side a ``getpeername`` too. With 32 sends in flight that was most of the client's CPU
(``benchmarks/bench_batch.py``; upstream: encode/httpcore#924, not merged). Requests here go
to the least busy of several small pools instead, so each look covers a few connections.
"""

from __future__ import annotations

import math
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

import httpx

#: Connections per shard: small enough that a pool's scan stays cheap, large enough that
#: a sequential caller keeps reusing one warm connection.
SHARD_SIZE = 4

P = TypeVar("P", httpx.HTTPTransport, httpx.AsyncHTTPTransport)


def split_limits(limits: httpx.Limits) -> list[httpx.Limits]:
    """Share ``limits`` out between shards of at most :data:`SHARD_SIZE` connections.

    The totals are kept exactly (no limit on connections: one shard with the limits).
    """
    total = limits.max_connections
    if total is None:
        return [limits]
    count = max(1, math.ceil(total / SHARD_SIZE))
    idle = limits.max_keepalive_connections

    def share(amount: int, i: int) -> int:
        return amount // count + (1 if i < amount % count else 0)

    return [
        httpx.Limits(
            max_connections=max(1, share(total, i)),
            max_keepalive_connections=None if idle is None else share(idle, i),
            keepalive_expiry=limits.keepalive_expiry,
        )
        for i in range(count)
    ]


class _Shards(Generic[P]):
    """The shards and how many requests each has in flight (responses not yet closed)."""

    def __init__(self, limits: httpx.Limits, make: Callable[[httpx.Limits], P]) -> None:
        self.pools: list[P] = [make(each) for each in split_limits(limits)]
        self._busy = [0] * len(self.pools)
        self._lock = threading.Lock()

    def acquire(self) -> int:
        """The least busy shard (the first of equals, so a lone caller reuses one pool)."""
        with self._lock:
            index = min(range(len(self._busy)), key=self._busy.__getitem__)
            self._busy[index] += 1
            return index

    def releaser(self, index: int) -> Callable[[], None]:
        """A function that marks one request of shard ``index`` done, however often called."""
        done = False

        def release() -> None:
            nonlocal done
            with self._lock:
                if not done:
                    done = True
                    self._busy[index] -= 1

        return release

    def in_flight(self) -> list[int]:
        """Requests in flight per shard."""
        with self._lock:
            return list(self._busy)


class _ReleasingStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, release: Callable[[], None]) -> None:
        self._inner = inner
        self._release = release

    def __iter__(self) -> Iterator[bytes]:
        yield from self._inner

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._release()


class _AsyncReleasingStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, release: Callable[[], None]) -> None:
        self._inner = inner
        self._release = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._release()


class _ShardView:
    """What both transports tell about their shards."""

    _shards: _Shards[Any]

    @property
    def shards(self) -> int:
        """How many pools the connections are spread over."""
        return len(self._shards.pools)

    def in_flight(self) -> list[int]:
        """Requests in flight per shard (a response counts until it is closed)."""
        return self._shards.in_flight()


class ShardedTransport(_ShardView, httpx.BaseTransport):
    """An ``httpx.HTTPTransport`` made of several small pools (see the module's docstring).

    Args:
        limits: the limits of the whole transport; they are shared out between the shards.
    """

    _shards: _Shards[httpx.HTTPTransport]

    def __init__(self, limits: httpx.Limits) -> None:
        tls = httpx.create_ssl_context()  # one for all shards: each costs milliseconds
        self._shards = _Shards(limits, lambda each: httpx.HTTPTransport(verify=tls, limits=each))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through the least busy shard."""
        index = self._shards.acquire()
        release = self._shards.releaser(index)
        try:
            response = self._shards.pools[index].handle_request(request)
        except BaseException:
            release()
            raise
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _ReleasingStream(response.stream, release)
        return response

    def close(self) -> None:
        """Close every shard's connections."""
        for pool in self._shards.pools:
            pool.close()


class AsyncShardedTransport(_ShardView, httpx.AsyncBaseTransport):
    """An ``httpx.AsyncHTTPTransport`` made of several small pools (see the module).

    Args:
        limits: the limits of the whole transport; they are shared out between the shards.
    """

    _shards: _Shards[httpx.AsyncHTTPTransport]

    def __init__(self, limits: httpx.Limits) -> None:
        tls = httpx.create_ssl_context()  # one for all shards: each costs milliseconds
        self._shards = _Shards(
            limits, lambda each: httpx.AsyncHTTPTransport(verify=tls, limits=each)
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through the least busy shard."""
        index = self._shards.acquire()
        release = self._shards.releaser(index)
        try:
            response = await self._shards.pools[index].handle_async_request(request)
        except BaseException:
            release()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _AsyncReleasingStream(response.stream, release)
        return response

    async def aclose(self) -> None:
        """Close every shard's connections."""
        for pool in self._shards.pools:
            await pool.aclose()
