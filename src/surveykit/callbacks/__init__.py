"""Receiving the platform's callbacks: receipts, replies, opt-outs and clicks as a DataFrame.

* :func:`listen` starts a receiver in a background thread (a notebook or a script) and
  returns a :class:`Listener` whose ``.events`` DataFrame grows as callbacks arrive.
* :class:`Receiver` is the ASGI app itself, with ``@receiver.on("Keyword")`` handlers that
  answer replies.
* :class:`EventStore` keeps every event in SQLite (committed before the callback is
  answered); :func:`campaign_funnel` summarises the events per campaign.

The wire contract (status codes, reply body, signature, dedupe) is in ``docs/callbacks.md``.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit._util.serving import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS
    from surveykit.callbacks._funnel import (
        DEFAULT_DELIVERED_STATUSES,
        DEFAULT_NOT_SENT_STATUSES,
        STAGES,
        campaign_funnel,
    )
    from surveykit.callbacks._listener import Listener, listen, run_listener_cli
    from surveykit.callbacks._receiver import (
        DEFAULT_BODY_TIMEOUT,
        DEFAULT_HANDLER_TIMEOUT,
        DEFAULT_MAX_BODY,
        DEFAULT_PATH,
        Receiver,
    )
    from surveykit.callbacks._replies import Handler, Reply, build_reply
    from surveykit.callbacks._store import EVENT_COLUMNS, EventStore, Recorded, delivery_identity
    from surveykit.callbacks._verify import (
        DEFAULT_REPLAY_WINDOW,
        DEFAULT_SIGNATURE_DIGEST,
        DEFAULT_SIGNATURE_HEADER,
        callback_signature,
    )
    from surveykit.errors import StoreClosedError

# Each name is imported from its module on first use (PEP 562): the store and the funnel
# load pandas, the server side starlette and uvicorn.
_LAZY = {
    "DEFAULT_DELIVERED_STATUSES": "surveykit.callbacks._funnel",
    "DEFAULT_NOT_SENT_STATUSES": "surveykit.callbacks._funnel",
    "STAGES": "surveykit.callbacks._funnel",
    "campaign_funnel": "surveykit.callbacks._funnel",
    "DEFAULT_IDLE_TIMEOUT": "surveykit._util.serving",
    "DEFAULT_MAX_CONNECTIONS": "surveykit._util.serving",
    "EVENT_COLUMNS": "surveykit.callbacks._store",
    "EventStore": "surveykit.callbacks._store",
    "Recorded": "surveykit.callbacks._store",
    "StoreClosedError": "surveykit.errors",
    "delivery_identity": "surveykit.callbacks._store",
    "DEFAULT_REPLAY_WINDOW": "surveykit.callbacks._verify",
    "DEFAULT_SIGNATURE_DIGEST": "surveykit.callbacks._verify",
    "DEFAULT_SIGNATURE_HEADER": "surveykit.callbacks._verify",
    "callback_signature": "surveykit.callbacks._verify",
    "Listener": "surveykit.callbacks._listener",
    "listen": "surveykit.callbacks._listener",
    "run_listener_cli": "surveykit.callbacks._listener",
    "DEFAULT_BODY_TIMEOUT": "surveykit.callbacks._receiver",
    "DEFAULT_HANDLER_TIMEOUT": "surveykit.callbacks._receiver",
    "DEFAULT_MAX_BODY": "surveykit.callbacks._receiver",
    "DEFAULT_PATH": "surveykit.callbacks._receiver",
    "Handler": "surveykit.callbacks._replies",
    "Receiver": "surveykit.callbacks._receiver",
    "Reply": "surveykit.callbacks._replies",
    "build_reply": "surveykit.callbacks._replies",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'surveykit.callbacks' has no attribute {name!r}")
    value: object = getattr(_importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_DELIVERED_STATUSES",
    "DEFAULT_HANDLER_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_NOT_SENT_STATUSES",
    "DEFAULT_PATH",
    "DEFAULT_REPLAY_WINDOW",
    "DEFAULT_SIGNATURE_DIGEST",
    "DEFAULT_SIGNATURE_HEADER",
    "EVENT_COLUMNS",
    "STAGES",
    "EventStore",
    "Handler",
    "Listener",
    "Receiver",
    "Recorded",
    "Reply",
    "StoreClosedError",
    "build_reply",
    "callback_signature",
    "campaign_funnel",
    "delivery_identity",
    "listen",
    "run_listener_cli",
]
