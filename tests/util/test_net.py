from __future__ import annotations

import socket

import pytest

from surveykit._util.net import bind, url_of


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_bound_sockets_disable_nagle_and_listen(host: str) -> None:
    try:
        sock = bind(host, 0)
    except OSError:
        pytest.skip(f"{host} is not available on this machine")
    with sock:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        port = sock.getsockname()[1]
        assert url_of(sock, host, "/cb") == (
            f"http://[{host}]:{port}/cb" if ":" in host else f"http://{host}:{port}/cb")
        with socket.create_connection((host, port), timeout=2) as client:
            accepted, _ = sock.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
                assert client.fileno() > 0
