"""POST Message, POST Message/SendEmail and GET Message/Lookup: the sending endpoints.

Every rule of the reference is applied before a message is accepted; the destination
checks the client side knows too (stop list, blocked, failed lookup, landline) are the
platform's, :func:`surveykit.rules.delivery.destination_refusal`. An accepted message is held
until its ``when`` and windows allow it (:func:`surveykit.rules.windows.next_allowed`); the
:class:`~surveykit.sandbox.state._schedule.Schedule` lets it go out (:meth:`Messages.dispatch`)
and its reply window close (:meth:`Messages.expire`) when the clock reaches them.

:class:`Messages` owns the messages, the held sends and the reply windows open per number;
it reads the stop list and the account's email routes, tells the surveys whom a message
invited, and asks the simulated respondents (through :attr:`Messages.contact`, a hook)
whether a message reaches its destination.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from surveykit.models import CallbackSettings, EmailRequest, SendRequest
from surveykit.models.callbacks import metadata_list
from surveykit.models.messages import is_branded
from surveykit.rules import delivery, sms
from surveykit.rules.windows import next_allowed
from surveykit.sandbox.state import _numbers, _rules
from surveykit.sandbox.state._callback import callback_target
from surveykit.sandbox.state._core import CALLBACK_USER, StateCore, User
from surveykit.sandbox.state._errors import Rejection, TextError, errors_of, validation
from surveykit.sandbox.state._records import CallbackTarget, MessageRecord, iso
from surveykit.sandbox.state._stoplist import StopList
from surveykit.sandbox.state._strict import boolean_errors
from surveykit.sandbox.state._surveys import Surveys

_CHANNELS: Final = {0: "SMS", 1: "WhatsApp", 2: "Facebook", 3: "WhatsAppTemplate"}

DEFAULT_REPLY_TIMEOUT: Final = 4320
"""Minutes a reply message stays open (the reference's default: 3 days)."""

Contact = Callable[[MessageRecord, datetime], bool]
"""Note that a message reached its destination at a time; whether it fails there."""


def _no_contact(message: MessageRecord, at: datetime) -> bool:
    return False


def _send_body(
    message_id: str, status: str, carrier: str, reachable: bool, number_type: str
) -> dict[str, Any]:
    return {
        "MessageID": message_id,
        "Status": status,
        "Carrier": carrier,
        "Reachable": reachable,
        "NumberType": number_type,
    }


def _refusal_body(status: str, carrier: str, number_type: str) -> dict[str, Any]:
    """The SendResponse of a send refused by the destination check with ``status``."""
    if status == delivery.FAILED:  # the lookup itself failed: nothing is known of the number
        return _send_body("Unknown", status, "Unknown", False, "Unknown")
    return _send_body("Unknown", status, carrier, status == delivery.REACHABLE, number_type)


def _check_send(request: SendRequest, channel: str) -> None:
    """Refuse a send the platform does not take at all (a validation :class:`Problem`)."""
    destination, source = request.destination, request.source
    if not _numbers.is_possible_number(destination):
        raise validation(
            {
                "destination": [
                    f"The destination number {destination!r} is invalid: no such country code "
                    "or the wrong length for it"
                ]
            }
        )
    if source.lstrip("+") == destination:
        raise validation({"destination": ["The destination and source are the same."]})
    if channel != "SMS" and is_branded(source):
        raise validation(
            {
                "source": [
                    f"A branded source ({source!r}) is not supported on the {channel} route; "
                    "use the account's number"
                ]
            }
        )
    if channel == "SMS" and sms.segments(request.message) > _rules.SMS_MAX_SEGMENTS:
        raise validation(
            {
                "message": [
                    f"The message takes {sms.segments(request.message)} SMS segments; "
                    f"at most {_rules.SMS_MAX_SEGMENTS} are sent"
                ]
            }
        )
    if channel != "SMS" and len(request.message) > _rules.CHAT_MAX_CHARS:
        raise validation(
            {
                "message": [
                    f"The message has {len(request.message)} characters; at most "
                    f"{_rules.CHAT_MAX_CHARS} on the {channel} route"
                ]
            }
        )


class Messages:
    """Sending: messages, email and number lookups; held sends and open reply windows."""

    def __init__(self, core: StateCore, stops: StopList, surveys: Surveys) -> None:
        self.core = core
        self.stops = stops
        self.surveys = surveys
        self.contact: Contact = _no_contact
        """Called as each message goes out: the simulated respondents' hook (whether the
        message fails at its destination)."""
        self.clear()

    def clear(self) -> None:
        """No messages, nothing held, no reply window open."""
        self.messages: dict[str, MessageRecord] = {}
        self.scheduled: list[tuple[datetime, str]] = []
        self.open_replies: dict[str, list[str]] = {}

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the messages, the held sends and the open reply windows from the store."""
        messages = sorted(
            (MessageRecord.from_json(v) for v in saved.get("message", {}).values()),
            key=lambda m: m.message_id,
        )
        messages.sort(key=lambda m: (m.created, m.key))
        for message in messages:
            self.messages[message.key] = message
            if message.status == "Scheduled" and message.scheduled_for is not None:
                bisect.insort(self.scheduled, (message.scheduled_for, message.key))
            if message.open_for_reply:
                self.open_replies.setdefault(message.destination, []).append(message.key)

    # ----------------------------------------------------------------- lookup

    def lookup(self, number: str) -> dict[str, Any]:
        """GET Message/Lookup: the LookupResponse body.

        A lookup that fails (the magic number ``447700900902``) raises a :class:`Rejection`
        with the body the platform answers with; a number that cannot be one raises a
        validation :class:`Problem`.
        """
        if not _numbers.is_possible_number(number):
            raise validation(
                {
                    "number": [
                        f"{number!r} is not a telephone number: country code and number, digits "
                        "only, no leading zeros (pattern ^[1-9]\\d{1,14}$)"
                    ]
                }
            )
        info = _numbers.lookup_number(number)
        with self.core.transaction():
            if info.outcome == "lookup-error":
                raise Rejection(
                    {
                        "messageID": "Unknown",
                        "status": "Error",
                        "carrier": "Unknown",
                        "reachable": False,
                        "numberType": "Unknown",
                    }
                )
            message_id = self.core.next_message_id()
            self.core.save_meta()
        status = "Blocked" if info.outcome == "blocked" else "Success"
        return {
            "messageID": message_id,
            "status": status,
            "carrier": info.carrier,
            "reachable": info.reachable,
            "numberType": info.number_type,
        }

    # ----------------------------------------------------------------- messages

    def send_message(
        self,
        request: SendRequest,
        user: User,
        *,
        keep_id: str | None = None,
        reply_to_event: int | None = None,
    ) -> dict[str, Any]:
        """POST Message: apply every rule of the reference, then accept or refuse.

        Returns the SendResponse body of a send accepted or tested, or of a refusal the
        platform reports through the account callback (a ``Lookup`` event). Raises a
        :class:`Rejection` for a refusal answered with its body (stop list, blocked,
        landline, failed lookup, problem sending) and a validation :class:`Problem` for a
        request the platform does not take at all.

        ``keep_id`` (a message sent in answer to a callback) makes the message keep that
        MessageID instead of taking a new one; ``reply_to_event`` is the event answered.
        """
        destination = request.destination
        channel = _CHANNELS[int(request.type or 0)]
        _check_send(request, channel)
        info = _numbers.lookup_number(destination)
        looked = bool(request.lookup)
        carrier = info.carrier if looked else "Unknown"
        number_type = info.number_type if looked else "Unknown"
        with self.core.transaction():
            now = self.core.now()
            refusal = delivery.destination_refusal(
                stopped=destination in self.stops,
                blocked=info.outcome == "blocked",
                lookup=looked,
                lookup_failed=info.outcome == "lookup-error",
                number_type=info.number_type,
            )
            if refusal is not None:
                return self._refuse(request, _refusal_body(refusal, carrier, number_type))
            if info.outcome == "send-error":  # "problem sending": a 400 even with a callback
                raise Rejection(
                    _send_body("Unknown", "Failed", carrier, info.reachable, number_type)
                )
            reachable = info.reachable if looked else True
            if request.test:
                return _send_body("Unknown", "Sent", carrier, reachable, number_type)
            message = self._record(request, user, channel, info, now, keep_id, reply_to_event)
            self.accept(message, request.when, request.window or [])
            return _send_body(message.message_id, "Sent", carrier, reachable, number_type)

    def _record(
        self,
        request: SendRequest,
        user: User,
        channel: str,
        info: _numbers.NumberInfo,
        now: datetime,
        keep_id: str | None,
        reply_to_event: int | None,
    ) -> MessageRecord:
        """The record of an accepted send (a reply keeps the MessageID it answers)."""
        looked = bool(request.lookup)
        if keep_id is not None:
            message_id = keep_id
            replies = sum(1 for m in self.messages.values() if m.message_id == keep_id)
            key = f"{keep_id}/reply-{replies}"
        else:
            message_id = key = self.core.next_message_id()
        return MessageRecord(
            message_id=message_id,
            key=key,
            reply_to_event=reply_to_event,
            channel=channel,
            source=request.source,
            destination=request.destination,
            text=request.message,
            created=now,
            status="Scheduled",
            reply=request.reply,
            lookup=looked,
            timeout_minutes=(DEFAULT_REPLY_TIMEOUT if request.timeout is None else request.timeout),
            windows=[w.to_wire() for w in request.window or []],
            segments=sms.segments(request.message) if channel == "SMS" else 1,
            carrier=info.carrier,
            reachable=info.reachable,
            number_type=info.number_type,
            survey_id=request.survey_id,
            on_behalf=request.on_behalf,
            user=user.name,
        )

    def _refuse(self, request: SendRequest, body: dict[str, Any]) -> dict[str, Any]:
        # Without an account callback the refusal is a 400; with one, the platform answers
        # 200 and reports the failed destination check as a Lookup callback.
        if self.core.account.account_callback is None:
            raise Rejection(body)
        self.core.emit(
            "Lookup",
            source=request.source,
            destination=request.destination,
            message=request.message,
            status=body["Status"],
            lookup=bool(request.lookup),
            message_id="Unknown",
            carrier=body["Carrier"],
            reachable=body["Reachable"],
            number_type=body["NumberType"],
        )
        return body

    def accept(self, message: MessageRecord, when: datetime | None, windows: Sequence[Any]) -> None:
        """Take an accepted message: journal it, and send it now or hold it (the lock held)."""
        now = self.core.now()
        start = max(now, when) if when is not None else now
        # An empty Window list in a request reads as no windows (as if absent).
        due = next_allowed(windows or None, start)
        assert due is not None  # every Window has at least one day
        message.scheduled_for = due
        self.messages[message.key] = message
        kind = "email" if message.channel == "Email" else "message"
        body: dict[str, Any] = {
            "scheduledFor": iso(due),
            "channel": message.channel,
            "subject": message.subject,
        }
        if message.reply_to_event is not None:
            body["replyToEvent"] = message.reply_to_event
        self.core.record(
            kind,
            message_id=message.message_id,
            destination=message.destination,
            source=message.source,
            text=message.text,
            user=message.user,
            body=body,
        )
        if due <= now:
            self.dispatch(message, now)
        else:
            bisect.insort(self.scheduled, (due, message.key))
            self.core.save("message", message.key, message)
            self.core.due_changed()
        self.core.save_meta()

    def send_callback_reply(
        self, event_seq: int, generation: int, request: SendRequest
    ) -> dict[str, Any] | None:
        """Send the message a receiver answered a Message/Keyword callback with.

        It keeps the MessageID of the event's original message (a new one when the event
        had none) and goes through every rule of POST /v3.2/Message: the SendResponse body,
        or a :class:`Rejection` as :meth:`send_message` raises. None when the state was
        reset since the event.
        """
        with self.core.transaction():
            core = self.core
            event = core.event(event_seq) if generation == core.generation else None
            if event is None:
                return None
            original = event.message_id if event.message_id in self.messages else None
            return self.send_message(
                request, CALLBACK_USER, keep_id=original, reply_to_event=event_seq
            )

    # ----------------------------------------------------------------- email

    def send_email(self, body: Mapping[str, Any], user: User) -> dict[str, Any]:
        """POST Message/SendEmail with the body as sent (MetaData and Callback exact-case).

        Returns the SendResponse body; an address on the stop list raises a
        :class:`Rejection`, a request the controller refuses a :class:`Problem` or a
        :class:`TextError` (its plain-text answers).
        """
        raw = dict(body)
        metadata_raw = raw.pop("MetaData", None)
        callback_raw = raw.pop("Callback", None)
        wrong = boolean_errors(EmailRequest, raw)
        if wrong:
            raise validation(wrong)
        try:
            request = EmailRequest.model_validate(raw)
        except ValueError as exc:
            raise validation(errors_of(exc)) from None
        try:
            # On the wire MetaData is an array of single pairs; the client's convenience
            # of a plain object is not the platform's.
            if metadata_raw is not None and not isinstance(metadata_raw, list):
                raise ValueError("MetaData: not an array")
            metadata = metadata_list(metadata_raw) or []
        except ValueError:
            raise TextError("There was a problem with the MetaData value") from None
        names = {next(iter(pair)) for pair in metadata}
        token_pairs = [{name: value} for name, value in user.metadata]
        if any(name in names for name, _ in user.metadata):
            raise TextError("There was a problem with the MetaData value")
        target: CallbackTarget | None = None
        if callback_raw is not None:
            try:
                settings = CallbackSettings.model_validate(callback_raw)
            except ValueError:
                settings = None  # the reference: an invalid Callback block is ignored
            if settings is not None:
                target = callback_target(settings, strict=False)
        route = self.core.account.email_route(request.from_)
        if route is None:
            raise TextError("unable to route email")
        if request.test:
            return _send_body("Unknown", "Sent", "Unknown", True, "Unknown")
        with self.core.transaction():
            if request.to.lower() in self.stops:
                raise Rejection(
                    _send_body("Unknown", delivery.BLOCKED, "Unknown", False, "Unknown")
                )
            message = MessageRecord(
                message_id=self.core.next_message_id(),
                channel="Email",
                source=route["address"],
                destination=request.to,
                text=request.content,
                subject=request.subject,
                created=self.core.now(),
                status="Scheduled",
                metadata=[*token_pairs, *metadata],
                callback_urls=list(target.urls) if target else [],
                callback=target.to_json() if target else None,
                user=user.name,
            )
            self.accept(message, request.when, [])
            return _send_body(message.message_id, "Sent", "Unknown", True, "Unknown")

    # ----------------------------------------------------------------- out, and closed

    def dispatch(self, message: MessageRecord, at: datetime) -> None:
        """A message goes out at ``at``: its receipts, its reply window, who it invited."""
        message.status = "Sent"
        message.sent_at = at
        common: dict[str, Any] = {
            "source": message.source,
            "destination": message.destination,
            "message": message.text,
            "message_id": message.message_id,
            "segments": message.segments,
            "metadata": message.metadata,
            "lookup": message.lookup,
            "callback": message.callback,
        }
        lookup_fields: dict[str, Any] = {
            "carrier": message.carrier,
            "reachable": message.reachable,
            "number_type": message.number_type,
        }
        self.core.emit("Receipt", at=at, status="Sent", **common, **lookup_fields)
        undeliverable = self.contact(message, at)
        delivered = not undeliverable and delivery.delivered(
            message.channel, reachable=message.reachable, number_type=message.number_type
        )
        message.status = "Delivered" if delivered else "Failed"
        self.core.emit("Receipt", at=at, status=message.status, **common, **lookup_fields)
        if message.reply and message.channel != "Email":
            minutes = message.timeout_minutes
            if minutes is None:
                minutes = DEFAULT_REPLY_TIMEOUT
            # The reference gives timeout no minimum: 0 or less keeps the message open for
            # no time at all, so its window closes as it goes out (no reply is matched to it).
            message.expires_at = at + timedelta(minutes=max(minutes, 0))
            if minutes > 0:
                message.open_for_reply = True
                self.open_replies.setdefault(message.destination, []).append(message.key)
                self.core.due_changed()
            else:
                self.expire(message)
        self.surveys.mark_invited(message, at)
        self.core.save("message", message.key, message)

    def first_expiry(self, target: datetime | None) -> tuple[datetime, str] | None:
        """The first reply window to close (by ``target``; None: at any time)."""
        best: tuple[datetime, str] | None = None
        for ids in self.open_replies.values():
            for message_id in ids:
                expires = self.messages[message_id].expires_at
                if (
                    expires is not None
                    and (target is None or expires <= target)
                    and (best is None or expires < best[0])
                ):
                    best = (expires, message_id)
        return best

    def expire(self, message: MessageRecord) -> None:
        """A message's reply window closes: an ``Expired`` receipt ("message timed out")."""
        message.open_for_reply = False
        ids = self.open_replies.get(message.destination, [])
        if message.key in ids:
            ids.remove(message.key)
        if not ids:
            self.open_replies.pop(message.destination, None)
        self.core.save("message", message.key, message)
        self.core.emit(
            "Receipt",
            at=message.expires_at,
            source=message.source,
            destination=message.destination,
            message=message.text,
            status="Expired",
            message_id=message.message_id,
            segments=message.segments,
            metadata=message.metadata,
            callback=message.callback,
            lookup=message.lookup,
            carrier=message.carrier,
            reachable=message.reachable,
            number_type=message.number_type,
        )

    def open_message(self, number: str, to: str | None) -> MessageRecord | None:
        """The latest message open for a reply from ``number`` (sent from ``to``, if given)."""
        for message_id in reversed(self.open_replies.get(number, [])):
            message = self.messages[message_id]
            if to is None or message.source.lstrip("+") == to.lstrip("+"):
                return message
        return None


__all__ = ["DEFAULT_REPLY_TIMEOUT", "Contact", "Messages"]
