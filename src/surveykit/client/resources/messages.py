"""Message: SMS, WhatsApp, Facebook and template messages, email, and number lookup."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from surveykit.client._base import (
    APIRequest,
    M,
    Resource,
    endpoint,
    model_from,
    parse_model,
)
from surveykit.models import (
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
        region: str | None = None,
        strict: bool = False,
    ) -> APIRequest[SendResponse]:
        """Send one message (SMS by default; ``type`` picks WhatsApp, Facebook or a template).

        ``destination`` is a number as people write it: E.164 digits (``447911123456``),
        international (``+44 7911 123456``, ``+1 (201) 555-0123``), or national
        (``07911 123456``) read for ``region`` (default: the client's ``default_region``).
        It is read by the import's rules (:func:`surveykit.normalize_phone_number`) and sent
        as E.164 digits; as there, bare digits with a region are that region's national
        number when that is valid (write ``+`` to make digits international). A number
        phonenumbers finds possible but not valid (a new range, or a fictional one like
        07700 900xxx) is sent unless ``strict=True``. A number that cannot be read raises
        :class:`~surveykit.ValidationError` naming ``destination`` before anything is sent.

        Returns the platform's :class:`~surveykit.models.SendResponse`. A landline (with
        ``lookup=True``), blocked or stop-listed number raises
        :class:`~surveykit.SendRejectedError` carrying the Send response. A send is retried
        only if it provably never reached the platform; otherwise
        :class:`~surveykit.OutcomeUnknownError`.

        Example:
            >>> client.messages.send(destination="447911123456", source="447700900123",
            ...                      message="How did we do? Reply 0-10", reply=True)
        """
        destination = self._destination(request, destination, region, strict)
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

    def _destination(
        self,
        request: SendRequest | Mapping[str, Any] | None,
        destination: str | None,
        region: str | None,
        strict: bool,
    ) -> str | None:
        """The destination argument (or a request dict's) read as E.164 digits."""
        field = "destination"
        if destination is None and isinstance(request, Mapping) and "destination" in request:
            destination = request["destination"]
        if destination is None:
            return None  # the model says it is required
        # phonenumbers' metadata is not small: loaded when a number is first read
        from surveykit.rules.numbers import read_number, region_for

        reading = region_for(region, self._client.default_region)
        return read_number(destination, field, reading, strict=strict)

    @endpoint
    def lookup(
        self, number: str, *, region: str | None = None, strict: bool = False
    ) -> APIRequest[LookupResponse]:
        """Look a number up: reachability, carrier and number type.

        ``number`` is a number as people write it (``447911123456``, ``+44 7911 123456``,
        or ``07911 123456`` read for ``region``, default the client's ``default_region``),
        read as :meth:`send` reads its destination; a number that cannot be read (or, with
        ``strict=True``, is possible but not valid) raises
        :class:`~surveykit.ValidationError` naming ``number`` before anything is sent. A
        failed lookup (400 with a LookupResponse) raises
        :class:`~surveykit.LookupFailedError`, whose ``lookup_response`` is the platform's
        answer; another 400 (a number the platform does not take) a
        :class:`~surveykit.BadRequestError`.
        """
        from surveykit.rules.numbers import read_number, region_for  # phonenumbers: on first use

        number = read_number(
            number, "number", region_for(region, self._client.default_region), strict=strict
        )
        return APIRequest(
            "GET",
            f"/v3.2/Message/Lookup/{number}",
            parse_model(LookupResponse),
            idempotent=True,
            lookup_response_errors=True,
        )
