"""The reference's schemas: wire names, validation that names the field, tolerant responses."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from surveykit.models import (
    NOT_ACCEPTED_FOR_EMAIL,
    CallbackPayload,
    CallbackSettings,
    CallbackType,
    EmailRequest,
    ImportRequest,
    Keyword,
    KeywordRequest,
    LookupResponse,
    MessageType,
    NumberType,
    ProblemDetails,
    ResultsFormat,
    ResultsRequest,
    SendRequest,
    SendResponse,
    SendStatus,
    UrlListRequest,
    UrlRequest,
    Webhook,
    Window,
)

MESSAGE = {"destination": "447700900123", "source": "447700900999", "message": "Hi", "reply": True}
EMAIL = {"to": "ana@example.org", "from_": "surveys", "subject": "S", "content": "<p>C</p>"}


def error_fields(exc: ValidationError) -> set[str]:
    return {".".join(str(part) for part in error["loc"]) or "(model)" for error in exc.errors()}


# Integers written as strings


@pytest.mark.parametrize(("value", "expected"), [("60", 60), (60, 60), ("0", 0), ("-5", -5)])
def test_integer_strings_matching_the_pattern_are_accepted(value: Any, expected: int) -> None:
    assert ProblemDetails(status=value).status == expected


# Digits that Python's ``\d`` (and int()) accept but the platform's ASCII rule does not:
# full-width, Arabic-Indic, Devanagari.
NON_ASCII_DIGITS = ["\uff17", "\u0667", "\u096d"]


@pytest.mark.parametrize(
    "value",
    [
        "060",
        "1.0",
        " 1",
        "1 ",
        "+1",
        "1e3",
        "",
        "-0x1",
        True,
        1.5,
        "\uff11\uff12",
        "1\u0662",
        "-\u096d",
    ],
)
def test_looser_integers_are_refused(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        SendRequest(**MESSAGE, timeout=value)
    assert "timeout" in error_fields(caught.value)


@given(st.text(st.characters(categories=["Nd"]), min_size=1, max_size=6))
def test_only_ascii_digit_strings_are_integers(value: str) -> None:
    if value.isascii() and (value == "0" or not value.startswith("0")):
        assert SendRequest(**MESSAGE, survey_id=value).survey_id == int(value)
    else:
        with pytest.raises(ValidationError) as caught:
            SendRequest(**MESSAGE, survey_id=value)
        assert "survey_id" in error_fields(caught.value)


@given(st.integers(min_value=1, max_value=2**31 - 1))
def test_any_int32_round_trips_as_string(value: int) -> None:
    assert SendRequest(**MESSAGE, timeout=str(value)).timeout == value


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
LOOSE_OR_OUT_OF_INT32 = [
    pytest.param(INT32_MAX + 1, id="max+1"),
    pytest.param(INT32_MIN - 1, id="min-1"),
    pytest.param(str(INT32_MAX + 1), id="max+1-string"),
    pytest.param(10**30, id="huge"),
    pytest.param("1.0", id="decimal"),
    pytest.param(" 2", id="padded"),
    pytest.param("02", id="leading-zero"),
    pytest.param("+2", id="plus"),
    pytest.param("2e1", id="exponent"),
    pytest.param(2.0, id="float"),
    pytest.param(True, id="bool"),
    pytest.param("\uff12", id="full-width"),
]


@pytest.mark.parametrize("value", LOOSE_OR_OUT_OF_INT32)
def test_survey_id_is_a_strict_int32(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        SendRequest(**MESSAGE, survey_id=value)
    assert error_fields(caught.value) == {"survey_id"}


@pytest.mark.parametrize("value", LOOSE_OR_OUT_OF_INT32)
def test_sort_order_is_a_strict_int32(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        ResultsRequest(sort_order=value)
    assert error_fields(caught.value) == {"sort_order"}


@pytest.mark.parametrize("value", [INT32_MIN, INT32_MAX, str(INT32_MIN), str(INT32_MAX), "0", 1])
def test_survey_id_sort_order_and_timeout_take_the_whole_int32_range(value: Any) -> None:
    assert SendRequest(**MESSAGE, survey_id=value).to_wire()["surveyId"] == int(value)
    # timeout too: the reference gives it no minimum (0 and "-5" are int32s)
    assert SendRequest(**MESSAGE, timeout=value).to_wire()["timeout"] == int(value)
    assert ResultsRequest(sort_order=value).to_wire()["sortOrder"] == int(value)


# Message rules


@pytest.mark.parametrize(
    "destination",
    [
        "+447700900123",
        "0447700900123",
        "44 7700 900123",
        "4",
        "1234567890123456",
        "44a",
        "",
        "44\uff17\uff1700900123",  # full-width 77
        "\u0664\u0664" + "7700900123",  # Arabic-Indic 44
        "447700900123\n",
    ],
)
def test_destination_must_be_e164_digits(destination: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SendRequest(**{**MESSAGE, "destination": destination})
    assert error_fields(caught.value) == {"destination"}


@given(
    st.integers(min_value=0, max_value=11),
    st.sampled_from(NON_ASCII_DIGITS),
)
def test_a_non_ascii_digit_anywhere_makes_a_destination_invalid(at: int, digit: str) -> None:
    number = "447700900123"
    with pytest.raises(ValidationError) as caught:
        SendRequest(**{**MESSAGE, "destination": number[:at] + digit + number[at + 1 :]})
    assert error_fields(caught.value) == {"destination"}


def branded_source_error(exc: ValidationError) -> str:
    # A rule across two fields is checked on the model, so its error has no field location;
    # its one message must name the field: ``source``.
    messages = [error["msg"] for error in exc.errors()]
    assert len(messages) == 1, messages
    assert messages[0].startswith("Value error, source: "), messages[0]
    return messages[0]


def test_branded_source_rules() -> None:
    assert SendRequest(**{**MESSAGE, "source": "AcmeSurvey1", "reply": False})
    with pytest.raises(ValidationError) as too_long:
        SendRequest(**{**MESSAGE, "source": "AcmeSurveys12", "reply": False})
    assert "a branded source is at most 11 characters" in branded_source_error(too_long.value)
    assert "'AcmeSurveys12' has 13" in branded_source_error(too_long.value)
    with pytest.raises(ValidationError) as with_reply:
        SendRequest(**{**MESSAGE, "source": "Acme", "reply": True})
    assert "cannot be used with reply=True" in branded_source_error(with_reply.value)
    # A number or short code may be longer than 11 digits and may take replies.
    assert SendRequest(**{**MESSAGE, "source": "447700900999", "reply": True})
    assert SendRequest(**{**MESSAGE, "source": "+447700900999", "reply": True})
    assert SendRequest(**{**MESSAGE, "source": "60777", "reply": True})


def test_a_source_of_non_ascii_digits_is_a_branded_source() -> None:
    # Twelve full-width digits are not a number: as a branded source they are too long.
    with pytest.raises(ValidationError) as caught:
        SendRequest(**{**MESSAGE, "source": "\uff14" * 12, "reply": False})
    assert "a branded source is at most 11" in branded_source_error(caught.value)


@pytest.mark.parametrize("field", ["source", "message"])
def test_source_and_message_must_not_be_empty(field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SendRequest(**{**MESSAGE, field: ""})
    assert field in error_fields(caught.value)


def test_type_is_an_int_enum_on_the_wire() -> None:
    for name, number in [("sms", 0), ("WhatsApp", 1), ("facebook", 2), ("whatsapp_template", 3)]:
        request = SendRequest(**MESSAGE, type=name)
        assert request.type == MessageType(number)
        assert request.to_wire()["type"] == number
    with pytest.raises(ValidationError) as caught:
        SendRequest(**MESSAGE, type=9)
    assert "type" in error_fields(caught.value)


@pytest.mark.parametrize(
    "value",
    [" 1", "1 ", "\t1", "1\n", "01", "+1", "1.0", "\uff11", "-1", "4", "", " ", 1.0, True],
)
def test_type_numbers_follow_the_integer_rule_exactly(value: Any) -> None:
    with pytest.raises(ValidationError, match="type") as caught:
        SendRequest(**MESSAGE, type=value)
    assert error_fields(caught.value) == {"type"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", MessageType.WHATSAPP),
        ("0", MessageType.SMS),
        (3, MessageType.WHATSAPP_TEMPLATE),
        ("whatsapp", MessageType.WHATSAPP),
        ("WhatsApp Template", MessageType.WHATSAPP_TEMPLATE),
        ("whatsapp-template", MessageType.WHATSAPP_TEMPLATE),
        ("SMS", MessageType.SMS),
    ],
)
def test_type_by_number_or_by_name(value: Any, expected: MessageType) -> None:
    assert SendRequest(**MESSAGE, type=value).type is expected


def test_none_fields_are_not_sent() -> None:
    assert SendRequest(**MESSAGE, when=None, lookup=None).to_wire() == {
        "source": "447700900999",
        "destination": "447700900123",
        "message": "Hi",
        "reply": True,
    }


def test_when_must_be_timezone_aware() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        SendRequest(**MESSAGE, when=datetime(2026, 3, 2, 9, 0))


def test_unknown_fields_are_refused_with_their_name() -> None:
    with pytest.raises(ValidationError) as caught:
        SendRequest(**MESSAGE, destinaton="x")
    assert "destinaton" in error_fields(caught.value)


# Windows


def test_window_wire_form_and_defaults() -> None:
    assert Window(from_="08:00", to="20:00").to_wire() == {
        "from": "08:00",
        "to": "20:00",
        "days": "1,2,3,4,5,6,7",
    }
    window = Window.model_validate({"from": "09:05", "to": "17:30", "days": "5, 1,3"})
    assert (window.from_, window.to, window.days) == (time(9, 5), time(17, 30), [5, 1, 3])
    assert Window(from_=time(9, 0), to=time(10, 0), days={2, 1}).days == [1, 2]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"from_": "9:00", "to": "17:00"}, "from: expected a time of day as HH:MM"),
        ({"from_": "09:00", "to": "24:00"}, "to: expected a time of day as HH:MM"),
        ({"from_": "18:00", "to": "09:00"}, "must be before to"),
        ({"from_": "09:00", "to": "09:00"}, "must be before to"),
        ({"from_": "09:00", "to": "17:00", "days": "0,1"}, "days: 0 is not a day number"),
        ({"from_": "09:00", "to": "17:00", "days": [8]}, "days: 8 is not a day number"),
        ({"from_": "09:00", "to": "17:00", "days": "Mon"}, "is not a day number"),
        ({"from_": "09:00", "to": "17:00", "days": "\uff11,2"}, "days: .* is not a day number"),
        ({"from_": "\uff10\uff19:00", "to": "17:00"}, "from: expected a time of day as HH:MM"),
        ({"from_": "09:00", "to": "1\u0667:00"}, "to: expected a time of day as HH:MM"),
        ({"from_": "09:00", "to": "17:00", "days": "1,1"}, "given twice"),
        ({"from_": "09:00", "to": "17:00", "days": []}, "at least one day"),
    ],
)
def test_window_rules(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Window(**fields)


# Email


def test_email_wire_names_are_pascal_case() -> None:
    wire = EmailRequest(**EMAIL, test=True, lookup=False).to_wire()
    assert list(wire) == ["To", "From", "Subject", "Content", "Test", "Lookup"]


@pytest.mark.parametrize(
    "name",
    sorted(
        {
            "destination",
            "source",
            "message",
            "reply",
            "window",
            "timeout",
            "type",
            "onBehalf",
            "surveyId",
            "CC",
            "BCC",
            "attachments",
            "text",
            "PlainText",
        }
    ),
)
def test_email_refuses_fields_the_reference_does_not_accept(name: str) -> None:
    with pytest.raises(ValidationError, match=f"{name}: not accepted for email"):
        EmailRequest.model_validate(
            {"To": "a@example.org", "From": "f", "Subject": "s", "Content": "c", name: "x"}
        )


def test_every_refused_email_field_is_named() -> None:
    assert {"destination", "cc", "bcc", "attachments", "onbehalf", "surveyid"} <= set(
        NOT_ACCEPTED_FOR_EMAIL
    )


@pytest.mark.parametrize(
    "to",
    ["a@example.org, b@example.org", "a@example.org;b@example.org", "a@example.org b@example.org"],
)
def test_email_takes_one_recipient(to: str) -> None:
    with pytest.raises(ValidationError, match="one recipient"):
        EmailRequest(**{**EMAIL, "to": to})


@pytest.mark.parametrize("field", ["subject", "content", "to", "from_"])
@pytest.mark.parametrize("value", ["", "   "])
def test_email_required_fields_must_not_be_empty(field: str, value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        EmailRequest(**{**EMAIL, field: value})
    assert error_fields(caught.value) & {field, field.rstrip("_").capitalize(), "From", "To"}


def test_email_when_is_sent_in_utc() -> None:
    when = datetime.fromisoformat("2026-03-02T11:00:00+02:00")
    assert EmailRequest(**EMAIL, when=when).to_wire()["When"] == "2026-03-02T09:00:00Z"


def test_metadata_from_a_dict_or_pairs() -> None:
    assert EmailRequest(**EMAIL, metadata={"a": "1", "b": 2}).to_wire()["MetaData"] == [
        {"a": "1"},
        {"b": 2},
    ]
    assert EmailRequest(**EMAIL, metadata=[{"a": "1"}]).metadata == [{"a": "1"}]
    with pytest.raises(ValidationError, match=r"MetaData\[0\]: each element must be one"):
        EmailRequest(**EMAIL, metadata=[{"a": "1", "b": "2"}])
    with pytest.raises(ValidationError, match="value must be a string, number or boolean"):
        EmailRequest(**EMAIL, metadata={"a": {"nested": 1}})


def test_callback_settings() -> None:
    settings = CallbackSettings(url="https://cb.example.org", method="get", retries="3")
    assert settings.to_wire() == [
        {"Url": "https://cb.example.org"},
        {"Retries": 3},
        {"Method": "GET"},
    ]
    parsed = CallbackSettings.model_validate(
        [{"Url": ["https://a.example", "https://b.example"]}, {"TotalTimeout": 9000}]
    )
    assert parsed.url == ["https://a.example", "https://b.example"]
    assert parsed.total_timeout == 9000
    with pytest.raises(ValidationError, match=r"ContentType|content_type"):
        CallbackSettings(url="https://a.example", content_type="text/xml")
    with pytest.raises(ValidationError, match=r"Method|method"):
        CallbackSettings(url="https://a.example", method="PUT")
    with pytest.raises(ValidationError, match="not an http"):
        CallbackSettings(url="ftp://a.example")


# Other requests


def test_other_request_wire_names() -> None:
    assert ImportRequest(reference="R", records=[{"firstName": "Zoë"}]).to_wire() == {
        "reference": "R",
        "list": [{"firstName": "Zoë"}],
    }
    assert KeywordRequest(keyword=" JOIN ").to_wire() == {"keyword": "JOIN"}
    assert ResultsRequest(format="pipe", header=True, sort_order="1").to_wire() == {
        "format": "PIPE",
        "header": True,
        "sortOrder": 1,
        "surveyReference": "*",
    }
    assert UrlListRequest(
        urls=[UrlRequest(full_url="https://a.example", slashtag="x")], url_list=[]
    ).to_wire() == {
        "urls": [{"fullUrl": "https://a.example", "slashtag": "x"}],
        "urlList": [],
    }
    with pytest.raises(ValidationError):
        ResultsRequest(format="XLSX")
    with pytest.raises(ValidationError):
        ImportRequest(reference="", records=[])
    assert {f.value for f in ResultsFormat} == {"CSV", "PIPE", "TAB", "XML", "JSON"}


# Responses


@pytest.mark.parametrize(
    "body",
    [
        {"MessageID": "MS1", "Status": "Sent", "NumberType": "Mobile"},
        {"messageID": "MS1", "status": "sent", "numberType": "mobile"},
        {"messageId": "MS1", "STATUS": "SENT", "numbertype": "MOBILE"},
        {"message_id": "MS1", "status": "Sent", "number_type": "Mobile"},
    ],
    ids=["pascal", "camel", "mixed", "snake"],
)
def test_responses_read_any_letter_case(body: dict[str, Any]) -> None:
    response = SendResponse.model_validate(body)
    assert response.message_id == "MS1"
    assert response.status is SendStatus.SENT
    assert response.number_type is NumberType.MOBILE


def test_unknown_status_and_fields_are_kept() -> None:
    response = SendResponse.model_validate(
        {"MessageID": "MS1", "Status": "Queued", "NumberType": "Satellite", "Cost": 0.04}
    )
    assert response.status == "Queued" and not isinstance(response.status, SendStatus)
    assert response.number_type == "Satellite"
    assert response.extra_fields == {"Cost": 0.04}
    lookup = LookupResponse.model_validate({"messageID": "x", "status": "Pending"})
    assert lookup.status == "Pending"


def test_callback_payload() -> None:
    payload = CallbackPayload.model_validate(
        {
            "Source": "447700900999",
            "Destination": "447700900123",
            "Message": "STOP",
            "Type": "Stop",
            "Timestamp": "2024-08-07T21:51:26+01:00",
            "Inbound": True,
            "Segments": "1",
            "MetaData": [{"campaign": "spring"}, {"wave": 2}],
            "MessageID": "MS5",
            "Brand": "new field",
        }
    )
    assert payload.type is CallbackType.STOP and not payload.wants_reply
    assert payload.timestamp is not None and payload.timestamp.utcoffset() is not None
    assert payload.segments == 1
    assert payload.metadata_dict == {"campaign": "spring", "wave": 2}
    assert payload.extra_fields == {"Brand": "new field"}
    assert CallbackPayload.model_validate({"type": "keyword"}).wants_reply
    assert CallbackPayload.model_validate({"Type": "Revoked"}).type == "Revoked"


@pytest.mark.parametrize(
    ("metadata", "kept", "merged"),
    [
        pytest.param(
            [{"campaign": "spring", "wave": 2}],
            [{"campaign": "spring", "wave": 2}],
            {"campaign": "spring", "wave": 2},
            id="two-pairs",
        ),
        pytest.param([{}, {"a": 1}], [{}, {"a": 1}], {"a": 1}, id="empty-element"),
        pytest.param(
            [{"a": {"nested": [1]}}], [{"a": {"nested": [1]}}], {"a": {"nested": [1]}}, id="nested"
        ),
        pytest.param({"a": 1, "b": None}, [{"a": 1}, {"b": None}], {"a": 1, "b": None}, id="dict"),
        pytest.param([], [], {}, id="empty"),
    ],
)
def test_callback_metadata_of_other_shapes_is_kept_as_sent(
    metadata: Any, kept: list[dict[str, Any]], merged: dict[str, Any]
) -> None:
    payload = CallbackPayload.model_validate({"Type": "Receipt", "MetaData": metadata})
    assert payload.metadata == kept
    assert payload.metadata_dict == merged


@pytest.mark.parametrize("metadata", ["campaign=spring", 3, ["campaign=spring"], [{"a": 1}, 2]])
def test_callback_metadata_that_is_not_pairs_is_an_error_naming_it(metadata: Any) -> None:
    with pytest.raises(ValidationError, match="MetaData") as caught:
        CallbackPayload.model_validate({"Type": "Receipt", "MetaData": metadata})
    assert error_fields(caught.value) == {"metadata"}


def test_keyword_without_a_keyword_field_is_read() -> None:
    keyword = Keyword.model_validate({"Type": "survey", "Response": "Thanks", "id": 7})
    assert keyword.keyword is None
    assert (keyword.type, keyword.response) == ("survey", "Thanks")
    assert keyword.extra_fields == {"id": 7}


@pytest.mark.parametrize(
    ("events", "expected"),
    [(None, []), ([], []), (["All"], ["All"])],
)
def test_webhook_events_null_is_no_events(events: Any, expected: list[str]) -> None:
    assert Webhook.model_validate({"name": "n", "events": events}).events == expected
    assert Webhook.model_validate({"name": "n"}).events == []


def test_webhook_url_from_key_or_payload() -> None:
    assert Webhook(key="https://a.example/in").url == "https://a.example/in"
    assert Webhook(key="hook-1", payload="https://b.example/in").url == "https://b.example/in"
    assert Webhook(key="hook-1", payload="{}").url is None
    with pytest.raises(ValidationError):
        Webhook.model_validate({"timeout": "30 s"})


def test_responses_render_as_html_tables_without_secrets() -> None:
    sent = SendResponse.model_validate({"MessageID": "MS1", "Status": "Sent", "Cost": "<1p>"})
    page = sent._repr_html_()
    assert "<caption>SendResponse</caption>" in page
    assert "<th style='text-align:left'>status</th><td style='text-align:left'>Sent</td>" in page
    assert "&lt;1p&gt;" in page
    hook = Webhook(name="n", secret="s3cret")._repr_html_()
    assert "s3cret" not in hook and "secret" not in hook
