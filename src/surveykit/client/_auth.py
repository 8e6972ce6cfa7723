"""Authentication: the platform's Basic access token, or any ``httpx.Auth`` (an HMAC signer)."""

from __future__ import annotations

from collections.abc import Generator

import httpx

from surveykit.errors import ConfigurationError


def _check_token(token: str) -> str:
    # An HTTP header value cannot hold control characters or (portably) non-ASCII ones;
    # refusing them here keeps the token out of the HTTP library's "Illegal header value
    # b'Basic ...'" error. The message says where, never what: it must not echo the token.
    if not isinstance(token, str):
        raise ConfigurationError(f"token: expected a string, got {type(token).__name__}")
    token = token.strip()
    if not token:
        raise ConfigurationError("token: an access token must not be empty")
    for position, char in enumerate(token, start=1):
        if not "!" <= char <= "~":
            kind = (
                "a space"
                if char == " "
                else "a control character"
                if char.isascii()
                else "a non-ASCII character"
            )
            raise ConfigurationError(
                f"token: an access token may hold only visible ASCII characters; "
                f"character {position} of {len(token)} is {kind} (the token is not shown)"
            )
    return token


class BasicTokenAuth(httpx.Auth):
    """Send ``Authorization: Basic <ACCESS_TOKEN>`` as the reference describes.

    The token is sent as issued (it is not a base64 ``user:password`` pair), without
    surrounding whitespace. It must be visible ASCII (``!`` to ``~``): anything else raises
    :class:`~surveykit.ConfigurationError` (a :class:`ValueError`) whose message does not
    contain the token. It never appears in this object's repr.

    The reference names an HMAC scheme too but does not show it: to sign requests, pass
    your own :class:`httpx.Auth` subclass as ``auth=`` to :class:`~surveykit.Client`; its
    ``auth_flow`` receives every request (method, URL, headers and body) before it is sent.
    """

    requires_request_body = False

    def __init__(self, token: str) -> None:
        self._header = f"Basic {_check_token(token)}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Add the Authorization header."""
        request.headers["Authorization"] = self._header
        yield request

    def __repr__(self) -> str:
        return "BasicTokenAuth(token='***')"
