"""Authentication: the platform's Basic access token, or any ``httpx.Auth`` (an HMAC signer)."""

from __future__ import annotations

from collections.abc import Generator

import httpx


class BasicTokenAuth(httpx.Auth):
    """Send ``Authorization: Basic <ACCESS_TOKEN>`` as the reference describes.

    The token is sent as issued (it is not a base64 ``user:password`` pair). It never
    appears in this object's repr.

    The reference names an HMAC scheme too but does not show it: to sign requests, pass
    your own :class:`httpx.Auth` subclass as ``auth=`` to :class:`~surveykit.Client`; its
    ``auth_flow`` receives every request (method, URL, headers and body) before it is sent.
    """

    requires_request_body = False

    def __init__(self, token: str) -> None:
        if not token or not token.strip():
            raise ValueError("token: an access token must not be empty")
        self._header = f"Basic {token.strip()}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Add the Authorization header."""
        request.headers["Authorization"] = self._header
        yield request

    def __repr__(self) -> str:
        return "BasicTokenAuth(token='***')"
