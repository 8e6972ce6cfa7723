"""Answer distributions on the question's own scale, and Likert questions as diverging bars."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from surveykit import analysis
from surveykit.errors import PlotError
from surveykit.plots._common import (
    DIVERGING_MAP,
    NEUTRAL_COLOUR,
    NPS_COLOURS,
    PALETTE,
    SEQUENTIAL_MAP,
    QuestionInfo,
    colours,
    figure,
    label_bars,
    question_info,
    short,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PlotError", "plot_distribution", "plot_likert"]

# The codebook's kinds and analysis' kinds, for answer_distribution (which knows the latter).
_DISTRIBUTION_KIND = {"choice": "single", "single": "single", "multi": "multi", "text": "text"}


@dataclass
class Scale:
    """The points of a rating scale, in order: how answers match them, and their labels."""

    kind: str  # "nps" or "rating"
    keys: list[Any]  # numbers (raw answers) or categories (a labelled frame)
    labels: list[str]

    def __len__(self) -> int:
        return len(self.keys)


def scale_kind(series: pd.Series, info: QuestionInfo, kind: str | None) -> str | None:
    """``"nps"``, ``"rating"`` or None (not a scale question).

    An explicit ``kind`` wins, then the codebook's kind; without either, whole-number answers
    from 0 to 10 are a rating, and a 0-10 NPS question when some answer is above 5 (as
    :func:`surveykit.analysis.is_nps_scale` decides).
    """
    chosen = kind or info.kind
    if chosen is not None:
        return chosen if chosen in ("nps", "rating") else None
    if isinstance(series.dtype, pd.CategoricalDtype):
        return None  # a labelled column without its codebook: its labels are all we know
    if analysis.question_kinds(series.to_frame())[str(series.name)] != "rating":
        return None
    return "nps" if analysis.is_nps_scale(series) else "rating"


def question_scale(series: pd.Series, info: QuestionInfo, kind: str) -> Scale:
    """The scale points of a rating or NPS question (categories of a labelled column)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = [str(c) for c in series.cat.categories]
        return Scale(kind, list(series.cat.categories), categories)
    low: float | None
    high: float | None
    if kind == "nps":
        low, high = 0, 10
    else:
        numbers = pd.to_numeric(series, errors="coerce").dropna()
        missing = {float(code) for code in info.missing if _is_number(code)}
        numbers = numbers[~numbers.isin(missing)]
        label_codes = [float(code) for code in info.labels if _is_number(code)]
        low = info.min if info.min is not None else min(label_codes, default=None)
        high = info.max if info.max is not None else max(label_codes, default=None)
        if low is None:
            low = 0 if len(numbers) and numbers.min() == 0 else 1
        if high is None:
            top = numbers.max() if len(numbers) else 5
            high = next(limit for limit in (5, 7, 10, math.ceil(top)) if top <= limit)
    assert low is not None and high is not None
    keys = list(range(int(low), int(high) + 1))
    labels = [
        f"{key}\n{info.labels[str(key)]}" if str(key) in info.labels else str(key) for key in keys
    ]
    return Scale(kind, keys, labels)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def scale_counts(series: pd.Series, scale: Scale, info: QuestionInfo) -> tuple[pd.Series, int, int]:
    """Answers per scale point, answers off the scale, and answers that are missing codes."""
    answered = series.dropna()
    if isinstance(series.dtype, pd.CategoricalDtype):
        counts = answered.value_counts(sort=False).reindex(scale.keys, fill_value=0)
        return counts.astype("int64"), 0, 0
    numbers = pd.to_numeric(answered, errors="coerce")
    codes = numbers.map(lambda v: str(int(v)) if pd.notna(v) and float(v).is_integer() else None)
    coded_missing = codes.isin(list(info.missing)) if info.missing else codes.isna() & False
    on_scale = numbers.isin(scale.keys) & ~coded_missing
    counts = numbers[on_scale].astype(int).value_counts().reindex(scale.keys, fill_value=0)
    outside = int(len(answered) - on_scale.sum() - coded_missing.sum())
    return counts.astype("int64"), outside, int(coded_missing.sum())


def _nps_colour(score: int) -> str:
    if score <= 6:
        return NPS_COLOURS["detractors"]
    return NPS_COLOURS["passives"] if score <= 8 else NPS_COLOURS["promoters"]


def plot_distribution(
    df: pd.DataFrame,
    question: str,
    *,
    kind: str | None = None,
    codebook: Any = None,
    top: int = 15,
    title: str | None = None,
) -> Figure:
    """Answers to one question with counts and percentages.

    Rating questions are drawn on their own scale: a 1-5 rating on a 1-5 axis (every point,
    unanswered ones included) in a sequential palette; NPS questions (0-10) in red, grey and
    green for detractors, passives and promoters. The scale comes from ``codebook`` (its
    ``min``/``max`` and value labels, or the categories of a labelled frame), else from the
    answers (see :func:`scale_kind`; pass ``kind="rating"`` for a 0-10 rating that is not
    NPS). Answers off the scale and missing codes are counted in the axis label, not drawn.
    Other kinds: the most frequent ``top`` answers as horizontal bars.

    Args:
        df: results (raw or from ``sk.label``).
        question: the question's column.
        kind: ``"nps"``, ``"rating"``, ``"choice"``/``"single"``, ``"multi"`` or ``"text"``.
        codebook: an ``sk.Codebook`` (or its ``to_dict()``); a labelled frame's own is used
            when not given.
        top: most answers shown for choice and text questions.
        title: the title; by default the codebook's question text, else the column name
            with the number of answers.
    """
    info = question_info(codebook, question, df.attrs)
    series = df[question]
    scale_type = scale_kind(series, info, kind)
    if scale_type is None:
        return _bars(df, question, kind or info.kind, info, top, title)
    scale = question_scale(series, info, scale_type)
    counts, outside, coded_missing = scale_counts(series, scale, info)
    shown = int(counts.sum())
    percents = [100 * c / shown if shown else float("nan") for c in counts]
    fig, ax = figure(8, 4)
    if scale.kind == "nps" and not isinstance(series.dtype, pd.CategoricalDtype):
        bar_colours: list[Any] = [_nps_colour(int(k)) for k in scale.keys]
    elif scale.kind == "nps":
        bar_colours = [_nps_colour(position) for position in range(len(scale))]
    else:
        bar_colours = colours(SEQUENTIAL_MAP, len(scale))
    ax.bar(range(len(scale)), counts.to_numpy(), color=bar_colours)
    ticks = [label if "\n" not in label else short(label, 24) for label in scale.labels]
    ax.set_xticks(range(len(scale)), ticks, fontsize=8)
    label_bars(ax, counts.tolist(), percents, horizontal=False)
    notes = []
    if outside:
        notes.append(f"{outside:,} answers off the scale not shown")
    if coded_missing:
        notes.append(f"{coded_missing:,} missing codes not shown")
    if isinstance(series.dtype, pd.CategoricalDtype):
        what = "answer"
    else:
        what = "score" if scale.kind == "nps" else f"rating ({scale.keys[0]}-{scale.keys[-1]})"
    ax.set_xlabel(what + (f" ({'; '.join(notes)})" if notes else ""))
    ax.set_ylabel("responses")
    ax.set_ylim(0, max(int(counts.max()), 1) * 1.2)
    ax.set_title(title or info.text or f"{question}: {int(series.notna().sum()):,} answers")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _bars(
    df: pd.DataFrame,
    question: str,
    kind: str | None,
    info: QuestionInfo,
    top: int,
    title: str | None,
) -> Figure:
    distribution_kind = _DISTRIBUTION_KIND.get(kind) if kind else None
    dist = analysis.answer_distribution(df, question, kind=distribution_kind)  # type: ignore[arg-type]
    dist_kind = dist.attrs["kind"]
    dist = dist.head(top)
    fig, ax = figure(7, 0.4 * len(dist) + 1.4)
    labels = [short(a) for a in dist["answer"]]
    ax.barh(labels[::-1], dist["count"].tolist()[::-1], color=PALETTE[0])
    label_bars(ax, dist["count"].tolist()[::-1], dist["percent"].tolist()[::-1], horizontal=True)
    ax.set_xlabel(
        "responses" + (" (an answer may list several options)" if dist_kind == "multi" else "")
    )
    ax.set_xlim(0, max(dist["count"].max() if len(dist) else 0, 1) * 1.3)
    ax.set_title(title or info.text or f"{question}: {dist.attrs['answered']:,} answers")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def plot_likert(
    df: pd.DataFrame,
    questions: str | Sequence[str],
    *,
    codebook: Any = None,
    by: str | None = None,
    title: str | None = None,
) -> Figure:
    """Likert questions as diverging stacked bars, in percent of each row's answers.

    The points below the scale's middle stack leftwards from zero (the most negative
    outermost), those above rightwards; with an odd number of points the middle one
    (neutral) is centred on zero, half on each side. Every question must use the same
    number of scale points (taken as in :func:`plot_distribution`). With ``by`` each question
    gets one bar per group.

    Args:
        df: results (raw or from ``sk.label``).
        questions: one question's column or several.
        codebook: an ``sk.Codebook`` for the scales, labels and question texts.
        by: a column whose groups get a bar each.
        title: the title; by default the question's text when there is one question.

    Raises:
        PlotError: questions on scales of different lengths, or a question that is not a
            rating.
    """
    keys = [questions] if isinstance(questions, str) else list(questions)
    if not keys:
        raise PlotError("plot_likert needs at least one question")
    rows: list[tuple[str, np.ndarray]] = []
    legend: list[str] | None = None
    for key in keys:
        info = question_info(codebook, key, df.attrs)
        series = df[key]
        if info.kind is not None and info.kind not in ("rating", "nps"):
            raise PlotError(f"question {key!r} is a {info.kind} question, not a rating scale")
        if not isinstance(series.dtype, pd.CategoricalDtype):
            answered = series.dropna()
            text = answered[pd.to_numeric(answered, errors="coerce").isna()]
            if len(text):
                raise PlotError(
                    f"question {key!r} is not a rating scale: row {text.index[0]!r} answered "
                    f"{text.iloc[0]!r}"
                )
        scale = question_scale(series, info, "rating")
        if legend is None:
            legend = scale.labels
        elif len(scale) != len(legend):
            raise PlotError(
                f"question {key!r} has {len(scale)} scale points, {keys[0]!r} has "
                f"{len(legend)}: a Likert chart needs one scale"
            )
        # One question: its text is the title, so the bar is named by its key.
        name = key if len(keys) == 1 else short(info.text or key, 50)
        parts = [(name, series)] if by is None else _groups(df, series, by, name)
        for label, part in parts:
            counts, _, _ = scale_counts(part, scale, info)
            total = counts.sum()
            share = 100 * counts.to_numpy(dtype=float) / total if total else np.zeros(len(scale))
            rows.append((label, share))
    assert legend is not None
    return _diverging(
        rows, [label.replace("\n", " ") for label in legend], title, keys, df.attrs, codebook
    )


def _groups(df: pd.DataFrame, series: pd.Series, by: str, name: str) -> list[tuple[str, pd.Series]]:
    return [
        (f"{name} · {group}", part)
        for group, part in series.groupby(df[by], observed=True, sort=True)
    ]


def _diverging(
    rows: list[tuple[str, np.ndarray]],
    legend: list[str],
    title: str | None,
    keys: list[str],
    attrs: Any,
    codebook: Any,
) -> Figure:
    points = len(legend)
    middle = points // 2
    neutral = points % 2 == 1
    palette = colours(DIVERGING_MAP, points, low=0.1, high=0.9)
    if neutral:
        palette[middle] = NEUTRAL_COLOUR
    shares = np.array([share for _, share in rows])  # rows x points
    half = shares[:, middle] / 2 if neutral else np.zeros(len(rows))
    left = np.empty_like(shares)
    # Negative side: from zero (or the neutral half) outwards, nearest the middle first.
    edge = -half
    for point in range(middle - 1, -1, -1):
        edge = edge - shares[:, point]
        left[:, point] = edge
    edge = half.copy()
    for point in range(middle + 1 if neutral else middle, points):
        left[:, point] = edge
        edge = edge + shares[:, point]
    if neutral:
        left[:, middle] = -half
    extent = float(max(np.abs(left).max(), np.abs(left + shares).max(), 1.0))
    limit = min(100.0, math.ceil(extent / 10) * 10)
    fig, ax = figure(8, 0.45 * len(rows) + 1.6)
    positions = np.arange(len(rows))[::-1]  # first row on top
    for point in range(points):
        ax.barh(
            positions,
            shares[:, point],
            left=left[:, point],
            color=palette[point],
            label=legend[point],
            edgecolor="white",
            linewidth=0.5,
        )
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_yticks(positions[::-1], [label for label, _ in rows][::-1])  # bottom to top
    ax.set_xlim(-limit, limit)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{abs(x):.0f}%"))
    ax.set_xlabel("percent of answers (negative side left of zero)")
    ax.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=min(points, 6),
        fontsize=8,
        frameon=False,
    )
    if title is None and len(keys) == 1:
        title = question_info(codebook, keys[0], attrs).text or keys[0]
    ax.set_title(title or "", pad=28)
    ax.spines[["top", "right"]].set_visible(False)
    return fig
