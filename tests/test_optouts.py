"""OptOutList: SQLite, STOP/UNSTOP in time order, idempotent, safe across processes."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.callbacks import EventStore, Receiver
from surveykit.campaign import OptOutError
from surveykit.models import CallbackPayload
from surveykit.sandbox import Sandbox

SOURCE = "447700900999"
WAIT = 30.0  # seconds: a safety net for waits, never an assertion about speed


@pytest.fixture
def optouts(tmp_path: Path) -> Iterator[sk.OptOutList]:
    with sk.OptOutList(tmp_path / "optouts.sqlite") as opened:
        yield opened


def test_spellings_of_one_number_are_one_entry(optouts: sk.OptOutList) -> None:
    assert optouts.add(["+44 7700 900123", "Ada@Example.org"], reason="asked") == 2
    assert "447700900123" in optouts and "+447700900123" in optouts
    assert "tel:+44-7700-900123" in optouts and "ada@example.ORG" in optouts
    assert "447700900124" not in optouts and None not in optouts
    assert optouts.add("447700900123") == 1  # the same number again: refreshed, one entry
    assert len(optouts) == 2
    frame = optouts.frame
    assert frame["number"].tolist() == ["447700900123", "ada@example.org"]
    assert frame["source"].tolist() == ["manual", "manual"]
    assert str(frame["since"].dtype) == "datetime64[us, UTC]"
    assert optouts.remove(["+44 (0) 7700 900123".replace("(0) ", "")]) == 1
    assert "447700900123" not in optouts and len(optouts) == 1


def test_national_numbers_need_a_region(tmp_path: Path) -> None:
    with sk.OptOutList(tmp_path / "gb.sqlite", region="GB") as gb:
        gb.add(["07700 900123"])
        assert "447700900123" in gb
    with sk.OptOutList(tmp_path / "none.sqlite") as plain:
        with pytest.raises(OptOutError, match=r"value 1 \('07700 900123'\).*region"):
            plain.add(["447700900001", "07700 900123"])
        assert len(plain) == 0, "nothing is written when a value is refused"


def test_contains_matches_series_isin_on_keys(optouts: sk.OptOutList) -> None:
    rng = random.Random(1)
    numbers = [f"4477009{i:05d}" for i in range(300)]
    listed = set(rng.sample(numbers, 40))
    optouts.add(sorted(listed))
    checked = pd.Series([*numbers, None, "not a number"], index=range(100, 402))
    got = optouts.contains(checked)
    assert got.index.equals(checked.index)
    assert got.tolist() == checked.isin(listed).tolist()
    optouts.remove(sorted(listed)[:10])  # the cached set sees the change
    assert int(optouts.contains(checked).sum()) == 30


def payload(kind: str, number: str, minute: int) -> CallbackPayload:
    return CallbackPayload.model_validate(
        {
            "Type": kind,
            "Source": number,
            "Destination": SOURCE,
            "Inbound": True,
            "Message": kind.upper(),
            "MessageID": "Unknown",
            "Timestamp": (
                pd.Timestamp("2026-03-01T09:00Z") + pd.Timedelta(minutes=minute)
            ).isoformat(),
        }
    )


def latest_by_hand(events: list[CallbackPayload]) -> set[str]:
    state: dict[str, tuple[Any, str]] = {}
    for event in events:
        number = event.source.lstrip("+") if event.source else ""
        if number not in state or event.timestamp > state[number][0]:
            state[number] = (event.timestamp, str(event.type))
    return {n for n, (_, kind) in state.items() if kind == "Stop"}


def test_update_applies_the_latest_event_whatever_the_order(tmp_path: Path) -> None:
    rng = random.Random(7)
    numbers = [f"4477009{i:05d}" for i in range(20)]
    events = [
        payload(rng.choice(["Stop", "Unstop"]), rng.choice(["+", ""]) + rng.choice(numbers), m)
        for m in rng.sample(range(10_000), 120)
    ]
    want = latest_by_hand(events)
    for attempt in range(3):
        shuffled = events[:]
        rng.shuffle(shuffled)
        with sk.OptOutList(tmp_path / f"o{attempt}.sqlite") as lst:
            for start in range(0, len(shuffled), 17):  # in chunks, out of order
                lst.update(shuffled[start : start + 17])
            assert set(lst.frame["number"]) == want
            before = lst.frame
            assert lst.update(events) == 0, "applying the same events again changes nothing"
            pd.testing.assert_frame_equal(lst.frame, before)


def test_update_reads_frames_stores_and_paths(tmp_path: Path) -> None:
    events = [
        payload("Stop", "+447700900001", 1),
        payload("Stop", "447700900002", 2),
        payload("Unstop", "447700900002", 3),
        payload("Keyword", "447700900003", 4),
    ]
    path = tmp_path / "events.sqlite"
    with EventStore(path) as store:
        for event in events:
            store.record(event)
        frame = store.frame()
        for n, source in enumerate([frame, store, path, str(path)]):
            with sk.OptOutList(tmp_path / f"o{n}.sqlite") as lst:
                assert lst.update(source) == 2
                assert lst.frame["number"].tolist() == ["447700900001"]
                assert lst.frame["reason"].tolist() == ["STOP callback"]
                assert lst.frame["source"].tolist() == ["callback"]


def test_a_manual_change_after_a_stop_wins_over_replaying_it(optouts: sk.OptOutList) -> None:
    stop = payload("Stop", "447700900001", 0)  # 2026: before now
    optouts.update([stop])
    optouts.remove("447700900001", reason="asked to be back")
    assert optouts.update([stop]) == 0 and "447700900001" not in optouts


def test_two_processes_adding_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    sk.OptOutList(path).close()
    script = textwrap.dedent(
        """
        import sys
        import surveykit as sk
        lst = sk.OptOutList(sys.argv[1])
        base = int(sys.argv[2])
        for i in range(150):
            lst.add([f"44770090{base + i:04d}"], reason=sys.argv[2])
            if i % 10 == 0:
                lst.update([])  # interleave reads and writes
                assert f"44770090{base + i:04d}" in lst
        lst.close()
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(base)]) for base in (0, 5000)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    with sk.OptOutList(path) as lst:
        assert len(lst) == 300
        assert lst.frame["reason"].value_counts().to_dict() == {"0": 150, "5000": 150}


def test_bad_paths_and_values(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a file"):
        sk.OptOutList(":memory:")
    with sk.OptOutList(tmp_path / "o.sqlite") as lst, pytest.raises(OptOutError, match="'abc'"):
        lst.add(["abc"])
    with pytest.raises(TypeError, match="not a CallbackPayload"):
        sk.OptOutList(tmp_path / "o.sqlite").update([{"Type": "Stop"}])


# -- against the sandbox: listen(opt_outs=...) and send_batch(opt_outs=...) -------------


def test_listen_keeps_the_list_current(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite"
    with EventStore(db) as store:
        store.record(payload("Stop", "447700900050", 0))  # stored before the listener ran
    lst = sk.OptOutList(tmp_path / "optouts.sqlite")
    with Sandbox(seed=1) as sandbox, sk.listen(db=db, opt_outs=lst) as listener:
        assert "447700900050" in lst, "events already in the store are applied at start"
        sandbox.set_account_callback(listener.url)
        sandbox.simulate_reply("447700900051", "STOP")
        sandbox.simulate_reply("447700900052", "STOP")
        sandbox.advance(1)  # at the same time a STOP would win over the UNSTOP
        sandbox.simulate_reply("447700900052", "UNSTOP")
        sandbox.wait_for_deliveries(WAIT)
        listener.wait_for(4, timeout=WAIT)
        assert set(lst.frame["number"]) == {"447700900050", "447700900051"}
        touched = {"447700900050", "447700900051", "447700900052"}
        assert set(lst.frame["number"]) - {"447700900050"} == touched & set(sandbox.stop_list())


def recipients(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"mobileNumber": [f"4479111{i:05d}" for i in range(n)]},
        index=pd.Index([f"r{i}" for i in range(n)], name="respondent"),
    )


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_send_batch_sends_nothing_to_opted_out_rows(kind: str, tmp_path: Path) -> None:
    sandbox = Sandbox(seed=2, sample_data=False)
    lst = sk.OptOutList(tmp_path / "o.sqlite")
    lst.add(["+44 7911 100001", "447911100004"])
    df = recipients(6)
    if kind == "sync":
        result: Any = sk.send_batch(
            sk.Client.sandbox(sandbox),
            df,
            message="Hi",
            source=SOURCE,
            opt_outs=lst,
            progress=False,
        )
    else:
        async with sk.AsyncClient.sandbox(sandbox) as client:
            result = await sk.send_batch(
                client,
                df,
                message="Hi",
                source=SOURCE,
                opt_outs=tmp_path / "o.sqlite",
                progress=False,
            )
    frame = result.frame
    assert frame.loc[["r1", "r4"], "outcome"].tolist() == ["opted_out", "opted_out"]
    assert (frame.loc[["r1", "r4"], "error"] == "on the opt-out list").all()
    assert result.summary.to_dict() == {"sent": 4, "opted_out": 2} and result.sent_now == 4
    sent_to = {m.destination for m in sandbox.messages()}
    assert sent_to == set(df["mobileNumber"]) - {"447911100001", "447911100004"}
    preview = sk.preview_batch(None, df, message="Hi", source=SOURCE, opt_outs=lst)
    assert preview.frame["outcome"].tolist() == [
        "ready",
        "opted_out",
        "ready",
        "ready",
        "opted_out",
        "ready",
    ]
    assert preview.totals["ready"] == 4
    assert preview.totals["rejected"] == {"opted_out: on the opt-out list": 2}


def test_a_stop_during_the_batch_stops_the_later_rows(tmp_path: Path) -> None:
    sandbox = Sandbox(seed=2, sample_data=False)
    lst = sk.OptOutList(tmp_path / "o.sqlite")
    df = recipients(5)
    seen: list[int] = []

    def progress(counts: dict[str, int]) -> None:
        seen.append(sum(counts.values()))
        if len(seen) == 1:  # after the first row: the last two reply STOP
            lst.add(["447911100003", "447911100004"], reason="STOP")

    result = sk.send_batch(
        sk.Client.sandbox(sandbox),
        df,
        message="Hi",
        source=SOURCE,
        opt_outs=lst,
        concurrency=1,
        progress=progress,
        journal=tmp_path / "j.sqlite",
    )
    assert result.frame["outcome"].tolist() == ["sent", "sent", "sent", "opted_out", "opted_out"]
    assert {m.destination for m in sandbox.messages()} == {f"4479111{i:05d}" for i in range(3)}
    lst.remove(["447911100004"])  # UNSTOP: a re-run with the journal sends that row only
    again = sk.send_batch(
        sk.Client.sandbox(sandbox),
        df,
        message="Hi",
        source=SOURCE,
        opt_outs=lst,
        progress=False,
        journal=tmp_path / "j.sqlite",
    )
    assert again.sent_now == 1
    assert again.frame["outcome"].tolist() == ["sent", "sent", "sent", "opted_out", "sent"]
    assert len(sandbox.messages()) == 4


# -- every STOP kept (issue 22) -------------------------------------------------------------


def post(url: str, kind: str, number: str, timestamp: str, message_id: str) -> None:
    body = {
        "Type": kind,
        "Source": number,
        "Destination": SOURCE,
        "Inbound": True,
        "Message": kind.upper(),
        "MessageID": message_id,
        "Timestamp": timestamp,
    }
    with httpx.Client(trust_env=False, timeout=WAIT) as http:
        assert http.post(url, json=body).status_code == 200


@pytest.mark.parametrize("first", ["Stop", "Unstop"], ids=["stop-first", "unstop-first"])
def test_two_listeners_on_one_list_a_stop_wins_a_tie(first: str, tmp_path: Path) -> None:
    number = "447700900070"
    same_time = "2026-03-01T09:00:00Z"
    path = tmp_path / "optouts.sqlite"
    with (
        sk.listen(db=tmp_path / "a.sqlite", opt_outs=path) as a,
        sk.listen(db=tmp_path / "b.sqlite", opt_outs=path) as b,
    ):
        # Listener b has stored more events, so its UNSTOP's event id is larger than the
        # id of a's STOP: ids of two stores say nothing about which came first.
        for n in range(3):
            post(b.url, "Receipt", "447700900001", same_time, f"MS{n}")
        to = {"Stop": a, "Unstop": b}
        for kind in (first, "Unstop" if first == "Stop" else "Stop"):
            post(to[kind].url, kind, number, same_time, "Unknown")
        with sk.OptOutList(path) as lst:
            assert number in lst, "a STOP and an UNSTOP at the same time: the STOP is kept"


def test_a_tie_within_one_update_keeps_the_stop(optouts: sk.OptOutList) -> None:
    stop, unstop = payload("Stop", "447700900071", 5), payload("Unstop", "447700900071", 5)
    optouts.update([stop, unstop])
    assert "447700900071" in optouts
    frame = pd.DataFrame(
        {
            "type": ["Stop", "Unstop"],
            "source": ["447700900072"] * 2,
            "timestamp": pd.to_datetime(["2026-03-01T09:00Z"] * 2, utc=True),
            "event_id": [1, 2],
        }
    )
    optouts.update(frame)
    assert "447700900072" in optouts


def test_an_unstop_dated_in_the_future_does_not_outrank_a_later_stop(tmp_path: Path) -> None:
    number = "447700900080"
    path = tmp_path / "optouts.sqlite"
    with sk.listen(db=tmp_path / "events.sqlite", opt_outs=path) as listener:  # unsigned
        post(listener.url, "Unstop", number, "2099-01-01T00:00:00Z", "Unknown")
        now = pd.Timestamp.now(tz="UTC")  # after the UNSTOP was received
        post(listener.url, "Stop", number, now.isoformat(), "Unknown")
        with sk.OptOutList(path) as lst:
            assert number in lst, "an UNSTOP dated 2099 counts from when it was received"
            since = lst.frame.set_index("number").loc[number, "since"]
            assert abs(since - now) < pd.Timedelta(minutes=1)


@pytest.mark.parametrize(
    ("ahead", "counted_at_receipt"),
    [
        (pd.Timedelta(minutes=4), False),
        (pd.Timedelta(minutes=6), True),
        (pd.Timedelta(days=-30), False),
    ],
    ids=["4-min-ahead-kept", "6-min-ahead-receipt", "a-month-late-kept"],
)
def test_timestamps_outside_the_window_count_from_receipt(
    ahead: pd.Timedelta, counted_at_receipt: bool, optouts: sk.OptOutList
) -> None:
    received = pd.Timestamp("2026-03-01T09:00Z")
    frame = pd.DataFrame(
        {
            "event_id": [1],
            "received_at": [received],
            "type": ["Stop"],
            "source": ["447700900081"],
            "destination": [SOURCE],
            "timestamp": [received + ahead],
        }
    )
    optouts.update(frame)
    since = optouts.frame["since"].iloc[0]
    assert since == (received if counted_at_receipt else received + ahead)


def test_a_timestamp_before_the_floor_counts_from_receipt(optouts: sk.OptOutList) -> None:
    received = pd.Timestamp("2026-03-01T09:00Z")
    frame = pd.DataFrame(
        {
            "event_id": [1, 2],
            "received_at": [received - pd.Timedelta(hours=1), received],
            "type": ["Unstop", "Stop"],
            "source": ["447700900082"] * 2,
            "destination": [SOURCE] * 2,
            "timestamp": [received - pd.Timedelta(hours=1), pd.Timestamp("1999-12-31T23:00Z")],
        }
    )
    optouts.update(frame)
    assert "447700900082" in optouts, "a STOP stamped 1999 counts from when it was received"


def test_update_takes_the_payloads_own_column_names(optouts: sk.OptOutList) -> None:
    frame = pd.DataFrame(
        {
            "Type": ["Stop", "Stop", "Unstop"],
            "Source": ["447700900090", "447700900091", "447700900091"],
            "Destination": [SOURCE] * 3,
            "Timestamp": ["2026-03-01T09:00Z", "2026-03-01T09:01Z", "2026-03-01T09:02Z"],
        }
    )
    assert optouts.update(frame) == 2
    assert optouts.frame["number"].tolist() == ["447700900090"]


@pytest.mark.parametrize("missing", ["Type", "Source", "Timestamp"])
def test_update_names_a_missing_column(missing: str, optouts: sk.OptOutList) -> None:
    frame = pd.DataFrame(
        {"Type": ["Stop"], "Source": ["447700900090"], "Timestamp": ["2026-03-01T09:00Z"]}
    ).drop(columns=[missing])
    with pytest.raises(OptOutError, match=rf"no {missing.lower()!r} column"):
        optouts.update(frame)


def test_update_names_a_bad_timestamp(optouts: sk.OptOutList) -> None:
    frame = pd.DataFrame({"Type": ["Stop"], "Source": ["447700900090"], "Timestamp": ["soon"]})
    with pytest.raises(OptOutError, match=r"'Timestamp'.*'soon'"):
        optouts.update(frame)


def test_a_stop_while_the_list_is_locked_is_applied_once_the_lock_is_free(tmp_path: Path) -> None:
    path = tmp_path / "optouts.sqlite"
    lst = sk.OptOutList(path)
    receiver = Receiver(tmp_path / "events.sqlite", opt_out_wait=0.2, opt_out_retry=0.05)
    first, second = "447700900095", "447700900096"
    with sk.listen(receiver=receiver, opt_outs=lst) as listener:
        blocker = sqlite3.connect(path, isolation_level=None)  # another process's write
        blocker.execute("BEGIN IMMEDIATE")
        try:
            started = time.monotonic()
            post(listener.url, "Stop", first, "2026-03-01T09:00:00Z", "Unknown")
            post(listener.url, "Stop", second, "2026-03-01T09:01:00Z", "Unknown")
            assert time.monotonic() - started < 10, "answered well within the platform's 30 s"
            stored = listener.wait_for(2, timeout=WAIT)
            assert stored["type"].tolist() == ["Stop", "Stop"], "both are on disk in the store"
            assert first not in lst and receiver.pending_opt_outs == 2
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        deadline = time.monotonic() + WAIT
        while receiver.pending_opt_outs and time.monotonic() < deadline:
            time.sleep(0.02)
        assert first in lst and second in lst, "applied once the lock is free, no restart"
        assert receiver.pending_opt_outs == 0


# -- opt-outs in other words ---------------------------------------------------------------


def message(number: str, text: str, minute: int) -> CallbackPayload:
    return CallbackPayload.model_validate(
        {
            "Type": "Message",
            "Source": number,
            "Destination": SOURCE,
            "Inbound": True,
            "Message": text,
            "MessageID": f"MS{number}{minute}",
            "Timestamp": (
                pd.Timestamp("2026-03-01T09:00Z") + pd.Timedelta(minutes=minute)
            ).isoformat(),
        }
    )


def test_replies_in_words_opt_out_or_are_flagged(optouts: sk.OptOutList) -> None:
    events = [
        message("447700900101", "Please stop texting me!", 1),
        message("447700900102", "Stop, who is this?", 2),
        message("447700900103", "Don't stop, I like these", 3),
        message("447700900104", "Arrêtez de m'envoyer des SMS", 4),
        message("447700900105", "5", 5),
    ]
    assert optouts.update(events) == 2
    frame = optouts.frame.set_index("number")
    assert sorted(frame.index) == ["447700900101", "447700900104"]
    assert frame.loc["447700900101", "reason"] == "opt-out in words (en): stop texting me"
    assert frame.loc["447700900101", "message"] == "Please stop texting me!"
    assert frame.loc["447700900104", "reason"].startswith("opt-out in words (fr)")
    review = optouts.review()
    assert review.columns.tolist() == ["number", "message", "words", "language", "at", "opted_out"]
    assert review[["number", "message", "words"]].values.tolist() == [
        ["447700900102", "Stop, who is this?", "stop"]
    ]
    assert not review["opted_out"].any()
    assert optouts.update(events) == 0 and len(optouts.review()) == 1, "a replay adds nothing"
    optouts.update([payload("Unstop", "447700900101", 9)])  # UNSTOP later: back on
    assert "447700900101" not in optouts


def test_the_words_rule_can_be_turned_off(tmp_path: Path) -> None:
    with sk.OptOutList(tmp_path / "o.sqlite", words=False) as lst:
        assert lst.update([message("447700900101", "Please stop texting me!", 1)]) == 0
        assert len(lst) == 0 and lst.review().empty
        assert lst.update([payload("Stop", "447700900101", 2)]) == 1, "STOP still applies"


@pytest.mark.parametrize("words", [True, False], ids=["words-on", "words-off"])
def test_a_listener_reads_opt_outs_in_words(words: bool, tmp_path: Path) -> None:
    path = tmp_path / "optouts.sqlite"
    with sk.listen(db=tmp_path / "e.sqlite", opt_outs=path, opt_out_words=words) as listener:
        for number, text in [("447700900111", "unsubscribe"), ("447700900112", "5 - stop?")]:
            body = message(number, text, 1).model_dump(by_alias=True, mode="json")
            with httpx.Client(trust_env=False, timeout=WAIT) as http:
                assert http.post(listener.url, json=body).status_code == 200
        with sk.OptOutList(path) as lst:
            assert ("447700900111" in lst) is words
            assert lst.review()["number"].tolist() == (["447700900112"] if words else [])
    with pytest.raises(ValueError, match="set OptOutList"):
        sk.listen(opt_outs=sk.OptOutList(path), opt_out_words=False)


def test_a_restart_does_not_flag_a_reply_twice(tmp_path: Path) -> None:
    # Dated 2099, the reply counts from its receipt: at once, and from the store at restart.
    body = message("447700900121", "Stop, who is this?", 1).model_dump(by_alias=True, mode="json")
    body["Timestamp"] = "2099-01-01T00:00:00Z"
    path, db = tmp_path / "optouts.sqlite", tmp_path / "e.sqlite"
    with (
        sk.listen(db=db, opt_outs=path) as listener,
        httpx.Client(trust_env=False, timeout=WAIT) as http,
    ):
        assert http.post(listener.url, json=body).status_code == 200
    with sk.listen(db=db, opt_outs=path), sk.OptOutList(path) as lst:
        assert lst.review()["number"].tolist() == ["447700900121"]
