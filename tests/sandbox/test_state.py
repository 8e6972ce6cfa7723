"""The sandbox's state speaks in domain values and errors; only the routes speak HTTP."""

from __future__ import annotations

import pytest

import surveykit as sk
from surveykit.client import Client
from surveykit.models import SendRequest
from surveykit.sandbox import Sandbox
from surveykit.sandbox.state import SandboxState, User
from surveykit.sandbox.state._errors import Problem, Rejection, SandboxHTTPError, TextError
from surveykit.sandbox.state._records import CallbackTarget

LANDLINE = "442079460123"  # Ofcom's drama range for London landlines


@pytest.fixture
def state() -> SandboxState:
    return SandboxState(seed=3)


@pytest.fixture
def admin(state: SandboxState) -> User:
    return next(user for user in state.users.values() if user.name == "admin")


def _send(destination: str, **fields: object) -> SendRequest:
    return SendRequest.model_validate(
        {"source": "447700900100", "destination": destination, "message": "Hi", "reply": False}
        | fields
    )


def test_an_accepted_send_is_its_body(state: SandboxState, admin: User) -> None:
    body = state.send_message(_send("447700900123"), admin)
    assert isinstance(body, dict)
    assert body["Status"] == "Sent" and body["MessageID"].startswith("MS")
    assert [m.message_id for m in state.messages.values()] == [body["MessageID"]]


@pytest.mark.parametrize(
    ("destination", "fields", "status", "number_type"),
    [
        pytest.param(LANDLINE, {"lookup": True}, "Reachable", "Landline", id="landline"),
        pytest.param("447700900451", {}, "Blocked", "Unknown", id="stop-list"),
        pytest.param("447700900903", {"lookup": True}, "Blocked", "Mobile", id="blocked"),
        pytest.param("447700900902", {"lookup": True}, "Failed", "Unknown", id="lookup-fails"),
        pytest.param("447700900904", {}, "Failed", "Unknown", id="problem-sending"),
    ],
)
def test_a_refused_send_raises_a_rejection_with_its_body(
    state: SandboxState,
    admin: User,
    destination: str,
    fields: dict[str, object],
    status: str,
    number_type: str,
) -> None:
    with pytest.raises(Rejection) as refused:
        state.send_message(_send(destination, **fields), admin)
    assert not isinstance(refused.value, SandboxHTTPError)  # no HTTP status on it
    assert (refused.value.body["Status"], refused.value.body["NumberType"]) == (
        status,
        number_type,
    )
    assert refused.value.body["MessageID"] == "Unknown"
    assert state.messages == {}


def test_with_an_account_callback_a_refusal_is_an_answer_and_an_event(
    state: SandboxState, admin: User
) -> None:
    state.set_account_callback(CallbackTarget(urls=["http://127.0.0.1:9/hook"]))
    body = state.send_message(_send(LANDLINE, lookup=True), admin)
    assert body["Status"] == "Reachable"
    assert [(e.type, e.status) for e in state.events] == [("Lookup", "Reachable")]
    with pytest.raises(Rejection):  # a problem sending is a 400 even with a callback
        state.send_message(_send("447700900904"), admin)


def test_a_send_the_platform_does_not_take_is_a_problem(state: SandboxState, admin: User) -> None:
    with pytest.raises(Problem) as problem:
        state.send_message(_send("447700900123", source="447700900123"), admin)
    assert problem.value.status == 400
    assert "destination" in problem.value.body["errors"]


def test_lookup_returns_its_body_or_raises_a_rejection(state: SandboxState) -> None:
    body = state.lookup("447700900123")
    assert (body["status"], body["numberType"]) == ("Success", "Mobile")
    with pytest.raises(Rejection) as refused:
        state.lookup("447700900902")
    assert refused.value.body["status"] == "Error"
    with pytest.raises(Problem):
        state.lookup("0447700900123")


def test_send_email_returns_its_body_or_raises(state: SandboxState, admin: User) -> None:
    email = {"To": "ana@example.org", "From": "surveys", "Subject": "Hi", "Content": "Hello"}
    assert state.send_email(email, admin)["Status"] == "Sent"
    with pytest.raises(Rejection) as refused:
        state.send_email(email | {"To": "opted.out@example.net"}, admin)
    assert refused.value.body["Status"] == "Blocked"
    with pytest.raises(TextError):
        state.send_email(email | {"From": "nobody"}, admin)


def test_the_route_answers_a_rejection_with_400_and_its_body() -> None:
    client = Client.sandbox(Sandbox(seed=3))
    with pytest.raises(sk.SendRejectedError) as refused:
        client.messages.send(
            destination=LANDLINE, source="447700900100", message="Hi", reply=False, lookup=True
        )
    assert refused.value.status_code == 400
    assert refused.value.body["Status"] == "Reachable"
    assert client.messages.lookup("447700900123").status == "Success"
