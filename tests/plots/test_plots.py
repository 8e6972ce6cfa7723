from __future__ import annotations

import io

import matplotlib
import pandas as pd
import pytest

from surveykit import plots

matplotlib.use("Agg")


@pytest.fixture
def results() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "respondentId": [f"R{i}" for i in range(8)],
            "channel": ["SMS", "Email"] * 4,
            "invited": pd.date_range("2026-03-02", periods=8, freq="12h", tz="UTC"),
            "started": pd.date_range("2026-03-02 01:00", periods=8, freq="12h", tz="UTC"),
            "completed": pd.to_datetime(["2026-03-02T02:00Z"] * 4 + [None] * 4, utc=True),
            "sortOrder": pd.array([2, 2, 2, 2, 1, 1, 0, 0], dtype="Int64"),
            "Q1": pd.array([10, 9, 3, 8, 7, 10, None, None], dtype="Int64"),
            "Q2": ["Price;Service", "Service", "App", None, None, None, None, None],
        }
    )


def texts(fig: object) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]  # type: ignore[attr-defined]


def png(fig: object) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")  # type: ignore[attr-defined]
    return buffer.getvalue()


def test_funnel(results: pd.DataFrame) -> None:
    fig = plots.plot_funnel(results)
    ax = fig.axes[0]
    assert ax.get_title() == "Response funnel"
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "invited"
    assert "8 (100%)" in texts(fig) and "4 (50%)" in texts(fig)
    assert png(fig).startswith(b"\x89PNG")


def test_distribution_rating_and_multi(results: pd.DataFrame) -> None:
    fig = plots.plot_distribution(results, "Q1")
    ax = fig.axes[0]
    assert len(ax.patches) == 11
    assert ax.get_title() == "Q1: 6 answers"
    assert "2 (33%)" in texts(fig)
    multi = plots.plot_distribution(results, "Q2")
    assert "2 (67%)" in texts(multi)
    assert "several options" in multi.axes[0].get_xlabel()


def test_nps_plot(results: pd.DataFrame) -> None:
    fig = plots.plot_nps(results, "Q1", by="channel")
    assert len(fig.axes[0].patches) == 6  # three parts for two groups
    assert any(t.startswith("NPS ") for t in texts(fig))


def test_other_plots(results: pd.DataFrame) -> None:
    assert plots.plot_response_rate(results).axes[0].get_title() == "Responses over time"
    heat = plots.plot_crosstab(results, "Q2", "channel")
    assert "100%" in texts(heat)
    outcome = pd.DataFrame({"outcome": ["sent", "sent", "failed"]})
    bars = plots.plot_batch_outcomes(outcome)
    assert bars.axes[0].get_title() == "Batch outcomes (3 rows)"
    events = pd.DataFrame({"Type": ["Receipt", "Click", "Receipt"]})
    assert "2 (67%)" in texts(plots.plot_events(events))
    for fig in (heat, bars):
        assert png(fig).startswith(b"\x89PNG")


def test_funnel_panels_per_survey(results: pd.DataFrame) -> None:
    results = results.assign(surveyReference=["A", "B"] * 4)
    fig = plots.plot_funnel(results, by="surveyReference", title="Two surveys")
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["A", "B"]
    assert fig.get_suptitle() == "Two surveys"
