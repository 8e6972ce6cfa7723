"""surveykit: the v3.2 messaging and survey platform from pandas and Jupyter."""

from surveykit import analysis, models, weights
from surveykit._doctor import doctor
from surveykit._sync_results import SyncReport, sync_results
from surveykit.batch import BatchResult, lookup_frame, preview_batch, send_batch
from surveykit.callbacks import Listener, Receiver, callback_signature, campaign_funnel, listen
from surveykit.campaign import OptOutList, campaign_status, plan_reminders
from surveykit.client import AsyncClient, BasicTokenAuth, Client, RetryPolicy
from surveykit.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ColumnMappingError,
    ConfigurationError,
    ConflictError,
    LookupFailedError,
    NotFoundError,
    OutcomeUnknownError,
    PermissionDeniedError,
    RateLimitError,
    ResultsParseError,
    SendRejectedError,
    ServerError,
    ServerOutcomeUnknownError,
    SurveykitError,
    UnexpectedResponseError,
)
from surveykit.frames import (
    ImportPlan,
    ImportStoppedError,
    build_import_list,
    import_frame,
    join_import_results,
    normalize_phone_number,
    normalize_phone_numbers,
)
from surveykit.report import Codebook, label, to_excel, to_spss, to_stata
from surveykit.results import read_results, results_to_parquet, tidy_results, write_results
from surveykit.sandbox import Sandbox

__version__ = "0.1.0"

_LAZY = ("plots", "widgets")  # matplotlib and ipywidgets are imported on first use


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"surveykit.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'surveykit' has no attribute {name!r}")


__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BasicTokenAuth",
    "BatchResult",
    "Client",
    "Codebook",
    "ColumnMappingError",
    "ConfigurationError",
    "ConflictError",
    "ImportPlan",
    "ImportStoppedError",
    "Listener",
    "LookupFailedError",
    "NotFoundError",
    "OptOutList",
    "OutcomeUnknownError",
    "PermissionDeniedError",
    "RateLimitError",
    "Receiver",
    "ResultsParseError",
    "RetryPolicy",
    "Sandbox",
    "SendRejectedError",
    "ServerError",
    "ServerOutcomeUnknownError",
    "SurveykitError",
    "SyncReport",
    "UnexpectedResponseError",
    "__version__",
    "analysis",
    "build_import_list",
    "callback_signature",
    "campaign_funnel",
    "campaign_status",
    "doctor",
    "import_frame",
    "join_import_results",
    "label",
    "listen",
    "lookup_frame",
    "models",
    "normalize_phone_number",
    "normalize_phone_numbers",
    "plan_reminders",
    "plots",
    "preview_batch",
    "read_results",
    "results_to_parquet",
    "send_batch",
    "sync_results",
    "tidy_results",
    "to_excel",
    "to_spss",
    "to_stata",
    "weights",
    "widgets",
    "write_results",
]
