"""Estimates with their intervals (the frames of ``sk.analysis.proportions/means/nps``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from surveykit.errors import PlotError
from surveykit.plots._common import PALETTE, new_figure, question_info, short

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_estimates"]

_NEEDED = ("question", "estimate", "ci_low", "ci_high")


def estimate_kind(frame: pd.DataFrame) -> str:
    """``"proportions"``, ``"nps"`` or ``"means"``: from ``attrs["estimate"]``, else the columns."""
    kind = frame.attrs.get("estimate")
    if kind in ("proportions", "nps", "means"):
        return str(kind)
    if "option" in frame.columns:
        return "proportions"
    return "nps" if "promoters" in frame.columns else "means"


def _scale(
    frame: pd.DataFrame, kind: str, questions: list[str], codebook: Any
) -> tuple[float, float]:
    """The x range every panel shares: 0-100%, -100..100, or the questions' own scale."""
    if kind == "proportions":
        return 0.0, 100.0
    if kind == "nps":
        return -100.0, 100.0
    lows, highs = [], []
    for question in questions:
        info = question_info(codebook, question, frame.attrs)
        low = info.min if info.min is not None else frame.attrs.get("scale_min")
        high = info.max if info.max is not None else frame.attrs.get("scale_max")
        rows = frame[frame["question"] == question]
        values = rows[["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        if low is None:
            low = math.floor(finite.min()) if finite.size else 0.0
        if high is None:
            high = math.ceil(finite.max()) if finite.size else 1.0
        lows.append(float(low))
        highs.append(float(high))
    low, high = min(lows), max(highs)
    return (low, high) if high > low else (low - 1, high + 1)


def plot_estimates(
    frame: pd.DataFrame,
    *,
    codebook: Any = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """Points with their interval bars from an estimate frame, by group.

    ``frame`` is what ``sk.analysis.proportions``, ``means`` or ``nps`` return (columns
    ``[*by, "question", ("option",) "estimate", "ci_low", "ci_high", ...]``; the columns
    before ``question`` are the groups). Proportions are drawn in percent on a 0-100 axis,
    one row per option and one colour per group; means on the question's own scale (the
    codebook's ``min``/``max``, else ``attrs["scale_min"]``/``["scale_max"]``, else the
    whole numbers around the intervals); NPS on -100..100, one row per group. A frame with
    several questions gets one panel each, all on the same scale. A point whose interval is
    missing (too few answers) is drawn hollow, without a bar.

    Args:
        frame: an estimate frame.
        codebook: an ``sk.Codebook`` (or its ``to_dict()``) for question texts and scales.
        ax: draw into this Axes (a frame with one question only).
        title: the title; by default the question's text (codebook, else
            ``attrs["question_text"]``, else the column name).

    Raises:
        PlotError: a frame without the estimate columns, or several questions with ``ax``.
    """
    absent = [c for c in _NEEDED if c not in frame.columns]
    if absent:
        raise PlotError(f"plot_estimates needs an estimate frame; columns missing: {absent}")
    kind = estimate_kind(frame)
    by = list(frame.columns[: list(frame.columns).index("question")])
    questions = list(dict.fromkeys(frame["question"].astype(str)))
    if ax is not None and len(questions) > 1:
        raise PlotError(f"ax= takes one question; this frame has {len(questions)}: {questions[:5]}")
    if not questions:
        raise PlotError("plot_estimates: the frame has no rows")
    low, high = _scale(frame, kind, questions, codebook)
    if ax is None:
        heights = [_rows(frame[frame["question"].astype(str) == q], kind, by) for q in questions]
        fig = new_figure(7.5, sum(0.32 * h + 1.1 for h in heights) + 0.4)
        axes = list(
            fig.subplots(
                len(questions),
                1,
                sharex=True,
                squeeze=False,
                gridspec_kw={"height_ratios": [h + 2 for h in heights]},
            )[:, 0]
        )
    else:
        fig, axes = ax.figure, [ax]  # type: ignore[assignment]
    for panel, question in zip(axes, questions, strict=True):
        rows = frame[frame["question"].astype(str) == question]
        _draw(panel, rows, kind, by)
        panel.set_xlim(low, high)
        text = question_info(codebook, question, frame.attrs).text or question
        panel.set_title(title if title and len(questions) == 1 else short(text, 80), loc="left")
    if title and len(questions) > 1:
        fig.suptitle(title)
    level = frame.attrs.get("ci", 0.95)
    unit = {"proportions": "percent", "nps": "NPS", "means": "mean"}[kind]
    axes[-1].set_xlabel(f"{unit} with {100 * float(level):g}% interval")
    return fig


def _group_labels(rows: pd.DataFrame, by: list[str]) -> list[str]:
    if not by:
        return ["all"] * len(rows)
    return [" / ".join(str(v) for v in values) for values in rows[by].itertuples(index=False)]


def _rows(rows: pd.DataFrame, kind: str, by: list[str]) -> int:
    if kind == "proportions":
        return int(rows["option"].nunique())
    return max(len(set(_group_labels(rows, by))), 1)


def _draw(ax: Axes, rows: pd.DataFrame, kind: str, by: list[str]) -> None:
    scale = 100.0 if kind == "proportions" else 1.0
    groups = _group_labels(rows, by)
    if kind == "proportions":
        categories = list(dict.fromkeys(rows["option"].astype(str)))
        series = list(dict.fromkeys(groups))
        place = rows["option"].astype(str).tolist()
    else:
        categories = list(dict.fromkeys(groups)) if by else [str(rows["question"].iloc[0])]
        series = ["all"]
        place = groups if by else categories * len(rows)
    slot = {category: i for i, category in enumerate(categories)}
    width = 0.8 / len(series)
    for number, name in enumerate(series):
        mine = (
            np.array([g == name for g in groups])
            if kind == "proportions"
            else np.ones(len(rows), bool)
        )
        part = rows[mine]
        offset = (number - (len(series) - 1) / 2) * width
        y = np.array([slot[p] for p, m in zip(place, mine, strict=True) if m], dtype=float) + offset
        estimate = part["estimate"].to_numpy(dtype=float) * scale
        lower = part["ci_low"].to_numpy(dtype=float) * scale
        upper = part["ci_high"].to_numpy(dtype=float) * scale
        shown = np.isfinite(estimate)
        bars = shown & np.isfinite(lower) & np.isfinite(upper)
        colour = PALETTE[number % len(PALETTE)]
        label = name if len(series) > 1 else None
        # Bars are clipped to the axis (a mean cannot leave its scale); points are not, so a
        # point on the scale's end shows whole.
        ax.errorbar(
            estimate[bars],
            y[bars],
            xerr=np.vstack([estimate[bars] - lower[bars], upper[bars] - estimate[bars]]),
            fmt="none",
            color=colour,
            capsize=3,
        )
        ax.plot(
            estimate[bars], y[bars], "o", color=colour, markersize=5, label=label, clip_on=False
        )
        if (shown & ~bars).any():  # too few answers for an interval: a hollow point
            ax.plot(
                estimate[shown & ~bars],
                y[shown & ~bars],
                "o",
                markerfacecolor="none",
                color=colour,
                clip_on=False,
            )
    ax.set_yticks(range(len(categories)), [short(c) for c in categories])
    ax.set_ylim(len(categories) - 0.5, -0.5)  # first category on top
    ax.grid(axis="x", color="#DDDDDD", linewidth=0.6)
    ax.set_axisbelow(True)
    if len(series) > 1:
        ax.legend(title=" / ".join(by), fontsize=8, title_fontsize=8, loc="best")
    ax.spines[["top", "right"]].set_visible(False)
