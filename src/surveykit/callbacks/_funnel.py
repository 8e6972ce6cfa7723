"""The per-campaign funnel (sent, delivered, clicked, replied, opted out) from callback events.

Counts are of distinct messages (MessageID: the platform keeps the original message's id on
receipts, clicks and replies), so a message clicked twice or answered three times counts
once. Events whose MessageID names no message (``Unknown``, empty or missing) count once per
respondent instead, so opt-outs from different numbers are not merged. The stage rules are
in ``docs/callbacks.md``; the status vocabulary of receipts is not shown in the reference,
so the status sets are parameters.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

import pandas as pd

from surveykit.models.callbacks import PLACEHOLDER_MESSAGE_IDS

STAGES: Final = ("sent", "delivered", "clicked", "replied", "opted_out")
"""The funnel's columns, in order."""

DEFAULT_DELIVERED_STATUSES: Final = frozenset({"delivered", "read"})
"""Receipt statuses (any letter case) that mean the message reached the recipient."""

DEFAULT_NOT_SENT_STATUSES: Final = frozenset({"blocked"})
"""Receipt statuses (any letter case) that mean the message never went out."""

NO_CAMPAIGN: Final = "(none)"
"""The campaign label of messages whose events carry no campaign MetaData."""

_REPLY_TYPES: Final = ("message", "keyword")
_INBOUND_TYPES: Final = ("message", "keyword", "stop", "unstop", "help", "info")


def _campaign(metadata: Any, key: str) -> Any:
    if isinstance(metadata, Mapping):
        value = metadata.get(key)
    elif isinstance(metadata, list):  # the wire form: a list of one-pair objects
        value = next((pair[key] for pair in reversed(metadata) if key in pair), None)
    else:
        value = None
    return None if value is None or value == "" else str(value)


def _flag(values: pd.Series) -> pd.Series:
    return values.fillna(False).astype(bool)


def _units(events: pd.DataFrame, kind: pd.Series, ids: pd.Series) -> pd.Series:
    """The message each event counts for: its MessageID, or its respondent when it has none.

    The respondent is the Source of an inbound event and the Destination of the others
    (Inbound says which; without it, the Type does).
    """
    message_id = events["message_id"].astype("string")
    placeholder = message_id.isna() | message_id.str.strip().str.lower().isin(
        PLACEHOLDER_MESSAGE_IDS
    )
    by_type = _flag(kind.isin(_INBOUND_TYPES))
    inbound = (
        events["inbound"].astype("boolean").fillna(by_type).astype(bool)
        if "inbound" in events
        else by_type
    )
    missing = pd.Series(pd.NA, index=events.index, dtype="string")
    source = events["source"].astype("string") if "source" in events else missing
    destination = events["destination"].astype("string") if "destination" in events else missing
    respondent = source.where(inbound, destination)
    fallback = ("respondent:" + respondent).fillna("event:" + ids.astype("string"))
    return message_id.where(~placeholder.astype(bool), fallback)


def campaign_funnel(
    events: pd.DataFrame,
    *,
    campaign_key: str = "campaign",
    delivered_statuses: Collection[str] = DEFAULT_DELIVERED_STATUSES,
    not_sent_statuses: Collection[str] = DEFAULT_NOT_SENT_STATUSES,
    no_campaign: str = NO_CAMPAIGN,
) -> pd.DataFrame:
    """Count, per campaign, the messages that reached each stage.

    A message's campaign is the ``campaign_key`` MetaData value of its events (the first
    one seen, so a reply without MetaData still joins its message's campaign).

    Stages of a message (MessageID; events with an ``Unknown``, empty or missing MessageID
    count once per respondent, the Source of inbound events and the Destination of others):

    * ``sent``: a Receipt whose Status is not in ``not_sent_statuses``;
    * ``delivered``: a Receipt whose Status is in ``delivered_statuses``;
    * ``clicked``: a Click;
    * ``replied``: an inbound Message or Keyword (Inbound not false);
    * ``opted_out``: a Stop.

    Clicking, replying or opting out implies delivered, and delivered implies sent, so a
    late or lost receipt does not make a funnel stage smaller than the one after it.

    Args:
        events: the events DataFrame (``listener.events``).
        campaign_key: the MetaData name holding the campaign.
        delivered_statuses: Receipt statuses counted as delivered (any letter case).
        not_sent_statuses: Receipt statuses counted as not sent (any letter case).
        no_campaign: the label of messages without a campaign.

    Returns:
        One row per campaign (index ``campaign``, sorted), integer columns :data:`STAGES`.

    Example:
        >>> campaign_funnel(listener.events)              # doctest: +SKIP
                  sent  delivered  clicked  replied  opted_out
        campaign
        spring       3          2        1        1          0
    """
    missing = [c for c in ("type", "status", "message_id", "metadata") if c not in events]
    if missing:
        raise ValueError(f"events: missing column(s) {missing}; pass listener.events")
    if events.empty:
        empty = pd.DataFrame({stage: pd.Series(dtype="int64") for stage in STAGES})
        empty.index = pd.Index([], dtype="object", name="campaign")
        return empty
    delivered = {s.lower() for s in delivered_statuses}
    not_sent = {s.lower() for s in not_sent_statuses}
    kind = events["type"].astype("string").str.lower()
    status = events["status"].astype("string").str.lower()
    ids = events["event_id"] if "event_id" in events else pd.Series(events.index, events.index)
    unit = _units(events, kind, ids)
    inbound = (
        events["inbound"].astype("boolean").fillna(True)
        if "inbound" in events
        else pd.Series(True, index=events.index)
    )
    receipt = _flag(kind == "receipt")
    flags = pd.DataFrame(
        {
            "unit": unit,
            "campaign": events["metadata"].map(lambda m: _campaign(m, campaign_key)),
            "sent": receipt & ~_flag(status.isin(not_sent)),
            "delivered": receipt & _flag(status.isin(delivered)),
            "clicked": _flag(kind == "click"),
            "replied": _flag(kind.isin(_REPLY_TYPES)) & inbound.astype(bool),
            "opted_out": _flag(kind == "stop"),
        }
    )
    per_message = flags.groupby("unit", sort=False).agg(
        campaign=("campaign", "first"), **{stage: (stage, "any") for stage in STAGES}
    )
    later = per_message["clicked"] | per_message["replied"] | per_message["opted_out"]
    per_message["delivered"] = per_message["delivered"] | later
    per_message["sent"] = per_message["sent"] | per_message["delivered"]
    per_message["campaign"] = per_message["campaign"].astype("object").fillna(no_campaign)
    funnel = per_message.groupby("campaign", sort=True)[list(STAGES)].sum().astype("int64")
    funnel.columns.name = None
    return funnel
