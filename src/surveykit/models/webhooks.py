"""Webhooks: GET /v3.2/Webhook."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

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

    @field_validator("events", mode="before")
    @classmethod
    def _no_events(cls, value: Any) -> Any:
        # The reference shows a list; a server may send null for "none".
        return [] if value is None else value

    @property
    def url(self) -> str | None:
        """The target URL, from ``key`` or ``payload``, whichever holds one."""
        for value in (self.key, self.payload):
            if value and value.lower().startswith(("http://", "https://")):
                return value
        return None
