"""The embedded sandbox: a stateful simulation of the v3.2 platform.

>>> from surveykit.sandbox import Sandbox
>>> sandbox = Sandbox(seed=1)          # in memory; Sandbox(db="state.db") survives restarts
>>> sandbox.app                        # the ASGI app (Starlette)

See ``docs/sandbox.md`` for the rules it applies, its magic numbers and its control API.
"""

from surveykit.sandbox._behaviour import BEHAVIOURS, RespondentModel
from surveykit.sandbox._records import (
    CallbackTarget,
    Event,
    JournalEntry,
    MessageRecord,
    ShortLink,
)
from surveykit.sandbox._rules import MAGIC_NUMBERS, NumberInfo
from surveykit.sandbox._sandbox import IN_PROCESS_URL, Sandbox
from surveykit.sandbox.state import DEFAULT_START, Fault

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
