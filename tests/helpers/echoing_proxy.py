"""A proxy whose error pages echo the request's headers, as some proxies' pages do.

Each ``mode`` answers in a way a client turns into an error: an HTML error page, a
ProblemDetails, a send rejection, a body that is not JSON, a response header, a download
broken off, and ``encoded``: a 502 page quoting each header value in base64 (alone and as
``user:value``) and URL-encoded.
"""

from __future__ import annotations

import base64
import html
import json
from typing import Any
from urllib.parse import quote


def _echo(scope: dict[str, Any]) -> str:
    return "\n".join(f"{k.decode()}: {v.decode()}" for k, v in scope["headers"])


def _encoded(scope: dict[str, Any]) -> str:
    """Each header value as a debugging page might show it: base64, as ``user:value``, quoted."""
    lines = []
    # The credentials first, so a message quoting the page's first lines quotes them.
    credentials = (b"authorization", b"x-api-key", b"cookie", b"x-upstream-token")
    for name, raw in sorted(scope["headers"], key=lambda item: item[0] not in credentials):
        value = raw.decode().partition(" ")[2] or raw.decode()  # "Basic <token>" -> <token>
        b64 = base64.b64encode(value.encode()).decode()
        pair = base64.urlsafe_b64encode(f"debug-user:{value}".encode()).decode()
        lines.append(f"{name.decode()}: b64={b64} pair={pair} url={quote(value, safe='')}")
    return "\n".join(lines)


class EchoingProxy:
    """Answers as ``mode`` says, every body quoting the request's headers."""

    def __init__(self) -> None:
        self.mode = "502"

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        echo = _echo(scope) if self.mode != "encoded" else _encoded(scope)
        status, kind, extra = 200, b"text/html", []
        if self.mode in ("502", "400", "401", "404", "429", "500", "encoded"):
            status = 502 if self.mode == "encoded" else int(self.mode)
            body = f"<html><h1>{status} Bad Gateway</h1><pre>{html.escape(echo)}</pre></html>"
        elif self.mode == "problem":
            status, kind = 400, b"application/problem+json"
            body = json.dumps(
                {
                    "type": "about:blank",
                    "title": "Bad",
                    "status": 400,
                    "detail": echo,
                    "errors": {"Authorization": [echo]},
                }
            )
        elif self.mode == "rejected":  # a send rejection whose fields echo the headers
            status, kind = 400, b"application/json"
            body = json.dumps(
                {
                    "messageID": "Unknown",
                    "status": f"Blocked {echo}",
                    "carrier": echo,
                    "reachable": False,
                    "numberType": "Mobile",
                }
            )
        elif self.mode == "not-json":
            body = f"<html>{echo}</html>"
        elif self.mode == "header":  # the token echoed in a response header
            status, body = 502, "bad gateway"
            extra = [(b"x-echo", echo.replace("\n", " | ").encode())]
        else:  # "cut": a promised body broken off after the echo
            start = {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/csv"), (b"content-length", b"100000")],
            }
            await send(start)
            chunk = f"respondentId,q1\n1,{echo!r}\n".encode()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            raise ConnectionResetError("cut")
        headers = [(b"content-type", kind), *extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})
