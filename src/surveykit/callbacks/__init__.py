"""Receiving the platform's callbacks: receipts, replies, opt-outs and clicks as a DataFrame.

* :func:`listen` starts a receiver in a background thread (a notebook or a script) and
  returns a :class:`Listener` whose ``.events`` DataFrame grows as callbacks arrive.
* :class:`Receiver` is the ASGI app itself, with ``@receiver.on("Keyword")`` handlers that
  answer replies.
* :class:`EventStore` keeps every event in SQLite (committed before the callback is
  answered); :func:`campaign_funnel` summarises the events per campaign.

The wire contract (status codes, reply body, signature, dedupe) is in ``docs/callbacks.md``.
"""

from surveykit.callbacks._funnel import (
    DEFAULT_DELIVERED_STATUSES,
    DEFAULT_NOT_SENT_STATUSES,
    STAGES,
    campaign_funnel,
)
from surveykit.callbacks._guard import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS
from surveykit.callbacks._listener import Listener, listen, run_listener_cli
from surveykit.callbacks._receiver import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HANDLER_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_PATH,
    Handler,
    Receiver,
    Reply,
    build_reply,
)
from surveykit.callbacks._store import (
    EVENT_COLUMNS,
    EventStore,
    Recorded,
    StoreClosedError,
    delivery_identity,
)
from surveykit.callbacks._verify import (
    DEFAULT_REPLAY_WINDOW,
    DEFAULT_SIGNATURE_DIGEST,
    DEFAULT_SIGNATURE_HEADER,
    callback_signature,
)

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
