"""The sandbox's controls: faults, the clock, simulated respondents, the journal, reset."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

import surveykit as sk
from surveykit.callbacks import listen
from surveykit.client import AsyncClient, Client, RetryPolicy
from surveykit.models import CallbackPayload
from surveykit.sandbox import DEFAULT_START, IN_PROCESS_URL, Sandbox

SOURCE = "447700900100"
MOBILE = "447700900123"


WAIT = 10.0  # seconds: a safety net for polls, never an assertion about speed


def until(condition: Callable[[], bool], timeout: float = WAIT) -> bool:
    """Poll ``condition`` every 20 ms until it holds; False when ``timeout`` passed first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def send(client: Client, destination: str = MOBILE, **options: object) -> str | None:
    return client.messages.send(destination=destination, source=SOURCE, message="Hi",
                                reply=True, **options).message_id


# ------------------------------------------------------------------ faults


@pytest.mark.parametrize("status", [429, 500, 503])
def test_status_fault_answers_without_processing(client: Client, sandbox: Sandbox,
                                                 status: int) -> None:
    sandbox.inject_fault("/v3.2/Message", method="POST", status=status)
    with pytest.raises(sk.APIStatusError) as info:
        send(client)
    assert info.value.status_code == status
    if status in (429, 503):
        assert info.value.response.headers["Retry-After"] == "1"
    assert sandbox.messages() == []
    (entry,) = sandbox.journal("request", path="/v3.2/Message")
    assert (entry.status, entry.fault) == (status, f"status-{status}")
    assert client.keywords.list()  # other routes are untouched


def test_fault_times_then_idempotent_requests_are_retried(sandbox: Sandbox) -> None:
    sandbox.inject_fault("/v3.2/Keyword", status=503, times=2, retry_after=0)
    with Client.sandbox(sandbox, max_retries=2) as c:
        assert c.keywords.list()
    statuses = [e.status for e in sandbox.journal("request", path="/v3.2/Keyword")]
    assert statuses == [503, 503, 200]
    assert sandbox.faults() == []


def test_fault_rate_is_seeded(sandbox: Sandbox) -> None:
    def hits(seed: int) -> list[int | None]:
        box = Sandbox(seed=seed)
        box.inject_fault("/v3.2/Webhook", status=500, rate=0.5)
        with Client.sandbox(box, max_retries=0) as c:
            for _ in range(12):
                with contextlib.suppress(sk.ServerError):
                    c.webhooks.list()
        return [e.status for e in box.journal("request")]

    first = hits(11)
    assert first == hits(11)
    assert 0 < first.count(500) < 12


def test_latency_fault_delays_but_answers(client: Client, sandbox: Sandbox) -> None:
    sandbox.inject_fault("/v3.2/Webhook", latency=0.01)
    assert client.webhooks.list()
    assert sandbox.faults()[0].hits == 1


def test_drop_after_processing_is_an_unknown_outcome_and_never_resent(sandbox: Sandbox) -> None:
    sandbox.inject_fault("/v3.2/Message", drop="after", times=1)
    with Client.sandbox(sandbox, max_retries=3) as c, pytest.raises(sk.OutcomeUnknownError):
        send(c)
    # The platform accepted it: exactly one message, and one request.
    assert len(sandbox.journal("message")) == 1
    (entry,) = sandbox.journal("request", path="/v3.2/Message")
    assert (entry.status, entry.fault) == (200, "drop-after")


def test_drop_before_processing_is_retried_and_sent_once(sandbox: Sandbox) -> None:
    sandbox.inject_fault("/v3.2/Message", drop="before", times=1)
    with Client.sandbox(sandbox, retry=RetryPolicy(max_retries=1, backoff_base=0.0)) as c:
        assert send(c)
    assert [e.fault for e in sandbox.journal("request", path="/v3.2/Message")] == [
        "drop-before", None]
    assert len(sandbox.messages()) == 1


async def test_drop_after_with_the_async_client(aclient: AsyncClient, sandbox: Sandbox) -> None:
    sandbox.inject_fault("/v3.2/Message", drop="after")
    with pytest.raises(sk.OutcomeUnknownError):
        await aclient.messages.send(destination=MOBILE, source=SOURCE, message="Hi",
                                    reply=False)
    assert len(sandbox.messages()) == 1


def test_clear_faults(client: Client, sandbox: Sandbox) -> None:
    sandbox.inject_fault(status=500)
    sandbox.clear_faults()
    assert client.webhooks.list()


@pytest.mark.parametrize("settings", [{"drop": "sideways"}, {"status": 200}, {"rate": 2.0},
                                      {}])
def test_bad_fault_settings_are_refused(sandbox: Sandbox, settings: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"drop|status|rate|needs"):
        sandbox.inject_fault("*", **settings)  # type: ignore[arg-type]


# ------------------------------------------------------------------ clock


def test_clock_starts_at_the_documented_time_and_only_moves_when_told(sandbox: Sandbox) -> None:
    assert sandbox.now() == DEFAULT_START == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    assert sandbox.now() == DEFAULT_START
    assert sandbox.advance(90) == DEFAULT_START + timedelta(seconds=90)
    with pytest.raises(ValueError, match="forward"):
        sandbox.advance(-1)


def test_scheduled_and_expiring_messages_happen_in_time_order(client: Client,
                                                               sandbox: Sandbox) -> None:
    late = send(client, when=sandbox.now() + timedelta(minutes=10))
    early = send(client, timeout=5)
    sandbox.advance(timedelta(hours=1))
    order = [(e.status, e.message_id) for e in sandbox.events("Receipt")]
    assert order == [("Sent", early), ("Delivered", early), ("Expired", early),
                     ("Sent", late), ("Delivered", late)]
    times = [e.timestamp for e in sandbox.events("Receipt")]
    assert times == sorted(times)


def test_realtime_requests_send_what_fell_due_without_advance() -> None:
    from surveykit.client import ASGIPortalTransport
    from surveykit.sandbox.http._app import SandboxApp
    from surveykit.sandbox.state import SandboxState

    # The app on a bare state: no Sandbox, so no ticker thread; only requests move things.
    state = SandboxState(realtime=True)
    token = next(user.token for user in state.users.values() if user.name == "admin")
    with httpx.Client(transport=ASGIPortalTransport(SandboxApp(state)), base_url=IN_PROCESS_URL,
                      headers={"Authorization": f"Basic {token}"}) as raw:
        when = state.now() + timedelta(seconds=0.2)
        sent = raw.post("/v3.2/Message", json={"destination": MOBILE, "source": SOURCE,
                                               "message": "Hi", "reply": False,
                                               "when": when.isoformat()})
        message = state.messages[sent.json()["MessageID"]]
        assert message.status == "Scheduled"
        assert until(lambda: state.now() > when)
        assert message.status == "Scheduled"  # real time passed, but nobody called in
        assert raw.get("/v3.2/Webhook").status_code == 200  # any request at all
        assert (message.status, message.sent_at) == ("Delivered", when)
        receipts = raw.get("/_sandbox/events", params={"type": "Receipt"}).json()
        assert [r["Status"] for r in receipts] == ["Sent", "Delivered"]


def test_realtime_reads_close_reply_windows_when_they_pass() -> None:
    with Sandbox(realtime=True) as box, Client.sandbox(box) as c:
        message_id = send(c, timeout=1)  # a one-minute reply window...
        sent_at = box.messages()[0].sent_at
        assert sent_at is not None
        box.advance(59.8)  # ...that closes 0.2 s of real time from now

        def expired() -> bool:
            return any(e.status == "Expired" for e in box.events("Receipt"))

        assert until(expired)
        expiry = next(e for e in box.events("Receipt") if e.status == "Expired")
        assert (expiry.message_id, expiry.timestamp) == (message_id, sent_at
                                                         + timedelta(minutes=1))
        assert not box.messages()[0].open_for_reply


def test_realtime_sends_what_falls_due_with_nobody_calling_in() -> None:
    # A receiver only waits: a background tick must send the held message on time.
    with listen() as listener, Sandbox(realtime=True) as box, Client.sandbox(box) as c:
        box.set_account_callback(listener.url)
        when = box.now() + timedelta(seconds=0.2)
        message_id = c.messages.send(destination=MOBILE, source=SOURCE, message="Hi",
                                     reply=False, when=when).message_id
        events = listener.wait_for(2, timeout=WAIT)  # no call to the sandbox meanwhile
        assert list(zip(events["status"], events["message_id"], strict=True)) == [
            ("Sent", message_id), ("Delivered", message_id)]
        assert box.messages()[0].sent_at == when


# ------------------------------------------------------------------ simulated respondents


def test_stop_then_a_send_to_that_number_is_blocked(client: Client, sandbox: Sandbox) -> None:
    send(client)
    event = sandbox.simulate_reply(MOBILE, "Stop please")
    assert event.type == "Stop" and event.inbound
    assert MOBILE in sandbox.stop_list()
    with pytest.raises(sk.SendRejectedError) as info:
        send(client)
    assert info.value.send_response.status == "Blocked"
    assert sandbox.simulate_reply(MOBILE, "UNSTOP").type == "Unstop"
    assert send(client)


@pytest.mark.parametrize(("text", "kind"), [("HELP", "Help"), ("info?", "Info"),
                                            ("nps 9", "Keyword"), ("winter", "Message"),
                                            ("Loved it", "Message")])
def test_inbound_classification(sandbox: Sandbox, text: str, kind: str) -> None:
    # WINTER's finishDate has passed: it no longer matches, so it is free text.
    assert sandbox.simulate_reply(MOBILE, text, to=SOURCE).type == kind


def test_keyword_reply_sends_the_keywords_response(sandbox: Sandbox) -> None:
    sandbox.simulate_reply("447700900170", "FEEDBACK", to=SOURCE)
    (auto,) = sandbox.messages()
    assert auto.destination == "447700900170" and auto.source == SOURCE
    assert auto.text.startswith("Thanks for getting in touch!")


def test_free_text_reply_is_a_message_event_and_a_survey_answer(client: Client,
                                                               sandbox: Sandbox) -> None:
    # Oliver Patel (447700900129) was invited to CSAT-SMS-2026 but has not answered.
    message_id = send(client, destination="447700900129", survey_id=4101)
    event = sandbox.simulate_reply("447700900129", " 4 ")
    assert (event.type, event.message_id, event.destination) == ("Message", message_id, SOURCE)
    payload = CallbackPayload.model_validate(event.payload())
    assert payload.inbound and payload.wants_reply and payload.source == "447700900129"
    respondent = next(r for r in sandbox.state.respondents.values()
                      if r.mobile_number == "447700900129")
    assert respondent.answers == {"Q1": "4"} and respondent.started == sandbox.now()


def test_simulate_answers_completes_a_respondent(sandbox: Sandbox) -> None:
    respondent_id = sandbox.simulate_answers("NPS-WA-Q1-2026", "12025550178",
                                             {"Q1": "9", "Q2": "Great app", "Q3": "Yes"})
    respondent = sandbox.state.respondents[respondent_id]
    assert respondent.completed == sandbox.now()
    generated = sandbox.simulate_answers("NPS-WA-Q1-2026")
    assert sandbox.state.respondents[generated].completed is not None
    with pytest.raises(KeyError, match="Q9"):
        sandbox.simulate_answers("NPS-WA-Q1-2026", "447700900201", {"Q9": "x"})


def test_generated_answers_are_seeded() -> None:
    def answers(seed: int) -> dict[str, str]:
        box = Sandbox(seed=seed)
        return box.state.respondents[box.simulate_answers("CSAT-SMS-2026")].answers

    assert answers(1) == answers(1)


def test_follow_link_counts_a_click(client: Client, sandbox: Sandbox) -> None:
    link = client.tinyurl.register("https://example.org/x")
    assert sandbox.follow_link(link) == "https://example.org/x"
    with pytest.raises(KeyError):
        sandbox.follow_link(sandbox.base_url + "/missing")


# ------------------------------------------------------------------ journal, reset


def test_journal_records_requests_without_the_token(client: Client, sandbox: Sandbox) -> None:
    send(client)
    client.webhooks.list()
    requests = sandbox.journal("request")
    assert [(e.method, e.path, e.status, e.user) for e in requests] == [
        ("POST", "/v3.2/Message", 200, "admin"), ("GET", "/v3.2/Webhook", 200, "admin")]
    assert requests[0].body["destination"] == MOBILE
    frame = sandbox.journal_frame()
    assert list(frame["kind"]) == ["request", "message", "request"]
    assert sandbox.admin_token not in frame.to_string()


def test_reset_restores_the_sample_data(client: Client, sandbox: Sandbox) -> None:
    send(client)
    client.keywords.delete("NPS")
    sandbox.advance(3600)
    sandbox.inject_fault(status=500)
    sandbox.reset()
    assert sandbox.messages() == [] and sandbox.journal() == [] and sandbox.faults() == []
    assert sandbox.now() == DEFAULT_START
    assert "NPS" in [k.keyword for k in client.keywords.list()]
    with Client.sandbox(Sandbox(seed=0)) as fresh:
        assert send(client) == send(fresh)  # the MessageID counter restarted too


def test_same_seed_same_calls_same_answers() -> None:
    def run() -> list[object]:
        box = Sandbox(seed=42)
        with Client.sandbox(box) as c:
            out: list[object] = [send(c), c.tinyurl.register("https://example.org/a"),
                                 c.messages.lookup("447700900123").message_id]
        out.append(box.state.respondents[box.simulate_answers("EVT-DDLIS-2026")].answers)
        return out

    assert run() == run()


# ------------------------------------------------------------------ persistence (in-process)


def test_sqlite_state_survives_a_new_sandbox(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    with Sandbox(db=db) as first, Client.sandbox(first) as c:
        message_id = send(c)
        c.keywords.create("Persist", response="kept")
        link = c.tinyurl.register("https://example.org/kept")
        c.data.import_records("CSAT-SMS-2026", [{"firstName": "Kept",
                                                 "mobileNumber": "447700900180"}])
        first.simulate_reply("447700900181", "STOP", to=SOURCE)
        first.simulate_answers("CSAT-SMS-2026", "447700900129", {"Q1": "5"})
        first.advance(600)
    with Sandbox(db=db) as second, Client.sandbox(second) as c:
        assert [m.message_id for m in second.messages()] == [message_id]
        assert "PERSIST" in [k.keyword for k in c.keywords.list()]
        assert second.follow_link(link) == "https://example.org/kept"
        assert "447700900181" in second.stop_list()
        assert second.now() == DEFAULT_START + timedelta(seconds=600)
        assert any(r.first_name == "Kept" for r in second.state.respondents.values())
        assert any(r.answers == {"Q1": "5"} for r in second.state.respondents.values())
        assert [e.kind for e in second.journal()][:2] == ["request", "message"]
        assert send(c) != message_id  # the counter carried on


# ------------------------------------------------------------------ control API over ASGI


def test_control_api_needs_the_admin_token(sandbox: Sandbox) -> None:
    from surveykit.client import ASGIPortalTransport

    with httpx.Client(transport=ASGIPortalTransport(sandbox.app),
                      base_url=sandbox.base_url) as raw:
        assert raw.get("/_sandbox/clock").status_code == 401
        restricted = {"Authorization": f"Basic {sandbox.restricted_token}"}
        assert raw.get("/_sandbox/clock", headers=restricted).status_code == 403
        admin = {"Authorization": f"Basic {sandbox.admin_token}"}
        assert raw.get("/_sandbox/clock", headers=admin).json() == {
            "now": "2026-03-02T09:00:00+00:00"}
        bad = raw.post("/_sandbox/faults", json={"drop": "sideways"}, headers=admin)
        assert bad.status_code == 400


# ------------------------------------------------------------------ embedding


def test_client_with_nothing_configured_runs_on_the_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SURVEYKIT_BASE_URL", raising=False)
    monkeypatch.delenv("SURVEYKIT_TOKEN", raising=False)
    with Client() as c:
        assert isinstance(c.embedded, Sandbox)
        assert c.base_url == "http://sandbox.localhost"
        assert send(c)
        assert len(c.embedded.journal("message")) == 1


def test_concurrent_sends_from_threads_get_unique_ids(sandbox: Sandbox) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> str | None:
        with Client.sandbox(sandbox) as c:
            return send(c, destination=f"4477009002{i:02d}")

    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(one, range(20)))
    assert len(set(ids)) == 20
    assert sorted(ids) == sorted(m.message_id for m in sandbox.messages())  # type: ignore[arg-type]
