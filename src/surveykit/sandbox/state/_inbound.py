"""Inbound replies, the stop list and carrier status updates.

A respondent's reply is classified by its first word
(:func:`~surveykit.sandbox.state._rules.classify`): STOP and its synonyms put the number on
the stop list, UNSTOP takes it off, a keyword of the account may answer with its response,
and any other reply to a survey message is recorded as the respondent's next answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from surveykit.models.messages import is_branded
from surveykit.rules import sms
from surveykit.sandbox.state import _numbers, _rules
from surveykit.sandbox.state._messages import Messages
from surveykit.sandbox.state._records import Event, MessageRecord, iso


class Inbound(Messages):
    """What comes back from respondents and carriers."""

    # ----------------------------------------------------------------- stop list

    def add_stop(self, address: str) -> None:
        """Put a number or email address on the stop list."""
        with self.transaction():
            key = address.strip().lower()
            self.stop_list[key] = self.now()
            self._save("stop", key, {"at": iso(self.now())})

    def remove_stop(self, address: str) -> bool:
        """Take a number or email address off the stop list; whether it was on it."""
        with self.transaction():
            key = address.strip().lower()
            if self.stop_list.pop(key, None) is None:
                return False
            self.store.delete("stop", key)
            return True

    # ----------------------------------------------------------------- replies

    def reply(self, from_number: str, text: str, to: str | None = None) -> Event:
        """A respondent's inbound message: classify it, update the state, record the event."""
        if not _numbers.is_possible_number(from_number):
            raise ValueError(f"from_number: {from_number!r} is not E.164 digits")
        with self.transaction():
            return self._receive(from_number, text, to)

    def _receive(self, from_number: str, text: str, to: str | None) -> Event:
        """:meth:`reply`'s work, the lock held (a simulated respondent's STOP comes here)."""
        now = self.now()
        original = self._open_message(from_number, to)
        our_number = to or (original.source if original else None)
        self.record(
            "inbound",
            source=from_number,
            destination=our_number,
            text=text,
            message_id=original.message_id if original else None,
        )
        kind, keyword = _rules.classify(text, list(self.keywords.values()), now)
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
            self.stop_list[from_number] = now
            self._save("stop", from_number, {"at": iso(now)})
            return self.emit("Stop", status="Stopped", **common)
        if kind == "Unstop":
            if self.stop_list.pop(from_number, None) is not None:
                self.store.delete("stop", from_number)
            return self.emit("Unstop", status="Unstopped", **common)
        if kind in ("Help", "Info"):
            return self.emit(kind, status="Received", **common)
        if kind == "Keyword" and keyword is not None:
            event = self.emit("Keyword", status="Received", **common)
            record = self.keywords[keyword.upper()]
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
        event = self.emit("Message", status="Received", **common)
        if original is not None and original.survey_id is not None:
            self._answer_from_reply(original, from_number, text, now)
        return event

    def _open_message(self, number: str, to: str | None) -> MessageRecord | None:
        for message_id in reversed(self.open_replies.get(number, [])):
            message = self.messages[message_id]
            if to is None or message.source.lstrip("+") == to.lstrip("+"):
                return message
        return None

    def _auto_reply(self, source: str, destination: str, text: str) -> None:
        info = _numbers.lookup_number(destination)
        message = MessageRecord(
            message_id=self.next_message_id(),
            channel="SMS",
            source=source,
            destination=destination,
            text=text,
            created=self.now(),
            status="Scheduled",
            segments=sms.segments(text),
            carrier=info.carrier,
            reachable=info.reachable,
            number_type=info.number_type,
            user="keyword",
        )
        self._accept(message, None, [])

    def _answer_from_reply(
        self, original: MessageRecord, number: str, text: str, now: datetime
    ) -> None:
        for survey in self.surveys.values():
            if survey.survey_id != original.survey_id:
                continue
            for respondent_id in self.by_survey.get(survey.reference.lower(), []):
                respondent = self.respondents[respondent_id]
                if respondent.mobile_number == number:
                    pending = [q.key for q in survey.questions if q.key not in respondent.answers]
                    if pending:
                        self._set_answers(survey, respondent, {pending[0]: text.strip()}, now)
                    return

    # ----------------------------------------------------------------- carrier status

    def carrier_status(self, message_id: str, status: str) -> Event:
        """A carrier progress update: a Receipt with ``status`` for a message sent."""
        if not status.strip():
            raise ValueError("status: a carrier status is needed (Enroute, Read, Rejected...)")
        with self.transaction():
            message = self.messages.get(message_id)
            if message is None or message.sent_at is None:
                raise KeyError(f"no message {message_id!r} has been sent")
            message.status = status.strip()
            self._save("message", message.key, message)
            return self.emit(
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
