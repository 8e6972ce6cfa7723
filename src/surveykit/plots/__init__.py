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

from surveykit.plots._campaign import (
    STATUS_COLOURS,
    plot_campaign_status,
    plot_campaign_timeline,
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
from surveykit.plots._scales import PlotError, plot_distribution, plot_likert

__all__ = [
    "NPS_COLOURS",
    "OUTCOME_COLOURS",
    "PALETTE",
    "STATUS_COLOURS",
    "PlotError",
    "plot_batch_outcomes",
    "plot_campaign_status",
    "plot_campaign_timeline",
    "plot_crosstab",
    "plot_distribution",
    "plot_estimates",
    "plot_events",
    "plot_funnel",
    "plot_likert",
    "plot_nps",
    "plot_response_rate",
]
