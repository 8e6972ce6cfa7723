"""Client-side argument checks: sk.ValidationError, one sentence per field, no pydantic words."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pydantic
import pytest

import surveykit as sk

BASE = "https://api.example.test"


@pytest.fixture
def client() -> sk.Client:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"nothing may be sent, got {request.method} {request.url}")

    return sk.Client(BASE, "t", transport=httpx.MockTransport(refuse))


def _send(**fields: Any) -> Callable[[sk.Client], Any]:
    base = {"destination": "447700900123", "source": "447700900999", "message": "Hi"}
    base["reply"] = False
    return lambda c: c.messages.send(**{**base, **fields})


CASES = [
    pytest.param(
        _send(destination="+44 7911 12"),
        [
            (
                "destination",
                r"'\+44 7911 12' cannot be read as a phone number \(.+\); expected E\.164 "
                r"digits \(447911123456\), an international number with \+",
            )
        ],
        id="destination-unreadable",
    ),
    pytest.param(
        _send(destination="07911 123456"),
        [("destination", r"'07911 123456' cannot be read .*no region given.*Client\(default_")],
        id="destination-national-without-region",
    ),
    pytest.param(
        _send(destination="+44 7700 900123", strict=True),
        [("destination", r"'\+44 7700 900123' is refused as strict=True: .*possible but not")],
        id="destination-strict",
    ),
    pytest.param(
        _send(destination="07911 123456", region="XX"),
        [("region", r"'XX' is not a region phonenumbers knows; expected an ISO 3166")],
        id="destination-region",
    ),
    pytest.param(
        lambda c: c.messages.send(destination="447700900123", source="A", message="x"),
        [("reply", r"required but not given; expected True or False\.")],
        id="reply-missing",
    ),
    pytest.param(
        _send(reply="maybe"),
        [("reply", r"'maybe' is not a boolean; expected True or False\.")],
        id="reply-not-boolean",
    ),
    pytest.param(
        _send(survey_id=2**31),
        [("survey_id", r"2147483648 is too large; expected at most 2147483647\.")],
        id="survey-id-too-large",
    ),
    pytest.param(
        _send(when="tomorrow"),
        [("when", r"'tomorrow' is not a date and time; expected a timezone-aware datetime")],
        id="when-not-a-time",
    ),
    pytest.param(
        _send(type="telegram"),
        [("type", r"unknown message type 'telegram'; expected one of sms=0")],
        id="unknown-type",
    ),
    pytest.param(
        lambda c: c.messages.send({"destination": "447700900123", "bogus": 1}),
        [
            ("source", "required but not given"),
            ("message", "required but not given"),
            ("reply", "required but not given"),
            ("bogus", r"not a field of SendRequest; expected one of source, destination"),
        ],
        id="unknown-field",
    ),
    pytest.param(
        _send(window=[{"from": "25:00", "to": "17:00"}]),
        [("window[0].from", r"expected a time of day as HH:MM .*got '25:00'")],
        id="window-position",
    ),
    pytest.param(
        lambda c: c.messages.send_email(
            to="a@example.org", from_="x", subject="s", content="c", metadata=[1]
        ),
        [("metadata[0]", "each element must be one name/value pair")],
        id="metadata-position",
    ),
    pytest.param(
        lambda c: c.keywords.create("SURVEY", finish_date="soon"),
        [("finish_date", "'soon' is not a date and time")],
        id="keyword-finish-date",
    ),
    pytest.param(
        lambda c: c.tinyurl.register("notaurl"),
        [("full_url", "expected an http.s. URL, got 'notaurl'")],
        id="short-link-url",
    ),
    pytest.param(
        lambda c: c.tinyurl.register_list(["https://example.org/a", "nope"]),
        [("full_url", "got 'nope'")],
        id="short-link-list-url",
    ),
    pytest.param(
        lambda c: c.surveys.get_results("S", sort_order="1.0"),
        [("sort_order", r"expected an integer .*got '1\.0'")],
        id="sort-order",
    ),
    pytest.param(
        lambda c: c.surveys.results("S", format="xls"),
        [("format", r"'xls' is not a results format; expected one of CSV, PIPE, TAB, XML, JSON")],
        id="results-format",
    ),
    pytest.param(
        lambda c: c.messages.lookup("+44 (0) 7911"),
        [("number", r"'\+44 \(0\) 7911' cannot be read as a phone number .*expected E\.164")],
        id="lookup-number",
    ),
    pytest.param(
        lambda c: c.messages.lookup(["447911123456"]),  # type: ignore[arg-type]
        [("number", r"\['447911123456'\] is not a phone number; expected E\.164")],
        id="lookup-not-text",
    ),
    pytest.param(
        lambda c: c.keywords.delete("  "),
        [("keyword", "is empty; expected the keyword's text")],
        id="keyword-empty",
    ),
]


@pytest.mark.parametrize(("call", "expected"), CASES)
def test_each_field_gets_one_sentence_naming_problem_and_form(
    client: sk.Client, call: Callable[[sk.Client], Any], expected: list[tuple[str, str]]
) -> None:
    with pytest.raises(sk.ValidationError) as caught:
        call(client)
    error = caught.value
    assert isinstance(error, ValueError) and isinstance(error, sk.SurveykitError)
    assert [field for field, _ in error.problems] == [field for field, _ in expected]
    for (field, sentence), (_, pattern) in zip(error.problems, expected, strict=True):
        assert sentence.startswith(f"{field}: "), sentence
        assert re.search(pattern, sentence), (pattern, sentence)
        assert sentence.endswith("."), sentence
    text = str(error)
    assert text == " ".join(sentence for _, sentence in error.problems)
    assert "\n" not in text
    for jargon in ("pydantic", "errors.pydantic.dev", "type=", "Input should", "Value error"):
        assert jargon not in text


def test_the_models_refusal_is_kept_as_the_cause(client: sk.Client) -> None:
    with pytest.raises(sk.ValidationError) as caught:
        client.messages.send(destination="447700900123", source="A", message="x", reply="maybe")
    cause = caught.value.__cause__
    assert isinstance(cause, pydantic.ValidationError)
    assert [error["loc"] for error in cause.errors()] == [("reply",)]
    assert caught.value.fields == ["reply"]


def test_async_client_gives_the_same_error() -> None:
    import asyncio

    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing may be sent")

    async def main() -> str:
        async with sk.AsyncClient(BASE, "t", transport=httpx.MockTransport(refuse)) as c:
            with pytest.raises(sk.ValidationError) as caught:
                await c.messages.send(destination="0", source="A", message="x", reply=False)
            return str(caught.value)

    assert asyncio.run(main()).startswith("destination: '0' cannot be read as a phone number")


def test_valid_arguments_still_build_the_request(client: sk.Client) -> None:
    from surveykit.client.resources import Messages

    built = Messages.send.build(
        client.messages,
        destination="447700900123",
        source="447700900999",
        message="Hi",
        reply=False,
        when=datetime(2026, 1, 5, 9, tzinfo=UTC),
    )
    assert built.json["destination"] == "447700900123"
    assert built.json["when"].startswith("2026-01-05T09:00:00")


def test_a_batch_row_refused_by_the_model_gets_the_same_words() -> None:
    import pandas as pd

    with sk.Client.sandbox() as client:
        preview = sk.preview_batch(
            client,
            pd.DataFrame({"mobileNumber": ["447700900123"]}),
            message="Hi",
            source="A" * 20,
        )
    error = preview.frame["error"].iloc[0]
    assert error.startswith("source: "), error
    assert "Value error" not in error and "pydantic" not in error
