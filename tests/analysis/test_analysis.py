from __future__ import annotations

import math

import pandas as pd
import pytest

from surveykit import analysis


@pytest.fixture
def results() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "respondentId": ["R1", "R2", "R3", "R4", "R5", "R6"],
            "channel": ["SMS", "SMS", "Email", "Email", "SMS", "Email"],
            "invited": pd.to_datetime(
                [
                    "2026-03-02T09:00Z",
                    "2026-03-02T10:00Z",
                    "2026-03-03T09:00Z",
                    "2026-03-03T09:30Z",
                    "2026-03-03T11:00Z",
                    "2026-03-04T09:00Z",
                ],
                utc=True,
            ),
            "started": pd.to_datetime(
                [
                    "2026-03-02T09:05Z",
                    "2026-03-02T10:05Z",
                    "2026-03-03T09:10Z",
                    None,
                    "2026-03-04T08:00Z",
                    None,
                ],
                utc=True,
            ),
            "completed": pd.to_datetime(
                ["2026-03-02T09:07Z", None, "2026-03-03T09:15Z", None, "2026-03-04T08:05Z", None],
                utc=True,
            ),
            "sortOrder": pd.array([3, 1, 3, 0, 3, 0], dtype="Int64"),
            "Q1": pd.array([10, 6, 9, None, 7, None], dtype="Int64"),
            "Q2": pd.Series(["Yes", None, "No", None, "Yes", None], dtype="category"),
            "Q3": pd.Series(["Price;Service", None, "Service", None, "", None], dtype="string"),
        }
    )


def test_question_columns_and_kinds(results: pd.DataFrame) -> None:
    assert analysis.question_columns(results) == ["Q1", "Q2", "Q3"]
    assert analysis.question_kinds(results) == {"Q1": "rating", "Q2": "single", "Q3": "multi"}
    free = pd.DataFrame({"Q9": [f"comment {i}" for i in range(20)]})
    assert analysis.question_kinds(free) == {"Q9": "text"}


def test_response_funnel(results: pd.DataFrame) -> None:
    funnel = analysis.response_funnel(results, delivered=5)
    assert funnel["stage"].tolist() == [
        "invited",
        "delivered",
        "started",
        "answered Q1",
        "answered Q2",
        "answered Q3",
        "completed",
    ]
    assert funnel["respondents"].tolist() == [6, 5, 4, 4, 3, 3, 3]
    assert funnel["percent_of_invited"].tolist() == pytest.approx(
        [100.0, 500 / 6, 400 / 6, 400 / 6, 50.0, 50.0, 50.0], rel=1e-12
    )  # exact: rounded only when shown
    assert funnel.loc[2, "percent_of_previous"] == 80.0


def test_response_rate(results: pd.DataFrame) -> None:
    rate = analysis.response_rate(results, freq="D")
    assert rate["invited"].tolist() == [2, 3, 1]
    assert rate["completed"].tolist() == [1, 1, 1]
    assert rate["cumulative_rate"].tolist() == [50.0, 40.0, 50.0]


def test_rating_distribution_lists_every_score(results: pd.DataFrame) -> None:
    dist = analysis.answer_distribution(results, "Q1")
    assert dist["answer"].tolist() == [str(i) for i in range(11)]
    assert dist.set_index("answer")["count"].to_dict()["10"] == 1
    assert dist["count"].sum() == 4
    assert dist.attrs == {"question": "Q1", "kind": "rating", "answered": 4}
    assert dist.set_index("answer").loc["9", "percent"] == 25.0


def test_multi_choice_is_split_into_options(results: pd.DataFrame) -> None:
    dist = analysis.answer_distribution(results, "Q3")
    assert dict(zip(dist["answer"], dist["count"], strict=True)) == {"Service": 2, "Price": 1}
    assert dist.set_index("answer").loc["Service", "percent"] == pytest.approx(
        100 * 2 / 3, rel=1e-12
    )


def test_single_choice(results: pd.DataFrame) -> None:
    dist = analysis.answer_distribution(results, "Q2")
    assert dict(zip(dist["answer"], dist["count"], strict=True)) == {"Yes": 2, "No": 1}


def test_nps(results: pd.DataFrame) -> None:
    overall = analysis.nps(results, "Q1")
    row = overall.iloc[0].to_dict()
    assert (row["n"], row["promoters"], row["passives"], row["detractors"]) == (4, 2, 1, 1)
    assert row["estimate"] == 25.0
    assert "nps" not in overall and "responses" not in overall  # one figure per quantity
    by = analysis.nps(results, "Q1", by="channel").set_index("channel")
    assert by.loc["Email", "estimate"] == 100.0
    assert by.loc["SMS", "estimate"] == 0.0
    with pytest.raises(ValueError, match="whole-number answers from 0 to 10"):
        analysis.nps(pd.DataFrame({"Q": [11]}), "Q")


def test_nps_with_no_answers_is_nan() -> None:
    table = analysis.nps(pd.DataFrame({"Q": pd.array([None], dtype="Int64")}), "Q")
    assert math.isnan(table.loc[0, "estimate"])
    assert table.loc[0, "flag"] == "unreliable"


def test_crosstab(results: pd.DataFrame) -> None:
    table = analysis.crosstab(results, "Q2", "channel")
    assert table.loc["Yes", "SMS"] == 100.0
    assert table.loc["No", "Email"] == 100.0
    counts = analysis.crosstab(results, "Q3", "channel", normalize=False)
    assert counts.loc["Service"].to_dict() == {"Email": 1, "SMS": 1}


def test_batch_and_event_summaries() -> None:
    frame = pd.DataFrame(
        {
            "outcome": pd.Categorical(
                ["sent", "sent", "blocked", "sent"], categories=["sent", "blocked", "failed"]
            )
        }
    )
    summary = analysis.batch_summary(frame)
    assert summary.to_dict("list") == {
        "outcome": ["sent", "blocked"],
        "rows": [3, 1],
        "percent": [75.0, 25.0],
    }
    events = pd.DataFrame(
        {"Type": ["Receipt", "Receipt", "Stop"], "Status": ["Delivered", "Delivered", None]}
    )
    counted = analysis.event_summary(events)
    assert counted.iloc[0].to_dict() == {"Type": "Receipt", "Status": "Delivered", "events": 2}
    assert len(counted) == 2
    with pytest.raises(KeyError, match="none of the columns"):
        analysis.event_summary(pd.DataFrame({"x": [1]}))


def test_funnel_per_survey_uses_each_surveys_questions() -> None:
    df = pd.DataFrame(
        {
            "surveyReference": ["A", "A", "B"],
            "invited": pd.to_datetime(["2026-03-02T09:00Z"] * 3, utc=True),
            "completed": pd.to_datetime(["2026-03-02T10:00Z", None, "2026-03-02T10:00Z"], utc=True),
            "sortOrder": pd.array([2, 1, 3], dtype="Int64"),
            "Q1": [1, 2, 3],
            "Q2": [1, None, 3],
            "Q3": [None, None, 3],
        }
    )
    funnel = analysis.response_funnel(df, by="surveyReference")
    a = funnel[funnel["surveyReference"] == "A"]
    assert a["stage"].tolist() == ["invited", "answered Q1", "answered Q2", "completed"]
    assert a["respondents"].tolist() == [2, 2, 1, 1]
    b = funnel[funnel["surveyReference"] == "B"]
    assert b["stage"].tolist()[-2:] == ["answered Q3", "completed"]


@pytest.mark.parametrize(
    ("answers", "expected"),
    [([1, 5, 3, None], False), ([0, 10, 7], True), (["a", "b"], False), ([None], False)],
)
def test_is_nps_scale(answers: list[object], expected: bool) -> None:
    assert analysis.is_nps_scale(pd.Series(answers)) is expected


def test_free_text_on_a_small_survey_is_text() -> None:
    df = pd.DataFrame(
        {
            "Q3": [
                "Quick and friendly, thanks",
                "Too slow at the till",
                "Great; will return soon",
                "Parking was hard; staff fine",
                "Nothing to add",
            ],
            "Q4": ["Yes", "No", "Yes", "Yes", "No"],
            "Q5": ["App;Web", "Web", "App", "Phone;App", "Web"],
        }
    )
    assert analysis.question_kinds(df) == {"Q3": "text", "Q4": "single", "Q5": "multi"}
