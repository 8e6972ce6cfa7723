"""messages.send and messages.lookup take numbers as people write them.

The expected digits are phonenumbers' own E.164 formatting of the same text, so the tests
do not lean on surveykit's reading to check surveykit's reading.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import phonenumbers
import pytest

import surveykit as sk
from surveykit.sandbox import Sandbox
from tests.helpers.sandbox_server import ServedSandbox

SOURCE = "447700900100"
BASE = "https://api.example.test"


def e164(text: str, region: str | None = None) -> str:
    """phonenumbers' E.164 digits of ``text`` (independent of surveykit)."""
    return phonenumbers.format_number(
        phonenumbers.parse(text, region), phonenumbers.PhoneNumberFormat.E164
    )[1:]


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=4) as box:
        yield box


def sent_to(sandbox: Sandbox) -> list[str | None]:
    return [entry.destination for entry in sandbox.journal("message")]


def looked_up(sandbox: Sandbox) -> list[str]:
    prefix = "/v3.2/Message/Lookup/"
    return [
        e.path[len(prefix) :]
        for e in sandbox.journal("request")
        if e.path and e.path.startswith(prefix)
    ]


def refusing_client(**options: Any) -> sk.Client:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"nothing may be sent, got {request.method} {request.url}")

    return sk.Client(BASE, "t", transport=httpx.MockTransport(refuse), **options)


# Formatted international numbers: no region needed.
FORMATTED = [
    "+44 7911 123456",
    "+44 (0)7911-123-456",
    "+44.7911.123456",
    "tel:+44-7911-123456",
    "0044 7911 123456",
    "+1 (201) 555-0143",
    "+1 201.555.0143",
    "+61 491 570 156",
    "+61 (4) 9157-0157",
    "+44 7700 900123",  # unverified: the UK drama range
    "+1 555 555 0123",  # unverified: no such area code yet
]


@pytest.mark.parametrize("text", FORMATTED)
def test_send_takes_formatted_international_numbers(sandbox: Sandbox, text: str) -> None:
    with sk.Client.sandbox(sandbox) as client:
        answer = client.messages.send(destination=text, source=SOURCE, message="Hi", reply=False)
    assert answer.message_id and answer.message_id.startswith("MS")
    expected = e164(text.removeprefix("tel:").replace("0044", "+44", 1))
    assert sent_to(sandbox) == [expected]


# (text, region) national numbers, each region's own spelling.
NATIONAL = [
    ("07911 123456", "GB"),
    ("07911-123-456", "GB"),
    ("(07700) 900 123", "GB"),
    ("020 7946 0018", "GB"),
    ("(201) 555-0143", "US"),
    ("201-555-0143", "US"),
    ("201 555 0143", "US"),
    ("0491 570 156", "AU"),
    ("(04) 9157 0157", "AU"),
]


@pytest.mark.parametrize(("text", "region"), NATIONAL)
def test_national_numbers_are_read_for_the_calls_region(
    sandbox: Sandbox, text: str, region: str
) -> None:
    with sk.Client.sandbox(sandbox) as client:
        client.messages.send(
            destination=text, source=SOURCE, message="Hi", reply=False, region=region
        )
        client.messages.lookup(text, region=region)
    assert sent_to(sandbox) == [e164(text, region)]
    assert looked_up(sandbox) == [e164(text, region)]


@pytest.mark.parametrize(("text", "region"), NATIONAL)
def test_national_numbers_are_read_for_the_clients_default_region(
    sandbox: Sandbox, text: str, region: str
) -> None:
    with sk.Client.sandbox(sandbox, default_region=region.lower()) as client:
        assert client.default_region == region
        client.messages.send(destination=text, source=SOURCE, message="Hi", reply=False)
        client.messages.lookup(text)
    assert sent_to(sandbox) == [e164(text, region)] and looked_up(sandbox) == [e164(text, region)]


def test_a_calls_region_beats_the_clients_default(sandbox: Sandbox) -> None:
    with sk.Client.sandbox(sandbox, default_region="GB") as client:
        client.messages.send(
            destination="(201) 555-0143", source=SOURCE, message="Hi", reply=False, region="US"
        )
        client.messages.send(destination="07911 123456", source=SOURCE, message="Hi", reply=False)
    assert sent_to(sandbox) == ["12015550143", "447911123456"]


def test_default_region_comes_from_the_environment_unless_given(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SURVEYKIT_DEFAULT_REGION", "au")
    with sk.Client.sandbox(sandbox) as client:
        assert client.default_region == "AU"
        client.messages.lookup("0491 570 156")
    with sk.Client.sandbox(sandbox, default_region="GB") as client:
        assert client.default_region == "GB"
    monkeypatch.setenv("SURVEYKIT_DEFAULT_REGION", "Narnia")
    with pytest.raises(sk.ConfigurationError, match="SURVEYKIT_DEFAULT_REGION: 'Narnia'"):
        sk.Client.sandbox(sandbox)
    monkeypatch.delenv("SURVEYKIT_DEFAULT_REGION")
    with sk.Client.sandbox(sandbox) as client:
        assert client.default_region is None
    assert looked_up(sandbox) == ["61491570156"]


def test_an_unknown_default_region_is_refused_naming_it() -> None:
    with pytest.raises(sk.ConfigurationError, match="default_region: 'XX' is not a region"):
        sk.Client(BASE, "t", default_region="XX")
    with pytest.raises(sk.ConfigurationError, match="default_region"):
        sk.AsyncClient(BASE, "t", default_region="XX")


def test_e164_digits_still_go_as_they_are(sandbox: Sandbox) -> None:
    # With or without a default region: digits in the platform's form are that number.
    for region in (None, "GB", "US"):
        with sk.Client.sandbox(sandbox, default_region=region) as client:
            client.messages.send(
                destination="447911123456", source=SOURCE, message="Hi", reply=False
            )
            client.messages.lookup("12015550143")
    assert sent_to(sandbox) == ["447911123456"] * 3
    assert looked_up(sandbox) == ["12015550143"] * 3


def test_unverified_numbers_are_sent_unless_strict(sandbox: Sandbox) -> None:
    # The premise: phonenumbers finds it possible but not valid.
    parsed = phonenumbers.parse("+447700900123")
    assert phonenumbers.is_possible_number(parsed) and not phonenumbers.is_valid_number(parsed)
    with sk.Client.sandbox(sandbox, default_region="GB") as client:
        client.messages.send(destination="07700 900123", source=SOURCE, message="Hi", reply=False)
        client.messages.lookup("07700 900123")
        before = len(sandbox.journal("request"))
        with pytest.raises(sk.ValidationError) as send_error:
            client.messages.send(
                destination="07700 900123", source=SOURCE, message="Hi", reply=False, strict=True
            )
        with pytest.raises(sk.ValidationError) as lookup_error:
            client.messages.lookup("07700 900123", strict=True)
        assert len(sandbox.journal("request")) == before  # nothing reached the platform
        # strict does not refuse a valid number
        client.messages.send(
            destination="07911 123456", source=SOURCE, message="Hi", reply=False, strict=True
        )
    assert sent_to(sandbox) == ["447700900123", "447911123456"]
    assert send_error.value.fields == ["destination"]
    assert "'07700 900123' is refused as strict=True" in str(send_error.value)
    assert lookup_error.value.fields == ["number"]


@pytest.mark.parametrize(
    ("value", "region", "why"),
    [
        ("07911 123456", None, "no region given for a national number"),
        ("+44 7911 12", None, "too short"),
        ("4470", None, "too short"),
        ("999123456789", None, "invalid country code"),
        ("hello", "GB", "not a phone number"),
        ("+44 7911 123456 ext. 9", None, "has an extension (9)"),
    ],
    ids=repr,
)
def test_unreadable_numbers_are_errors_naming_field_value_and_form(
    value: str, region: str | None, why: str
) -> None:
    client = refusing_client(default_region=region)
    with pytest.raises(sk.ValidationError) as sent:
        client.messages.send(destination=value, source=SOURCE, message="Hi", reply=False)
    with pytest.raises(sk.ValidationError) as found:
        client.messages.lookup(value)
    for error, field in ((sent.value, "destination"), (found.value, "number")):
        assert error.fields == [field]
        text = str(error)
        assert text.startswith(f"{field}: {value!r} cannot be read as a phone number ({why}")
        assert "expected E.164 digits (447911123456)" in text
        assert "+44 7911 123456" in text and "region=" in text


def test_a_request_dict_destination_is_read_too(sandbox: Sandbox) -> None:
    with sk.Client.sandbox(sandbox, default_region="US") as client:
        client.messages.send(
            {"destination": "(201) 555-0143", "source": SOURCE, "message": "Hi", "reply": False}
        )
    assert sent_to(sandbox) == ["12015550143"]


def test_async_client_reads_numbers_the_same_way(sandbox: Sandbox) -> None:
    async def main() -> None:
        async with sk.AsyncClient.sandbox(sandbox, default_region="AU") as client:
            assert client.default_region == "AU"
            await client.messages.send(
                destination="0491 570 156", source=SOURCE, message="Hi", reply=False
            )
            await client.messages.lookup("+1 (201) 555-0143")
            with pytest.raises(sk.ValidationError, match="destination: '0491 57'"):
                await client.messages.send(
                    destination="0491 57", source=SOURCE, message="Hi", reply=False
                )

    asyncio.run(main())
    assert sent_to(sandbox) == ["61491570156"]
    assert looked_up(sandbox) == ["12015550143"]


def test_numbers_as_written_over_a_real_server(served: ServedSandbox) -> None:
    httpx.post(
        served.base_url + "/_sandbox/reset",
        headers={"Authorization": f"Basic {served.token}"},
        timeout=30,
    ).raise_for_status()
    with sk.Client(served.base_url, served.token, default_region="GB", max_retries=0) as client:
        client.messages.send(destination="07911 123456", source=SOURCE, message="Hi", reply=False)
        client.messages.send(
            destination="+1 (201) 555-0143", source=SOURCE, message="Hi", reply=False
        )
        found = client.messages.lookup("(0491) 570-156", region="AU")
        assert found.carrier == "Telstra"
        with pytest.raises(sk.ValidationError, match="destination: '07700 900123' is refused"):
            client.messages.send(
                destination="07700 900123", source=SOURCE, message="Hi", reply=False, strict=True
            )
    journal = httpx.get(
        served.base_url + "/_sandbox/journal",
        params={"kind": "message"},
        headers={"Authorization": f"Basic {served.token}"},
        timeout=30,
    ).json()
    assert [entry["destination"] for entry in journal] == ["447911123456", "12015550143"]


def test_lookup_command_takes_numbers_as_written() -> None:
    from typer.testing import CliRunner

    from surveykit.cli import app

    env = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_DEFAULT_REGION": ""}
    result = CliRunner().invoke(
        app,
        ["lookup", "+44 7911 123456", "07700 900901", "(020) 7946-0018", "--region", "GB"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    # (the first line says it runs on the embedded sandbox)
    lines = [x for x in result.output.strip().splitlines() if not x.startswith("surveykit:")]
    assert lines[0].split()[:2] == ["number", "status"] and lines[0].split()[-1] == "number_check"
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"447911123456", "447700900901", "442079460018"}
    assert rows["447911123456"][-1] == "valid" and rows["447700900901"][-1] == "unverified"
    assert "VoIP" in rows["447700900901"] and "Landline" in rows["442079460018"]
    env["SURVEYKIT_DEFAULT_REGION"] = "AU"
    result = CliRunner().invoke(app, ["lookup", "0491 570 156"], env=env)
    assert result.exit_code == 0, result.output
    assert "61491570156" in result.output and "Telstra" in result.output
