"""The embedded sandbox: a stateful simulation of the v3.2 platform.

>>> from surveykit.sandbox import Sandbox
>>> sandbox = Sandbox(seed=1)          # in memory; Sandbox(db="state.db") survives restarts
>>> sandbox.app                        # the ASGI app (Starlette)

See ``docs/sandbox.md`` for the rules it applies, its magic numbers and its control API.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.sandbox._sandbox import IN_PROCESS_URL, Sandbox
    from surveykit.sandbox.data._behaviour import BEHAVIOURS, RespondentModel
    from surveykit.sandbox.state import DEFAULT_START, Fault
    from surveykit.sandbox.state._numbers import MAGIC_NUMBERS, NumberInfo
    from surveykit.sandbox.state._records import (
        CallbackTarget,
        Event,
        JournalEntry,
        MessageRecord,
        ShortLink,
    )

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "BEHAVIOURS": "surveykit.sandbox.data._behaviour",
    "RespondentModel": "surveykit.sandbox.data._behaviour",
    "CallbackTarget": "surveykit.sandbox.state._records",
    "Event": "surveykit.sandbox.state._records",
    "JournalEntry": "surveykit.sandbox.state._records",
    "MessageRecord": "surveykit.sandbox.state._records",
    "ShortLink": "surveykit.sandbox.state._records",
    "MAGIC_NUMBERS": "surveykit.sandbox.state._numbers",
    "NumberInfo": "surveykit.sandbox.state._numbers",
    "IN_PROCESS_URL": "surveykit.sandbox._sandbox",
    "Sandbox": "surveykit.sandbox._sandbox",
    "DEFAULT_START": "surveykit.sandbox.state",
    "Fault": "surveykit.sandbox.state",
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
    "BEHAVIOURS",
    "DEFAULT_START",
    "IN_PROCESS_URL",
    "MAGIC_NUMBERS",
    "CallbackTarget",
    "Event",
    "Fault",
    "JournalEntry",
    "MessageRecord",
    "NumberInfo",
    "RespondentModel",
    "Sandbox",
    "ShortLink",
]
