"""The campaign loop: one row per respondent across waves, reminders, the opt-out list."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.campaign._aapor import DISPOSITION_RULES, RATES, dispositions, outcome_rates
    from surveykit.campaign._reminders import REASONS, Reminders, plan_reminders
    from surveykit.campaign._status import FLAGS, STATUSES, campaign_status
    from surveykit.errors import OptOutError
    from surveykit.optouts import OptOutList
    from surveykit.respondents._numbers import address_key, address_keys

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "DISPOSITION_RULES": "surveykit.campaign._aapor",
    "RATES": "surveykit.campaign._aapor",
    "dispositions": "surveykit.campaign._aapor",
    "outcome_rates": "surveykit.campaign._aapor",
    "address_key": "surveykit.respondents._numbers",
    "address_keys": "surveykit.respondents._numbers",
    "OptOutError": "surveykit.errors",
    "OptOutList": "surveykit.optouts",
    "REASONS": "surveykit.campaign._reminders",
    "Reminders": "surveykit.campaign._reminders",
    "plan_reminders": "surveykit.campaign._reminders",
    "FLAGS": "surveykit.campaign._status",
    "STATUSES": "surveykit.campaign._status",
    "campaign_status": "surveykit.campaign._status",
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
    "DISPOSITION_RULES",
    "FLAGS",
    "RATES",
    "REASONS",
    "STATUSES",
    "OptOutError",
    "OptOutList",
    "Reminders",
    "address_key",
    "address_keys",
    "campaign_status",
    "dispositions",
    "outcome_rates",
    "plan_reminders",
]
