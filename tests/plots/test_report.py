"""Report charts: scales from the codebook, estimates with intervals, Likert bars (Agg figures)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex, to_rgba

from surveykit import plots
from surveykit.plots import PlotError

matplotlib.use("Agg")

SATISFACTION = {
    "1": "Very dissatisfied",
    "2": "Dissatisfied",
    "3": "Neutral",
    "4": "Satisfied",
    "5": "Very satisfied",
}


def question(**fields: Any) -> SimpleNamespace:
    base = {"text": "", "kind": "text", "labels": {}, "missing": {}, "min": None, "max": None}
    return SimpleNamespace(**{**base, **fields})


# A stand-in with the shape of sk.Codebook (a mapping of key -> Question).
CODEBOOK = {
    "Q1": question(text="How likely are you to recommend us?", kind="nps", min=0, max=10),
    "Q2": question(
        text="How satisfied are you?",
        kind="rating",
        labels=SATISFACTION,
        missing={"99": "Don't know"},
        min=1,
        max=5,
    ),
    "Q3": question(text="How easy was it?", kind="rating", labels=SATISFACTION, min=1, max=5),
    "Q4": question(text="Effort (0-10)", kind="rating", min=0, max=10),
    "Q5": question(text="Which channel?", kind="choice"),
}


def bar_colours(ax: Any) -> list[str]:
    return [to_hex(p.get_facecolor()) for p in ax.patches]


def luminance(colour: str) -> float:
    r, g, b, _ = to_rgba(colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_rating_without_codebook_uses_a_1_to_5_axis_and_a_sequential_palette() -> None:
    df = pd.DataFrame({"Q": pd.array([2, 3, 3, 5, None, 5, 5], dtype="Int64")})
    ax = plots.plot_distribution(df, "Q").axes[0]
    assert len(ax.patches) == 5
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4", "5"]
    assert [p.get_height() for p in ax.patches] == [0, 1, 2, 0, 3]
    colours = bar_colours(ax)
    assert not set(colours) & {to_hex(c) for c in plots.NPS_COLOURS.values()}
    shades = [luminance(c) for c in colours]
    assert shades == sorted(shades, reverse=True) and len(set(shades)) == 5  # light -> dark
    assert ax.get_xlabel() == "rating (1-5)"


def test_rating_with_codebook_every_point_labels_and_missing_codes() -> None:
    df = pd.DataFrame({"Q2": pd.array([2, 3, 4, 4, 99, 7, None], dtype="Int64")})
    ax = plots.plot_distribution(df, "Q2", codebook=CODEBOOK).axes[0]
    assert len(ax.patches) == 5  # 1 and 5 were not chosen: still on the axis
    assert [p.get_height() for p in ax.patches] == [0, 1, 1, 2, 0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[0] == "1\nVery dissatisfied" and ticks[4] == "5\nVery satisfied"
    assert ax.get_title() == "How satisfied are you?"
    assert "1 answers off the scale not shown" in ax.get_xlabel()
    assert "1 missing codes not shown" in ax.get_xlabel()
    texts = [t.get_text() for t in ax.texts]
    assert "2 (50%)" in texts  # percent of the 4 answers on the scale


def test_nps_colours_only_for_nps_questions() -> None:
    scores = pd.array([0, 6, 7, 8, 9, 10, 10], dtype="Int64")
    df = pd.DataFrame({"Q1": scores, "Q4": scores})
    nps = plots.plot_distribution(df, "Q1", codebook=CODEBOOK).axes[0]
    expected = ["detractors"] * 7 + ["passives"] * 2 + ["promoters"] * 2
    assert bar_colours(nps) == [to_hex(plots.NPS_COLOURS[part]) for part in expected]
    assert nps.get_title() == "How likely are you to recommend us?"
    rating = plots.plot_distribution(df, "Q4", codebook=CODEBOOK).axes[0]
    assert len(rating.patches) == 11
    assert not set(bar_colours(rating)) & {to_hex(c) for c in plots.NPS_COLOURS.values()}
    # Without a codebook, kind= decides; answers above 5 alone are taken for NPS.
    assert bar_colours(plots.plot_distribution(df, "Q4", kind="rating").axes[0]) == bar_colours(
        rating
    )
    assert bar_colours(plots.plot_distribution(df, "Q4").axes[0]) == bar_colours(nps)


def test_codebook_as_plain_dict_and_labelled_frame() -> None:
    as_dict = {
        "version": 1,
        "questions": [
            {
                "key": "Q2",
                "text": "How satisfied are you?",
                "kind": "rating",
                "labels": SATISFACTION,
                "missing": {},
                "min": 1,
                "max": 5,
                "separator": ";",
            },
        ],
    }
    df = pd.DataFrame({"Q2": pd.array([1, 5, 5], dtype="Int64")})
    ax = plots.plot_distribution(df, "Q2", codebook=as_dict).axes[0]
    assert ax.get_title() == "How satisfied are you?" and len(ax.patches) == 5
    labelled = pd.DataFrame(
        {
            "Q2": pd.Categorical(
                ["Satisfied", "Neutral", "Satisfied"],
                categories=list(SATISFACTION.values()),
                ordered=True,
            )
        }
    )
    labelled.attrs["codebook"] = as_dict
    ax = plots.plot_distribution(labelled, "Q2").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(SATISFACTION.values())
    assert [p.get_height() for p in ax.patches] == [0, 0, 1, 2, 0]
    assert ax.get_title() == "How satisfied are you?"


def test_choice_question_keeps_horizontal_bars() -> None:
    df = pd.DataFrame({"Q5": ["SMS", "Email", "SMS", None]})
    ax = plots.plot_distribution(df, "Q5", codebook=CODEBOOK).axes[0]
    assert ax.get_title() == "Which channel?"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Email", "SMS"]


# ---------------------------------------------------------------- plot_estimates


def points(ax: Any) -> list[tuple[float, float, float, float]]:
    """(x, y, left end, right end) of every point with an interval bar."""
    ends = {}
    for container in ax.containers:
        _, _, (bars,) = container.lines
        for segment in bars.get_segments():
            ends[round(float(segment[0][1]), 9)] = (float(segment[0][0]), float(segment[1][0]))
    out = []
    for line in ax.lines:
        if line.get_marker() == "o" and line.get_markerfacecolor() != "none":
            for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True):
                out.append((float(x), float(y), *ends[round(float(y), 9)]))
    return out


def proportions_frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for region in ("North", "South"):
        for option in ("Price", "Service", "App"):
            p = float(rng.uniform(0.1, 0.6))
            rows.append(
                {
                    "region": region,
                    "question": "Q5",
                    "option": option,
                    "count": 10,
                    "n": 40,
                    "n_eff": 40.0,
                    "estimate": p,
                    "se": 0.05,
                    "ci_low": p - 0.1,
                    "ci_high": p + 0.08,
                    "note": "",
                }
            )
    frame = pd.DataFrame(rows)
    frame.attrs.update(estimate="proportions", question="Q5", question_text="Main reason?", ci=0.9)
    return frame


def test_proportions_in_percent_by_group() -> None:
    frame = proportions_frame()
    fig = plots.plot_estimates(frame)
    ax = fig.axes[0]
    assert ax.get_xlim() == (0, 100)
    assert ax.get_title(loc="left") == "Main reason?"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Price", "Service", "App"]
    drawn = sorted(points(ax))
    expected = sorted(
        (100 * r.estimate, 100 * r.ci_low, 100 * r.ci_high) for r in frame.itertuples()
    )
    assert len(drawn) == 6
    np.testing.assert_allclose([(x, lo, hi) for x, _, lo, hi in drawn], expected)
    assert len(ax.containers) == 2  # one colour per region
    assert len({to_hex(line.get_color()) for line in ax.lines}) == 2  # points and caps
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["North", "South"]
    assert ax.get_legend().get_title().get_text() == "region"
    assert "90% interval" in ax.get_xlabel()


def means_frame(question: str, groups: list[str], values: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "region": groups,
            "question": question,
            "n": 30,
            "n_eff": 30.0,
            "estimate": values,
            "se": 0.2,
            "ci_low": [v - 0.4 for v in values],
            "ci_high": [v + 0.4 for v in values],
            "note": "",
        }
    )


def test_means_on_the_question_scale_with_codebook_title() -> None:
    frame = means_frame("Q2", ["North", "South", "East"], [3.1, 4.8, 2.5])
    frame.attrs.update(estimate="means", question="Q2")
    ax = plots.plot_estimates(frame, codebook=CODEBOOK).axes[0]
    assert ax.get_xlim() == (1, 5)  # South's interval reaches 5.2: the scale still decides
    assert ax.get_title(loc="left") == "How satisfied are you?"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["North", "South", "East"]
    assert [round(x, 6) for x, *_ in points(ax)] == [3.1, 4.8, 2.5]
    assert ax.get_legend() is None


def test_nps_axis_and_points_without_interval() -> None:
    frame = means_frame("Q1", ["North", "South"], [35.0, -12.0])
    frame["promoters"] = [20, 5]
    frame.loc[1, ["ci_low", "ci_high"]] = np.nan  # too few answers for an interval
    ax = plots.plot_estimates(frame).axes[0]  # no attrs: the columns tell it is NPS
    assert ax.get_xlim() == (-100, 100)
    assert len(points(ax)) == 1
    hollow = [line for line in ax.lines if line.get_markerfacecolor() == "none"]
    assert len(hollow) == 1 and list(hollow[0].get_xdata()) == [-12.0]


def test_panels_share_one_scale() -> None:
    frame = pd.concat(
        [
            means_frame("Q2", ["North", "South"], [3.0, 4.0]),
            means_frame("Q4", ["North", "South"], [6.5, 7.2]),
        ],
        ignore_index=True,
    )
    frame.attrs.update(estimate="means")
    fig = plots.plot_estimates(frame, codebook=CODEBOOK, title="Two scales")
    assert len(fig.axes) == 2
    assert fig.axes[0].get_xlim() == fig.axes[1].get_xlim() == (0, 10)
    assert [ax.get_title(loc="left") for ax in fig.axes] == [
        "How satisfied are you?",
        "Effort (0-10)",
    ]
    assert fig.get_suptitle() == "Two scales"


def test_means_scale_from_attrs_or_the_data() -> None:
    frame = means_frame("Q9", ["A"], [3.3])
    frame.attrs.update(estimate="means", scale_min=1, scale_max=7)
    assert plots.plot_estimates(frame).axes[0].get_xlim() == (1, 7)
    frame.attrs.pop("scale_min"), frame.attrs.pop("scale_max")
    assert plots.plot_estimates(frame).axes[0].get_xlim() == (2, 4)


def test_into_given_axes_and_errors() -> None:
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    frame = proportions_frame()
    assert plots.plot_estimates(frame, ax=ax) is fig
    assert len(points(ax)) == 6
    two = pd.concat([frame, frame.assign(question="Q6")], ignore_index=True)
    with pytest.raises(PlotError, match="ax= takes one question"):
        plots.plot_estimates(two, ax=fig.add_subplot(2, 1, 2))
    with pytest.raises(PlotError, match=r"columns missing: \['ci_low', 'ci_high'\]"):
        plots.plot_estimates(frame.drop(columns=["ci_low", "ci_high"]))


# ---------------------------------------------------------------- plot_likert


def likert_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Q2": pd.array([1, 2, 2, 3, 4, 4, 4, 5, 5, 5], dtype="Int64"),
            "Q3": pd.array([1, 1, 1, 2, 3, 3, 4, 5, None, None], dtype="Int64"),
            "region": ["N", "S"] * 5,
        }
    )


def bars_by_colour(ax: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for patch in ax.patches:
        out.setdefault(to_hex(patch.get_facecolor()), []).append(patch)
    return out


def test_likert_diverging_with_neutral_centred() -> None:
    df = likert_frame()
    ax = plots.plot_likert(df, ["Q2", "Q3"], codebook=CODEBOOK, title="Satisfaction").axes[0]
    assert len(ax.patches) == 10  # 5 points x 2 questions
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        f"{code} {label}" for code, label in SATISFACTION.items()
    ]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "How easy was it?",
        "How satisfied are you?",
    ]
    low, high = ax.get_xlim()
    assert low == -high and high <= 100
    for row, key in ((1, "Q2"), (0, "Q3")):  # the first question is drawn on top
        answers = df[key].dropna().astype(int)
        shares = 100 * np.bincount(answers, minlength=6)[1:] / len(answers)
        patches = [p for p in ax.patches if abs(p.get_y() + p.get_height() / 2 - row) < 1e-9]
        widths = [p.get_width() for p in patches]
        np.testing.assert_allclose(widths, shares)
        lefts = [p.get_x() for p in patches]
        neutral = patches[2]
        assert to_hex(neutral.get_facecolor()) == "#bbbbbb"
        assert lefts[2] == pytest.approx(-shares[2] / 2)  # centred on zero
        assert lefts[1] + widths[1] == pytest.approx(-shares[2] / 2)  # next to neutral
        assert lefts[0] + widths[0] == pytest.approx(lefts[1])  # most negative outermost
        assert lefts[3] == pytest.approx(shares[2] / 2) and lefts[4] == pytest.approx(
            lefts[3] + widths[3]
        )
        assert max(lefts[0], lefts[1]) < 0 < min(lefts[3], lefts[4]) + 1e-9
    assert ax.get_title() == "Satisfaction"


def test_likert_of_one_question_titles_it_with_its_text_and_names_the_bar_by_key() -> None:
    ax = plots.plot_likert(likert_frame(), "Q2", codebook=CODEBOOK).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Q2"]
    assert ax.get_title() == "How satisfied are you?"



def test_likert_even_scale_by_group_and_errors() -> None:
    df = pd.DataFrame({"Q": pd.array([1, 2, 3, 4, 4, 1], dtype="Int64"), "g": list("aabbab")})
    ax = plots.plot_likert(
        df, "Q", codebook={"Q": question(kind="rating", min=1, max=4)}, by="g"
    ).axes[0]
    assert len(ax.patches) == 8  # 4 points x 2 groups
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Q · b", "Q · a"]
    lefts = {round(p.get_x() + p.get_width(), 9) for p in ax.patches[: 2 * 2]}
    assert all(edge <= 0 for edge in lefts)  # points 1-2: left of zero
    assert all(p.get_x() >= 0 for p in ax.patches[4:])  # points 3-4: right of zero
    assert "#bbbbbb" not in bars_by_colour(ax)
    mixed = likert_frame().assign(Q4=pd.array([0, 10] * 5, dtype="Int64"))
    with pytest.raises(PlotError, match="'Q4' has 11 scale points"):
        plots.plot_likert(mixed, ["Q2", "Q4"], codebook=CODEBOOK)
    text = pd.DataFrame({"Q": ["1", "great"]}, index=["r1", "r2"])
    with pytest.raises(PlotError, match="row 'r2' answered 'great'"):
        plots.plot_likert(text, "Q")
    with pytest.raises(PlotError, match="'Q5' is a choice question"):
        plots.plot_likert(pd.DataFrame({"Q5": ["a"]}), "Q5", codebook=CODEBOOK)


def test_with_the_real_codebook_label_and_estimates() -> None:
    import surveykit as sk
    from surveykit.report import Question

    codebook = sk.Codebook(
        [
            Question(
                "Q2",
                "How satisfied are you?",
                "rating",
                labels=SATISFACTION,
                min=1,
                max=5,
                missing={"99": "Don't know"},
            ),
            Question("Q1", "Recommend?", "nps", min=0, max=10),
        ]
    )
    df = pd.DataFrame(
        {
            "Q2": pd.array([1, 2, 4, 4, 99, 5, 4, 2], dtype="Int64"),
            "Q1": pd.array([0, 9, 10, 7, 8, 3, 10, 9], dtype="Int64"),
            "g": list("aabbabab"),
        }
    )
    labelled = sk.label(df, codebook)
    ax = plots.plot_distribution(labelled, "Q2").axes[0]  # the codebook from attrs
    assert [t.get_text() for t in ax.get_xticklabels()] == list(SATISFACTION.values())
    assert [p.get_height() for p in ax.patches] == [1, 2, 0, 3, 1]  # 99 is missing
    assert ax.get_title() == "How satisfied are you?"
    nps = plots.plot_distribution(labelled, "Q1").axes[0]
    assert len(nps.patches) == 11
    assert bar_colours(nps)[0] == to_hex(plots.NPS_COLOURS["detractors"])
    means = sk.analysis.means(labelled, "Q2", by="g")
    ax = plots.plot_estimates(means, codebook=codebook).axes[0]
    assert ax.get_xlim() == (1, 5) and ax.get_title(loc="left") == "How satisfied are you?"
    np.testing.assert_allclose(sorted(x for x, *_ in points(ax)), sorted(means["estimate"]))
    score = sk.analysis.nps(labelled, "Q1", by="g")
    assert plots.plot_estimates(score).axes[0].get_xlim() == (-100, 100)
    likert = plots.plot_likert(labelled, "Q2").axes[0]
    assert len(likert.patches) == 5 and likert.get_title() == "How satisfied are you?"
