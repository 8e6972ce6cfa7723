"""Sync and async clients of the v3.2 platform, one resource object per endpoint group."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.client._async import AsyncClient
    from surveykit.client._auth import BasicTokenAuth
    from surveykit.client._base import APIRequest
    from surveykit.client._retry import RetryPolicy
    from surveykit.client._sync import Client
    from surveykit.client._transports import ASGIPortalTransport

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "AsyncClient": "surveykit.client._async",
    "BasicTokenAuth": "surveykit.client._auth",
    "APIRequest": "surveykit.client._base",
    "RetryPolicy": "surveykit.client._retry",
    "Client": "surveykit.client._sync",
    "ASGIPortalTransport": "surveykit.client._transports",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(_importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later uses find it without calling back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "APIRequest",
    "ASGIPortalTransport",
    "AsyncClient",
    "BasicTokenAuth",
    "Client",
    "RetryPolicy",
]
