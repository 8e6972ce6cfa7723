"""OptOutList: SQLite, STOP/UNSTOP in time order, idempotent, safe across processes."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import surveykit as sk
from surveykit.callbacks import EventStore
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
