"""Figures of results, batches and callbacks (funnel, response rate, NPS, crosstab...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from surveykit import analysis
from surveykit.plots._common import NPS_COLOURS, OUTCOME_COLOURS, PALETTE
from surveykit.plots._common import figure as _figure
from surveykit.plots._common import label_bars as _label_bars

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "plot_batch_outcomes",
    "plot_crosstab",
    "plot_events",
    "plot_funnel",
    "plot_nps",
    "plot_response_rate",
]


def plot_funnel(
    df: pd.DataFrame,
    *,
    delivered: int | None = None,
    by: str | None = None,
    title: str | None = None,
) -> Figure:
    """Respondents at each stage (see :func:`surveykit.analysis.response_funnel`).

    With ``by`` (for example ``"surveyReference"``) each group gets its own panel.
    """
    if by is not None:
        return _funnel_panels(df, by, title)
    funnel = analysis.response_funnel(df, delivered=delivered)
    fig, ax = _figure(7, 0.45 * len(funnel) + 1.2)
    _draw_funnel(ax, funnel)
    ax.set_title(title or "Response funnel")
    return fig


def _funnel_panels(df: pd.DataFrame, by: str, title: str | None) -> Figure:
    funnels = analysis.response_funnel(df, by=by)
    groups = list(dict.fromkeys(funnels[by]))
    sizes = [int((funnels[by] == group).sum()) for group in groups]
    fig, first = _figure(7, sum(0.4 * size + 0.9 for size in sizes))
    fig.delaxes(first)
    axes = fig.subplots(len(groups), 1, gridspec_kw={"height_ratios": sizes}, squeeze=False)
    for ax, group in zip(axes[:, 0], groups, strict=True):
        _draw_funnel(ax, funnels[funnels[by] == group])
        ax.set_title(str(group), fontsize=10, loc="left")
    fig.suptitle(title or "Response funnel")
    return fig


def _draw_funnel(ax: Axes, funnel: pd.DataFrame) -> None:
    stages = funnel["stage"].tolist()[::-1]
    counts = funnel["respondents"].tolist()[::-1]
    ax.barh(stages, counts, color=PALETTE[0])
    _label_bars(ax, counts, funnel["percent_of_invited"].tolist()[::-1], horizontal=True)
    ax.set_xlabel("respondents (percent of invited)")
    ax.set_xlim(0, max([*counts, 1]) * 1.25)
    ax.spines[["top", "right"]].set_visible(False)


def plot_response_rate(df: pd.DataFrame, *, freq: str = "D", title: str | None = None) -> Figure:
    """Invitations, starts and completions per period, and the cumulative response rate."""
    rate = analysis.response_rate(df, freq=freq)
    fig, ax = _figure(8, 4)
    for colour, stage in zip(PALETTE, ("invited", "started", "completed"), strict=False):
        if stage in rate:
            ax.plot(rate.index, rate[stage], marker="o", markersize=3, label=stage, color=colour)
    ax.set_ylabel(f"respondents per period ({freq})")
    ax.set_title(title or "Responses over time")
    if "cumulative_rate" in rate:
        twin = ax.twinx()
        twin.plot(
            rate.index,
            rate["cumulative_rate"],
            color=PALETTE[3],
            linestyle="--",
            label="cumulative response rate",
        )
        twin.set_ylabel("cumulative response rate (%)")
        twin.set_ylim(0, 100)
        lines = ax.get_legend_handles_labels()
        more = twin.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", fontsize=8)
    else:
        ax.legend(loc="upper left", fontsize=8)
    fig.autofmt_xdate()
    return fig


def plot_nps(
    df: pd.DataFrame, question: str, *, by: str | None = None, title: str | None = None
) -> Figure:
    """Detractors, passives and promoters as stacked percentages, with the NPS per group."""
    table = analysis.nps(df, question, by=by)
    groups = table[by].astype(str).tolist() if by else ["all"]
    fig, ax = _figure(7, 0.5 * len(groups) + 1.5)
    left = [0.0] * len(groups)
    for part in ("detractors", "passives", "promoters"):
        values = table[f"percent_{part}"].fillna(0).tolist()
        ax.barh(groups, values, left=left, color=NPS_COLOURS[part], label=part)
        left = [a + b for a, b in zip(left, values, strict=True)]
    for position, score in enumerate(table["estimate"]):
        ax.annotate(
            f"NPS {score:+.0f}" if pd.notna(score) else "no answers",
            (100, position),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=9,
        )
    ax.set_xlim(0, 118)
    ax.set_xlabel("percent of responses")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=3, fontsize=8, frameon=False)
    ax.set_title(title or f"{question}: Net Promoter Score", pad=24)
    return fig


def plot_crosstab(df: pd.DataFrame, question: str, by: str, *, title: str | None = None) -> Figure:
    """A heatmap of answers by group, in percent of each group, with the values written in."""
    table = analysis.crosstab(df, question, by, test=False)
    fig, ax = _figure(1.2 * len(table.columns) + 3, 0.45 * len(table) + 1.5)
    image = ax.imshow(table.to_numpy(dtype=float), cmap="Blues", aspect="auto", vmin=0)
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns])
    ax.set_yticks(range(len(table.index)), [str(i)[:40] for i in table.index])
    peak = float(table.to_numpy(dtype=float).max()) if table.size else 0.0
    values = table.to_numpy(dtype=float)
    for row, col in ((r, c) for r in range(values.shape[0]) for c in range(values.shape[1])):
        value = values[row, col]
        ax.text(
            col,
            row,
            f"{value:.0f}%",
            ha="center",
            va="center",
            fontsize=8,
            color="white" if value > peak * 0.6 else "black",
        )
    fig.colorbar(image, ax=ax, label=f"percent of {by} group")
    ax.set_xlabel(by)
    ax.set_title(title or f"{question} by {by}")
    return fig


def plot_batch_outcomes(result: Any, *, title: str | None = None) -> Figure:
    """Rows per batch outcome (a BatchResult or its frame)."""
    summary = analysis.batch_summary(result)
    fig, ax = _figure(7, 0.45 * len(summary) + 1.3)
    outcomes = summary["outcome"].tolist()[::-1]
    rows = summary["rows"].tolist()[::-1]
    ax.barh(outcomes, rows, color=[OUTCOME_COLOURS.get(o, PALETTE[0]) for o in outcomes])
    _label_bars(ax, rows, summary["percent"].tolist()[::-1], horizontal=True)
    ax.set_xlim(0, max([*rows, 1]) * 1.3)
    ax.set_xlabel("rows")
    ax.set_title(title or f"Batch outcomes ({int(summary['rows'].sum()):,} rows)")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def plot_events(events: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Callback events by type."""
    summary = analysis.event_summary(events, by=("Type",))
    fig, ax = _figure(7, 0.45 * max(len(summary), 1) + 1.3)
    name = summary.columns[0]
    labels = summary[name].astype(str).tolist()[::-1]
    counts = summary["events"].tolist()[::-1]
    ax.barh(labels, counts, color=PALETTE[5])
    total = max(sum(counts), 1)
    _label_bars(ax, counts, [100 * c / total for c in counts], horizontal=True)
    ax.set_xlim(0, max([*counts, 1]) * 1.3)
    ax.set_xlabel("events")
    ax.set_title(title or f"Callback events ({sum(counts):,})")
    ax.spines[["top", "right"]].set_visible(False)
    return fig
