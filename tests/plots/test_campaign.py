"""plot_campaign_status and plot_campaign_timeline on real Agg figures."""

from __future__ import annotations

from typing import Any

import matplotlib
import matplotlib.dates
import pandas as pd
import pytest
from matplotlib.colors import to_hex

import surveykit as sk
from surveykit import plots
from surveykit.campaign import STATUSES
from tests.campaign.test_status import make_case

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def case() -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame, pd.DataFrame]:
    results, waves, events = make_case(7)
    status = sk.campaign_status(results, sends=waves, events=events)
    return results, waves, events, status


def stacks(fig: Any) -> dict[str, list[float]]:
    """Bar heights per legend label (one container per status, in drawing order)."""
    ax = fig.axes[0]
    return {c.get_label(): [p.get_height() for p in c.patches] for c in ax.containers}


def test_status_bars_are_the_counts_per_wave_in_status_order_and_colours(case: Any) -> None:
    _, _, _, status = case
    fig = plots.plot_campaign_status(status)
    fig.canvas.draw()  # a real render: nothing fails late
    ax = fig.axes[0]
    # Independently: a pandas groupby of the same frame.
    expected = (
        status.assign(wave=status["last_wave"].astype(object).fillna("no send"))
        .groupby(["wave", "status"], observed=False)
        .size()
        .unstack(fill_value=0)
    )
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["wave1", "wave2", "wave3", "no send"][: len(labels)]
    assert set(labels) == set(expected.index)
    heights = stacks(fig)
    assert list(heights) == list(STATUSES)  # stacked bottom to top in the fixed order
    for name in STATUSES:
        assert heights[name] == [float(expected.loc[w, name]) for w in labels]
        colours = {to_hex(p.get_facecolor()) for p in ax.containers[STATUSES.index(name)]}
        assert colours == {plots.STATUS_COLOURS[name].lower()}
    # Each stack starts where the one below ends.
    for below, above in zip(ax.containers, ax.containers[1:], strict=False):
        for b, a in zip(below.patches, above.patches, strict=True):
            assert a.get_y() == pytest.approx(b.get_y() + b.get_height())
    totals = [float(t.get_text().replace(",", "")) for t in ax.texts]
    assert totals == [float(expected.loc[w].sum()) for w in labels]
    assert sum(totals) == len(status)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == list(STATUSES)[::-1]


def test_status_one_bar_and_snapshots(case: Any) -> None:
    results, waves, events, status = case
    one = stacks(plots.plot_campaign_status(status, by=None))
    counts = status["status"].value_counts()
    assert {k: v[0] for k, v in one.items()} == {s: float(counts[s]) for s in STATUSES}
    after_one = sk.campaign_status(results, sends=waves[:1], events=events)
    snapshots = {"after wave 1": after_one, "after wave 3": status}
    fig = plots.plot_campaign_status(snapshots)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["after wave 1", "after wave 3"]
    heights = stacks(fig)
    for name in STATUSES:
        assert heights[name] == [
            float((frame["status"] == name).sum()) for frame in snapshots.values()
        ]


def test_status_bad_input_names_what_is_wrong(case: Any) -> None:
    status = case[3]
    with pytest.raises(plots.PlotError, match="by: no column 'wave'"):
        plots.plot_campaign_status(status, by="wave")
    with pytest.raises(plots.PlotError, match=r"\['sent'\] not among the statuses"):
        plots.plot_campaign_status(status.assign(status="sent"))
    with pytest.raises(plots.PlotError, match="no 'status' column"):
        plots.plot_campaign_status(status.drop(columns="status"))
    with pytest.raises(TypeError, match="got list"):
        plots.plot_campaign_status([status])  # type: ignore[arg-type]


def step_lines(fig: Any) -> dict[str, tuple[Any, Any]]:
    return {
        line.get_label(): (line.get_xdata(), line.get_ydata())
        for line in fig.axes[0].get_lines()
        if not line.get_label().startswith("_")
    }


def test_timeline_from_sends_and_results(case: Any) -> None:
    results, waves, _, _ = case
    fig = plots.plot_campaign_timeline(sends=waves, results=results)
    fig.canvas.draw()
    lines = step_lines(fig)
    assert list(lines) == ["messages accepted", "completed"]
    sent = pd.concat(waves)
    sent = sent[sent["outcome"] == "sent"]
    times = pd.to_datetime(sent["time"], utc=True)
    xs, ys = lines["messages accepted"]
    assert ys[-1] == len(sent)
    # At each plotted time, the count is every accepted message up to it.
    for x, y in zip(pd.to_datetime(xs, utc=True), ys, strict=True):
        assert y == int((times <= x).sum())
    done = pd.to_datetime(results["completed"], utc=True).dropna()
    xs, ys = lines["completed"]
    assert ys[-1] == len(done) > 0
    for x, y in zip(pd.to_datetime(xs, utc=True), ys, strict=True):
        assert y == int((done <= x).sum())
    # One dotted line per wave at its first accepted message.
    dotted = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == ":"]
    firsts = [pd.to_datetime(w[w["outcome"] == "sent"]["time"], utc=True).min() for w in waves]
    assert len(dotted) == len(waves)
    assert [t.get_text() for t in fig.axes[0].texts] == ["wave1", "wave2", "wave3"]
    for line, first in zip(dotted, firsts, strict=True):
        assert matplotlib.dates.num2date(line.get_xdata()[0]) == first


def test_timeline_from_a_status_frame(case: Any) -> None:
    status = case[3]
    lines = step_lines(plots.plot_campaign_timeline(status))
    assert list(lines) == ["respondents contacted"]
    _, ys = lines["respondents contacted"]
    assert (
        ys[-1] == int(status["first_contact"].notna().sum()) == int((status["contacts"] > 0).sum())
    )
    with pytest.raises(plots.PlotError, match="nothing to draw"):
        plots.plot_campaign_timeline()


def test_a_timeline_of_one_instant_shows_an_hour_around_it(case: Any) -> None:
    status = case[3].copy()
    instant = pd.Timestamp("2026-03-02 09:00", tz="UTC")
    status["first_contact"] = status["first_contact"].where(status["first_contact"].isna(), instant)
    fig = plots.plot_campaign_timeline(status)
    low, high = (matplotlib.dates.num2date(x) for x in fig.axes[0].get_xlim())
    assert (low, high) == (instant - pd.Timedelta(hours=1), instant + pd.Timedelta(hours=1))


def test_timeline_draws_deliveries_from_the_listeners_events(case: Any) -> None:
    results, waves, events, _ = case
    lines = step_lines(plots.plot_campaign_timeline(sends=waves, results=results, events=events))
    assert list(lines) == ["messages accepted", "messages delivered", "completed"]
    # Independently: the Delivered receipts' own times.
    delivered = events[(events["type"] == "Receipt") & (events["status"] == "Delivered")]
    times = pd.to_datetime(delivered["timestamp"], utc=True)
    xs, ys = lines["messages delivered"]
    assert ys[-1] == len(times) > 0
    for x, y in zip(pd.to_datetime(xs, utc=True), ys, strict=True):
        assert y == int((times <= x).sum())
    with pytest.raises(plots.PlotError, match="events: no column 'status'"):
        plots.plot_campaign_timeline(sends=waves, events=events.drop(columns="status"))


def bars(fig: Any) -> dict[str, list[float]]:
    """Segment widths per legend label (one container per disposition group)."""
    ax = fig.axes[0]
    return {c.get_label(): [p.get_width() for p in c.patches] for c in ax.containers}


def test_dispositions_bars_are_the_group_counts_with_the_rate(case: Any) -> None:
    status = case[3]
    disp = sk.dispositions(status)
    fig = plots.plot_dispositions(disp, by="last_wave")
    fig.canvas.draw()
    ax = fig.axes[0]
    # Independently: the group letter of each code, counted per wave.
    def letter(code: str) -> str:
        head, tail = code.split(".")
        if head == "1":
            return "I" if tail == "1" else "P"
        if head == "2":
            return {"1": "R", "2": "NC", "3": "O"}[tail[0]]
        return ("UH" if tail[0] == "1" else "UO") if head == "3" else "NE"

    waves = disp["last_wave"].astype(object).where(disp["last_wave"].notna(), "(missing)")
    groups = disp["disposition"].map(letter)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "(missing)" in labels
    assert labels == sorted(set(waves), key=lambda w: (w == "(missing)", w))
    widths = bars(fig)
    assert len(widths) == 8
    for name, group in zip(widths, plots.DISPOSITION_COLOURS, strict=True):
        assert name.endswith(f"({group})")
        assert widths[name] == [float(((waves == w) & (groups == group)).sum()) for w in labels]
    # RR1 = I / (I + P + R + NC + O + UH + UO), written at each bar's end.
    for text, wave in zip(ax.texts, labels, strict=True):
        mine = groups[waves == wave]
        rr1 = (mine == "I").sum() / (mine != "NE").sum()
        assert text.get_text() == f"{len(mine):,}  RR1 {100 * rr1:.1f}%"


def test_dispositions_one_bar_and_bad_rate(case: Any) -> None:
    disp = sk.dispositions(case[3])
    fig = plots.plot_dispositions(disp["disposition"], rate="COOP1")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["all"]
    assert sum(w[0] for w in bars(fig).values()) == len(disp)
    assert "COOP1" in fig.axes[0].texts[0].get_text()
    with pytest.raises(plots.PlotError, match="by: no column 'wave'"):
        plots.plot_dispositions(disp, by="wave")
    with pytest.raises(plots.PlotError, match="'RR9' is not an AAPOR rate"):
        plots.plot_dispositions(disp, rate="RR9")
