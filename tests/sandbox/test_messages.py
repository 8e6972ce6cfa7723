"""POST /v3.2/Message, SendEmail and Lookup in the sandbox, through the real client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import surveykit as sk
from surveykit.client import AsyncClient, Client
from surveykit.models import SendResponse, Window
from surveykit.sandbox import MAGIC_NUMBERS, Sandbox

SOURCE = "447700900100"
MOBILE = "447700900123"
LANDLINE = "442079460123"


def send(client: Client, **options: object) -> SendResponse:
    fields = {"destination": MOBILE, "source": SOURCE, "message": "How did we do?",
              "reply": True, **options}
    return client.messages.send(**fields)


# ------------------------------------------------------------------ sending


def test_send_returns_an_ms_message_id_and_journals_it(client: Client, sandbox: Sandbox) -> None:
    first = send(client)
    second = send(client)
    assert first.status == "Sent"
    assert first.message_id is not None and first.message_id.startswith("MS")
    assert first.message_id[2:].isdigit()
    assert first.message_id != second.message_id
    sent = sandbox.journal("message")
    assert [e.message_id for e in sent] == [first.message_id, second.message_id]
    assert sent[0].destination == MOBILE and sent[0].text == "How did we do?"


def test_message_ids_are_deterministic_per_seed() -> None:
    def ids(seed: int) -> list[str | None]:
        with Client.sandbox(Sandbox(seed=seed)) as c:
            return [send(c).message_id for _ in range(3)]

    assert ids(5) == ids(5)
    assert ids(5) != ids(6)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        pytest.param({"destination": SOURCE}, "destination", id="same-as-source"),
        pytest.param({"type": 1, "source": "Brightwtr", "reply": False}, "source",
                     id="branded-on-whatsapp"),
        pytest.param({"message": "x" * 1600}, "message", id="sms-too-long"),
    ],
)
def test_invalid_sends_are_400_naming_the_field(
    client: Client, sandbox: Sandbox, options: dict[str, object], field: str
) -> None:
    with pytest.raises(sk.BadRequestError) as info:
        send(client, **options)
    assert not isinstance(info.value, sk.SendRejectedError)
    assert field in info.value.body["errors"]
    assert sandbox.messages() == []


def test_raw_rules_the_client_would_refuse_are_400(sandbox: Sandbox) -> None:
    # The client validates first; the sandbox must refuse the same on its own.
    import httpx

    headers = {"Authorization": f"Basic {sandbox.admin_token}"}
    cases = {
        "empty message": {"message": ""},
        "branded with reply": {"source": "Brightwater", "reply": True},
        "branded too long": {"source": "BrightwaterEnergy", "reply": False},
        "destination with +": {"destination": "+447700900123"},
        "impossible number": {"destination": "4470"},
        "no country code": {"destination": "999123456789"},
    }
    with Client.sandbox(sandbox) as c:
        transport = c._http._transport
        with httpx.Client(transport=transport, base_url=sandbox.base_url) as raw:
            for name, change in cases.items():
                body = {"source": SOURCE, "destination": MOBILE, "message": "Hi", "reply": True,
                        **change}
                response = raw.post("/v3.2/Message", json=body, headers=headers)
                assert response.status_code == 400, name
                assert response.json()["errors"], name
    assert sandbox.messages() == []


def test_landline_with_lookup_is_refused_without_a_callback(client: Client) -> None:
    with pytest.raises(sk.SendRejectedError) as info:
        send(client, destination=LANDLINE, lookup=True)
    rejected = info.value.send_response
    assert (rejected.message_id, rejected.status, rejected.reachable, rejected.number_type) == (
        "Unknown", "Reachable", True, "Landline")


def test_landline_with_an_account_callback_is_200_and_a_lookup_event(
    client: Client, sandbox: Sandbox
) -> None:
    sandbox.set_account_callback("https://hooks.example.com/cb")
    answer = send(client, destination=LANDLINE, lookup=True)
    assert answer.message_id == "Unknown" and answer.number_type == "Landline"
    (event,) = sandbox.events("Lookup")
    assert event.destination == LANDLINE and event.callback_urls == ["https://hooks.example.com/cb"]


def test_landline_without_lookup_is_sent_and_fails_delivery(
    client: Client, sandbox: Sandbox
) -> None:
    answer = send(client, destination=LANDLINE)
    assert answer.created
    statuses = [e.status for e in sandbox.events("Receipt") if e.message_id == answer.message_id]
    assert statuses == ["Sent", "Failed"]


@pytest.mark.parametrize("number", ["447700900903", "447700900451"], ids=["blocked", "stop-list"])
def test_blocked_and_stop_listed_numbers_are_refused(
    client: Client, sandbox: Sandbox, number: str
) -> None:
    with pytest.raises(sk.SendRejectedError) as info:
        send(client, destination=number)
    rejected = info.value.send_response
    assert (rejected.message_id, rejected.status, rejected.reachable) == ("Unknown", "Blocked",
                                                                          False)
    assert sandbox.messages() == []


def test_problem_sending_is_400_with_status_failed(client: Client) -> None:
    with pytest.raises(sk.SendRejectedError) as info:
        send(client, destination="447700900904")
    assert info.value.send_response.status == "Failed"


def test_test_mode_checks_routing_and_sends_nothing(client: Client, sandbox: Sandbox) -> None:
    answer = send(client, test=True, lookup=True)
    assert answer.message_id == "Unknown" and answer.status == "Sent"
    assert answer.number_type == "Mobile" and answer.carrier == "Vodafone UK"
    assert sandbox.messages() == [] and sandbox.journal("message") == []
    with pytest.raises(sk.SendRejectedError):
        send(client, test=True, destination="447700900903")


def test_lookup_fills_carrier_and_number_type(client: Client) -> None:
    answer = send(client, lookup=True, destination="33639981234")
    assert (answer.carrier, answer.reachable, answer.number_type) == ("SFR", True, "Mobile")
    plain = send(client)
    assert (plain.carrier, plain.number_type) == ("Unknown", "Unknown")


# ------------------------------------------------------------------ scheduling


def test_when_holds_the_message_until_the_clock_reaches_it(
    client: Client, sandbox: Sandbox
) -> None:
    later = sandbox.now() + timedelta(hours=2)
    answer = send(client, when=later)
    (message,) = sandbox.messages()
    assert message.status == "Scheduled" and message.scheduled_for == later
    assert sandbox.events("Receipt") == []
    sandbox.advance(timedelta(hours=1, minutes=59))
    assert sandbox.messages()[0].status == "Scheduled"
    sandbox.advance(60)
    assert sandbox.messages()[0].status == "Delivered"
    assert sandbox.messages()[0].sent_at == later
    assert [e.message_id for e in sandbox.events("Receipt")] == [answer.message_id] * 2


def test_window_sends_at_the_first_allowed_time(client: Client, sandbox: Sandbox) -> None:
    # The clock starts on Monday 09:00 UTC; a weekend window opens Saturday 10:00.
    send(client, window=[Window(from_="10:00", to="12:00", days=[6, 7])])
    (message,) = sandbox.messages()
    assert message.scheduled_for == datetime(2026, 3, 7, 10, 0, tzinfo=UTC)
    sandbox.advance(timedelta(days=5))  # Saturday 09:00: not yet
    assert sandbox.messages()[0].status == "Scheduled"
    sandbox.advance(timedelta(hours=1))
    assert sandbox.messages()[0].status == "Delivered"


def test_window_open_now_sends_immediately(client: Client, sandbox: Sandbox) -> None:
    send(client, window=[Window(from_="08:00", to="17:00", days=[1, 2, 3, 4, 5])])
    assert sandbox.messages()[0].status == "Delivered"


def test_reply_timeout_expires_when_the_clock_passes_it(
    client: Client, sandbox: Sandbox
) -> None:
    answer = send(client, timeout=30)
    sandbox.advance(timedelta(minutes=31))
    (expired,) = [e for e in sandbox.events("Receipt") if e.status == "Expired"]
    assert expired.message_id == answer.message_id
    event = sandbox.simulate_reply(MOBILE, "Great, thanks")
    assert event.message_id == "Unknown"  # no open conversation any more


# ------------------------------------------------------------------ email


def email(client: Client, **options: object) -> SendResponse:
    fields = {"to": "ana.souza@example.org", "from_": "surveys", "subject": "Your feedback",
              "content": "<p>Tell us how we did</p>", **options}
    return client.messages.send_email(**fields)


def test_email_is_sent_with_token_and_request_metadata(client: Client, sandbox: Sandbox) -> None:
    answer = email(client, metadata={"campaign": "spring"})
    assert answer.created and answer.status == "Sent"
    assert (answer.carrier, answer.reachable, answer.number_type) == ("Unknown", True, "Unknown")
    (message,) = sandbox.messages(channel="Email")
    assert message.subject == "Your feedback"
    assert message.source == "surveys@mail.brightwater.example.com"
    assert message.metadata == [{"tokenName": "sandbox-admin"}, {"campaign": "spring"}]
    assert [e.kind for e in sandbox.journal() if e.kind != "request"] == ["email"]


def test_email_when_holds_it_until_the_clock_reaches_it(client: Client, sandbox: Sandbox) -> None:
    later = sandbox.now() + timedelta(hours=3)
    answer = email(client, when=later)
    assert answer.status == "Sent"  # handed to routing, as for a message
    (message,) = sandbox.messages(channel="Email")
    assert (message.status, message.scheduled_for, message.sent_at) == ("Scheduled", later, None)
    (entry,) = sandbox.journal("email")
    assert entry.body is not None and entry.body["scheduledFor"] == "2026-03-02T12:00:00+00:00"
    assert sandbox.events("Receipt") == []
    sandbox.advance(timedelta(hours=2, minutes=59))
    assert sandbox.messages(channel="Email")[0].status == "Scheduled"
    sandbox.advance(60)
    message = sandbox.messages(channel="Email")[0]
    assert (message.status, message.sent_at) == ("Delivered", later)
    receipts = sandbox.events("Receipt")
    assert [(e.status, e.message_id, e.timestamp) for e in receipts] == [
        ("Sent", answer.message_id, later), ("Delivered", answer.message_id, later)]


def test_email_test_mode_creates_nothing(client: Client, sandbox: Sandbox) -> None:
    answer = email(client, test=True)
    assert answer.message_id == "Unknown"
    assert sandbox.messages() == []


def test_email_needs_a_role(sandbox: Sandbox) -> None:
    with Client(sandbox.base_url, sandbox.restricted_token, transport=_transport(sandbox)) as c:
        with pytest.raises(sk.PermissionDeniedError):
            email(c)
        assert c.webhooks.list()  # the same token is fine elsewhere
    assert sandbox.messages() == []


def test_email_stop_list_is_400_blocked(client: Client) -> None:
    with pytest.raises(sk.SendRejectedError) as info:
        email(client, to="Opted.Out@example.net")
    sent = info.value.send_response
    assert (sent.message_id, sent.status, sent.carrier, sent.reachable, sent.number_type) == (
        "Unknown", "Blocked", "Unknown", False, "Unknown")


def test_email_unknown_route_is_a_text_error(client: Client) -> None:
    with pytest.raises(sk.BadRequestError) as info:
        email(client, from_="marketing")
    assert info.value.body == "unable to route email"
    assert info.value.response.headers["content-type"].startswith("text/plain")


def test_email_metadata_problems_are_a_text_error(sandbox: Sandbox) -> None:
    bad = [
        [{"a": 1, "b": 2}],  # two pairs in one element
        "campaign=spring",
        [{"a": {"nested": True}}],
        [{"tokenName": "mine"}],  # conflicts with the token's metadata
    ]
    for metadata in bad:
        response = _raw_email(sandbox, {"MetaData": metadata})
        assert response.status_code == 400, metadata
        assert response.text == "There was a problem with the MetaData value"


def test_email_invalid_callback_block_is_ignored(sandbox: Sandbox) -> None:
    response = _raw_email(sandbox, {"Callback": [{"Url": "not a url"}, {"Method": "PUT"}]})
    assert response.status_code == 200
    assert response.json()["MessageID"].startswith("MS")
    assert sandbox.messages()[0].callback_urls == []


def test_email_valid_callback_is_kept_for_its_events(client: Client, sandbox: Sandbox) -> None:
    email(client, callback={"url": "https://hooks.example.org/mail", "timeout": 5000})
    receipts = sandbox.events("Receipt")
    assert receipts and all(e.callback_urls == ["https://hooks.example.org/mail"]
                            for e in receipts)


def test_email_field_names_in_any_case_but_metadata_exact(sandbox: Sandbox) -> None:
    response = _raw_email(sandbox, {"metadata": [{"ignored": "x"}]}, lower=True)
    assert response.status_code == 200
    assert sandbox.messages()[0].metadata == [{"tokenName": "sandbox-admin"}]


def test_email_refuses_message_fields(sandbox: Sandbox) -> None:
    response = _raw_email(sandbox, {"destination": "447700900123"})
    assert response.status_code == 400
    assert "destination" in response.json()["errors"]


def _transport(sandbox: Sandbox) -> object:
    from surveykit.client import ASGIPortalTransport

    return ASGIPortalTransport(sandbox.app)


def _raw_email(sandbox: Sandbox, extra: dict[str, object], lower: bool = False) -> object:
    import httpx

    body: dict[str, object] = {"To": "ana@example.org", "From": "surveys", "Subject": "Hi",
                               "Content": "<p>Hello</p>"}
    if lower:
        body = {k.lower(): v for k, v in body.items()}
    body.update(extra)
    with Client.sandbox(sandbox) as c, httpx.Client(transport=c._http._transport,
                                                    base_url=sandbox.base_url) as raw:
        response = raw.post("/v3.2/Message/SendEmail", json=body,
                            headers={"Authorization": f"Basic {sandbox.admin_token}"})
        response.read()
        return response


# ------------------------------------------------------------------ lookup


@pytest.mark.parametrize(
    ("number", "number_type", "carrier", "reachable"),
    [
        pytest.param("447700900123", "Mobile", "Vodafone UK", True, id="uk-mobile"),
        pytest.param("447700900900", "Mobile", "EE", False, id="unreachable"),
        pytest.param("447700900901", "VoIP", "Northwind Voice", True, id="voip"),
        pytest.param("447700900905", "Unknown", "Unknown", True, id="unknown-type"),
        pytest.param("442079460001", "Landline", "BT", True, id="uk-landline"),
        pytest.param("33639981237", "Mobile", "Bouygues Telecom", True, id="fr-mobile"),
        pytest.param("12025550143", "Mobile", "AT&T", True, id="us-555-01xx"),
        pytest.param("61491570156", "Mobile", "Telstra", True, id="au-mobile"),
    ],
)
def test_lookup_outcomes_are_deterministic(
    client: Client, number: str, number_type: str, carrier: str, reachable: bool
) -> None:
    found = client.messages.lookup(number)
    assert (found.number_type, found.carrier, found.reachable) == (number_type, carrier,
                                                                   reachable)
    assert found.status == "Success" and found.message_id and found.message_id.startswith("MS")


def test_lookup_failure_number_is_400(client: Client) -> None:
    with pytest.raises(sk.BadRequestError) as info:
        client.messages.lookup("447700900902")
    assert info.value.body["status"] == "Error"


def test_magic_numbers_are_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "sandbox.md").read_text(encoding="utf-8")
    for number in MAGIC_NUMBERS:
        assert number in doc


# ------------------------------------------------------------------ async


async def test_async_client_sends_and_is_refused_the_same(
    aclient: AsyncClient, sandbox: Sandbox
) -> None:
    answer = await aclient.messages.send(destination=MOBILE, source=SOURCE, message="Hi",
                                         reply=False)
    assert answer.created
    with pytest.raises(sk.SendRejectedError):
        await aclient.messages.send(destination="447700900903", source=SOURCE, message="Hi",
                                    reply=False)
    found = await aclient.messages.lookup(LANDLINE)
    assert found.number_type == "Landline"
    assert [m.message_id for m in sandbox.messages()] == [answer.message_id]
