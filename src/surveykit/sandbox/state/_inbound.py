"""Inbound replies, the stop list and carrier status updates.

A respondent's reply is classified by its first word
(:func:`~surveykit.sandbox.state._rules.classify`): STOP and its synonyms put the number on
the stop list, UNSTOP takes it off, a keyword of the account may answer with its response,
and any other reply to a survey message is recorded as the respondent's next answer.

:class:`Inbound` owns no records: it reads the open messages (:class:`~._messages.Messages`)
and the keywords, changes the stop list, sends a keyword's auto-reply through the messages,
and hands a survey answer to the surveys.
"""

from __future__ import annotations

from typing import Any

from surveykit.models.messages import is_branded
from surveykit.rules import sms
from surveykit.sandbox.state import _numbers, _rules
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._keywords import Keywords
from surveykit.sandbox.state._messages import Messages
from surveykit.sandbox.state._records import Event, MessageRecord
from surveykit.sandbox.state._stoplist import StopList
from surveykit.sandbox.state._surveys import Surveys


class Inbound:
    """What comes back from respondents and carriers."""

    def __init__(
        self,
        core: StateCore,
        messages: Messages,
        stops: StopList,
        keywords: Keywords,
        surveys: Surveys,
    ) -> None:
        self.core = core
        self.messages = messages
        self.stops = stops
        self.keywords = keywords
        self.surveys = surveys

    # ----------------------------------------------------------------- replies

    def reply(self, from_number: str, text: str, to: str | None = None) -> Event:
        """A respondent's inbound message: classify it, update the state, record the event."""
        if not _numbers.is_possible_number(from_number):
            raise ValueError(f"from_number: {from_number!r} is not E.164 digits")
        with self.core.transaction():
            return self.receive(from_number, text, to)

    def receive(self, from_number: str, text: str, to: str | None) -> Event:
        """:meth:`reply`'s work, the lock held (a simulated respondent's STOP comes here)."""
        core = self.core
        now = core.now()
        original = self.messages.open_message(from_number, to)
        our_number = to or (original.source if original else None)
        core.record(
            "inbound",
            source=from_number,
            destination=our_number,
            text=text,
            message_id=original.message_id if original else None,
        )
        kind, keyword = _rules.classify(text, list(self.keywords.keywords.values()), now)
        common: dict[str, Any] = {
            "source": from_number,
            "destination": our_number,
            "message": text,
            "inbound": True,
            "segments": sms.segments(text),
            "message_id": original.message_id if original else "Unknown",
            "callback": original.callback if original else None,
        }
        if kind == "Stop":
            self.stops.put(from_number, now)
            return core.emit("Stop", status="Stopped", **common)
        if kind == "Unstop":
            self.stops.drop(from_number)
            return core.emit("Unstop", status="Unstopped", **common)
        if kind in ("Help", "Info"):
            return core.emit(kind, status="Received", **common)
        if kind == "Keyword" and keyword is not None:
            event = core.emit("Keyword", status="Received", **common)
            record = self.keywords.keywords[keyword.upper()]
            # One answer, not two: a Keyword callback is response-type (the reference),
            # so a receiver's answer is the reply; the keyword's own response is sent
            # only when the event has no callback to go to.
            answered_by_receiver = bool(event.callback)
            if (
                record.response
                and not answered_by_receiver
                and our_number
                and not is_branded(our_number)
            ):
                self._auto_reply(our_number, from_number, record.response)
            return event
        event = core.emit("Message", status="Received", **common)
        if original is not None and original.survey_id is not None:
            self.surveys.answer_from_reply(original, from_number, text, now)
        return event

    def _auto_reply(self, source: str, destination: str, text: str) -> None:
        info = _numbers.lookup_number(destination)
        message = MessageRecord(
            message_id=self.core.next_message_id(),
            channel="SMS",
            source=source,
            destination=destination,
            text=text,
            created=self.core.now(),
            status="Scheduled",
            segments=sms.segments(text),
            carrier=info.carrier,
            reachable=info.reachable,
            number_type=info.number_type,
            user="keyword",
        )
        self.messages.accept(message, None, [])

    # ----------------------------------------------------------------- carrier status

    def carrier_status(self, message_id: str, status: str) -> Event:
        """A carrier progress update: a Receipt with ``status`` for a message sent."""
        if not status.strip():
            raise ValueError("status: a carrier status is needed (Enroute, Read, Rejected...)")
        with self.core.transaction():
            message = self.messages.messages.get(message_id)
            if message is None or message.sent_at is None:
                raise KeyError(f"no message {message_id!r} has been sent")
            message.status = status.strip()
            self.core.save("message", message.key, message)
            return self.core.emit(
                "Receipt",
                status=message.status,
                source=message.source,
                destination=message.destination,
                message=message.text,
                message_id=message.message_id,
                segments=message.segments,
                metadata=message.metadata,
                lookup=message.lookup,
                carrier=message.carrier,
                reachable=message.reachable,
                number_type=message.number_type,
                callback=message.callback,
            )


__all__ = ["Inbound"]
