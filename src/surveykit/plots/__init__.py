"""Matplotlib figures for the analysis functions; each returns a ``Figure``.

Figures are built without pyplot, so nothing global changes and a notebook shows each figure
once (as the cell's result). Needs matplotlib: ``pip install 'surveykit[plots]'``.

Rating questions are drawn on their own scale (from the codebook when given), NPS colours
are kept for NPS questions, and estimates are drawn with their intervals:

Example:
    >>> fig = sk.plots.plot_distribution(df, "Q2")                       # doctest: +SKIP
    >>> fig = sk.plots.plot_estimates(sk.analysis.means(df, "Q3", by="region"),
    ...                               codebook=codebook)                  # doctest: +SKIP
    >>> fig = sk.plots.plot_likert(df, ["Q3", "Q4"], codebook=codebook)   # doctest: +SKIP
    >>> fig.savefig("q3.png")                                               # doctest: +SKIP
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.errors import PlotError
    from surveykit.plots._campaign import (
        DISPOSITION_COLOURS,
        STATUS_COLOURS,
        plot_campaign_status,
        plot_campaign_timeline,
        plot_dispositions,
    )
    from surveykit.plots._common import NPS_COLOURS, OUTCOME_COLOURS, PALETTE
    from surveykit.plots._estimates import plot_estimates
    from surveykit.plots._results import (
        plot_batch_outcomes,
        plot_crosstab,
        plot_events,
        plot_funnel,
        plot_nps,
        plot_response_rate,
    )
    from surveykit.plots._scales import plot_distribution, plot_likert

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "STATUS_COLOURS": "surveykit.plots._campaign",
    "plot_campaign_status": "surveykit.plots._campaign",
    "plot_campaign_timeline": "surveykit.plots._campaign",
    "DISPOSITION_COLOURS": "surveykit.plots._campaign",
    "plot_dispositions": "surveykit.plots._campaign",
    "NPS_COLOURS": "surveykit.plots._common",
    "OUTCOME_COLOURS": "surveykit.plots._common",
    "PALETTE": "surveykit.plots._common",
    "plot_estimates": "surveykit.plots._estimates",
    "plot_batch_outcomes": "surveykit.plots._results",
    "plot_crosstab": "surveykit.plots._results",
    "plot_events": "surveykit.plots._results",
    "plot_funnel": "surveykit.plots._results",
    "plot_nps": "surveykit.plots._results",
    "plot_response_rate": "surveykit.plots._results",
    "PlotError": "surveykit.errors",
    "plot_distribution": "surveykit.plots._scales",
    "plot_likert": "surveykit.plots._scales",
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
    "DISPOSITION_COLOURS",
    "NPS_COLOURS",
    "OUTCOME_COLOURS",
    "PALETTE",
    "STATUS_COLOURS",
    "PlotError",
    "plot_batch_outcomes",
    "plot_campaign_status",
    "plot_campaign_timeline",
    "plot_crosstab",
    "plot_dispositions",
    "plot_distribution",
    "plot_estimates",
    "plot_events",
    "plot_funnel",
    "plot_likert",
    "plot_nps",
    "plot_response_rate",
]
