"""The resource groups every client has, typed for its mode (sync or async)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Generic

from surveykit.client._base import BaseClient, M
from surveykit.client.resources import Data, Keywords, Messages, Surveys, TinyUrl, Webhooks

if TYPE_CHECKING:
    from surveykit.sandbox import Sandbox


class ResourceGroups(BaseClient, Generic[M]):
    """Lazily built resource objects: ``client.messages``, ``client.surveys``, ..."""

    embedded: Sandbox | None = None
    """The in-process sandbox this client talks to, or None for a server."""

    @cached_property
    def data(self) -> Data[M]:
        """Respondent import (POST /v3.2/Data/Import)."""
        return Data(self)

    @cached_property
    def keywords(self) -> Keywords[M]:
        """Keywords (POST, PATCH, DELETE, GET /v3.2/Keyword)."""
        return Keywords(self)

    @cached_property
    def messages(self) -> Messages[M]:
        """Messages, email and number lookup (/v3.2/Message)."""
        return Messages(self)

    @cached_property
    def surveys(self) -> Surveys[M]:
        """Survey results (POST /v3.2/Survey/GetResults)."""
        return Surveys(self)

    @cached_property
    def tinyurl(self) -> TinyUrl[M]:
        """Short links (/v3.2/TinyUrl)."""
        return TinyUrl(self)

    @cached_property
    def webhooks(self) -> Webhooks[M]:
        """Webhooks of the user (GET /v3.2/Webhook)."""
        return Webhooks(self)
