"""Pydantic models of every schema in the v3.2 reference.

Request models (what surveykit sends) are strict and serialise with the reference's wire
names via ``to_wire()``; response models accept any letter case and keep unknown fields.
"""

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
