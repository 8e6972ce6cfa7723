"""Every row of the reference's Errors table becomes the right exception, with its body."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import surveykit as sk
from surveykit.models import NumberType, SendStatus

BASE = "https://api.example.test"
TOKEN = "tok-123"


def client_answering(response: httpx.Response) -> sk.Client:
    return sk.Client(
        BASE,
        TOKEN,
        transport=httpx.MockTransport(lambda request: response),
        retry=sk.RetryPolicy(max_retries=0),
    )


def send(client: sk.Client) -> Any:
    return client.messages.send(
        destination="447700900123", source="447700900999", message="Hi", reply=False
    )


def send_email(client: sk.Client) -> Any:
    return client.messages.send_email(
        to="ana@example.org", from_="surveys", subject="S", content="<p>C</p>"
    )


PROBLEM = {"type": "about:blank", "title": "Bad Request", "status": 400}

ROWS = [
    pytest.param(
        send,
        httpx.Response(400, json={**PROBLEM, "detail": "destination number invalid"}),
        sk.BadRequestError,
        "destination number invalid",
        id="message-invalid-destination",
    ),
    pytest.param(
        send,
        httpx.Response(400, json={**PROBLEM, "detail": "destination and source are the same"}),
        sk.BadRequestError,
        "destination and source are the same",
        id="message-same-source",
    ),
    pytest.param(
        send,
        httpx.Response(400, text="message length is zero"),
        sk.BadRequestError,
        "message length is zero",
        id="message-empty",
    ),
    pytest.param(
        send,
        httpx.Response(
            400,
            json={
                "MessageID": "MS9",
                "Status": "Failed",
                "Carrier": "Unknown",
                "Reachable": False,
                "NumberType": "Unknown",
            },
        ),
        sk.SendRejectedError,
        "Status Failed",
        id="message-problem-sending",
    ),
    pytest.param(
        send,
        httpx.Response(401, text=""),
        sk.AuthenticationError,
        "401",
        id="message-401",
    ),
    pytest.param(
        lambda c: c.messages.lookup("447700900123"),
        httpx.Response(400, json={**PROBLEM, "detail": "lookup failed"}),
        sk.BadRequestError,
        "lookup failed",
        id="lookup-problem",
    ),
    pytest.param(
        send_email,
        httpx.Response(400, text="There was a problem with the MetaData value"),
        sk.BadRequestError,
        "There was a problem with the MetaData value",
        id="email-metadata",
    ),
    pytest.param(
        send_email,
        httpx.Response(400, text="unable to route email"),
        sk.BadRequestError,
        "unable to route email",
        id="email-no-route",
    ),
    pytest.param(
        send_email,
        httpx.Response(
            400,
            json={
                "type": "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                "title": "One or more validation errors occurred.",
                "status": 400,
                "errors": {"Subject": ["The Subject field is required."]},
            },
        ),
        sk.BadRequestError,
        "Subject: The Subject field is required.",
        id="email-validation",
    ),
    pytest.param(
        send_email,
        httpx.Response(401, text="Unauthorized"),
        sk.AuthenticationError,
        "Unauthorized",
        id="email-401",
    ),
    pytest.param(
        send_email,
        httpx.Response(403, text=""),
        sk.PermissionDeniedError,
        "403",
        id="email-403",
    ),
    pytest.param(
        lambda c: c.data.import_records("NOPE", [{"mobileNumber": "447700900123"}]),
        httpx.Response(
            404,
            json={"type": "about:blank", "title": "Not Found", "status": 404, "detail": "NOPE"},
            headers={"Content-Type": "application/problem+json"},
        ),
        sk.NotFoundError,
        "Not Found: NOPE",
        id="import-404",
    ),
    pytest.param(
        lambda c: c.webhooks.list(),
        httpx.Response(500, text="boom"),
        sk.ServerError,
        "boom",
        id="webhook-500",
    ),
    pytest.param(
        lambda c: c.webhooks.list(),
        httpx.Response(418, text="teapot"),
        sk.APIStatusError,
        "418: teapot",
        id="unmapped-status",
    ),
]


@pytest.mark.parametrize(("call", "response", "error", "text"), ROWS)
def test_error_rows(call: Any, response: httpx.Response, error: type, text: str) -> None:
    with pytest.raises(error) as caught:
        call(client_answering(response))
    err = caught.value
    assert text in str(err)
    assert err.status_code == response.status_code
    assert err.response.status_code == response.status_code
    assert err.request.url.path.startswith("/v3.2/")
    if error is sk.APIStatusError:
        assert type(err) is sk.APIStatusError


def test_not_found_carries_problem_details() -> None:
    response = httpx.Response(
        404, json={"title": "Not Found", "status": "404", "detail": "unknown", "traceId": "t1"}
    )
    with pytest.raises(sk.NotFoundError) as caught:
        client_answering(response).data.import_records("X", [{"a": "b"}])
    problem = caught.value.problem
    assert problem is not None
    assert problem.status == 404 and problem.detail == "unknown"
    assert problem.extra_fields == {"traceId": "t1"}


@pytest.mark.parametrize(
    ("body", "status", "number_type", "reachable"),
    [
        pytest.param(
            {
                "MessageID": "Unknown",
                "Status": "Reachable",
                "Reachable": True,
                "NumberType": "Landline",
            },
            SendStatus.REACHABLE,
            NumberType.LANDLINE,
            True,
            id="landline",
        ),
        pytest.param(
            {"MessageID": "Unknown", "Status": "Blocked", "Reachable": False},
            SendStatus.BLOCKED,
            None,
            False,
            id="blocked",
        ),
    ],
)
def test_send_rejections_carry_the_send_response(
    body: dict[str, Any], status: SendStatus, number_type: Any, reachable: bool
) -> None:
    with pytest.raises(sk.SendRejectedError) as caught:
        send(client_answering(httpx.Response(400, json=body)))
    rejected = caught.value.send_response
    assert rejected.message_id == "Unknown" and not rejected.created
    assert rejected.status is status
    assert rejected.number_type == number_type
    assert rejected.reachable is reachable
    assert isinstance(caught.value, sk.BadRequestError)


def test_email_stop_list_rejection() -> None:
    body = {
        "MessageID": "Unknown",
        "Status": "Blocked",
        "Carrier": "Unknown",
        "Reachable": False,
        "NumberType": "Unknown",
    }
    with pytest.raises(sk.SendRejectedError, match="Status Blocked") as caught:
        send_email(client_answering(httpx.Response(400, json=body)))
    assert caught.value.send_response.status is SendStatus.BLOCKED


def test_a_failed_lookup_carries_its_lookup_response() -> None:
    body = {"messageID": "Unknown", "status": "Error", "carrier": "Unknown",
            "reachable": False, "numberType": "Unknown"}
    with pytest.raises(sk.LookupFailedError, match="lookup failed") as caught:
        client_answering(httpx.Response(400, json=body)).messages.lookup("447700900123")
    looked = caught.value.lookup_response
    assert isinstance(looked, sk.models.LookupResponse)
    assert (looked.message_id, looked.status, looked.reachable) == ("Unknown", "Error", False)
    assert isinstance(caught.value, sk.BadRequestError) and caught.value.status_code == 400
    assert caught.value.body == body


def test_a_lookup_400_without_a_lookup_response_is_a_plain_bad_request() -> None:
    problem = {**PROBLEM, "errors": {"number": ["not a number"]}}
    with pytest.raises(sk.BadRequestError) as caught:
        client_answering(httpx.Response(400, json=problem)).messages.lookup("447700900123")
    assert type(caught.value) is sk.BadRequestError


def test_a_lookup_shaped_400_elsewhere_is_a_plain_bad_request() -> None:
    body = {"messageID": "Unknown", "status": "Error", "reachable": False}
    with pytest.raises(sk.BadRequestError) as caught:
        client_answering(httpx.Response(400, json=body)).keywords.list()
    assert type(caught.value) is sk.BadRequestError


def test_rate_limit_error_carries_retry_after() -> None:
    response = httpx.Response(429, text="slow down", headers={"Retry-After": "7"})
    with pytest.raises(sk.RateLimitError) as caught:
        send(client_answering(response))
    assert caught.value.retry_after == 7.0


def test_hierarchy() -> None:
    for cls in (
        sk.ConfigurationError,
        sk.APIConnectionError,
        sk.APITimeoutError,
        sk.OutcomeUnknownError,
        sk.APIStatusError,
        sk.ResultsParseError,
    ):
        assert issubclass(cls, sk.SurveykitError)
    for cls in (
        sk.BadRequestError,
        sk.AuthenticationError,
        sk.PermissionDeniedError,
        sk.NotFoundError,
        sk.RateLimitError,
        sk.ServerError,
        sk.UnexpectedResponseError,
    ):
        assert issubclass(cls, sk.APIStatusError)
    assert issubclass(sk.SendRejectedError, sk.BadRequestError)
    assert issubclass(sk.LookupFailedError, sk.BadRequestError)


def test_results_parse_error_names_where() -> None:
    err = sk.ResultsParseError("unterminated quote", format="CSV", line=3, record=2, offset=57)
    assert str(err) == "unterminated quote (format CSV, line 3, record 2, byte offset 57)"
    assert (err.format, err.line, err.record, err.offset) == ("CSV", 3, 2, 57)


def test_conflict() -> None:
    response = httpx.Response(409, json={"title": "Conflict", "detail": "keyword JOIN exists"})
    with pytest.raises(sk.ConflictError, match="keyword JOIN exists"):
        client_answering(response).keywords.create("JOIN")


def _exception_classes() -> list[type[BaseException]]:
    """Every public exception class defined in surveykit's modules (sandbox internals aside)."""
    import importlib
    import inspect
    import pkgutil

    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(sk.__path__, "surveykit."):
        if info.name.startswith("surveykit.sandbox") or info.name in (
            "surveykit.plots",
            "surveykit.widgets",
        ):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and not issubclass(obj, Warning)  # categories for warnings filters, not raised
                and obj.__module__ == info.name
                and not name.startswith("_")
                # a private module's exceptions are its own control flow (the command line's
                # CommandError): not SurveykitErrors, see test_public_api
                and not any(part.startswith("_") for part in info.name.split("."))
            ):
                found[f"{obj.__module__}.{name}"] = obj
    return [found[key] for key in sorted(found)]


@pytest.mark.parametrize("cls", _exception_classes(), ids=lambda cls: cls.__name__)
def test_every_exception_derives_from_surveykit_error(cls: type[BaseException]) -> None:
    if cls is sk.BatchInterrupted:
        # A KeyboardInterrupt on purpose: an Exception would be swallowed by `except Exception`.
        assert issubclass(cls, KeyboardInterrupt) and not issubclass(cls, Exception)
    else:
        assert issubclass(cls, sk.SurveykitError), cls


def test_the_exceptions_found_include_the_ones_once_outside_the_tree() -> None:
    names = {cls.__name__ for cls in _exception_classes()}
    assert {"JournalMismatchError", "TemplateError", "StoreClosedError", "ValidationError"} <= (
        names
    )


def test_bad_input_errors_are_value_errors() -> None:
    from surveykit.batch import JournalMismatchError, TemplateError

    for cls in (sk.ValidationError, sk.ConfigurationError, TemplateError, JournalMismatchError):
        assert issubclass(cls, ValueError), cls


def test_batch_interrupted_is_exported() -> None:
    from surveykit.batch import BatchInterrupted

    assert sk.BatchInterrupted is BatchInterrupted
    assert "BatchInterrupted" in sk.__all__


def test_errors_module_documents_the_whole_tree() -> None:
    import surveykit.errors

    doc = surveykit.errors.__doc__ or ""
    for cls in _exception_classes():
        assert cls.__name__ in doc, cls.__name__
