"""Figures of a campaign: respondents by status per wave, contacts and completions over time."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from surveykit.campaign._aapor import RATES, outcome_rates
from surveykit.campaign._sources import send_table
from surveykit.errors import PlotError
from surveykit.plots._common import PALETTE
from surveykit.plots._common import figure as _figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["STATUS_COLOURS", "plot_campaign_status", "plot_campaign_timeline"]

STATUS_COLOURS = {
    "not_contacted": "#BBBBBB",
    "undeliverable": "#D55E00",
    "opted_out": "#CC79A7",
    "contacted": "#56B4E9",
    "started": "#E69F00",
    "completed": "#009E73",
}
"""The colour of each campaign status, stacked from the bottom in this order."""

NO_SEND = "no send"
"""The bar of respondents no wave sent to (``last_wave`` empty)."""


def _status_counts(status: Any, by: str | None) -> pd.DataFrame:
    """Respondents per bar (rows) and status (columns, in :data:`STATUS_COLOURS` order)."""
    order = list(STATUS_COLOURS)
    if isinstance(status, Mapping):
        frames = {str(label): frame for label, frame in status.items()}
        if not frames:
            raise PlotError("status: an empty mapping; give one status frame per label")
        rows = {label: _status_counts(frame, None).iloc[0] for label, frame in frames.items()}
        return pd.DataFrame(rows).T.reindex(columns=order, fill_value=0)
    if not isinstance(status, pd.DataFrame):
        raise TypeError(
            f"status: expected campaign_status()'s DataFrame or a mapping of label to one, "
            f"got {type(status).__name__}"
        )
    if "status" not in status.columns:
        raise PlotError("status: no 'status' column; pass sk.campaign_status(...)'s frame")
    values = status["status"].astype("string")
    unknown = sorted(set(values.dropna()) - set(order))
    if unknown or values.isna().any():
        shown = unknown or ["<NA>"]
        raise PlotError(f"status: {shown} not among the statuses {order}")
    if by is None:
        groups = pd.Series("all respondents", index=status.index, dtype="string")
    elif by not in status.columns:
        raise PlotError(f"by: no column {by!r}; columns are {[str(c) for c in status.columns]}")
    else:
        groups = status[by].astype("string").fillna(NO_SEND)
    counts = pd.crosstab(groups, values).reindex(columns=order, fill_value=0)
    if by is not None:
        counts = counts.loc[_wave_order(status, groups, list(counts.index))]
    return counts.astype(np.int64)


def _natural(label: str) -> list[Any]:
    """``wave2`` before ``wave10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", label)]


def _wave_order(status: pd.DataFrame, groups: pd.Series, labels: list[str]) -> list[str]:
    """Waves in the order they were sent, bars without a send last.

    A wave's time is its earliest ``last_contact`` among rows whose last send was accepted
    (only then is that contact the wave's own); waves without one follow, by name.
    """
    when: dict[str, Any] = {}
    if {"last_contact", "last_outcome"} <= set(status.columns):
        own = (status["last_outcome"] == "sent").fillna(False).to_numpy(dtype=bool)
        times = pd.to_datetime(status["last_contact"], utc=True)[own]
        earliest = times.groupby(groups[own]).min().dropna()
        when = {str(label): stamp for label, stamp in earliest.items()}

    def key(label: str) -> tuple[bool, bool, Any, list[Any]]:
        stamp = when.get(label)
        return (label == NO_SEND, stamp is None, stamp or 0, _natural(label))

    return sorted(labels, key=key)


def plot_campaign_status(
    status: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    by: str | None = "last_wave",
    title: str | None = None,
) -> Figure:
    """Respondents by status, per wave: stacked bars in a fixed order and colours.

    ``status`` is :func:`surveykit.campaign_status`'s frame: one bar per ``by`` value (by
    default ``last_wave``, the wave that last sent to the respondent; ``no send`` for those
    no wave reached), or ``by=None`` for one bar. Or a mapping of label to such frames (for
    example the status after each wave, ``{"after wave 1": s1, "after wave 2": s2}``): one
    bar per entry. Statuses stack from the bottom in :data:`STATUS_COLOURS` order
    (not_contacted to completed), each in its own colour; the total is written above.
    """
    from matplotlib.ticker import MaxNLocator

    counts = _status_counts(status, by)
    fig, ax = _figure(max(4.5, 1.1 * len(counts) + 3), 4.2)
    positions = np.arange(len(counts))
    bottom = np.zeros(len(counts), dtype=np.int64)
    for name, colour in STATUS_COLOURS.items():
        heights = counts[name].to_numpy()
        ax.bar(positions, heights, bottom=bottom, color=colour, label=name, width=0.6)
        bottom = bottom + heights
    for x, total in zip(positions, bottom, strict=True):
        ax.annotate(
            f"{int(total):,}", (x, total), xytext=(0, 3), textcoords="offset points",
            ha="center", fontsize=8,
        )  # fmt: skip
    ax.set_xticks(positions, [str(label) for label in counts.index])
    ax.set_ylabel("respondents")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(int(bottom.max(initial=0)), 1) * 1.12)
    handles, labels = ax.get_legend_handles_labels()
    # Legend top to bottom as the stack reads: completed first.
    ax.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.0, 1.0),
              frameon=False, fontsize=8)  # fmt: skip
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(title or "Respondents by status")
    return fig


def _cumulative(times: pd.Series) -> pd.Series:
    """Count so far at each time (one point per distinct time, sorted)."""
    stamps = pd.to_datetime(times, utc=True).dropna().sort_values()
    counts = stamps.value_counts(sort=False).sort_index().cumsum()
    return counts.astype(np.int64)


def _delivered(events: pd.DataFrame) -> pd.Series:
    """The times of the ``Delivered`` receipts among the listener's events."""
    missing = [c for c in ("type", "status", "timestamp") if c not in events.columns]
    if missing:
        raise PlotError(f"events: no column {missing[0]!r}; pass the listener's events frame")
    receipts = (events["type"] == "Receipt") & (events["status"] == "Delivered")
    return pd.to_datetime(events.loc[receipts, "timestamp"], utc=True)


def plot_campaign_timeline(
    status: pd.DataFrame | None = None,
    *,
    sends: Any = None,
    results: pd.DataFrame | None = None,
    events: pd.DataFrame | None = None,
    title: str | None = None,
) -> Figure:
    """Cumulative contacts, deliveries and completions over time, as steps.

    Contacts come from ``sends`` when given (a ``BatchResult``, its frame or a journal
    path; a list or dict of them for several waves, as :func:`surveykit.campaign_status`
    takes them): messages the platform accepted (outcome ``sent``), with a dotted line
    where each wave began. A message held for its local hours is accepted at once and
    delivered later: give ``events`` (the listener's events) to draw the ``Delivered``
    receipts at their times as well. Without ``sends``, contacts come from ``status``:
    respondents by the time of their first contact. Completions come from ``results``'
    ``completed`` times. A status frame has no completion times: give ``results`` to
    draw them.
    """
    from matplotlib.dates import date2num
    from matplotlib.ticker import MaxNLocator


    lines: list[tuple[str, pd.Series, str]] = []
    starts: dict[str, pd.Timestamp] = {}
    if sends is not None:
        table, _ = send_table(sends)
        accepted = table[table["outcome"] == "sent"]
        lines.append(("messages accepted", _cumulative(accepted["time"]), PALETTE[0]))
        starts = {str(k): v for k, v in accepted.groupby("wave", sort=False)["time"].min().items()}
    elif status is not None:
        if "first_contact" not in status.columns:
            raise PlotError("status: no 'first_contact' column; pass campaign_status()'s frame")
        lines.append(("respondents contacted", _cumulative(status["first_contact"]), PALETTE[0]))
    if events is not None:
        lines.append(("messages delivered", _cumulative(_delivered(events)), PALETTE[1]))
    if results is not None:
        if "completed" not in results.columns:
            raise PlotError("results: no 'completed' column of completion times")
        done = pd.to_datetime(results["completed"], utc=True, errors="coerce")
        lines.append(("completed", _cumulative(done), STATUS_COLOURS["completed"]))
    if not lines:
        raise PlotError("nothing to draw: give status, sends or results")
    fig, ax = _figure(8, 4)
    ends = [series.index.max() for _, series, _ in lines if len(series)]
    end = max(ends) if ends else None
    for label, series, colour in lines:
        if len(series):
            # Each count holds until the last time of any line (so a lone point shows).
            xs = [*series.index, end]
            ys = [*series.to_numpy(), series.iloc[-1]]
            ax.step(xs, ys, where="post", label=label, color=colour)
    for wave, start in starts.items():
        x = date2num(start)  # type: ignore[no-untyped-call]
        ax.axvline(x, color="#777777", linestyle=":", linewidth=1)
        ax.annotate(wave, (start, 1.0), xycoords=("data", "axes fraction"), xytext=(2, -10),
                    textcoords="offset points", fontsize=8, color="#555555")  # fmt: skip
    firsts = [series.index.min() for _, series, _ in lines if len(series)]
    if firsts and end is not None and min(firsts) == end:
        # Every point at one instant: matplotlib would pick a range of years around it.
        ax.set_xlim(end - pd.Timedelta(hours=1), end + pd.Timedelta(hours=1))
    ax.set_ylabel("cumulative count")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.autofmt_xdate()
    ax.set_title(title or "Contacts and completions over time")
    return fig


DISPOSITION_COLOURS: dict[str, str] = {
    "I": "#009E73",
    "P": "#8FD1B5",
    "R": "#D55E00",
    "NC": "#E69F00",
    "O": "#CC79A7",
    "UH": "#9A9A9A",
    "UO": "#C8C8C8",
    "NE": "#4D4D4D",
}
"""AAPOR's disposition groups in the order they stack (complete first), and their colours."""

_MISSING = "(missing)"

_GROUP_NAMES: dict[str, str] = {
    "I": "complete (I)",
    "P": "partial (P)",
    "R": "refusal, break-off (R)",
    "NC": "non-contact (NC)",
    "O": "other (O)",
    "UH": "unknown, household (UH)",
    "UO": "unknown, other (UO)",
    "NE": "not eligible (NE)",
}


def plot_dispositions(
    dispositions: pd.DataFrame | pd.Series,
    *,
    by: str | None = None,
    rate: str = "RR1",
    e: float | Literal["proportional"] = "proportional",
    title: str | None = None,
) -> Figure:
    """Respondents by AAPOR disposition group, one horizontal stacked bar per group of ``by``.

    ``dispositions`` is what :func:`surveykit.outcome_rates` takes (the frame of
    :func:`surveykit.dispositions`, or codes such as ``"2.11"`` in a ``disposition``
    column). Each bar stacks the groups I, P, R, NC, O, UH, UO and NE in
    :data:`DISPOSITION_COLOURS` order, each segment's width its number of respondents;
    the outcome rate ``rate`` (AAPOR's, computed by :func:`surveykit.outcome_rates` with
    ``e``) is written at the end of each bar. With ``by`` (for example ``"last_wave"``),
    one bar per value, in sorted order, and ``"(missing)"`` last for rows without one.
    """
    if rate not in RATES:
        raise PlotError(f"rate: {rate!r} is not an AAPOR rate; choose one of {list(RATES)}")
    if by is not None:
        if not isinstance(dispositions, pd.DataFrame) or by not in dispositions.columns:
            raise PlotError(f"by: no column {by!r}")
        values = dispositions[by].astype(object)
        dispositions = dispositions.assign(**{by: values.where(values.notna(), _MISSING)})
        dispositions[by] = dispositions[by].astype(str)
    table = outcome_rates(dispositions, e=e, by=by)
    counts = table.attrs["counts"]
    per_bar: dict[str, dict[str, int]] = (
        {"all": counts}
        if by is None
        else {k: counts[k] for k in sorted(counts, key=lambda k: (k == _MISSING, k))}
    )
    chosen = table[table["rate"] == rate]
    shown = (
        {"all": float(chosen["value"].iloc[0])}
        if by is None
        else dict(zip(chosen[by], chosen["value"].astype(float), strict=True))
    )
    labels = list(per_bar)
    fig, ax = _figure(8, max(1.6, 0.6 * len(labels) + 1.2))
    positions = np.arange(len(labels))
    left = np.zeros(len(labels), dtype=np.int64)
    for group, colour in DISPOSITION_COLOURS.items():
        widths = np.array([per_bar[label][group] for label in labels], dtype=np.int64)
        ax.barh(positions, widths, left=left, color=colour, label=_GROUP_NAMES[group], height=0.6)
        left = left + widths
    for y, label, total in zip(positions, labels, left, strict=True):
        value = shown[label]
        text = f"{rate} n/a" if np.isnan(value) else f"{rate} {100 * value:.1f}%"
        ax.annotate(f"{int(total):,}  {text}", (total, y), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)  # fmt: skip
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()
    ax.set_xlabel("respondents")
    ax.set_xlim(0, max(int(left.max(initial=0)), 1) * 1.25)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(title or "Final dispositions (AAPOR)")
    return fig
