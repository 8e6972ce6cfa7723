"""Delivery: which Status a destination check refuses a send with, and whether it is delivered.

What the v3.2 platform decides about a destination, as pure functions: a number on the stop
list or blocked by its network is refused ``Blocked``; with a lookup, a failed lookup is
refused ``Failed`` and a landline ``Reachable``; a message that went out is delivered unless
it is a text to an unreachable number or a landline. The batch preview and the sandbox's
state (:mod:`surveykit.sandbox.state._messages`) both apply these. The sandbox decides what
a lookup finds for a number (mobile, landline, magic numbers) in
:mod:`surveykit.sandbox.state._rules`.

The platform's other rules are beside this module: :mod:`surveykit.rules.sms` (segments),
:mod:`surveykit.rules.windows` (send windows), :mod:`surveykit.rules.numbers` (numbers as
people write them), :mod:`surveykit.rules.outcomes` (failed writes).
"""

from __future__ import annotations

from typing import Final

BLOCKED: Final = "Blocked"
"""Send Status: the destination is on the stop list or blocked by the network."""
FAILED: Final = "Failed"
"""Send Status: the lookup the send asked for failed, or the platform could not send."""
REACHABLE: Final = "Reachable"
"""Send Status of a refused send to a landline: reachable, but not by text."""
LANDLINE: Final = "Landline"
"""The NumberType of a fixed line."""


def destination_refusal(
    *, stopped: bool, blocked: bool, lookup: bool, lookup_failed: bool, number_type: str
) -> str | None:
    """The Status a text message is refused with by the destination check, or None.

    In order: a destination on the stop list (``stopped``) or blocked by its network is
    refused ``Blocked``, with or without a lookup. When the send asked for a lookup, a
    failed lookup is refused ``Failed`` and a landline ``Reachable`` (the number is real,
    but a text cannot reach it). Without a lookup, a landline is accepted and its
    delivery fails later (:func:`delivered`).
    """
    if stopped or blocked:
        return BLOCKED
    if lookup and lookup_failed:
        return FAILED
    if lookup and number_type == LANDLINE:
        return REACHABLE
    return None


def delivered(channel: str, *, reachable: bool, number_type: str) -> bool:
    """Whether a message that went out is delivered (its second receipt, else ``Failed``).

    Email is not a mailbox check: it is delivered. A text to an unreachable number or a
    landline fails.
    """
    return channel == "Email" or (reachable and number_type != LANDLINE)


__all__ = [
    "BLOCKED",
    "FAILED",
    "LANDLINE",
    "REACHABLE",
    "delivered",
    "destination_refusal",
]
