"""Webhooks: GET /v3.2/Webhook."""

from __future__ import annotations

from pydantic import Field

from surveykit.models._base import ResponseModel, WireInt


class Webhook(ResponseModel):
    """A webhook of the authenticated user (WebHookModel).

    The reference describes ``key`` as the target URL but its example puts the URL in
    ``payload``: :attr:`url` returns whichever of the two holds a URL. ``secret`` is left out
    of the repr.
    """

    name: str | None = None
    key: str | None = None
    secret: str | None = Field(default=None, repr=False)
    payload: str | None = None
    content_type: str | None = None
    is_active: bool | None = None
    events: list[str] = Field(default_factory=list)
    method: str | None = None
    timeout: WireInt | None = None
    total_timeout: WireInt | None = None
    retries: WireInt | None = None
    status: WireInt | None = None

    @property
    def url(self) -> str | None:
        """The target URL, from ``key`` or ``payload``, whichever holds one."""
        for value in (self.key, self.payload):
            if value and value.lower().startswith(("http://", "https://")):
                return value
        return None
