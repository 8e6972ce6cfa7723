"""Shared fixtures: in-process sandboxes and clients, and a served sandbox."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
from hypothesis import HealthCheck, settings

from surveykit.client import AsyncClient, Client
from surveykit.sandbox import Sandbox
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

# The test command explores the same examples on every run, so a submission's CI result
# depends on its code alone; `HYPOTHESIS_PROFILE=explore` searches new examples at random
# (run it before landing a change to a parser or a model).
# Nor on the machine's load: CI shares two cores, so no deadline and no "too slow" check
# (examples are checked for correctness, never for speed).
settings.register_profile(
    "default",
    derandomize=True,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", derandomize=False, max_examples=2000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


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
