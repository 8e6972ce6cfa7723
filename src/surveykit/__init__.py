"""surveykit: the v3.2 messaging and survey platform from pandas and Jupyter."""

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
)

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConfigurationError",
    "NotFoundError",
    "OutcomeUnknownError",
    "PermissionDeniedError",
    "RateLimitError",
    "ResultsParseError",
    "SendRejectedError",
    "ServerError",
    "SurveykitError",
    "__version__",
]
