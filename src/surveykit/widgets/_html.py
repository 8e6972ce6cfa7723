"""HTML the notebook widgets show: escaped tables, with cells that stay on one line."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["preview_table", "table", "zone_label"]

SEVERAL_ZONES = (
    "<p><i>(+N more)</i>: the number's country has several zones; the row is sent when "
    "the window is open in all of them, and its local time is given in the first.</p>"
)
"""Said under the preview when a row's zone is one of several (``timezone="auto"``)."""


def table(frame: pd.DataFrame, rows: int = 10, *, nowrap: Sequence[str] = ()) -> str:
    """The first rows as an HTML table; the ``nowrap`` columns' cells stay on one line.

    Every cell, label and name is escaped here, so that a ``nowrap`` cell can be wrapped
    in markup (a time's ``-05:00`` offset otherwise breaks across two lines).
    """
    if not nowrap:
        return frame.head(rows).to_html(border=0, na_rep="", max_cols=12, escape=True)
    shown = frame.head(rows)

    def text(value: Any) -> str:
        return "" if value is None or value is pd.NaT or pd.isna(value) else str(value)

    cells = pd.DataFrame(
        {
            html.escape(str(name)): [
                f"<span style='white-space:nowrap'>{html.escape(text(v))}</span>"
                if name in nowrap
                else html.escape(text(v))
                for v in shown[name]
            ]
            for name in shown.columns
        },
        index=pd.Index(
            [html.escape(str(label)) for label in shown.index],
            name=None if shown.index.name is None else html.escape(str(shown.index.name)),
        ),
    )
    return cells.to_html(border=0, max_cols=12, escape=False)


def zone_label(zones: Any) -> str:
    """A row's zone, or its first zone and how many more (the local time is in the first)."""
    if not isinstance(zones, str):
        return ""
    names = [name.strip() for name in zones.split(",") if name.strip()]
    if len(names) <= 1:
        return zones
    return f"{names[0]} (+{len(names) - 1} more)"


def preview_table(shown: pd.DataFrame) -> str:
    """The composer's preview rows: times on one line, several zones named by the first.

    Args:
        shown: rows of :func:`surveykit.preview_batch`'s frame, with ``timezone`` and
            ``local_send_time`` when the windows are read in local time.
    """
    if "timezone" not in shown.columns:
        return table(shown, len(shown))
    # "auto" gives every zone of the number's country, comma-separated: a long list would
    # squeeze the table, and local_send_time is in the first of them.
    several = shown["timezone"].map(lambda z: isinstance(z, str) and "," in z)
    labelled = shown.assign(timezone=shown["timezone"].map(zone_label))
    rendered = table(labelled, len(shown), nowrap=("destination", "local_send_time", "timezone"))
    return rendered + (SEVERAL_ZONES if several.any() else "")
