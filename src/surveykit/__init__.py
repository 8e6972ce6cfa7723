"""surveykit: the v3.2 messaging and survey platform from pandas and Jupyter."""

from surveykit import models
from surveykit.client import AsyncClient, BasicTokenAuth, Client, RetryPolicy
from surveykit.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    NotFoundError,
    OutcomeUnknownError,
    PermissionDeniedError,
    RateLimitError,
    ResultsParseError,
    SendRejectedError,
    ServerError,
    SurveykitError,
    UnexpectedResponseError,
)

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BasicTokenAuth",
    "Client",
    "ConfigurationError",
    "NotFoundError",
    "OutcomeUnknownError",
    "PermissionDeniedError",
    "RateLimitError",
    "ResultsParseError",
    "RetryPolicy",
    "SendRejectedError",
    "ServerError",
    "SurveykitError",
    "UnexpectedResponseError",
    "__version__",
    "models",
]
