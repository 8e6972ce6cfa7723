"""A callback receiver served in the background of a notebook or script, and the CLI entry.

uvicorn runs in a daemon thread with its own event loop, on a socket bound before the
thread starts (so ``port=0`` gives a known free port at once). Nothing here calls
``asyncio.run`` in the caller's thread, so it works inside a running Jupyter kernel.
"""

from __future__ import annotations

import contextlib
import html
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Final

import pandas as pd
import uvicorn

from surveykit._util.net import bind, url_of
from surveykit._util.serving import DEFAULT_IDLE_TIMEOUT, server_config, server_limits
from surveykit.callbacks._events import OptOutSink
from surveykit.callbacks._funnel import campaign_funnel
from surveykit.callbacks._receiver import DEFAULT_MAX_BODY, DEFAULT_OPT_OUT_WAIT, H, Receiver
from surveykit.callbacks._store import EventStore, events_frame
from surveykit.errors import StoreClosedError
from surveykit.models import CallbackType

_START_TIMEOUT: Final = 15.0


def _server(
    receiver: Receiver,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
) -> uvicorn.Server:
    config = server_config(receiver.app, idle_timeout=idle_timeout, max_connections=max_connections)
    return uvicorn.Server(config)


class Listener:
    """A running callback receiver; made by :func:`listen`.

    Attributes:
        url: the full callback URL to give the platform (``Callback`` ``Url``).
        receiver: the :class:`Receiver` being served.
    """

    def __init__(
        self,
        receiver: Receiver,
        server: uvicorn.Server,
        thread: threading.Thread,
        sock: socket.socket,
        url: str,
        errors: list[BaseException],
    ) -> None:
        self.receiver = receiver
        self.url = url
        self._server = server
        self._thread = thread
        self._sock = sock
        self._errors = errors
        self._last: pd.DataFrame | None = None
        self._stop_lock = threading.Lock()
        self._stopped = False

    @property
    def running(self) -> bool:
        """Whether the server is still serving."""
        return not self._stopped and self._thread.is_alive()

    @property
    def store(self) -> EventStore:
        """The event store the receiver writes to."""
        return self.receiver.store

    @property
    def db(self) -> str:
        """Path of the SQLite file (a temporary one is deleted by :meth:`stop`)."""
        return str(self.store.path)

    @property
    def events(self) -> pd.DataFrame:
        """Every event received so far, one row each, read fresh from the store.

        Columns: ``event_id``, ``received_at`` (first delivery, UTC), the payload fields in
        snake_case (``type``, ``message_id``, ``timestamp`` as UTC datetimes, ``status``,
        ``source``, ``destination``, ``message``, ``inbound``, ...), ``metadata`` (a dict),
        ``extra`` (unknown payload fields, a dict), ``method``, ``deliveries``,
        ``last_received_at``, ``reply`` (the send request answered, a dict) and ``error``.
        After :meth:`stop` the last snapshot is returned.
        """
        if self._stopped or self.store.closed:
            return self._last.copy() if self._last is not None else self._empty()
        try:
            return self.store.frame()
        except StoreClosedError:
            return self._last.copy() if self._last is not None else self._empty()

    @staticmethod
    def _empty() -> pd.DataFrame:
        return events_frame([])

    def __len__(self) -> int:
        if self._stopped or self.store.closed:
            return 0 if self._last is None else len(self._last)
        return self.store.count()

    def wait_for(self, n: int, timeout: float = 30.0) -> pd.DataFrame:
        """Block until at least ``n`` events were received; return :attr:`events`.

        Raises:
            TimeoutError: when fewer than ``n`` events arrived within ``timeout`` seconds.
        """
        if n < 0:
            raise ValueError(f"n: expected a count >= 0, got {n}")
        if self._stopped:
            raise RuntimeError(f"the listener at {self.url} is stopped; start a new one")
        count = self.store.wait_for(n, timeout)
        if count < n:
            raise TimeoutError(
                f"only {count} of {n} callback events arrived at {self.url} within {timeout:g} s"
                + ("" if self.running else f"; the server is not running ({self._failure()})")
            )
        return self.events

    def _failure(self) -> str:
        return repr(self._errors[0]) if self._errors else "stopped"

    def funnel(self, campaign_key: str = "campaign", **options: Any) -> pd.DataFrame:
        """The per-campaign funnel of the events so far; see :func:`campaign_funnel`."""
        return campaign_funnel(self.events, campaign_key=campaign_key, **options)

    def on(self, *types: CallbackType | str) -> Callable[[H], H]:
        """Register a handler on the receiver; see :meth:`Receiver.on`."""
        return self.receiver.on(*types)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving, keep a last snapshot of :attr:`events`, close the store.

        A temporary store (``db=None``) is deleted. Safe to call twice.
        """
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(StoreClosedError):
            self._last = self.store.frame()
        self.receiver.close()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _summary(self) -> tuple[str, int, str]:
        state = "running" if self.running else "stopped"
        db = self.db
        if self.receiver.temporary:
            db = f"temporary {db}" if self.running else "temporary (deleted)"
        return state, len(self), db

    def __repr__(self) -> str:
        state, count, db = self._summary()
        noun = "event" if count == 1 else "events"
        return f"<Listener {self.url} {state}, {count} {noun}, db={db!r}>"

    def _repr_html_(self) -> str:
        state, count, db = self._summary()
        rows = [("URL", self.url), ("State", state), ("Events", str(count)), ("Store", db)]
        if self.receiver.signed:
            rows.append(("Signature", "required"))
        events = self.events
        if len(events):
            by_type = events["type"].fillna("(none)").value_counts().sort_index()
            rows.append(("By type", ", ".join(f"{t}: {n}" for t, n in by_type.items())))
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table><caption>surveykit Listener</caption>{cells}</table>"


def listen(
    port: int = 0,
    db: str | os.PathLike[str] | None = None,
    *,
    host: str = "127.0.0.1",
    secret: str | bytes | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    receiver: Receiver | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
    opt_outs: OptOutSink | str | os.PathLike[str] | None = None,
    opt_out_words: bool | None = None,
) -> Listener:
    """Start a callback receiver in a background thread and return its :class:`Listener`.

    Works in a notebook cell (the kernel's event loop is left alone) and in scripts.

    Args:
        port: TCP port; 0 picks a free one (see ``listener.url``).
        db: SQLite file for the events; ``None`` uses a temporary file deleted on stop.
        host: interface to bind; loopback by default. Expose it to the platform through
            a tunnel or a reverse proxy rather than binding a public interface.
        secret: require signed callbacks (see :func:`callback_signature`).
        max_body: largest accepted callback body in bytes.
        receiver: a :class:`Receiver` built beforehand (its own db and secret apply, so
            ``db`` and ``secret`` must then be left out); the listener closes it on stop.
        idle_timeout: seconds a connection may stay open without sending a complete
            request head (after connecting or after its previous answer); then it is closed.
        max_connections: connections open at once (default 256, or half the process's
            free file descriptors if fewer); one more closes the connection idle the longest
            (or, when all are busy with requests, is refused), so idle and slow clients
            cannot keep valid callbacks out.
        opt_outs: an :class:`~surveykit.OptOutList` (or its path) kept current: STOP and
            UNSTOP events already in the store are applied at start, new ones as they come.
        opt_out_words: for ``opt_outs`` given as a path, whether replies such as "please
            stop texting me" count as opt-outs (default True; see ``OptOutList(words=)``).
            With an :class:`~surveykit.OptOutList`, set ``words`` on it instead.

    Example:
        >>> with sk.listen() as listener:            # doctest: +SKIP
        ...     client.messages.send_email(..., callback={"url": listener.url})
        ...     listener.wait_for(1, timeout=60)
    """
    if receiver is not None:
        if db is not None or secret is not None or max_body != DEFAULT_MAX_BODY:
            raise ValueError(
                "listen(): with receiver=..., set db, secret and max_body on the Receiver"
            )
    else:
        receiver = Receiver(db, secret=secret, max_body=max_body)
    if opt_out_words is not None and not isinstance(opt_outs, str | os.PathLike):
        raise ValueError(
            "listen(): opt_out_words applies to opt_outs given as a path; "
            "with an OptOutList, set OptOutList(..., words=...) instead"
        )
    if opt_outs is not None:
        try:
            receiver.opt_outs = _opt_out_sink(opt_outs, words=opt_out_words)
            receiver.opt_outs.update(receiver.store)
        except BaseException:
            receiver.close()
            raise
    try:
        server = _server(receiver, idle_timeout, max_connections)
        sock = bind(host, port)
    except BaseException:
        receiver.close()
        raise
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # reported by listen() or the Listener's repr
            errors.append(exc)

    thread = threading.Thread(target=serve, name=f"surveykit-listener-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + _START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(5)
            sock.close()
            receiver.close()
            cause = errors[0] if errors else None
            raise RuntimeError(f"the callback listener did not start on {host}:{port}") from cause
        time.sleep(0.01)
    return Listener(receiver, server, thread, sock, url_of(sock, host, receiver.path), errors)


def run_listener_cli(
    host: str = "127.0.0.1",
    port: int = 0,
    db: str | os.PathLike[str] | None = None,
    secret: str | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    *,
    opt_outs: str | os.PathLike[str] | None = None,
    opt_out_words: bool = True,
    opt_out_wait: float | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_connections: int | None = None,
) -> None:
    """Serve callbacks in the foreground until Ctrl-C (for ``surveykit listen``).

    Prints the callback URL on the first line, then where events are stored (and the
    opt-out list kept). The options are those of :func:`listen`, with ``opt_outs`` a path
    and ``opt_out_wait`` the receiver's (None: its default).
    """
    server_limits(idle_timeout=idle_timeout, max_connections=max_connections)  # checked first
    wait = DEFAULT_OPT_OUT_WAIT if opt_out_wait is None else opt_out_wait
    receiver = Receiver(db, secret=secret, max_body=max_body, opt_out_wait=wait)
    sink: OptOutSink | None = None
    try:
        if opt_outs is not None:
            sink = receiver.opt_outs = _opt_out_sink(opt_outs, words=opt_out_words)
            sink.update(receiver.store)  # what the store holds from an earlier run
        sock = bind(host, port)
    except BaseException:
        _close_sink(sink)
        receiver.close()
        raise
    try:
        print(f"Listening for callbacks at {url_of(sock, host, receiver.path)}", flush=True)
        where = str(receiver.store.path)
        if receiver.temporary:
            where += " (temporary: deleted on exit; pass a db path to keep the events)"
        print(f"Events are stored in {where}", flush=True)
        if receiver.signed:
            print("Callbacks must be signed (X-Surveykit-Signature: sha256=<hex>)", flush=True)
        if opt_outs is not None:
            kinds = "STOP, UNSTOP and opt-outs in words" if opt_out_words else "STOP and UNSTOP"
            print(f"Opt-outs ({kinds}) are kept in {opt_outs}", flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        server = _server(receiver, idle_timeout, max_connections)
        # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal with
        # the previous handler: make SIGTERM an exception too, so the cleanup below runs.
        with _sigterm_raises(), contextlib.suppress(KeyboardInterrupt, _Terminated):
            server.run(sockets=[sock])
    finally:
        sock.close()
        receiver.close()
        _close_sink(sink)


def _close_sink(sink: OptOutSink | None) -> None:
    close = getattr(sink, "close", None)
    if close is not None:
        close()


class _Terminated(Exception):
    """SIGTERM arrived; stop serving and clean up."""


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: FrameType | None) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _opt_out_sink(
    value: OptOutSink | str | os.PathLike[str], *, words: bool | None = None
) -> OptOutSink:
    """The opt-out list ``listen(opt_outs=...)`` keeps current: itself, or the one at a path.

    The one import of a layer above ``callbacks/``: for a path, the listener opens the
    :class:`~surveykit.OptOutList` there (``surveykit.optouts``, which reads this package's
    events). It is imported here, on use, so that ``callbacks/`` does not depend on it.
    """
    if isinstance(value, str | os.PathLike):
        from surveykit.optouts import OptOutList  # the layer above: see the docstring

        return OptOutList(value, words=True if words is None else words)
    if isinstance(value, OptOutSink):
        return value
    raise TypeError(f"opt_outs: expected an OptOutList or its path, got {type(value).__name__}")

