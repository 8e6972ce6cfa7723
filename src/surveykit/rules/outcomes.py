"""Outcomes of failed writes: whether a send or an import that failed may have been acted on.

A ``POST`` that sends a message or imports respondents is not idempotent. After an error it
is either provably not taken (``failed``: it may be sent again) or may have been acted on
(``unknown``: it is never sent blindly again). The client's retry policy
(:mod:`surveykit.client._retry`), the batch runner and ``import_frame`` all decide by
these rules.
"""

from __future__ import annotations

from typing import Final

from surveykit.errors import APIConnectionError, APIStatusError, OutcomeUnknownError

NOT_TAKEN_STATUS: Final = 503
"""The one server error status after which a write was provably not taken: "unable to
handle the request" (RFC 9110 section 15.6.4)."""

OUTCOME_UNKNOWN_STATUSES: Final = frozenset({500, 502, 504})
"""Statuses the client itself reports for a write as
:class:`~surveykit.ServerOutcomeUnknownError`: a 500 can come after the platform handed
the message on, a gateway's 502 or 504 after it forwarded the request."""


def outcome_unknown(error: BaseException) -> bool:
    """Whether a write (a send, an import) that ended in ``error`` may have been acted on.

    Not taken (False) only when that is proven: a connection that never reached the
    platform (:class:`~surveykit.APIConnectionError`), a 4xx refusal, a 503. Anything else
    is unknown (True): an :class:`~surveykit.OutcomeUnknownError` (an ambiguous transport
    failure, or a 500, 502 or 504 to a write), any other server error status, and any
    other error. The batch runner reports these as ``unknown`` or ``failed``,
    ``import_frame`` as ``unknown`` or ``failed`` / ``not sent``; neither ever sends an
    ``unknown`` again.
    """
    if isinstance(error, OutcomeUnknownError):
        return True
    if isinstance(error, APIStatusError):
        return error.status_code >= 500 and error.status_code != NOT_TAKEN_STATUS
    return not isinstance(error, APIConnectionError)


__all__ = ["NOT_TAKEN_STATUS", "OUTCOME_UNKNOWN_STATUSES", "outcome_unknown"]
