"""What the plots share: figures without pyplot, palettes, and a question's scale."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# A colour-blind-safe palette (Okabe-Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
NPS_COLOURS = {"detractors": "#D55E00", "passives": "#BBBBBB", "promoters": "#009E73"}
NEUTRAL_COLOUR = "#BBBBBB"
OUTCOME_COLOURS = {
    "sent": "#009E73",
    "tested": "#56B4E9",
    "blocked": "#D55E00",
    "landline": "#E69F00",
    "invalid": "#CC79A7",
    "rejected": "#F0E442",
    "failed": "#B2182B",
    "unknown": "#777777",
    "skipped": "#BBBBBB",
}
SEQUENTIAL_MAP = "Blues"
"""The matplotlib colormap of rating scales (light = low, dark = high)."""
DIVERGING_MAP = "RdBu"
"""The matplotlib colormap of Likert bars (red = negative side, blue = positive side)."""


def new_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    """A constrained-layout Figure (no pyplot, so nothing global changes)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "surveykit.plots needs matplotlib: pip install 'surveykit[plots]'"
        ) from exc
    return Figure(figsize=(width, height), layout="constrained")


def figure(width: float = 7.0, height: float = 4.0) -> tuple[Figure, Axes]:
    """A Figure with one Axes."""
    fig = new_figure(width, height)
    return fig, fig.add_subplot()


def label_bars(ax: Axes, counts: Any, percents: Any, *, horizontal: bool) -> None:
    """Write ``count (percent%)`` at the end of each bar."""
    for position, (count, percent) in enumerate(zip(counts, percents, strict=True)):
        text = f"{count:,} ({percent:.0f}%)" if pd.notna(percent) else f"{count:,}"
        if horizontal:
            ax.annotate(
                text,
                (count, position),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        else:
            ax.annotate(
                text,
                (position, count),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )


def colours(name: str, count: int, *, low: float = 0.25, high: float = 0.9) -> list[Any]:
    """``count`` colours spread over a matplotlib colormap (RGBA tuples)."""
    from matplotlib import colormaps

    cmap = colormaps[name]
    if count == 1:
        return [cmap((low + high) / 2)]
    return [cmap(low + (high - low) * i / (count - 1)) for i in range(count)]


@dataclass
class QuestionInfo:
    """What the plots need from a codebook's question (all optional)."""

    key: str
    text: str = ""
    kind: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    min: float | None = None
    max: float | None = None


def question_info(codebook: Any, key: str, attrs: Mapping[Any, Any] | None = None) -> QuestionInfo:
    """The question ``key`` from a ``Codebook``, its ``to_dict()`` form or a labelled frame's attrs.

    Accepted: ``sk.Codebook`` (a mapping of key -> Question), a mapping of key -> dict of
    the Question's fields, ``{"questions": [question dicts]}`` (``Codebook.to_dict()``, as
    ``sk.label`` keeps in ``attrs["codebook"]``). A question it does not hold gives what
    ``attrs`` know (``question_text``, ``questions``) and nothing else.
    """
    attrs = attrs or {}
    entry: Any = None
    source = codebook if codebook is not None else attrs.get("codebook")
    if isinstance(source, Mapping) and isinstance(source.get("questions"), list):
        entry = next((q for q in source["questions"] if q.get("key") == key), None)
    elif source is not None and hasattr(source, "__contains__") and key in source:
        entry = source[key]
    info = QuestionInfo(key=key)
    if entry is not None:

        def get(name: str) -> Any:
            return entry.get(name) if isinstance(entry, Mapping) else getattr(entry, name, None)

        info.text = str(get("text") or "")
        info.kind = get("kind")
        info.labels = {str(k): str(v) for k, v in (get("labels") or {}).items()}
        info.missing = {str(k): str(v) for k, v in (get("missing") or {}).items()}
        info.min, info.max = get("min"), get("max")
    if not info.text:
        questions = attrs.get("questions")
        if isinstance(questions, Mapping) and questions.get(key):
            info.text = str(questions[key])
        elif attrs.get("question") == key and attrs.get("question_text"):
            info.text = str(attrs["question_text"])
    return info


def short(text: str, width: int = 40) -> str:
    """``text`` cut to ``width`` characters with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"
