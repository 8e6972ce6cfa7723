"""The sandbox's state: plain records, the platform's rules applied to them, and a clock.

Like a moto backend, every platform operation is a method that takes validated values and
returns a domain value (the answer's body), or raises a
:class:`~surveykit.sandbox.state._errors.Rejection` (the platform's refusal, with its body) or a
:class:`~surveykit.sandbox.state._errors.Problem`; HTTP lives in ``_routes``. One re-entrant
lock guards everything.

==================  ==================================================================
``_core``           :class:`StateCore`: lock, store, clock, counters, transactions,
                    journal, events, save and restore of those
``_account``        users and tokens, email routes, webhooks, the account callback
``_clock``          :class:`Clock`, :class:`Fault` and :class:`Faults`
``_callback``       :func:`callback_target`: Callback parameters as delivery settings
``_stoplist``       the stop list
``_messages``       POST Message, Message/SendEmail, GET Message/Lookup; held sends and
                    reply windows
``_schedule``       what the clock makes happen, in time order
``_inbound``        replies, STOP/UNSTOP, carrier status updates
``_surveys``        Data/Import, simulated answers, what GetResults covers
``_keywords``       the Keyword routes
``_links``          TinyUrl and clicks
``_respondents``    simulated respondents: answers, reminders, STOP, failed deliveries
``_state``          :class:`SandboxState`: one object per group, composed and wired
==================  ==================================================================

Each endpoint group is an object of its own over the shared core; it owns its records and
is handed the groups it talks to (a keyword's auto-reply is a send through the messages, a
reply to a survey message is an answer given to the surveys). :class:`SandboxState` builds
and wires them, so callers see one object.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.sandbox.state._callback import callback_target
    from surveykit.sandbox.state._clock import DEFAULT_START, Clock, Fault, Faults
    from surveykit.sandbox.state._core import CALLBACK_USER, StateCore, User
    from surveykit.sandbox.state._errors import errors_of
    from surveykit.sandbox.state._links import MAX_LINKS
    from surveykit.sandbox.state._respondents import RespondentAction
    from surveykit.sandbox.state._schedule import DEFAULT_REPLY_TIMEOUT
    from surveykit.sandbox.state._state import SandboxState
    from surveykit.sandbox.state._surveys import MAX_IMPORT_RECORDS

# Each name is imported from its module on first use (PEP 562), so that a module of
# the sandbox's data can import a state record without loading every endpoint group.
_LAZY: dict[str, str] = {
    "callback_target": "surveykit.sandbox.state._callback",
    "DEFAULT_START": "surveykit.sandbox.state._clock",
    "Clock": "surveykit.sandbox.state._clock",
    "Fault": "surveykit.sandbox.state._clock",
    "Faults": "surveykit.sandbox.state._clock",
    "CALLBACK_USER": "surveykit.sandbox.state._core",
    "StateCore": "surveykit.sandbox.state._core",
    "User": "surveykit.sandbox.state._core",
    "errors_of": "surveykit.sandbox.state._errors",
    "MAX_LINKS": "surveykit.sandbox.state._links",
    "RespondentAction": "surveykit.sandbox.state._respondents",
    "DEFAULT_REPLY_TIMEOUT": "surveykit.sandbox.state._schedule",
    "MAX_IMPORT_RECORDS": "surveykit.sandbox.state._surveys",
    "SandboxState": "surveykit.sandbox.state._state",
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
    "CALLBACK_USER",
    "DEFAULT_REPLY_TIMEOUT",
    "DEFAULT_START",
    "MAX_IMPORT_RECORDS",
    "MAX_LINKS",
    "Clock",
    "Fault",
    "Faults",
    "RespondentAction",
    "SandboxState",
    "StateCore",
    "User",
    "callback_target",
    "errors_of",
]
