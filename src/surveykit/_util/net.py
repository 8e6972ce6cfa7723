"""Listening sockets for the servers surveykit starts (the sandbox, the callback listener)."""

from __future__ import annotations

import socket


def bind(host: str, port: int, *, backlog: int = 2048) -> socket.socket:
    """Bind and listen on ``host:port`` (``port=0`` picks a free port).

    TCP_NODELAY is set on the listening socket so every accepted connection inherits it:
    without it, uvicorn's h11 protocol writes a response's headers and body separately and
    Nagle's algorithm holds the body until the client's delayed ACK, about 40 ms a request.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket, host: str, path: str = "") -> str:
    """The http URL a bound socket serves, with IPv6 hosts in brackets."""
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"
