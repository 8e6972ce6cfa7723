"""campaign_status: one row per respondent, checked against a hand computation."""

from __future__ import annotations

import random
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import surveykit as sk
from surveykit.batch import Journal
from surveykit.callbacks import EventStore
from surveykit.campaign import FLAGS, STATUSES
from surveykit.models import CallbackPayload

T0 = pd.Timestamp("2026-03-01T09:00:00Z")
DELIVERED = {"delivered", "read"}
FAILED = {"failed", "undeliverable", "rejected"}


def number(i: int) -> str:
    return f"4477009{i:05d}"


def make_case(seed: int) -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame]:
    """Random small results, waves and events, with every kind of mismatch in them."""
    rng = random.Random(seed)
    people = []
    for i in range(25):
        mobile: str | None = number(i % 23)  # two pairs of respondents share a number
        if rng.random() < 0.08:
            mobile = None
        elif rng.random() < 0.3:
            mobile = "+44 7700 9" + f"{i % 23:05d}"[:2] + " " + f"{i % 23:05d}"[2:]
        started = rng.random() < 0.4
        completed = started and rng.random() < 0.5
        people.append(
            {
                "respondentId": f"r{i:03d}",
                "mobileNumber": mobile,
                "started": T0 + pd.Timedelta(hours=5) if started else pd.NaT,
                "completed": T0 + pd.Timedelta(hours=6) if completed else pd.NaT,
            }
        )
    results = pd.DataFrame(people)
    results["started"] = pd.to_datetime(results["started"], utc=True)
    results["completed"] = pd.to_datetime(results["completed"], utc=True)
    outcomes = ["sent"] * 6 + ["failed", "invalid", "landline", "blocked", "unknown"]
    waves, mid = [], 0
    for w in range(3):
        rows = []
        for i in rng.sample(range(30), 18):  # 23..29 are numbers no respondent has
            outcome = rng.choice(outcomes)
            mid += 1
            rows.append(
                {
                    "destination": number(i),
                    "outcome": outcome,
                    "message_id": f"m{mid}" if outcome in ("sent", "blocked") else None,
                    "time": T0 + pd.Timedelta(days=w, minutes=rng.randrange(0, 300)),
                }
            )
        waves.append(pd.DataFrame(rows))
    ids = [m for wave in waves for m in wave["message_id"].dropna()]
    events = []
    for e in range(60):
        kind = rng.choice(["Receipt", "Receipt", "Click", "Message", "Stop", "Unstop", "Keyword"])
        inbound = kind in ("Message", "Stop", "Unstop", "Keyword")
        who = number(rng.randrange(0, 32))
        message_id = rng.choice([*ids, "Unknown", "Unknown", "m-elsewhere"])
        events.append(
            {
                "event_id": e + 1,
                "type": kind,
                "message_id": message_id,
                "status": rng.choice(["Sent", "Delivered", "Failed", "Read"])
                if kind == "Receipt"
                else "Received",
                "source": ("+" + who) if inbound else "447700900999",
                "destination": "447700900999" if inbound else who,
                "inbound": inbound,
                "timestamp": T0 + pd.Timedelta(minutes=rng.randrange(0, 5000)),
            }
        )
    return results, waves, pd.DataFrame(events)


def by_hand(
    results: pd.DataFrame, waves: list[pd.DataFrame], events: pd.DataFrame
) -> dict[str, dict[str, Any]]:
    """The same columns with plain loops and dicts, written from the docstring's rules."""

    def key(value: Any) -> str | None:
        if value is None or (isinstance(value, float) and pd.isna(value)):
            return None
        return str(value).replace(" ", "").lstrip("+")

    sends: dict[str, list[tuple[Any, int, str, str]]] = defaultdict(list)
    owner: dict[str, str] = {}
    order = 0
    for w, wave in enumerate(waves, start=1):
        for row in wave.to_dict("records"):
            order += 1
            sends[row["destination"]].append((row["time"], order, row["outcome"], f"wave{w}"))
            if row["message_id"] is not None and not pd.isna(row["message_id"]):
                owner[row["message_id"]] = row["destination"]
    per_event: dict[str, list[dict[str, Any]]] = defaultdict(list)
    unknown_ids: set[str] = set()
    for row in events.to_dict("records"):
        mid = row["message_id"]
        who = key(row["source"] if row["inbound"] else row["destination"])
        if mid in owner:
            who = owner[mid]
        elif mid.lower() != "unknown":
            unknown_ids.add(str(who))
        per_event[str(who)].append(row)

    def summary(dest: str | None) -> dict[str, Any]:
        rows = sorted(sends.get(dest, []), key=lambda r: (r[0], r[1])) if dest else []
        sent = [r for r in rows if r[2] == "sent"]
        evs = per_event.get(dest, []) if dest else []
        kinds = [(e["type"], (e["status"] or "").lower(), e["inbound"]) for e in evs]
        opt = sorted(
            (e["timestamp"], e["event_id"], e["type"])
            for e in evs
            if e["type"] in ("Stop", "Unstop")
        )
        delivered = any(
            (t == "Receipt" and s in DELIVERED)
            or t in ("Click", "Stop")
            or (t in ("Message", "Keyword") and i)
            for t, s, i in kinds
        )
        return {
            "contacts": len(sent),
            "first_contact": min((r[0] for r in sent), default=pd.NaT),
            "last_contact": max((r[0] for r in sent), default=pd.NaT),
            "last_outcome": rows[-1][2] if rows else None,
            "last_wave": rows[-1][3] if rows else None,
            "delivered": delivered,
            "clicked": any(t == "Click" for t, _, _ in kinds),
            "replied": any(t in ("Message", "Keyword") and i for t, _, i in kinds),
            "opted_out": bool(opt) and opt[-1][2] == "Stop",
            "failed": any(t == "Receipt" and s in FAILED for t, s, _ in kinds)
            or any(r[2] in ("invalid", "landline") for r in rows),
            "sends": len(rows),
            "events": len(evs),
            "unknown_message_id": dest in unknown_ids,
        }

    def status(row: dict[str, Any]) -> str:
        if row["completed"]:
            return "completed"
        if row["opted_out"] or row["last_outcome"] == "blocked":
            return "opted_out"
        if row["started"]:
            return "started"
        if not row["delivered"] and row["failed"]:
            return "undeliverable"
        return "contacted" if row["contacts"] > 0 else "not_contacted"

    expected: dict[str, dict[str, Any]] = {}
    keys = [key(m) for m in results["mobileNumber"]]
    for person, dest in zip(results.to_dict("records"), keys, strict=True):
        row = summary(dest)
        row["started"] = not pd.isna(person["started"])
        row["completed"] = not pd.isna(person["completed"])
        row["destination"] = dest
        flags = {"shared_number"} if dest is not None and keys.count(dest) > 1 else set()
        if dest is None:
            flags.add("no_destination")
        expected[person["respondentId"]] = row | {"flags": flags}
    for dest in sorted((set(sends) | set(per_event)) - set(k for k in keys if k)):
        row = summary(dest) | {"started": False, "completed": False, "destination": dest}
        expected[dest] = row | {"flags": {"not_in_results"}}
    for row in expected.values():
        row["status"] = status(row)
        if row["sends"] == 0:
            row["flags"].add("not_in_sends")
        if row["contacts"] > 0 and row["events"] == 0:
            row["flags"].add("no_events")
        if row.pop("unknown_message_id"):
            row["flags"].add("unknown_message_id")
        row.pop("failed")
    return expected


def check(got: pd.DataFrame, expected: dict[str, dict[str, Any]]) -> None:
    assert sorted(got.index) == sorted(expected)
    for respondent, want in expected.items():
        row = got.loc[respondent]
        for column, value in want.items():
            have = row[column]
            if column == "flags":
                have = set(filter(None, str(have).split(",")))
            elif pd.isna(have) if not isinstance(have, str) else False:
                have = None if column in ("last_outcome", "last_wave", "destination") else pd.NaT
            if isinstance(value, float) and pd.isna(value):
                value = pd.NaT
            if value is pd.NaT:
                assert have is pd.NaT, (respondent, column, have)
            else:
                assert have == value, (respondent, column, have, value)


@pytest.mark.parametrize("seed", range(12))
def test_status_matches_a_hand_computation(seed: int) -> None:
    results, waves, events = make_case(seed)
    got = sk.campaign_status(results, sends=waves, events=events)
    check(got, by_hand(results, waves, events))
    assert list(got["status"].cat.categories) == list(STATUSES)
    assert set(",".join(got["flags"]).split(",")) - {""} <= set(FLAGS)


@pytest.mark.parametrize("seed", range(4))
def test_every_row_of_every_source_is_accounted_for(seed: int) -> None:
    results, waves, events = make_case(seed)
    got = sk.campaign_status(results, sends=waves, events=events)
    shared = got["flags"].str.contains("shared_number")
    # A shared number's rows are counted for each respondent sharing it: count them once.
    once = got[~shared | ~got["destination"].duplicated()]
    assert once["sends"].sum() == sum(len(w) for w in waves)
    assert once["events"].sum() == len(events)
    assert set(results["respondentId"]) <= set(got.index)
    sent = sum(int((w["outcome"] == "sent").sum()) for w in waves)
    assert once["contacts"].sum() == sent


def test_every_source_kind_gives_the_same_status(tmp_path: Path) -> None:
    results, waves, events = make_case(3)
    want = sk.campaign_status(results, sends=waves, events=events)
    # Journals of the same rows, and the same events in an event store.
    journals = []
    for n, wave in enumerate(waves):
        path = tmp_path / f"wave{n + 1}.sqlite"
        journal = Journal(path)
        journal.check_fingerprint({"channel": "sms"})
        for i, row in enumerate(wave.to_dict("records")):
            key = f'"row-{i}"'
            journal.mark_in_flight(key, row["destination"], "hi", 1)
            journal.record(key, row["outcome"], {"message_id": row["message_id"]}, 1)
        journal.close()
        journals.append(path)
    # Journal times are when each row was written: give them the frames' times.
    for path, wave in zip(journals, waves, strict=True):
        with sqlite3.connect(path) as db:
            for i, time in enumerate(wave["time"]):
                db.execute(
                    "UPDATE rows SET updated_at = ? WHERE row_key = ?",
                    (time.isoformat(), f'"row-{i}"'),
                )
    store_path = tmp_path / "events.sqlite"
    with EventStore(store_path) as store:
        for row in events.to_dict("records"):
            payload = CallbackPayload.model_validate(
                {
                    "Type": row["type"],
                    "MessageID": row["message_id"],
                    "Status": row["status"],
                    "Source": row["source"],
                    "Destination": row["destination"],
                    "Inbound": row["inbound"],
                    "Timestamp": row["timestamp"].isoformat(),
                    "Message": f"event {row['event_id']}",
                }
            )
            store.record(payload)
        for events_source in (store, store_path):
            got = sk.campaign_status(results, sends=journals, events=events_source)
            pd.testing.assert_frame_equal(
                got.drop(columns=["channel"]), want.drop(columns=["channel"])
            )
            assert set(got["channel"].dropna()) <= {"sms"}


def test_batch_results_and_labelled_waves(client: sk.Client) -> None:
    results = client.surveys.results("CSAT-SMS-2026")
    df = results.set_index("respondentId")[["mobileNumber"]]
    first = sk.send_batch(client, df.iloc[:8], message="Hi", source="447700900999", progress=False)
    second = sk.send_batch(
        client, df.iloc[4:], message="Again", source="447700900999", progress=False
    )
    got = sk.campaign_status(results, sends={"invite": first, "reminder": second.frame})
    assert len(got) == len(results) and got.index.name == "respondent"
    assert got["contacts"].tolist() == [1] * 4 + [2] * 4 + [1] * 4
    assert got["last_wave"].tolist() == ["invite"] * 4 + ["reminder"] * 8
    assert (got["status"] == "completed").sum() == results["completed"].notna().sum()


def test_opt_out_list_marks_rows(tmp_path: Path) -> None:
    results, waves, events = make_case(5)
    optouts = sk.OptOutList(tmp_path / "o.sqlite")
    optouts.add(["+44 7700 900001"])
    got = sk.campaign_status(results, sends=waves, events=events, opt_outs=optouts)
    plain = sk.campaign_status(results, sends=waves, events=events)
    changed = got["opted_out"] != plain["opted_out"]
    assert set(got.loc[changed, "destination"]) <= {"447700900001"}
    assert got.loc[got["destination"] == "447700900001", "opted_out"].all()


def test_results_without_respondent_ids_are_keyed_by_number() -> None:
    results = pd.DataFrame(
        {
            "mobileNumber": ["+44 7700 900001", "447700900001", "447700900002"],
            "completed": [None, "2026-03-01", None],
        }
    )
    got = sk.campaign_status(results)
    assert list(got.index) == ["447700900001", "447700900002"]
    assert got.loc["447700900001", "completed"]
    assert got.loc["447700900001", "flags"] == "not_in_sends,duplicate_in_results"


def test_bad_inputs_name_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="respondentId, mobileNumber or emailAddress"):
        sk.campaign_status(pd.DataFrame({"x": [1]}))
    results = pd.DataFrame({"respondentId": ["a"], "mobileNumber": ["447700900001"]})
    with pytest.raises(TypeError, match=r"sends\['wave1'\]: expected a BatchResult"):
        sk.campaign_status(results, sends=[42])
    with pytest.raises(ValueError, match=r"sends\['w'\]: missing column\(s\) \['outcome'"):
        sk.campaign_status(results, sends={"w": pd.DataFrame({"destination": ["1"]})})
    with pytest.raises(FileNotFoundError, match="no journal file"):
        sk.campaign_status(results, sends=tmp_path / "nope.sqlite")
    with pytest.raises(FileNotFoundError, match="no event store file"):
        sk.campaign_status(results, events=tmp_path / "nope.sqlite")
    with pytest.raises(ValueError, match=r"events: missing column\(s\)"):
        sk.campaign_status(results, events=pd.DataFrame({"type": ["Stop"]}))


def test_an_invitation_in_the_results_counts_as_a_contact_without_journals() -> None:
    results = pd.DataFrame(
        {
            "respondentId": ["a", "b", "c", "d"],
            "mobileNumber": ["447700900001", "447700900002", "447700900003", "447700900004"],
            "invited": [pd.Timestamp("2026-03-02 09:00", tz="UTC"), pd.NaT,
                        pd.Timestamp("2026-03-02 09:00", tz="UTC"), pd.NaT],
            "started": [pd.NaT, pd.NaT, pd.Timestamp("2026-03-02 10:00", tz="UTC"), pd.NaT],
            "completed": [pd.NaT, pd.NaT, pd.NaT, pd.Timestamp("2026-03-02 11:00", tz="UTC")],
        }
    )  # fmt: skip
    status = sk.campaign_status(results)
    assert status["invited"].tolist() == [True, False, True, True]  # completed implies invited
    assert status["status"].astype(str).tolist() == [
        "contacted", "not_contacted", "started", "completed"]  # fmt: skip
    assert status["contacts"].tolist() == [0, 0, 0, 0]  # messages come from journals only
    reminders = sk.plan_reminders(status, now=pd.Timestamp("2026-03-10", tz="UTC"))
    assert len(reminders) == 0  # no journal, no reminder: never contacted by surveykit
