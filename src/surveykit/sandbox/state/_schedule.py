"""What the clock makes happen: held sends go out, reply windows close.

On a fixed clock this happens in :meth:`Schedule.advance`; on a realtime clock in
:meth:`Schedule.catch_up`, which every transaction runs first (and the realtime ticker
calls when :meth:`Schedule.next_due` comes). Things happen in time order, each at its own
time: a message sent at 09:00 with a one-minute timeout expires at 09:01 even when the
clock jumps a day.

:class:`Schedule` owns no records: it orders what :class:`~._messages.Messages` holds (sends
and reply windows) with what the simulated respondents plan (:class:`Actions`, a small
interface :class:`~._respondents.Respondents` provides), and lets each happen in turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final, Protocol

from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._messages import DEFAULT_REPLY_TIMEOUT, Messages

MAX_ADVANCE: Final = timedelta(days=36_600)
"""The furthest the clock moves in one step (about a century; dates stay representable)."""


class Actions(Protocol):
    """What the schedule needs of the simulated respondents: their next planned action."""

    def next_action_time(self) -> datetime | None:
        """When the next planned action falls due (None: none pending)."""

    def run_next_action(self) -> None:
        """Let the next planned action happen."""


class _NoActions:
    def next_action_time(self) -> datetime | None:
        return None

    def run_next_action(self) -> None:
        raise AssertionError("no action is planned")


class Schedule:
    """The clock's work over the records: scheduled sends and reply windows."""

    def __init__(self, core: StateCore, messages: Messages) -> None:
        self.core = core
        self.messages = messages
        self.actions: Actions = _NoActions()
        """The simulated respondents' planned actions (set when they are built)."""

    def catch_up(self) -> None:
        """On a realtime clock, let what fell due happen: held sends go out, windows close.

        A fixed clock only moves with :meth:`advance`, which does this itself.
        """
        core = self.core
        if not core.realtime:
            return
        with core.lock:
            if self._run_until(core.now()):
                core.save_meta()
                core.store.commit()

    def next_due(self) -> datetime | None:
        """When the next held send goes out or reply window closes (None: nothing pending)."""
        with self.core.lock:
            scheduled = self.messages.scheduled
            times = [scheduled[0][0]] if scheduled else []
            expiry = self.messages.first_expiry(None)
            if expiry is not None:
                times.append(expiry[0])
            action = self.actions.next_action_time()
            if action is not None:
                times.append(action)
            return min(times, default=None)

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock forward: scheduled messages go out, reply windows close."""
        if delta < timedelta(0):
            raise ValueError("the sandbox clock only moves forward")
        if delta > MAX_ADVANCE:
            raise ValueError(f"the sandbox clock moves at most {MAX_ADVANCE} at once, got {delta}")
        core = self.core
        with core.transaction():
            target = core.now() + delta
            self._run_until(target)
            core.clock.set(target)
            core.save_meta()
            core.due_changed()
            return target

    def _run_until(self, target: datetime) -> bool:
        """Send what is held and close reply windows up to ``target``; whether any did."""
        # Things happen in time order: a message sent at 09:00 with a 1-minute timeout
        # expires at 09:01 even if the clock jumps a day.
        messages = self.messages
        happened = False
        while True:
            scheduled = messages.scheduled
            due_send = scheduled[0] if scheduled and scheduled[0][0] <= target else None
            due_expiry = messages.first_expiry(target)
            due_action = self.actions.next_action_time()
            if due_action is not None and due_action > target:
                due_action = None
            times = [t for t in (due_send, due_expiry) if t is not None]
            first = min([t[0] for t in times] + ([due_action] if due_action else []), default=None)
            if first is None:
                return happened
            happened = True
            if due_send is not None and due_send[0] == first:
                scheduled.pop(0)
                messages.dispatch(messages.messages[due_send[1]], due_send[0])
            elif due_expiry is not None and due_expiry[0] == first:
                messages.expire(messages.messages[due_expiry[1]])
            else:
                self.actions.run_next_action()


__all__ = ["DEFAULT_REPLY_TIMEOUT", "MAX_ADVANCE", "Actions", "Schedule"]
