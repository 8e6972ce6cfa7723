"""The per-campaign funnel, on a known set of events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from surveykit.callbacks import STAGES, EventStore, campaign_funnel
from surveykit.models import CallbackPayload
from tests.helpers.callbacks import inbound, receipt

EVENTS = [
    # spring
    receipt("MS1", "Sent", campaign="spring", timestamp="2026-03-02T10:00:00Z"),
    receipt("MS1", "Delivered", campaign="spring", timestamp="2026-03-02T10:00:05Z"),
    receipt("MS1", Type="Click", campaign="spring", Status=None),
    inbound("Keyword", "MS1", "YES"),  # no MetaData: joins MS1's campaign
    inbound("Keyword", "MS1", "YES again", timestamp="2026-03-02T11:00:00Z"),
    receipt("MS2", "Delivered", campaign="spring"),
    inbound("Stop", "MS2", "STOP", campaign="spring"),
    receipt("MS3", "Blocked", campaign="spring"),
    receipt("MS4", "Sent", campaign="spring"),
    receipt("MS5", Type="Click", campaign="spring"),  # receipt never came
    inbound("Message", "MS10", "outbound echo", campaign="spring", Inbound=False),
    # autumn
    receipt("MS6", "DELIVERED", campaign="autumn"),
    receipt("MS7", "Failed", campaign="autumn"),
    # no campaign
    inbound("Message", "MS8", "who is this?"),
    receipt("MS9", "Sent", MetaData=[{"other": "x"}]),
]


@pytest.fixture
def events(tmp_path: Path) -> Iterator[pd.DataFrame]:
    with EventStore(tmp_path / "events.sqlite") as store:
        for body in EVENTS:
            store.record(CallbackPayload.model_validate(body))
        store.record(CallbackPayload.model_validate(EVENTS[0]))  # a retry changes nothing
        yield store.frame()


def test_funnel_on_known_events(events: pd.DataFrame) -> None:
    funnel = campaign_funnel(events)
    expected = pd.DataFrame(
        {
            "sent": [2, 2, 4],
            "delivered": [1, 1, 3],
            "clicked": [0, 0, 2],
            "replied": [1, 0, 1],
            "opted_out": [0, 0, 1],
        },
        index=pd.Index(["(none)", "autumn", "spring"], name="campaign"),
    )
    pd.testing.assert_frame_equal(funnel, expected, check_index_type=False)
    assert list(funnel.columns) == list(STAGES)


def test_status_sets_and_campaign_key_are_parameters(events: pd.DataFrame) -> None:
    funnel = campaign_funnel(
        events,
        campaign_key="other",
        delivered_statuses={"Sent", "Delivered"},
        not_sent_statuses={"blocked", "failed"},
        no_campaign="-",
    )
    assert list(funnel.index) == ["-", "x"]
    assert funnel.loc["x"].to_dict() == {
        "sent": 1,
        "delivered": 1,
        "clicked": 0,
        "replied": 0,
        "opted_out": 0,
    }
    # MS3 (Blocked) and MS7 (Failed) are not sent; Sent now counts as delivered.
    assert funnel.loc["-", "sent"] == 6
    assert funnel.loc["-", "delivered"] == 6


def test_empty_events_give_an_empty_funnel(tmp_path: Path) -> None:
    with EventStore(tmp_path / "e.sqlite") as store:
        funnel = campaign_funnel(store.frame())
    assert funnel.empty
    assert list(funnel.columns) == list(STAGES)
    assert funnel.index.name == "campaign"


def test_a_frame_without_the_columns_is_refused() -> None:
    with pytest.raises(ValueError, match="missing column"):
        campaign_funnel(pd.DataFrame({"type": ["Receipt"]}))


def test_unknown_message_ids_count_once_per_respondent(tmp_path: Path) -> None:
    stamp = "2026-03-02T10:05:00Z"
    bodies = [
        inbound("Stop", "Unknown", "STOP", Source="447700900001", timestamp=stamp),
        inbound("Stop", "Unknown", "STOP", Source="447700900002", timestamp=stamp),
        inbound("Stop", "unknown", "STOP now", Source="447700900002", timestamp=stamp),
        inbound("Help", "Unknown", "HELP", Source="447700900003", timestamp=stamp),
        receipt("Unknown", "Blocked", Type="Lookup", Destination="447700900004"),
    ]
    with EventStore(tmp_path / "e.sqlite") as store:
        for body in bodies:
            store.record(CallbackPayload.model_validate(body))
        events = store.frame()
    assert len(events) == 5
    funnel = campaign_funnel(events)
    # Two numbers opted out (one of them twice); the HELP and the lookup opt nobody out.
    assert funnel.loc["(none)"].to_dict() == {
        "sent": 2,
        "delivered": 2,
        "clicked": 0,
        "replied": 0,
        "opted_out": 2,
    }
