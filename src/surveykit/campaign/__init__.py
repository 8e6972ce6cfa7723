"""The campaign loop: one row per respondent across waves, reminders, the opt-out list."""

from surveykit.campaign._numbers import address_key, address_keys
from surveykit.campaign._optouts import OptOutError, OptOutList
from surveykit.campaign._status import FLAGS, STATUSES, campaign_status

__all__ = [
    "FLAGS",
    "STATUSES",
    "OptOutError",
    "OptOutList",
    "address_key",
    "address_keys",
    "campaign_status",
]
