"""Reading the platform's answers: request models, JSON bodies, and HTTP errors.

What the request flow (:func:`~surveykit.client._flow.request_flow`) does with a response
once it has one: parse the body into models, or map a status to the error tree (with the
reference's ProblemDetails, a SendResponse or LookupResponse carried by a 400, and "did you
mean" for a 404).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from pydantic import BaseModel

from surveykit.client._not_found import not_found_note
from surveykit.client._retry import OUTCOME_UNKNOWN_STATUSES, parse_retry_after
from surveykit.errors import (
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    LookupFailedError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SendRejectedError,
    ServerError,
    ServerOutcomeUnknownError,
    UnexpectedResponseError,
    describe_request,
)
from surveykit.models import LookupResponse, ProblemDetails, SendResponse
from surveykit.models._validation import validate

if TYPE_CHECKING:
    from surveykit.client._base import APIRequest

ModelT = TypeVar("ModelT", bound=BaseModel)


def model_from(
    cls: type[ModelT], given: ModelT | Mapping[str, Any] | None, fields: Mapping[str, Any]
) -> ModelT:
    """Build a request model from a model instance or dict and/or keyword fields.

    Keyword fields left as None are not given; given ones override the instance's. Values
    the model refuses raise :class:`~surveykit.ValidationError`, one sentence per field.
    """
    values = {key: value for key, value in fields.items() if value is not None}
    if given is None:
        return validate(cls, values)
    if isinstance(given, cls) and not values:
        return given
    base = given.model_dump(exclude_unset=True) if isinstance(given, BaseModel) else dict(given)
    return validate(cls, {**base, **values})


def read_json(response: httpx.Response) -> Any:
    """The response body as JSON; raise :class:`UnexpectedResponseError` if it is not."""
    if not response.content.strip():
        return None
    try:
        return json.loads(response.content)
    except ValueError as exc:
        raise UnexpectedResponseError(
            f"{describe_request(response.request)} -> {response.status_code}: "
            f"the body is not JSON: {_snippet(response.text)}",
            response=response,
            body=response.text,
        ) from exc


def parse_model(cls: type[ModelT]) -> Callable[[httpx.Response], ModelT]:
    """A response reader that validates the JSON body into ``cls``."""

    def parse(response: httpx.Response) -> ModelT:
        body = read_json(response)
        try:
            return cls.model_validate(body)
        except ValueError as exc:
            raise UnexpectedResponseError(
                f"{describe_request(response.request)} -> {response.status_code}: "
                f"the body is not a {cls.__name__}: {exc}",
                response=response,
                body=body,
            ) from exc

    return parse


def parse_model_list(cls: type[ModelT]) -> Callable[[httpx.Response], list[ModelT]]:
    """A response reader for a JSON array of ``cls`` (an object wrapping one array is OK)."""

    def parse(response: httpx.Response) -> list[ModelT]:
        body = unwrap_list(read_json(response))
        try:
            return [cls.model_validate(item) for item in body]
        except ValueError as exc:
            raise UnexpectedResponseError(
                f"{describe_request(response.request)} -> {response.status_code}: "
                f"the body is not a list of {cls.__name__}: {exc}",
                response=response,
                body=body,
            ) from exc

    return parse


def unwrap_list(body: Any) -> list[Any]:
    """Accept ``[...]``, ``null``, or an object whose only list value is the list."""
    if body is None:
        return []
    if isinstance(body, list):
        return body
    if isinstance(body, dict):
        lists = [value for value in body.values() if isinstance(value, list)]
        if len(lists) == 1:
            return lists[0]
    raise ValueError(f"expected a JSON array, got {_snippet(json.dumps(body))}")


def _snippet(text: str, limit: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
}


def _looks_like_send_response(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    keys = {str(key).lower() for key in body}
    return "messageid" in keys and "status" in keys


def _looks_like_lookup_response(body: Any) -> bool:
    # A ProblemDetails has a status too: a LookupResponse names what it found of the number.
    if not isinstance(body, dict):
        return False
    keys = {str(key).lower() for key in body}
    return "status" in keys and bool(keys & {"messageid", "carrier", "reachable", "numbertype"})


def _validation_summary(errors: Any) -> str:
    if isinstance(errors, dict):
        parts = []
        for name, messages in errors.items():
            text = "; ".join(messages) if isinstance(messages, list) else str(messages)
            parts.append(f"{name}: {text}")
        return ", ".join(parts)
    return str(errors)


def _problem(body: Any) -> ProblemDetails | None:
    # An error body is read as ProblemDetails only when it is one; reading it never fails.
    if not isinstance(body, dict):
        return None
    if not {"title", "detail", "status", "type"} & {str(key).lower() for key in body}:
        return None
    try:
        return ProblemDetails.model_validate(body)
    except ValueError:
        return None


def status_error(request: APIRequest[Any], response: httpx.Response) -> APIStatusError:
    """Map an error response to the exception class for its status, with its body."""
    status = response.status_code
    where = f"{describe_request(response.request)} -> {status}"
    try:
        body: Any = json.loads(response.content) if response.content.strip() else None
    except ValueError:
        body = response.text
    if status == 400 and request.send_response_errors and _looks_like_send_response(body):
        sent = SendResponse.model_validate(body)
        detail = ", ".join(
            f"{name} {value}"
            for name, value in (
                ("Status", sent.status),
                ("NumberType", sent.number_type),
                ("Reachable", sent.reachable),
            )
            if value is not None
        )
        return SendRejectedError(
            f"{where}: send rejected ({detail})", response=response, body=body, send_response=sent
        )
    if status == 400 and request.lookup_response_errors and _looks_like_lookup_response(body):
        looked = LookupResponse.model_validate(body)
        return LookupFailedError(
            f"{where}: lookup failed (status {looked.status})",
            response=response,
            body=body,
            lookup_response=looked,
        )
    problem = _problem(body)
    if problem is not None:
        detail = problem.summary()
        errors = problem.extra_fields.get("errors")
        if errors:
            detail = f"{detail} ({_validation_summary(errors)})"
    elif isinstance(body, str):
        detail = _snippet(body) or response.reason_phrase
    elif body is None:
        detail = response.reason_phrase or "no body"
    else:
        detail = _snippet(json.dumps(body))
    message = f"{where}: {detail}"
    if status == 429:
        return RateLimitError(
            message,
            response=response,
            body=body,
            problem=problem,
            retry_after=parse_retry_after(response.headers.get("Retry-After")),
        )
    if status in OUTCOME_UNKNOWN_STATUSES and not request.idempotent:
        return ServerOutcomeUnknownError(
            f"{message}; the request may have been acted on before the failure; it was not "
            "sent again. Check before resending.",
            response=response,
            body=body,
            problem=problem,
        )
    if status == 404 and request.not_found is not None:
        note, suggestions = not_found_note(*request.not_found, detail, body)
        error = NotFoundError(message + note, response=response, body=body, problem=problem)
        error.suggestions = tuple(suggestions)
        return error
    cls = _STATUS_ERRORS.get(status, ServerError if status >= 500 else APIStatusError)
    return cls(message, response=response, body=body, problem=problem)
