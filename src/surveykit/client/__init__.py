"""Sync and async clients of the v3.2 platform, one resource object per endpoint group."""

from surveykit.client._async import AsyncClient
from surveykit.client._auth import BasicTokenAuth
from surveykit.client._base import APIRequest
from surveykit.client._retry import RetryPolicy
from surveykit.client._sync import Client
from surveykit.client._transports import ASGIPortalTransport

__all__ = [
    "APIRequest",
    "ASGIPortalTransport",
    "AsyncClient",
    "BasicTokenAuth",
    "Client",
    "RetryPolicy",
]
