"""client.surveys.results and sync_results against the sandbox."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.results import FORMATS
from surveykit.results._sync import sync_results


@pytest.fixture
def sandbox() -> sk.Sandbox:
    return sk.Sandbox(seed=5)


def test_every_format_gives_the_same_frame(sandbox: sk.Sandbox) -> None:
    client = sk.Client.sandbox(sandbox)
    frames = {fmt: client.surveys.results("*", format=fmt) for fmt in FORMATS}
    assert len(frames["CSV"]) > 20
    for fmt, frame in frames.items():
        pd.testing.assert_frame_equal(frame, frames["CSV"], obj=fmt)
    assert str(frames["CSV"]["completed"].dtype) == "datetime64[us, UTC]"


async def test_async_results_equal_sync(sandbox: sk.Sandbox) -> None:
    expected = sk.Client.sandbox(sandbox).surveys.results("NPS-WA-Q1-2026", format="CSV")
    async with sk.AsyncClient.sandbox(sandbox) as client:
        got = await client.surveys.results("NPS-WA-Q1-2026", format="XML")
    pd.testing.assert_frame_equal(got, expected)


def test_header_false_with_names(sandbox: sk.Sandbox) -> None:
    client = sk.Client.sandbox(sandbox)
    full = client.surveys.results("CSAT-SMS-2026")
    bare = client.surveys.results("CSAT-SMS-2026", header=False, names=list(full.columns))
    pd.testing.assert_frame_equal(bare, full)


def test_a_download_that_breaks_off_is_an_error() -> None:
    def body():  # type: ignore[no-untyped-def]
        yield b'"respondentId","Q1"\n"R1","5"\n'
        raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body())

    client = sk.Client("https://api.example.test", "t", transport=httpx.MockTransport(handler))
    with pytest.raises(sk.APIConnectionError, match="broke off"):
        client.surveys.results("S")


def test_sync_twice_adds_nothing_then_only_new(sandbox: sk.Sandbox, tmp_path: Path) -> None:
    client = sk.Client.sandbox(sandbox)
    first = sync_results(client, "CSAT-SMS-2026", store=tmp_path)
    assert first.added == first.total == first.fetched > 0
    assert first.updated == 0 and first.watermark is not None
    stored = pd.read_parquet(first.path)
    assert len(stored) == first.total

    second = sync_results(client, "CSAT-SMS-2026", store=tmp_path)
    assert (second.added, second.updated, second.total) == (0, 0, first.total)
    assert second.fetched < first.fetched

    sandbox.advance(timedelta(hours=2))
    who = sandbox.simulate_answers("CSAT-SMS-2026")
    third = sync_results(client, "CSAT-SMS-2026", store=tmp_path)
    assert (third.added, third.updated, third.total) == (0, 1, first.total)
    assert third.fetched < first.fetched
    row = pd.read_parquet(third.path).set_index("respondentId").loc[who]
    assert pd.notna(row["completed"]) or int(row["sortOrder"]) > 0


def test_a_failed_download_leaves_the_store_as_it_was(sandbox: sk.Sandbox, tmp_path: Path) -> None:
    client = sk.Client.sandbox(sandbox, retry=sk.RetryPolicy(max_retries=1, backoff_base=0))
    report = sync_results(client, "*", store=tmp_path)
    data, meta = report.path.read_bytes(), report.path.with_suffix(".json").read_bytes()
    sandbox.advance(timedelta(hours=1))
    sandbox.simulate_answers("NPS-WA-Q1-2026")
    sandbox.inject_fault("/v3.2/Survey/GetResults", status=503)
    with pytest.raises(sk.ServerError):
        sync_results(client, "*", store=tmp_path)
    assert report.path.read_bytes() == data
    assert report.path.with_suffix(".json").read_bytes() == meta
    sandbox.clear_faults()
    assert sync_results(client, "*", store=tmp_path).updated == 1


async def test_async_sync_results(sandbox: sk.Sandbox, tmp_path: Path) -> None:
    async with sk.AsyncClient.sandbox(sandbox) as client:
        report = await sync_results(client, "EVT-DDLIS-2026", store=tmp_path)
    assert report.added == report.total > 0
