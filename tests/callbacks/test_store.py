"""The SQLite event store: one row per delivery identity, counted retries, durable reads."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from surveykit.callbacks import EVENT_COLUMNS, EventStore, StoreClosedError, delivery_identity
from surveykit.models import CallbackPayload
from tests.helpers.callbacks import inbound, receipt


def payload(body: dict[str, object]) -> CallbackPayload:
    return CallbackPayload.model_validate(body)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    opened = EventStore(tmp_path / "events.sqlite")
    try:
        yield opened
    finally:
        opened.close()


def test_a_retry_is_counted_not_stored_twice(store: EventStore) -> None:
    first = store.record(payload(receipt("MS1")))
    again = store.record(payload(receipt("MS1")))
    assert first.is_new
    assert not again.is_new
    assert again.event_id == first.event_id
    assert again.deliveries == 2
    frame = store.frame()
    assert len(frame) == 1
    assert frame.loc[0, "deliveries"] == 2
    assert frame.loc[0, "last_received_at"] >= frame.loc[0, "received_at"]


@pytest.mark.parametrize(
    ("other", "same"),
    [
        pytest.param(receipt("MS1", timestamp="2026-03-02T09:00:00Z"), True, id="same-instant"),
        pytest.param(receipt("MS1", Type="RECEIPT"), True, id="type-case"),
        pytest.param(receipt("MS1", Carrier="X"), True, id="other-fields-ignored"),
        pytest.param(receipt("MS1", "Sent"), False, id="status"),
        pytest.param(receipt("MS2"), False, id="message-id"),
        pytest.param(receipt("MS1", Type="Click"), False, id="type"),
        pytest.param(receipt("MS1", timestamp="2026-03-02T10:00:01+01:00"), False, id="time"),
    ],
)
def test_delivery_identity(other: dict[str, object], same: bool) -> None:
    base = payload(receipt("MS1", timestamp="2026-03-02T10:00:00+01:00"))
    assert (delivery_identity(base) == delivery_identity(payload(other))) is same


def test_anonymous_payloads_are_keyed_by_content() -> None:
    one = payload({"Type": "Info", "Message": "a"})
    two = payload({"Type": "Info", "Message": "b"})
    assert delivery_identity(one) != delivery_identity(two)
    assert delivery_identity(one) == delivery_identity(payload({"type": "info", "message": "a"}))


def stop_from(number: str, message_id: str | None = "Unknown", **extra: object) -> CallbackPayload:
    """A STOP that answered no open message: the platform's MessageID is ``Unknown``."""
    body = inbound("Stop", "", "STOP", Source=number, MessageID=message_id, Status="Stopped")
    body.update(extra)
    return payload(body)


@pytest.mark.parametrize("placeholder", ["Unknown", "UNKNOWN", " unknown ", "", None], ids=repr)
def test_events_without_a_real_message_id_from_different_numbers_stay_apart(
    store: EventStore, placeholder: str | None
) -> None:
    # Same Type, Status and Timestamp (the platform's clock is coarse): only Source differs.
    first = store.record(stop_from("447700900001", placeholder))
    second = store.record(stop_from("447700900002", placeholder))
    assert first.is_new and second.is_new
    assert list(store.frame()["source"]) == ["447700900001", "447700900002"]


def test_a_redelivered_unknown_event_is_still_a_duplicate(store: EventStore) -> None:
    first = store.record(stop_from("447700900001"))
    # A retry, spelled differently on the wire: same instant, other offset, other case.
    again = store.record(
        stop_from("447700900001", "unknown", Type="STOP", Timestamp="2026-03-02T11:05:00+01:00")
    )
    assert (again.event_id, again.deliveries) == (first.event_id, 2)
    assert store.count() == 1


def test_failed_lookups_of_a_batch_are_one_event_per_number(store: EventStore) -> None:
    numbers = ["441632960001", "441632960002", "441632960003", "447700900004", "447700900005"]
    statuses = ["Reachable", "Reachable", "Reachable", "Blocked", "Blocked"]
    for number, status in zip(numbers, statuses, strict=True):
        body = receipt("Unknown", status, Type="Lookup", Destination=number, Lookup=False)
        assert store.record(payload(body)).is_new
    frame = store.frame()
    assert list(frame["destination"]) == numbers
    assert (frame["deliveries"] == 1).all()


def test_unknown_events_differing_only_in_text_stay_apart(store: EventStore) -> None:
    store.record(payload(inbound("Message", "Unknown", "hello")))
    store.record(payload(inbound("Message", "Unknown", "hello again")))
    assert store.count() == 2


def test_reply_outcome_is_kept_and_returned_to_retries(store: EventStore) -> None:
    body = payload(inbound("Keyword", "MS1", "JOIN"))
    first = store.record(body)
    assert first.reply_state == "pending"
    reply = {"destination": "1", "source": "2", "message": "Hi", "reply": True}
    store.set_outcome(first.event_id, reply=reply)
    again = store.record(body)
    assert (again.reply_state, again.reply, again.error) == ("done", reply, None)
    assert store.frame().loc[0, "reply"] == reply


def test_threads_writing_at_once_lose_nothing(store: EventStore) -> None:
    def write(worker: int) -> None:
        for n in range(250):
            store.record(payload(receipt(f"W{worker}-{n}")))
            store.record(payload(receipt(f"W{worker}-{n}")))  # and a retry of each

    threads = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    frame = store.frame()
    assert len(frame) == 2000
    assert frame["message_id"].nunique() == 2000
    assert (frame["deliveries"] == 2).all()


async def test_async_writes(store: EventStore) -> None:
    results = await asyncio.gather(*(store.arecord(payload(receipt(f"A{n}"))) for n in range(50)))
    assert sorted(r.event_id for r in results) == list(range(1, 51))
    assert store.count() == 50


def test_events_survive_reopening_and_other_readers_see_them(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    with EventStore(path) as store:
        store.record(payload(receipt("MS1", campaign="spring")))
        # A separate connection (another process would do the same) sees the committed row.
        with sqlite3.connect(path) as other:
            assert other.execute("SELECT message_id FROM events").fetchall() == [("MS1",)]
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with EventStore(path) as reopened:
        frame = reopened.frame()
        assert list(frame["message_id"]) == ["MS1"]
        assert frame.loc[0, "metadata"] == {"campaign": "spring"}
        assert reopened.record(payload(receipt("MS1"))).deliveries == 2


def test_frame_has_all_columns_even_when_empty(store: EventStore) -> None:
    frame = store.frame()
    assert list(frame.columns) == list(EVENT_COLUMNS)
    assert len(frame) == 0
    assert isinstance(frame["timestamp"].dtype, pd.DatetimeTZDtype)
    assert frame["deliveries"].dtype == "int64"


def test_naive_timestamps_are_read_as_utc(store: EventStore) -> None:
    store.record(payload(receipt("MS1", timestamp="2026-03-02T10:00:00")))
    assert store.frame().loc[0, "timestamp"] == pd.Timestamp("2026-03-02T10:00:00Z")


@pytest.mark.parametrize("path", [":memory:", ""])
def test_in_memory_databases_are_refused(path: str) -> None:
    with pytest.raises(ValueError, match="file path"):
        EventStore(path)


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "e.sqlite")
    store.close()
    store.close()
    with pytest.raises(StoreClosedError, match="closed"):
        store.record(payload(receipt("MS1")))
    with pytest.raises(StoreClosedError):
        store.frame()


def test_a_foreign_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=7")
    with pytest.raises(ValueError, match="schema 7"):
        EventStore(path)


def test_wait_for_returns_when_enough_events_arrive(store: EventStore) -> None:
    def later() -> None:
        for n in range(3):
            store.record(payload(receipt(f"L{n}")))

    writer = threading.Thread(target=later)
    writer.start()
    try:
        assert store.wait_for(3, timeout=30) >= 3
    finally:
        writer.join(30)
    assert store.wait_for(10, timeout=0.05) == 3


def test_a_schema_1_store_is_rekeyed_so_a_later_retry_is_still_a_duplicate(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v1.sqlite"
    with EventStore(path) as store:
        store.record(stop_from("447700900001"))
        store.record(payload(receipt("MS1")))
    # As the previous version wrote them: (MessageID, Type, Timestamp, Status) for every event.
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE events SET identity = "
        "json_array(message_id, type, timestamp, status) WHERE message_id = 'Unknown'"
    )
    real_key = conn.execute("SELECT identity FROM events WHERE message_id = 'MS1'").fetchone()
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    with EventStore(path) as store:
        retry = store.record(stop_from("447700900001"))
        other = store.record(stop_from("447700900002"))
        assert (retry.deliveries, other.is_new) == (2, True)
        assert store.count() == 3
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert conn.execute("SELECT identity FROM events WHERE message_id = 'MS1'").fetchone() == (
        real_key
    )
    conn.close()
