"""The clients' sharded connection pool, against the sandbox served on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import surveykit as sk
from surveykit.client._pool import SHARD_SIZE, AsyncShardedTransport, ShardedTransport, split_limits
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

SOURCE = "447700900999"


@pytest.fixture(scope="module")
def slow() -> Iterator[ServedSandbox]:
    """A served sandbox whose Message route answers after 0.3 s."""
    with serve_sandbox() as server:
        httpx.post(
            server.base_url + "/_sandbox/faults",
            json={"route": "/v3.2/Message", "latency": 0.3},
            headers={"Authorization": f"Basic {server.token}"},
        ).raise_for_status()
        yield server


def transport_of(client: sk.Client | sk.AsyncClient) -> Any:
    return client._http._transport


def sharded() -> AsyncShardedTransport:
    return AsyncShardedTransport(httpx.Limits(max_connections=100, keepalive_expiry=4))


def open_connections(transport: Any) -> int:
    return sum(len(pool._pool.connections) for pool in transport._shards.pools)


@pytest.mark.parametrize(
    ("total", "idle"), [(100, 100), (10, 6), (1, 0), (5, None), (4, 4), (33, 7)]
)
def test_limits_are_shared_out_exactly(total: int, idle: int | None) -> None:
    shards = split_limits(
        httpx.Limits(max_connections=total, max_keepalive_connections=idle, keepalive_expiry=3)
    )
    assert sum(s.max_connections or 0 for s in shards) == total
    assert all(1 <= (s.max_connections or 0) <= SHARD_SIZE for s in shards)
    if idle is not None:
        assert sum(s.max_keepalive_connections or 0 for s in shards) == idle
    assert {s.keepalive_expiry for s in shards} == {3}


def test_no_connection_limit_is_one_pool() -> None:
    assert split_limits(httpx.Limits(max_connections=None)) == [httpx.Limits(max_connections=None)]


def test_remote_clients_use_the_sharded_pool(slow: ServedSandbox) -> None:
    with sk.Client(slow.base_url, slow.token) as client:
        assert isinstance(transport_of(client), ShardedTransport)
        assert transport_of(client).shards == 25  # 100 connections by default
    # The async client's default is aiohttp (tests/test_client_aiohttp.py); the sharded
    # pool is its fallback off asyncio and can be chosen explicitly.
    client = sk.AsyncClient(slow.base_url, slow.token, transport=sharded())
    assert isinstance(transport_of(client), AsyncShardedTransport)
    asyncio.run(client.aclose())


async def test_concurrent_sends_spread_over_shards_and_are_released(slow: ServedSandbox) -> None:
    async with sk.AsyncClient(slow.base_url, slow.token, transport=sharded()) as client:
        transport = transport_of(client)
        sends = [
            asyncio.create_task(
                client.messages.send(
                    destination=f"4479111230{i:02}", source=SOURCE, message="Hi", reply=False
                )
            )
            for i in range(12)
        ]
        await asyncio.sleep(0.15)  # all twelve are waiting on the 0.3 s answer
        during = transport.in_flight()
        answers = await asyncio.gather(*sends)
        assert all(a.created for a in answers)
        assert sum(during) == 12 and max(during) == 1
        assert transport.in_flight() == [0] * transport.shards


def test_sequential_sends_reuse_one_connection(slow: ServedSandbox) -> None:
    with sk.Client(slow.base_url, slow.token) as client:
        for i in range(4):
            client.messages.send(
                destination=f"4479111231{i:02}", source=SOURCE, message="Hi", reply=False
            )
        assert open_connections(transport_of(client)) == 1
        assert transport_of(client).in_flight() == [0] * transport_of(client).shards


def test_threads_share_the_shards(slow: ServedSandbox) -> None:
    with sk.Client(slow.base_url, slow.token) as client:
        transport = transport_of(client)
        seen: list[list[int]] = []
        barrier = threading.Barrier(9)

        def send(i: int) -> None:
            barrier.wait()
            client.messages.send(
                destination=f"4479111232{i:02}", source=SOURCE, message="Hi", reply=False
            )

        threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        barrier.wait()
        threading.Event().wait(0.15)
        seen.append(transport.in_flight())
        for t in threads:
            t.join()
        assert sum(seen[0]) == 8 and max(seen[0]) == 1
        assert transport.in_flight() == [0] * transport.shards


def test_a_failed_connection_releases_its_shard() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with sk.Client(f"http://127.0.0.1:{port}", "t", max_retries=0) as client:
        with pytest.raises(sk.SurveykitError):
            client.keywords.list()
        assert transport_of(client).in_flight() == [0] * transport_of(client).shards


def test_a_streamed_download_releases_its_shard_when_done(served: ServedSandbox) -> None:
    with sk.Client(served.base_url, served.token) as client:
        frame = client.surveys.results("*", format="CSV")
        assert len(frame) > 0
        assert transport_of(client).in_flight() == [0] * transport_of(client).shards

    async def run() -> None:
        transport = sharded()
        async with sk.AsyncClient(served.base_url, served.token, transport=transport) as aclient:
            frame = await aclient.surveys.results("*", format="JSON")
            assert len(frame) > 0
            assert transport_of(aclient).in_flight() == [0] * transport_of(aclient).shards

    asyncio.run(run())
