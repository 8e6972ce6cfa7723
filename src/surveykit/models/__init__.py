"""Pydantic models of every schema in the v3.2 reference.

Request models (what surveykit sends) are strict and serialise with the reference's wire
names via ``to_wire()``; response models accept any letter case and keep unknown fields.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.models._base import RequestModel, ResponseModel
    from surveykit.models.callbacks import (
        RESPONSE_TYPES,
        CallbackMethod,
        CallbackPayload,
        CallbackSettings,
        CallbackType,
    )
    from surveykit.models.email import NOT_ACCEPTED_FOR_EMAIL, EmailRequest
    from surveykit.models.imports import ImportRequest, ImportResult, ImportStatus
    from surveykit.models.keywords import Keyword, KeywordRequest
    from surveykit.models.links import UrlListRequest, UrlRequest
    from surveykit.models.messages import (
        E164_DIGITS,
        LookupResponse,
        LookupStatus,
        MessageType,
        NumberType,
        SendRequest,
        SendResponse,
        SendStatus,
        Window,
    )
    from surveykit.models.problems import ProblemDetails
    from surveykit.models.results import ResultsFormat, ResultsRequest
    from surveykit.models.webhooks import Webhook

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "RequestModel": "surveykit.models._base",
    "ResponseModel": "surveykit.models._base",
    "RESPONSE_TYPES": "surveykit.models.callbacks",
    "CallbackMethod": "surveykit.models.callbacks",
    "CallbackPayload": "surveykit.models.callbacks",
    "CallbackSettings": "surveykit.models.callbacks",
    "CallbackType": "surveykit.models.callbacks",
    "NOT_ACCEPTED_FOR_EMAIL": "surveykit.models.email",
    "EmailRequest": "surveykit.models.email",
    "ImportRequest": "surveykit.models.imports",
    "ImportResult": "surveykit.models.imports",
    "ImportStatus": "surveykit.models.imports",
    "Keyword": "surveykit.models.keywords",
    "KeywordRequest": "surveykit.models.keywords",
    "UrlListRequest": "surveykit.models.links",
    "UrlRequest": "surveykit.models.links",
    "E164_DIGITS": "surveykit.models.messages",
    "LookupResponse": "surveykit.models.messages",
    "LookupStatus": "surveykit.models.messages",
    "MessageType": "surveykit.models.messages",
    "NumberType": "surveykit.models.messages",
    "SendRequest": "surveykit.models.messages",
    "SendResponse": "surveykit.models.messages",
    "SendStatus": "surveykit.models.messages",
    "Window": "surveykit.models.messages",
    "ProblemDetails": "surveykit.models.problems",
    "ResultsFormat": "surveykit.models.results",
    "ResultsRequest": "surveykit.models.results",
    "Webhook": "surveykit.models.webhooks",
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
    "E164_DIGITS",
    "NOT_ACCEPTED_FOR_EMAIL",
    "RESPONSE_TYPES",
    "CallbackMethod",
    "CallbackPayload",
    "CallbackSettings",
    "CallbackType",
    "EmailRequest",
    "ImportRequest",
    "ImportResult",
    "ImportStatus",
    "Keyword",
    "KeywordRequest",
    "LookupResponse",
    "LookupStatus",
    "MessageType",
    "NumberType",
    "ProblemDetails",
    "RequestModel",
    "ResponseModel",
    "ResultsFormat",
    "ResultsRequest",
    "SendRequest",
    "SendResponse",
    "SendStatus",
    "UrlListRequest",
    "UrlRequest",
    "Webhook",
    "Window",
]
