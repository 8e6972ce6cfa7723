"""Shared fixtures: in-process sandboxes and clients, and a served sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from _sandbox_server import ServedSandbox, serve_sandbox
from surveykit.client import AsyncClient, Client
from surveykit.sandbox import Sandbox


@pytest.fixture
def sandbox() -> Sandbox:
    """A fresh in-process sandbox with the sample data (seed 0)."""
    return Sandbox(seed=0)


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[Client]:
    """A sync client of ``sandbox`` (no retries, so faults are seen as they are)."""
    with Client.sandbox(sandbox, max_retries=0) as c:
        yield c


@pytest.fixture
async def aclient(sandbox: Sandbox) -> AsyncIterator[AsyncClient]:
    """An async client of ``sandbox``."""
    async with AsyncClient.sandbox(sandbox, max_retries=0) as c:
        yield c


@pytest.fixture(scope="module")
def served() -> Iterator[ServedSandbox]:
    """``surveykit sandbox serve`` on a free loopback port, for one test module."""
    with serve_sandbox() as server:
        yield server
