"""Former home of the sandbox's state, kept so existing imports work: see :mod:`.state`."""

from __future__ import annotations

from surveykit.sandbox.state import (
    CALLBACK_USER,
    DEFAULT_REPLY_TIMEOUT,
    DEFAULT_START,
    MAX_IMPORT_RECORDS,
    MAX_LINKS,
    Clock,
    Fault,
    SandboxState,
    User,
    callback_target,
    errors_of,
)

__all__ = [
    "CALLBACK_USER",
    "DEFAULT_REPLY_TIMEOUT",
    "DEFAULT_START",
    "MAX_IMPORT_RECORDS",
    "MAX_LINKS",
    "Clock",
    "Fault",
    "SandboxState",
    "User",
    "callback_target",
    "errors_of",
]
