"""Checked by mypy (see pyproject's [tool.mypy] files), never run: what IDEs see.

One endpoint definition gives the sync client plain values and the async client awaitables.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import assert_type

import pandas as pd

import surveykit as sk
from surveykit.models import (
    ImportResult,
    Keyword,
    LookupResponse,
    ResultsRequest,
    SendResponse,
    UrlListRequest,
    Webhook,
)


def sync_types(client: sk.Client) -> None:
    assert_type(
        client.messages.send(destination="447700900123", source="A", message="m", reply=False),
        SendResponse,
    )
    assert_type(client.messages.lookup("447700900123"), LookupResponse)
    assert_type(client.data.import_records("R", [{"a": 1}]), list[ImportResult])
    assert_type(client.keywords.list(), list[Keyword])
    assert_type(client.keywords.delete("K"), None)
    assert_type(client.surveys.get_results("S", format="CSV"), str)
    assert_type(client.tinyurl.register("https://example.org"), str)
    assert_type(client.tinyurl.register_list(["https://example.org"]), list[str])
    assert_type(client.surveys.get_results(ResultsRequest(survey_reference="S")), str)
    assert_type(client.tinyurl.register_list(UrlListRequest(urls=[])), list[str])
    assert_type(client.webhooks.list(), list[Webhook])
    client.messages.send(destinaton="447700900123")  # type: ignore[call-arg]


async def async_types(client: sk.AsyncClient) -> None:
    assert_type(
        client.messages.send_email(to="a@example.org", from_="f", subject="s", content="c"),
        Awaitable[SendResponse],
    )
    assert_type(await client.webhooks.list(), list[Webhook])
    assert_type(await client.surveys.get_results(), str)


def batch_types(client: sk.Client, aclient: sk.AsyncClient, df: pd.DataFrame) -> None:
    """The batch's options are typed once (BatchOptions) and checked at every call."""
    assert_type(sk.send_batch(client, df, message="m", source="S"), sk.BatchResult)
    assert_type(
        sk.send_batch(aclient, df, message="m", source="S", timezone="auto"),
        Awaitable[sk.BatchResult],
    )
    sk.preview_batch(client, df, message="m", source="S", windows="Mon 09:00-10:00")
    sk.send_batch(client, df, message="m", source="S", concurency=2)  # type: ignore[call-overload]
    sk.send_batch(client, df, message="m", source="S", reply="yes")  # type: ignore[call-overload]
    sk.send_batch(client, df, message="m")  # type: ignore[call-overload]
    sk.preview_batch(client, df, source="S", journal="j.sqlite")  # type: ignore[call-arg]
