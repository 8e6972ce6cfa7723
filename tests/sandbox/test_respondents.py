"""Simulated respondents: seeded behaviours over the virtual clock, and a reminder wave."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import phonenumbers
import pytest
from phonenumbers import timezone as number_zones
from scipy import stats
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app
from surveykit.rules.optout_words import read_optout
from surveykit.sandbox import BEHAVIOURS, RespondentModel, Sandbox
from surveykit.sandbox.data._behaviour import OPT_OUTS_IN_WORDS, behaviour, stop_reply
from surveykit.sandbox.state._rules import STOP_WORDS
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

SOURCE = "447700900300"
WAIT = 30.0  # seconds: a safety net for waits, never an assertion about speed
DAY = 86_400


def numbers(n: int, start: int = 0) -> list[str]:
    return [f"447700{100_000 + i}" for i in range(start, start + n)]


def people_of(results: pd.DataFrame) -> pd.DataFrame:
    return results.set_index("respondentId")[["mobileNumber", "firstName"]]


def by_behaviour(sandbox: Sandbox, results: pd.DataFrame) -> dict[str, set[str]]:
    groups: dict[str, set[str]] = {name: set() for name in BEHAVIOURS}
    for number in results["mobileNumber"]:
        groups[sandbox.respondent_behaviour(number)].add(number)
    return groups


def done(results: pd.DataFrame, column: str = "completed") -> set[str]:
    return set(results.loc[results[column].notna(), "mobileNumber"])


# -- the model --------------------------------------------------------------------------


def test_behaviour_depends_on_seed_and_address_only() -> None:
    many = numbers(400)
    with Sandbox(seed=11, respondents=True) as a, Sandbox(seed=11, respondents=True) as b:
        first = [a.respondent_behaviour(n) for n in many]
        assert first == [b.respondent_behaviour(n) for n in reversed(many)][::-1]
        assert a.respondent_behaviour("+" + many[0]) == first[0], "a leading + is the same number"
    with Sandbox(seed=12, respondents=True) as c:
        other = [c.respondent_behaviour(n) for n in many]
    assert other != first, "another seed draws other behaviours"
    model = RespondentModel(seed=99)
    with Sandbox(seed=1, respondents=model) as d, Sandbox(seed=2, respondents=model) as e:
        assert [d.respondent_behaviour(n) for n in many] == [
            e.respondent_behaviour(n) for n in many
        ]


@pytest.mark.parametrize(
    "proportions",
    [
        None,
        {"answer_first": 0.3, "answer_after_reminder": 0.3, "never": 0.1, "stop": 0.2,
         "undeliverable": 0.1},
    ],
)  # fmt: skip
def test_behaviours_come_in_the_model_proportions(proportions: dict[str, float] | None) -> None:
    model = RespondentModel.of(proportions if proportions is not None else True)
    assert model is not None
    n = 6000
    counts = Counter(behaviour(model, 5, number) for number in numbers(n))
    assert set(counts) <= set(BEHAVIOURS)
    for name, share in model.proportions().items():
        # Each count is a binomial draw: a two-sided exact test must not reject it.
        assert stats.binomtest(counts[name], n, share).pvalue > 1e-4, (name, counts[name], n)
    assert counts.total() == n


def test_a_partial_mapping_gives_zero_to_the_rest_and_bad_models_are_named() -> None:
    model = RespondentModel.of({"answer_first": 0.5, "never": 0.5})
    assert model is not None and model.stop == 0 and model.undeliverable == 0
    assert {behaviour(model, 0, n) for n in numbers(300)} == {"answer_first", "never"}
    assert RespondentModel.of(None) is None and RespondentModel.of(False) is None
    with pytest.raises(ValueError, match=r"add up to 1\.1, not 1"):
        RespondentModel(answer_first=0.55)
    with pytest.raises(ValueError, match=r"never: expected a proportion from 0 to 1, got 1\.1"):
        RespondentModel.of({"never": 1.1, "stop": -0.1, "answer_first": 0})
    with pytest.raises(ValueError, match=r"respondents: unknown fields \['answer'\]"):
        RespondentModel.of({"answer": 1})
    with pytest.raises(ValueError, match="max_delay: expected at least min_delay"):
        RespondentModel(min_delay=600, max_delay=60)
    with pytest.raises(ValueError, match="respondents: the sandbox does not simulate"):
        Sandbox().respondent_behaviour("447700100000")
    assert RespondentModel.from_spec("answer_first=0.5,never=0.5,max_delay=600").max_delay == 600
    with pytest.raises(ValueError, match="never: expected a number, got 'lots'"):
        RespondentModel.from_spec("answer_first=0.5,never=lots")


# -- a campaign survey ------------------------------------------------------------------


def test_a_campaign_survey_has_valid_uninvited_numbers_in_three_countries() -> None:
    with Sandbox(seed=3) as sandbox:
        sandbox.add_campaign_survey("CAMP", 90)
        results = sk.Client.sandbox(sandbox).surveys.results("CAMP")
    assert len(results) == 90 and results["mobileNumber"].is_unique
    assert results[["invited", "started", "completed"]].isna().all().all()
    regions = Counter()
    for number in results["mobileNumber"]:
        parsed = phonenumbers.parse("+" + number)
        assert phonenumbers.is_valid_number(parsed), number
        regions[phonenumbers.region_code_for_number(parsed)] += 1
    assert regions == {"GB": 30, "AU": 30, "US": 30}
    us = [n for n in results["mobileNumber"] if n.startswith("1")]
    zones = {number_zones.time_zones_for_number(phonenumbers.parse("+" + n))[0] for n in us}
    assert len(zones) >= 3, "US numbers spread over several time zones"
    with Sandbox(seed=3) as again:
        again.add_campaign_survey("CAMP", 90)
        same = sk.Client.sandbox(again).surveys.results("CAMP")
    assert same["mobileNumber"].tolist() == results["mobileNumber"].tolist()


def test_campaign_respondents_round_trip_through_the_import() -> None:
    with Sandbox(seed=8) as sandbox:
        sandbox.add_campaign_survey("CAMP", 30)
        client = sk.Client.sandbox(sandbox)
        results = client.surveys.results("CAMP")
        plan = sk.build_import_list(results[["firstName", "lastName", "mobileNumber"]])
        assert len(plan.rejected) == 0
        outcome = sk.import_frame(
            client, "CAMP", results[["firstName", "lastName", "mobileNumber"]], progress=False
        )
        assert (outcome["status"].astype(str) == "Success").all(), outcome
        assert len(client.surveys.results("CAMP")) == 30, "imported again: updated, not added"


def test_bad_campaign_surveys_are_named() -> None:
    with Sandbox() as sandbox:
        with pytest.raises(ValueError, match="countries: unknown country 'XX'"):
            sandbox.add_campaign_survey("C1", 3, countries=["GB", "XX"])
        with pytest.raises(ValueError, match="rows: 1500 respondents need 500 numbers in AU"):
            sandbox.add_campaign_survey("C1", 1500)
        sandbox.add_campaign_survey("C1", 3)
        with pytest.raises(ValueError, match="reference: a survey 'C1' exists already"):
            sandbox.add_campaign_survey("c1", 3, survey_id=9999)
        with pytest.raises(ValueError, match="survey_id: 9101 is the id of survey 'C1'"):
            sandbox.add_campaign_survey("C2", 3)


# -- over the clock ----------------------------------------------------------------------


def test_off_by_default_nothing_changes() -> None:
    with Sandbox(seed=3) as sandbox:
        sandbox.add_campaign_survey("CAMP", 60)
        client = sk.Client.sandbox(sandbox)
        results = client.surveys.results("CAMP")
        for number in results["mobileNumber"]:
            client.messages.send(destination=number, source=SOURCE, message="Hi", reply=True)
        sandbox.advance(30 * DAY)
        after = client.surveys.results("CAMP")
        statuses = Counter(e.status for e in sandbox.events("Receipt"))
    assert sandbox.pending_respondent_actions() == []
    assert after[["started", "completed"]].isna().all().all()
    assert statuses == {"Sent": 60, "Delivered": 60, "Expired": 60}
    with Sandbox(seed=3) as fresh:
        assert sandbox.stop_list() == fresh.stop_list()


def test_answers_appear_only_once_the_clock_passes_their_time() -> None:
    with Sandbox(seed=21, respondents=True) as sandbox:
        sandbox.add_campaign_survey("CAMP", 120)
        client = sk.Client.sandbox(sandbox)
        results = client.surveys.results("CAMP")
        start = sandbox.now()
        for number in results["mobileNumber"]:
            client.messages.send(
                destination=number, source=SOURCE, message="Hi", reply=True, survey_id=9101
            )
        planned = {a.address: a.due for a in sandbox.pending_respondent_actions()
                   if a.kind == "start"}  # fmt: skip
        groups = by_behaviour(sandbox, results)
        assert set(planned) == groups["answer_first"]
        assert all(start < due <= start + timedelta(hours=8) for due in planned.values())
        seen: set[str] = set()
        for step in range(1, 10):
            sandbox.advance(3600)
            now = sandbox.now()
            current = client.surveys.results("CAMP")
            started = done(current, "started")
            assert started == {a for a, due in planned.items() if due <= now}, step
            assert seen <= started
            seen = started
        final = client.surveys.results("CAMP").set_index("mobileNumber")
    assert seen == groups["answer_first"]
    for number, due in planned.items():
        row = final.loc[number]
        assert row["started"] == due, "started at the planned time, not when the clock moved"
        assert due < row["completed"] <= due + timedelta(minutes=10)
        assert row["invited"] == start and row["sortOrder"] == 4
        assert row[["Q1", "Q2", "Q3", "Q4"]].notna().all()
    assert final.loc[list(groups["never"]), "started"].isna().all()


def test_undeliverable_numbers_get_failed_receipts_and_email_too() -> None:
    with Sandbox(seed=2, respondents=True) as sandbox:
        sandbox.add_campaign_survey("CAMP", 80)
        client = sk.Client.sandbox(sandbox)
        results = client.surveys.results("CAMP")
        for number in results["mobileNumber"]:
            client.messages.send(destination=number, source=SOURCE, message="Hi", reply=True)
        failed = {e.destination for e in sandbox.events("Receipt") if e.status == "Failed"}
        assert failed == by_behaviour(sandbox, results)["undeliverable"] != set()
        address = next(
            f"person{i}@example.org"
            for i in range(500)
            if sandbox.respondent_behaviour(f"person{i}@example.org") == "undeliverable"
        )
        sent = client.messages.send_email(
            to=address, from_="surveys", subject="Survey", content="Hello"
        )
        receipts = [e.status for e in sandbox.events("Receipt") if e.message_id == sent.message_id]
    assert receipts == ["Sent", "Failed"]


def test_reset_keeps_the_model_and_pending_actions_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "state.sqlite"
    with Sandbox(seed=4, db=db, respondents=True) as sandbox:
        sandbox.add_campaign_survey("CAMP", 40)
        client = sk.Client.sandbox(sandbox)
        numbers_ = client.surveys.results("CAMP")["mobileNumber"].tolist()
        for number in numbers_:
            client.messages.send(destination=number, source=SOURCE, message="Hi", reply=True)
        pending = [(a.due, a.kind, a.address) for a in sandbox.pending_respondent_actions()]
        assert pending
    with Sandbox(seed=4, db=db, respondents=True) as again:
        assert [(a.due, a.kind, a.address) for a in again.pending_respondent_actions()] == pending
        assert again.respondent_contacts(numbers_[0]) == 1
        again.advance(DAY)
        results = sk.Client.sandbox(again).surveys.results("CAMP")
        assert done(results) == {a for _, kind, a in pending if kind == "start"}
        assert {a for _, kind, a in pending if kind == "stop"} <= set(again.stop_list())
        again.reset()
        assert again.respondent_model() == RespondentModel()
        assert again.pending_respondent_actions() == []


# -- the campaign loop -------------------------------------------------------------------


def run_campaign(client: Any, sandbox: Sandbox, tmp_path: Path) -> dict[str, Any]:
    """Wave 1, two days, a reminder wave to the non-responders, two days: the statuses."""
    optouts = sk.OptOutList(tmp_path / "optouts.sqlite")
    with sk.listen(opt_outs=optouts) as listener:
        sandbox.set_account_callback(listener.url)
        results = client.surveys.results("CAMP")
        wave1 = sk.send_batch(
            client,
            people_of(results),
            message="Hi {firstName}, how did we do? Reply 1-5",
            source=SOURCE,
            reply=True,
            journal=tmp_path / "wave1.sqlite",
            progress=False,
        )
        sandbox.advance(2 * DAY)
        sandbox.wait_for_deliveries(WAIT)
        listener.wait_for(len(sandbox.events()), timeout=WAIT)
        after1 = client.surveys.results("CAMP")
        status1 = sk.campaign_status(after1, sends=[wave1], events=listener.events)
        plan = sk.plan_reminders(status1, min_gap="0h", results=after1)
        reminder = sk.send_batch(
            client,
            plan,
            message="Reminder, {firstName}: reply 1-5",
            source=SOURCE,
            reply=True,
            journal=tmp_path / "wave2.sqlite",
            opt_outs=optouts,
            progress=False,
        )
        sandbox.advance(2 * DAY)
        sandbox.wait_for_deliveries(WAIT)
        events = listener.wait_for(len(sandbox.events()), timeout=WAIT)
        after2 = client.surveys.results("CAMP")
        status2 = sk.campaign_status(after2, sends=[wave1, reminder], events=events)
        again = sk.OptOutList(tmp_path / "again.sqlite")
        applied = again.update(events)
    return {
        "results": results,
        "status1": status1,
        "status2": status2,
        "plan": plan,
        "events": events,
        "optouts": optouts,
        "again": again,
        "applied": applied,
    }


def check_campaign(sandbox: Sandbox, run: dict[str, Any]) -> None:
    results, status1, status2 = run["results"], run["status1"], run["status2"]
    groups = by_behaviour(sandbox, results)
    assert all(groups.values()), {name: len(group) for name, group in groups.items()}
    number_of = results.set_index("respondentId")["mobileNumber"]

    def numbers_with(status: pd.DataFrame, value: str) -> set[str]:
        return set(number_of[status.index[status["status"] == value]])

    assert numbers_with(status1, "completed") == groups["answer_first"]
    assert numbers_with(status1, "opted_out") == groups["stop"]
    assert numbers_with(status1, "undeliverable") == groups["undeliverable"]
    reminded = set(run["plan"]["mobileNumber"])
    assert reminded == groups["answer_after_reminder"] | groups["never"]
    reasons = run["plan"].excluded["reason"].astype(str)
    assert Counter(reasons) == {
        "completed": len(groups["answer_first"]),
        "opted out": len(groups["stop"]),
        "undeliverable": len(groups["undeliverable"]),
    }
    assert (
        numbers_with(status2, "completed")
        == groups["answer_first"] | groups["answer_after_reminder"]
    )
    rate1 = (status1["status"] == "completed").mean()
    rate2 = (status2["status"] == "completed").mean()
    assert rate2 > rate1, "the reminder wave raises completion"
    # STOP replies reached the listener as callbacks and the opt-out list.
    events = run["events"]
    stops = set(events.loc[events["type"].astype(str) == "Stop", "source"].astype(str))
    assert stops == groups["stop"]
    assert set(run["optouts"].frame["number"]) >= groups["stop"]
    assert set(run["again"].frame["number"]) == groups["stop"] and run["applied"] > 0
    failed = events[(events["type"].astype(str) == "Receipt")
                    & (events["status"].astype(str) == "Failed")]  # fmt: skip
    assert set(failed["destination"].astype(str)) == groups["undeliverable"]


def test_a_reminder_wave_raises_completion_in_process(tmp_path: Path) -> None:
    with Sandbox(seed=6, respondents=True) as sandbox:
        sandbox.add_campaign_survey("CAMP", 150)
        client = sk.Client.sandbox(sandbox)
        run = run_campaign(client, sandbox, tmp_path)
        check_campaign(sandbox, run)
        assert run["status2"]["contacts"].max() == 2


class ServedControls:
    """The few Sandbox controls the campaign needs, over the served control API."""

    def __init__(self, client: Any, base_url: str, token: str) -> None:
        import httpx

        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Basic {token}"})

    def _ok(self, response: Any) -> Any:
        assert response.status_code == 200, response.text
        return response.json()

    def set_account_callback(self, url: str) -> None:
        self._ok(self.http.post("/_sandbox/callback", json={"Url": url}))

    def advance(self, seconds: float) -> None:
        self._ok(self.http.post("/_sandbox/clock/advance", json={"seconds": seconds}))

    def wait_for_deliveries(self, timeout: float) -> None:
        self._ok(self.http.post("/_sandbox/deliveries/wait", json={"timeout": timeout}))

    def events(self) -> list[Any]:
        return list(self._ok(self.http.get("/_sandbox/events")))

    def respondent_behaviour(self, address: str) -> str:
        return str(self._ok(self.http.get(f"/_sandbox/respondents/{address}"))["behaviour"])


@pytest.fixture
def served() -> Iterator[ServedSandbox]:
    with serve_sandbox("--seed", "6", "--respondents", "default", "--campaign", "CAMP:150") as s:
        yield s


def test_a_reminder_wave_raises_completion_over_http(served: ServedSandbox, tmp_path: Path) -> None:
    client = sk.Client(base_url=served.base_url, token=served.token)
    controls = ServedControls(client, served.base_url, served.token)
    try:
        run = run_campaign(client, controls, tmp_path)  # type: ignore[arg-type]
        check_campaign(controls, run)  # type: ignore[arg-type]
        # The same seed in-process draws the same respondents and the same behaviours.
        with Sandbox(seed=6, respondents=True) as local:
            local.add_campaign_survey("CAMP", 150)
            numbers_ = run["results"]["mobileNumber"]
            local_results = sk.Client.sandbox(local).surveys.results("CAMP")
            assert local_results["mobileNumber"].tolist() == numbers_.tolist()
            assert [local.respondent_behaviour(n) for n in numbers_] == [
                controls.respondent_behaviour(n) for n in numbers_
            ]
    finally:
        controls.http.close()
        client.close()


def test_the_control_api_sets_shows_and_refuses_models(served: ServedSandbox) -> None:
    import httpx

    headers = {"Authorization": f"Basic {served.token}"}
    with httpx.Client(base_url=served.base_url, headers=headers) as http:
        shown = http.get("/_sandbox/respondents").json()
        assert shown == RespondentModel().wire()
        bad = http.post("/_sandbox/respondents", json={"answerFirst": 0.9, "never": 0.3})
        assert bad.status_code == 400 and "add up to 1.2, not 1" in bad.json()["detail"]
        bad = http.post("/_sandbox/respondents", json={"answer_first": 1})
        assert bad.status_code == 400 and "unknown fields: ['answer_first']" in bad.json()["detail"]
        model = http.post("/_sandbox/respondents", json={"answerFirst": 0.5, "never": 0.5})
        assert model.json()["answerFirst"] == 0.5 and model.json()["stop"] == 0
        assert http.delete("/_sandbox/respondents").json() is None
        off = http.get("/_sandbox/respondents/447700100000")
        assert off.status_code == 400 and "does not simulate" in off.json()["detail"]
        made = http.post(
            "/_sandbox/surveys/campaign",
            json={"reference": "UK-ONLY", "rows": 5, "countries": ["GB"], "surveyId": 9200},
        )
        assert made.status_code == 200 and made.json()["surveyId"] == 9200
        wrong = http.post("/_sandbox/surveys/campaign", json={"reference": "X", "rows": -1})
        assert wrong.status_code == 400 and wrong.json()["detail"].startswith("rows:")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--respondents", "answer_first=0.7"], r"--respondents: .*add up to 0\.7, not 1"),
        (["--respondents", "stop"], "--respondents: expected NAME=VALUE pairs"),
        (["--campaign", "CAMP"], "--campaign: expected REF:ROWS"),
        (["--campaign", "CAMP:2000"], "--campaign: rows: 2000 respondents need 667 numbers in AU"),
    ],
)
def test_serve_options_are_checked(args: list[str], message: str) -> None:
    import re

    result = CliRunner().invoke(app, ["sandbox", "serve", "--port", "0", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(message, lines[0]), lines


def test_on_a_realtime_clock_a_stop_falls_due_by_itself() -> None:
    model = {"stop": 1.0, "min_delay": 1, "max_delay": 1}
    with Sandbox(seed=1, realtime=True, respondents=model) as sandbox, sk.listen() as listener:
        sandbox.set_account_callback(listener.url)
        client = sk.Client.sandbox(sandbox)
        client.messages.send(destination="447400123456", source=SOURCE, message="Hi", reply=True)
        # Nobody calls the sandbox again: the ticker lets the STOP happen a second later.
        events = listener.wait_for(3, timeout=WAIT)
        client.close()
    assert events["type"].astype(str).tolist() == ["Receipt", "Receipt", "Stop"]
    assert "447400123456" in sandbox.stop_list()


def test_a_few_stop_respondents_opt_out_in_words(tmp_path: Path) -> None:
    model = {"stop": 1.0, "min_delay": 60, "max_delay": 60}
    people = [*numbers(60), "33639980001", "33639980002", "33639980003"]
    optouts = sk.OptOutList(tmp_path / "optouts.sqlite")
    with (
        Sandbox(seed=3, respondents=model) as sandbox,
        sk.listen(db=tmp_path / "e.sqlite", opt_outs=optouts) as listener,
    ):
        sandbox.set_account_callback(listener.url)
        client = sk.Client.sandbox(sandbox)
        for number in people:
            client.messages.send(destination=number, source=SOURCE, message="Hi", reply=True)
        sandbox.advance(120)
        sandbox.wait_for_deliveries(WAIT)
        client.close()
        events = listener.wait_for(len(people) * 3, timeout=WAIT)
    inbound = events[events["type"].astype(str).isin(["Stop", "Message"])]
    in_words = inbound[inbound["type"].astype(str) == "Message"]
    assert 1 <= len(in_words) <= len(people) // 4, "rarely, and never for everyone"
    assert not set(in_words["source"]) & set(sandbox.stop_list()), "the platform knows STOP only"
    assert set(optouts.frame["number"]) == set(people), "every opt-out reached the list"
    reasons = optouts.frame.set_index("number").loc[list(in_words["source"]), "reason"]
    assert reasons.str.startswith("opt-out in words").all()
    with Sandbox(seed=3, respondents=model) as again:  # deterministic with the seed
        client = sk.Client.sandbox(again)
        for number in people:
            client.messages.send(destination=number, source=SOURCE, message="Hi", reply=True)
        again.advance(120)
        client.close()
        texts = [e.payload().get("Message") for e in again.events("Message")]
    assert sorted(texts) == sorted(in_words["message"].astype(str))


def test_opt_outs_in_words_are_rare_and_in_the_number_s_language() -> None:
    french = [f"336399{80000 + i}" for i in range(400)]
    english = numbers(400)
    said = {n: stop_reply(5, n) for n in [*french, *english]}
    in_words = {n: text for n, text in said.items() if text != "STOP"}
    assert 0.05 < len(in_words) / len(said) < 0.15
    for number, text in in_words.items():
        language = "fr" if number.startswith("33") else "en"
        assert text in OPT_OUTS_IN_WORDS[language]
        reading = read_optout(text)
        assert reading is not None and reading.verdict == "opt_out", text
        assert text.split()[0].upper() not in STOP_WORDS, "an inbound Message, not a Stop"
    assert said == {n: stop_reply(5, n) for n in said}, "the same with the same seed"
