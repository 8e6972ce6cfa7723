"""plan_reminders: who is reminded and why not; a reminder wave against the sandbox."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import surveykit as sk
from surveykit.campaign import REASONS, Reminders
from surveykit.campaign._status import COLUMNS
from surveykit.sandbox import Sandbox

SOURCE = "447700900999"
NOW = pd.Timestamp("2026-03-10T12:00:00Z")
WAIT = 30.0  # seconds: a safety net for waits, never an assertion about speed


def random_status(seed: int, n: int = 80) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        contacts = rng.choice([0, 1, 1, 2, 3, 4])
        last = NOW - pd.Timedelta(hours=rng.choice([1, 30, 47, 49, 100])) if contacts else pd.NaT
        rows.append(
            {
                "destination": rng.choice([f"4477009{i:05d}"] * 8 + [f"p{i}@example.org", None]),
                "channel": "SMS",
                "contacts": contacts,
                "first_contact": last,
                "last_contact": last,
                "last_outcome": "sent" if contacts else None,
                "last_wave": "wave1",
                "delivered": False,
                "clicked": False,
                "replied": False,
                "opted_out": rng.random() < 0.1,
                "invited": bool(contacts),
                "started": False,
                "completed": False,
                "status": rng.choice(
                    ["contacted"] * 5 + ["completed", "undeliverable", "started", "opted_out"]
                ),
                "sends": contacts,
                "events": 0,
                "flags": "",
            }
        )
    frame = pd.DataFrame(rows, index=pd.Index([f"r{i}" for i in range(n)], name="respondent"))
    frame["last_contact"] = pd.to_datetime(frame["last_contact"], utc=True)
    return frame[list(COLUMNS)]


def reason_by_hand(row: dict[str, Any], max_contacts: int, gap: pd.Timedelta) -> str:
    phone = isinstance(row["destination"], str) and row["destination"].isdigit()
    if row["status"] == "completed":
        return "completed"
    if row["status"] == "opted_out" or row["opted_out"]:
        return "opted out"
    if row["status"] == "undeliverable":
        return "undeliverable"
    if not phone:
        return "no address for the channel"
    if row["contacts"] == 0:
        return "never contacted"
    if row["contacts"] >= max_contacts:
        return "contact cap reached"
    if row["last_contact"] > NOW - gap:
        return "contacted too recently"
    return ""


@pytest.mark.parametrize("seed", range(6))
def test_reasons_match_a_hand_computation(seed: int) -> None:
    status = random_status(seed)
    plan = sk.plan_reminders(status, max_contacts=3, min_gap="48h", now=NOW)
    assert isinstance(plan, Reminders) and isinstance(plan, pd.DataFrame)
    want = {
        label: reason_by_hand(row, 3, pd.Timedelta("48h"))
        for label, row in status.to_dict("index").items()
    }
    assert sorted(plan.index) == sorted(k for k, v in want.items() if v == "")
    got = dict(zip(plan.excluded.index, plan.excluded["reason"].astype(str), strict=True))
    assert got == {k: v for k, v in want.items() if v}
    assert len(plan) + len(plan.excluded) == len(status), "every row in exactly one of them"
    assert plan["mobileNumber"].tolist() == status.loc[plan.index, "destination"].tolist()
    assert plan.summary.sum() == len(status) and list(plan.summary.index[1:]) == list(REASONS)
    assert isinstance(plan.head(3), Reminders) and plan.head(3).excluded is plan.excluded


def test_email_reminders_take_email_addresses() -> None:
    status = random_status(1)
    plan = sk.plan_reminders(status, min_gap="0h", now=NOW, channel="email")
    assert plan["emailAddress"].str.contains("@").all()
    assert "mobileNumber" not in plan.columns


def test_bad_arguments_are_named() -> None:
    status = random_status(0)
    with pytest.raises(ValueError, match="min_gap: 'soon'"):
        sk.plan_reminders(status, min_gap="soon")
    with pytest.raises(ValueError, match=r"now: .* no time zone"):
        sk.plan_reminders(status, now="2026-03-01 10:00")
    with pytest.raises(ValueError, match="max_contacts: expected"):
        sk.plan_reminders(status, max_contacts=0)
    with pytest.raises(ValueError, match=r"status: missing column\(s\) \['contacts'\]"):
        sk.plan_reminders(status.drop(columns="contacts"))


# -- a campaign against the sandbox ----------------------------------------------------


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=3) as box:
        box.add_generated_survey("GEN", 60)
        yield box


def requested(sandbox: Sandbox, after: int) -> list[str]:
    """Destinations of every send request the sandbox received after journal entry ``after``."""
    out = []
    for entry in sandbox.journal("request", path="/v3.2/Message", after=after):
        body = entry.body if isinstance(entry.body, dict) else {}
        out.append(str(body.get("destination") or body.get("Destination")))
    return out


def last_seq(sandbox: Sandbox) -> int:
    entries = sandbox.journal()
    return entries[-1].seq if entries else 0


def test_a_reminder_wave_never_reaches_the_wrong_people(sandbox: Sandbox, tmp_path: Path) -> None:
    client = sk.Client.sandbox(sandbox)
    optouts = sk.OptOutList(tmp_path / "optouts.sqlite")
    with sk.listen(opt_outs=optouts) as listener:
        sandbox.set_account_callback(listener.url)
        results = client.surveys.results("GEN")
        people = results.set_index("respondentId")[["mobileNumber", "firstName"]]
        wave1 = sk.send_batch(
            client,
            people,
            message="Hi {firstName}",
            source=SOURCE,
            journal=tmp_path / "wave1.sqlite",
            progress=False,
        )
        wave2 = sk.send_batch(
            client,
            people.iloc[:20],
            message="Hi again {firstName}",
            source=SOURCE,
            journal=tmp_path / "wave2.sqlite",
            progress=False,
        )
        open_people = results[results["completed"].isna()]
        early_stop = open_people["mobileNumber"].iloc[20:25].tolist()
        for number in early_stop:
            sandbox.simulate_reply(number, "STOP")
        sandbox.wait_for_deliveries(WAIT)
        listener.wait_for(len(sandbox.events()), timeout=WAIT)
        assert set(early_stop) <= set(optouts.frame["number"])

        status = sk.campaign_status(
            results,
            sends=[tmp_path / "wave1.sqlite", wave2],
            events=listener.events,
            opt_outs=optouts,
        )
        assert len(status) == len(results) and (status["flags"] == "").sum() > 0
        plan = sk.plan_reminders(status, max_contacts=2, min_gap="0h", results=results)
        assert len(plan) + len(plan.excluded) == len(status)
        # Two respondents reply STOP between planning and sending.
        late_stop = plan["mobileNumber"].iloc[:2].tolist()
        for number in late_stop:
            sandbox.simulate_reply(number, "STOP")
        sandbox.wait_for_deliveries(WAIT)
        listener.wait_for(len(sandbox.events()), timeout=WAIT)

        before = last_seq(sandbox)
        reminder = sk.send_batch(
            client,
            plan,
            message="Reminder, {firstName}",
            source=SOURCE,
            journal=tmp_path / "wave3.sqlite",
            opt_outs=optouts,
            progress=False,
        )
        sent_to = requested(sandbox, before)

    completed = set(results.loc[results["completed"].notna(), "mobileNumber"])
    capped = set(people["mobileNumber"].iloc[:20])
    assert sent_to, "the reminder wave sent something"
    assert not set(sent_to) & completed, "no completed respondent is reminded"
    assert not set(sent_to) & set(early_stop), "no opted-out respondent is reminded"
    assert not set(sent_to) & set(late_stop), "a STOP after planning still stops the row"
    assert not set(sent_to) & capped, "no capped respondent is reminded"
    assert len(sent_to) == len(set(sent_to)) == reminder.sent_now
    outcomes = reminder.frame["outcome"].astype(str)
    assert set(reminder.frame.loc[outcomes == "opted_out", "destination"]) == set(late_stop)
    assert reminder.summary.sum() == len(plan)
    assert wave1.sent_now == 60
    # Everyone is accounted for across the three waves.
    final = sk.campaign_status(results, sends=[wave1, wave2, reminder], opt_outs=optouts)
    assert final["sends"].sum() == 60 + 20 + len(plan)
    assert (
        final.loc[
            plan.index.difference(final.index[final["destination"].isin(late_stop)]), "contacts"
        ].min()
        >= 2
    )


def test_rerunning_the_same_reminder_sends_nothing_new(sandbox: Sandbox, tmp_path: Path) -> None:
    client = sk.Client.sandbox(sandbox)
    results = client.surveys.results("GEN")
    people = results.set_index("respondentId")[["mobileNumber"]]
    sk.send_batch(
        client,
        people,
        message="Hi",
        source=SOURCE,
        journal=tmp_path / "wave1.sqlite",
        progress=False,
    )

    def remind() -> Any:
        status = sk.campaign_status(results, sends=[tmp_path / "wave1.sqlite"])
        plan = sk.plan_reminders(status, min_gap="0h")
        return plan, sk.send_batch(
            client,
            plan,
            message="Reminder",
            source=SOURCE,
            journal=tmp_path / "wave2.sqlite",
            progress=False,
        )

    plan, first = remind()
    count = len(sandbox.messages())
    again_plan, again = remind()
    assert first.sent_now == len(plan) > 0
    assert again.sent_now == 0 and len(sandbox.messages()) == count
    assert again_plan.index.equals(plan.index)
    pd.testing.assert_series_equal(again.frame["message_id"], first.frame["message_id"])
