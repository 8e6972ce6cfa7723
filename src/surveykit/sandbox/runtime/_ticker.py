"""The realtime ticker: what falls due on a realtime clock happens with nobody calling in.

Every operation of a realtime sandbox first catches up with the clock
(:meth:`SandboxState.catch_up`), so whoever asks sees the state as of now. A callback
receiver does not ask, though: it waits for events. So a realtime sandbox also has one
daemon thread that sleeps until the next held send or reply window is due, lets it
happen (its events go to the delivery queue on time), and sleeps again. The state wakes
it when what is due next may have changed; it starts with the first thing held, so a
sandbox with a fixed clock, or one that never holds anything, never has the thread.
"""

from __future__ import annotations

import threading

from surveykit.sandbox.state import SandboxState


class RealtimeTicker:
    """Catches a realtime sandbox up with the clock whenever something falls due."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._cond = threading.Condition()
        self._changed = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        """What is due next may have changed: look again (starts the thread if needed).

        Called by the state under its lock; it only takes the ticker's own lock, and the
        thread never holds that one while it waits for the state's.
        """
        with self._cond:
            if self._closed:
                return
            self._changed = True
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, daemon=True, name="surveykit-sandbox-ticker"
                )
                self._thread.start()
            self._cond.notify_all()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread. Safe to call twice."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                self._changed = False
            with self._state.transaction():  # catches up
                due = self._state.next_due()
                delay = None if due is None else (due - self._state.now()).total_seconds()
            with self._cond:
                if self._closed:
                    return
                if not self._changed:
                    # The realtime clock moves with time.monotonic(), as Condition.wait does.
                    self._cond.wait(None if delay is None else max(delay, 0.0))
