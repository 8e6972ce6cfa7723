"""The campaign loop: one row per respondent across waves, reminders, the opt-out list."""

from surveykit.campaign._numbers import address_key, address_keys
from surveykit.campaign._optouts import OptOutError, OptOutList
from surveykit.campaign._reminders import REASONS, Reminders, plan_reminders
from surveykit.campaign._status import FLAGS, STATUSES, campaign_status

__all__ = [
    "FLAGS",
    "REASONS",
    "STATUSES",
    "OptOutError",
    "OptOutList",
    "Reminders",
    "address_key",
    "address_keys",
    "campaign_status",
    "plan_reminders",
]
