"""What the clock makes happen: held sends go out, reply windows close.

On a fixed clock this happens in :meth:`Schedule.advance`; on a realtime clock in
:meth:`Schedule.catch_up`, which every transaction runs first (and the realtime ticker
calls when :meth:`Schedule.next_due` comes). Things happen in time order, each at its own
time: a message sent at 09:00 with a one-minute timeout expires at 09:01 even when the
clock jumps a day.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from surveykit.rules import delivery
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._records import MessageRecord

MAX_ADVANCE: Final = timedelta(days=36_600)
"""The furthest the clock moves in one step (about a century; dates stay representable)."""

DEFAULT_REPLY_TIMEOUT: Final = 4320
"""Minutes a reply message stays open (the reference's default: 3 days)."""


class Schedule(StateCore):
    """The clock's work over the records: scheduled sends and reply windows."""

    def catch_up(self) -> None:
        """On a realtime clock, let what fell due happen: held sends go out, windows close.

        A fixed clock only moves with :meth:`advance`, which does this itself.
        """
        if not self._realtime:
            return
        with self.lock:
            if self._run_until(self.now()):
                self._save_meta()
                self.store.commit()

    def next_due(self) -> datetime | None:
        """When the next held send goes out or reply window closes (None: nothing pending)."""
        with self.lock:
            times = [self.scheduled[0][0]] if self.scheduled else []
            expiry = self._first_expiry(None)
            if expiry is not None:
                times.append(expiry[0])
            action = self._next_action_time()
            if action is not None:
                times.append(action)
            return min(times, default=None)

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock forward: scheduled messages go out, reply windows close."""
        if delta < timedelta(0):
            raise ValueError("the sandbox clock only moves forward")
        if delta > MAX_ADVANCE:
            raise ValueError(f"the sandbox clock moves at most {MAX_ADVANCE} at once, got {delta}")
        with self.transaction():
            target = self.now() + delta
            self._run_until(target)
            self.clock.set(target)
            self._save_meta()
            self._due_changed()
            return target

    def _run_until(self, target: datetime) -> bool:
        """Send what is held and close reply windows up to ``target``; whether any did."""
        # Things happen in time order: a message sent at 09:00 with a 1-minute timeout
        # expires at 09:01 even if the clock jumps a day.
        happened = False
        while True:
            due_send = (
                self.scheduled[0] if self.scheduled and self.scheduled[0][0] <= target else None
            )
            due_expiry = self._first_expiry(target)
            due_action = self._next_action_time()
            if due_action is not None and due_action > target:
                due_action = None
            times = [t for t in (due_send, due_expiry) if t is not None]
            first = min([t[0] for t in times] + ([due_action] if due_action else []), default=None)
            if first is None:
                return happened
            happened = True
            if due_send is not None and due_send[0] == first:
                self.scheduled.pop(0)
                message = self.messages[due_send[1]]
                self._dispatch(message, due_send[0])
            elif due_expiry is not None and due_expiry[0] == first:
                self._expire(self.messages[due_expiry[1]])
            else:
                self._run_next_action()

    # Hooks for what simulated respondents do (:mod:`._respondents` fills them in).

    def _next_action_time(self) -> datetime | None:
        """When the next simulated respondent's action falls due (None: none pending)."""
        return None

    def _run_next_action(self) -> None:
        """Let the next simulated respondent's action happen."""

    def _simulate_contact(self, message: MessageRecord, at: datetime) -> bool:
        """Note that ``message`` reached its destination at ``at``; whether it fails there."""
        return False

    def _first_expiry(self, target: datetime | None) -> tuple[datetime, str] | None:
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

    def _expire(self, message: MessageRecord) -> None:
        message.open_for_reply = False
        ids = self.open_replies.get(message.destination, [])
        if message.key in ids:
            ids.remove(message.key)
        if not ids:
            self.open_replies.pop(message.destination, None)
        self._save("message", message.key, message)
        self.emit(
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

    def _dispatch(self, message: MessageRecord, at: datetime) -> None:
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
        self.emit("Receipt", at=at, status="Sent", **common, **lookup_fields)
        undeliverable = self._simulate_contact(message, at)
        delivered = not undeliverable and delivery.delivered(
            message.channel, reachable=message.reachable, number_type=message.number_type
        )
        message.status = "Delivered" if delivered else "Failed"
        self.emit("Receipt", at=at, status=message.status, **common, **lookup_fields)
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
                self._due_changed()
            else:
                self._expire(message)
        self._mark_invited(message, at)
        self._save("message", message.key, message)

    def _mark_invited(self, message: MessageRecord, at: datetime) -> None:
        if message.survey_id is None:
            return
        for survey in self.surveys.values():
            if survey.survey_id != message.survey_id:
                continue
            for respondent_id in self.by_survey.get(survey.reference.lower(), []):
                respondent = self.respondents[respondent_id]
                if (
                    message.destination in (respondent.mobile_number, respondent.email_address)
                    and respondent.invited is None
                ):
                    respondent.invited = at
                    respondent.updated = at
                    self._save("respondent", respondent.respondent_id, respondent)


__all__ = ["DEFAULT_REPLY_TIMEOUT", "Schedule"]
