"""What a callback handler returns, and the send request it becomes.

Kept apart from the receiver (which needs starlette): ``build_reply`` and the ``Reply`` and
``Handler`` types are usable, and testable, without a server.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from pydantic import ValidationError

from surveykit.models import CallbackPayload, SendRequest

Reply: TypeAlias = str | Mapping[str, Any] | SendRequest | None
"""What a handler returns: no reply, a text, fields of a send request, or a send request."""

Handler: TypeAlias = Callable[[CallbackPayload], Reply | Awaitable[Reply]]
"""A function (sync or async) that gets a callback payload and returns a :data:`Reply`."""


def respondent_number(payload: CallbackPayload) -> str | None:
    """The number to reply to: the payload's Source, without a leading ``+``."""
    if payload.source is None:
        return None
    return payload.source.strip().removeprefix("+")


def build_reply(payload: CallbackPayload, reply: Reply) -> SendRequest | None:
    """Turn a handler's return value into the send request answered to the platform.

    * ``None``: no reply.
    * a ``str``: ``SendRequest(destination=<payload Source>, source=<payload Destination>,
      message=<the text>, reply=True)``.
    * a mapping: those same defaults, overridden by the mapping's fields (snake_case or
      camelCase, e.g. ``{"message": "Thanks", "reply": False, "surveyId": 12}``).
    * a :class:`~surveykit.models.SendRequest`: used as it is.

    Raises:
        TypeError: for any other return type.
        pydantic.ValidationError: when the result is not a valid send request.
    """
    if reply is None:
        return None
    if isinstance(reply, SendRequest):
        return reply
    defaults: dict[str, Any] = {
        "destination": respondent_number(payload),
        "source": payload.destination,
        "reply": True,
    }
    if isinstance(reply, str):
        return SendRequest.model_validate({**defaults, "message": reply})
    if isinstance(reply, Mapping):
        fields = dict(defaults)
        for key, value in reply.items():
            # One spelling per field: a camelCase key replaces the snake_case default.
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", str(key)).lower()
            fields.pop(snake, None)
            fields[key] = value
        return SendRequest.model_validate(fields)
    raise TypeError(
        f"a handler returned {type(reply).__name__}; expected None, str, dict or SendRequest"
    )


def _field_label(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, str):
            field = CallbackPayload.model_fields.get(item)
            parts.append(field.alias if field is not None and field.alias else item)
        else:
            parts[-1:] = [f"{parts[-1] if parts else ''}[{item}]"]
    return ".".join(parts) or "body"


def _validation_errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [
        {"field": _field_label(tuple(err["loc"])), "message": err["msg"]} for err in exc.errors()
    ]


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in _validation_errors(exc))
        return f"the reply is not a valid send request ({detail})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
