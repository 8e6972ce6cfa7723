"""surveykit: the v3.2 messaging and survey platform from pandas and Jupyter.

``import surveykit`` loads only the exception classes. Every other public name is imported
from its module the first time it is used (PEP 562), so that a notebook or a command pays
for the client, pandas, the servers (starlette, uvicorn), aiohttp, lxml, matplotlib or
ipywidgets only when it touches what needs them. ``sk.Client``, ``sk.Sandbox``, ``sk.listen``
... are the same objects as ``surveykit.client.Client`` and so on.
"""

import importlib as _importlib

from surveykit.errors import (
    AnalysisInputError,
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    BatchInterrupted,
    CodebookError,
    ColumnMappingError,
    ConfigurationError,
    ConflictError,
    DispositionError,
    ExportError,
    ImportStoppedError,
    JournalError,
    JournalLockedError,
    JournalMismatchError,
    LabelError,
    LookupFailedError,
    NotFoundError,
    OptOutError,
    OutcomeUnknownError,
    PermissionDeniedError,
    PlotError,
    RakingConvergenceError,
    RakingError,
    RateLimitError,
    ResultsParseError,
    SendRejectedError,
    ServerError,
    ServerOutcomeUnknownError,
    StoreClosedError,
    SurveykitError,
    TemplateError,
    UnexpectedResponseError,
    ValidationError,
    WeightsError,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (10 ms)
if TYPE_CHECKING:
    from surveykit import analysis, models, plots, report, widgets
    from surveykit._doctor import doctor
    from surveykit.analysis import Design, ReplicateDesign, weights
    from surveykit.batch import (
        BatchResult,
        lookup_frame,
        preview_batch,
        send_batch,
    )
    from surveykit.callbacks import (
        Listener,
        Receiver,
        callback_signature,
        campaign_funnel,
        listen,
    )
    from surveykit.campaign import campaign_status, dispositions, outcome_rates, plan_reminders
    from surveykit.client import AsyncClient, BasicTokenAuth, Client, RetryPolicy
    from surveykit.optouts import OptOutList
    from surveykit.report import Codebook, label, to_excel, to_spss, to_stata
    from surveykit.respondents import (
        ImportPlan,
        build_import_list,
        import_frame,
        join_import_results,
        normalize_phone_number,
        normalize_phone_numbers,
    )
    from surveykit.results import (
        SyncReport,
        read_results,
        results_to_parquet,
        sync_results,
        tidy_results,
        write_results,
    )
    from surveykit.sandbox import Sandbox

del TYPE_CHECKING  # not a public name

__version__ = "0.1.0"

_MODULES: dict[str, str] = {
    "analysis": "surveykit.analysis",
    "models": "surveykit.models",
    "plots": "surveykit.plots",
    "report": "surveykit.report",
    "weights": "surveykit.analysis.weights",
    "widgets": "surveykit.widgets",
}
"""Public submodules, imported on first use (``sk.weights`` lives in ``analysis/``)."""

_LAZY: dict[str, str] = {
    "dispositions": "surveykit.campaign",
    "outcome_rates": "surveykit.campaign",
    "Design": "surveykit.analysis",
    "ReplicateDesign": "surveykit.analysis",
    "AsyncClient": "surveykit.client",
    "BasicTokenAuth": "surveykit.client",
    "Client": "surveykit.client",
    "RetryPolicy": "surveykit.client",
    "SyncReport": "surveykit.results",
    "sync_results": "surveykit.results",
    "BatchResult": "surveykit.batch",
    "lookup_frame": "surveykit.batch",
    "preview_batch": "surveykit.batch",
    "send_batch": "surveykit.batch",
    "Listener": "surveykit.callbacks",
    "Receiver": "surveykit.callbacks",
    "callback_signature": "surveykit.callbacks",
    "campaign_funnel": "surveykit.callbacks",
    "listen": "surveykit.callbacks",
    "ImportPlan": "surveykit.respondents",
    "build_import_list": "surveykit.respondents",
    "import_frame": "surveykit.respondents",
    "join_import_results": "surveykit.respondents",
    "normalize_phone_number": "surveykit.respondents",
    "normalize_phone_numbers": "surveykit.respondents",
    "read_results": "surveykit.results",
    "results_to_parquet": "surveykit.results",
    "tidy_results": "surveykit.results",
    "write_results": "surveykit.results",
    "Sandbox": "surveykit.sandbox",
    "doctor": "surveykit._doctor",
    "OptOutList": "surveykit.optouts",
    "campaign_status": "surveykit.campaign",
    "plan_reminders": "surveykit.campaign",
    "Codebook": "surveykit.report",
    "label": "surveykit.report",
    "to_excel": "surveykit.report",
    "to_spss": "surveykit.report",
    "to_stata": "surveykit.report",
}
"""Each lazily loaded public name, and the module it is imported from."""


def __getattr__(name: str) -> object:
    if name in _MODULES:
        value: object = _importlib.import_module(_MODULES[name])
    elif name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'surveykit' has no attribute {name!r}")
    globals()[name] = value  # later uses find it without calling back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AnalysisInputError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BasicTokenAuth",
    "BatchInterrupted",
    "BatchResult",
    "Client",
    "Codebook",
    "CodebookError",
    "ColumnMappingError",
    "ConfigurationError",
    "ConflictError",
    "Design",
    "DispositionError",
    "ExportError",
    "ImportPlan",
    "ImportStoppedError",
    "JournalError",
    "JournalLockedError",
    "JournalMismatchError",
    "LabelError",
    "Listener",
    "LookupFailedError",
    "NotFoundError",
    "OptOutError",
    "OptOutList",
    "OutcomeUnknownError",
    "PermissionDeniedError",
    "PlotError",
    "RakingConvergenceError",
    "RakingError",
    "RateLimitError",
    "Receiver",
    "ReplicateDesign",
    "ResultsParseError",
    "RetryPolicy",
    "Sandbox",
    "SendRejectedError",
    "ServerError",
    "ServerOutcomeUnknownError",
    "StoreClosedError",
    "SurveykitError",
    "SyncReport",
    "TemplateError",
    "UnexpectedResponseError",
    "ValidationError",
    "WeightsError",
    "__version__",
    "analysis",
    "build_import_list",
    "callback_signature",
    "campaign_funnel",
    "campaign_status",
    "dispositions",
    "doctor",
    "import_frame",
    "join_import_results",
    "label",
    "listen",
    "lookup_frame",
    "models",
    "normalize_phone_number",
    "normalize_phone_numbers",
    "outcome_rates",
    "plan_reminders",
    "plots",
    "preview_batch",
    "read_results",
    "report",
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
