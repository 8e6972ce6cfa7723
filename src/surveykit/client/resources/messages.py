"""Message: SMS, WhatsApp, Facebook and template messages, email, and number lookup."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from surveykit._validation import E164_FORM
from surveykit.client._base import (
    APIRequest,
    M,
    Resource,
    endpoint,
    model_from,
    parse_model,
)
from surveykit.errors import ValidationError
from surveykit.models import (
    E164_DIGITS,
    CallbackSettings,
    EmailRequest,
    LookupResponse,
    MessageType,
    SendRequest,
    SendResponse,
    Window,
)


class Messages(Resource[M]):
    """POST /v3.2/Message, POST /v3.2/Message/SendEmail, GET /v3.2/Message/Lookup/{number}.

    There is no message-kill route in v3.2 (3.1's ``/api/v3.1/Message/Kill`` is gone).
    """

    @endpoint
    def send(
        self,
        request: SendRequest | Mapping[str, Any] | None = None,
        /,
        *,
        destination: str | None = None,
        source: str | None = None,
        message: str | None = None,
        reply: bool | None = None,
        when: datetime | None = None,
        window: Sequence[Window | Mapping[str, Any]] | Window | None = None,
        lookup: bool | None = None,
        test: bool | None = None,
        timeout: int | None = None,
        type: MessageType | int | str | None = None,
        on_behalf: str | None = None,
        survey_id: int | None = None,
    ) -> APIRequest[SendResponse]:
        """Send one message (SMS by default; ``type`` picks WhatsApp, Facebook or a template).

        Returns the platform's :class:`~surveykit.models.SendResponse`. A landline (with
        ``lookup=True``), blocked or stop-listed number raises
        :class:`~surveykit.SendRejectedError` carrying the Send response. A send is retried
        only if it provably never reached the platform; otherwise
        :class:`~surveykit.OutcomeUnknownError`.

        Example:
            >>> client.messages.send(destination="447911123456", source="447700900123",
            ...                      message="How did we do? Reply 0-10", reply=True)
        """
        body = model_from(
            SendRequest,
            request,
            {
                "destination": destination,
                "source": source,
                "message": message,
                "reply": reply,
                "when": when,
                "window": window,
                "lookup": lookup,
                "test": test,
                "timeout": timeout,
                "type": type,
                "on_behalf": on_behalf,
                "survey_id": survey_id,
            },
        )
        return APIRequest(
            "POST",
            "/v3.2/Message",
            parse_model(SendResponse),
            json=body.to_wire(),
            send_response_errors=True,
        )

    @endpoint
    def send_email(
        self,
        request: EmailRequest | Mapping[str, Any] | None = None,
        /,
        *,
        to: str | None = None,
        from_: str | None = None,
        subject: str | None = None,
        content: str | None = None,
        when: datetime | None = None,
        test: bool | None = None,
        lookup: bool | None = None,
        metadata: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        callback: CallbackSettings | Mapping[str, Any] | None = None,
    ) -> APIRequest[SendResponse]:
        """Send one email (one recipient; HTML content; PascalCase body on the wire).

        ``from_`` selects the account's email route. ``metadata`` may be a plain dict.
        With ``test=True`` only routing is checked and the MessageID is ``Unknown``.
        A stop-listed address raises :class:`~surveykit.SendRejectedError`; the platform's
        text errors (``unable to route email``, ``There was a problem with the MetaData
        value``) become the message of a :class:`~surveykit.BadRequestError`.

        Example:
            >>> client.messages.send_email(to="ana@example.org", from_="surveys",
            ...     subject="Your feedback", content="<p>Tell us</p>",
            ...     metadata={"campaign": "spring"})
        """
        body = model_from(
            EmailRequest,
            request,
            {
                "to": to,
                "from_": from_,
                "subject": subject,
                "content": content,
                "when": when,
                "test": test,
                "lookup": lookup,
                "metadata": metadata,
                "callback": callback,
            },
        )
        return APIRequest(
            "POST",
            "/v3.2/Message/SendEmail",
            parse_model(SendResponse),
            json=body.to_wire(),
            send_response_errors=True,
        )

    @endpoint
    def lookup(self, number: str) -> APIRequest[LookupResponse]:
        """Look a number up: reachability, carrier and number type.

        ``number`` is E.164 digits without ``+`` (``447911123456``). A failed lookup (400
        with a LookupResponse) raises :class:`~surveykit.LookupFailedError`, whose
        ``lookup_response`` is the platform's answer; another 400 (a number the platform
        does not take) a :class:`~surveykit.BadRequestError`.
        """
        if not isinstance(number, str) or not E164_DIGITS.fullmatch(number):
            sentence = f"number: {number!r} is not in the expected form; expected {E164_FORM}."
            raise ValidationError([("number", sentence)])
        return APIRequest(
            "GET",
            f"/v3.2/Message/Lookup/{number}",
            parse_model(LookupResponse),
            idempotent=True,
            lookup_response_errors=True,
        )
