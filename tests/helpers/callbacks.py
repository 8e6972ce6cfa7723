"""Payload builders and HTTP helpers shared by the callback tests."""

from __future__ import annotations

from typing import Any

import httpx

OUR_NUMBER = "447700900123"
RESPONDENT = "447911123456"


def receipt(
    message_id: str,
    status: str = "Delivered",
    *,
    timestamp: str = "2026-03-02T10:00:00+01:00",
    campaign: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "Source": OUR_NUMBER,
        "Destination": RESPONDENT,
        "Type": "Receipt",
        "Timestamp": timestamp,
        "Status": status,
        "MessageID": message_id,
        "Inbound": False,
        "Segments": 1,
    }
    if campaign is not None:
        body["MetaData"] = [{"campaign": campaign}]
    body.update(extra)
    return body


def inbound(
    type_: str,
    message_id: str,
    text: str,
    *,
    timestamp: str = "2026-03-02T10:05:00+00:00",
    campaign: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "Source": RESPONDENT,
        "Destination": OUR_NUMBER,
        "Message": text,
        "Type": type_,
        "Timestamp": timestamp,
        "Inbound": True,
        "MessageID": message_id,
    }
    if campaign is not None:
        body["MetaData"] = [{"campaign": campaign}]
    body.update(extra)
    return body


def client() -> httpx.Client:
    # trust_env=False: a proxy configured in the environment must not catch loopback calls.
    return httpx.Client(trust_env=False, timeout=30)


def async_client(connections: int = 64) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(trust_env=False, timeout=60, limits=limits)
