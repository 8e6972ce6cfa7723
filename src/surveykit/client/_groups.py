"""The resource groups every client has, typed for its mode (sync or async)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Self

from surveykit.client._base import BaseClient, M
from surveykit.client.resources import Data, Keywords, Messages, Surveys, TinyUrl, Webhooks

if TYPE_CHECKING:
    from surveykit.sandbox import Sandbox


class ResourceGroups(BaseClient, Generic[M]):
    """Lazily built resource objects: ``client.messages``, ``client.surveys``, ..."""

    @staticmethod
    def _in_process(app: Any) -> Any:
        """The httpx transport that runs an ASGI app in-process for this kind of client."""
        raise NotImplementedError

    @classmethod
    def sandbox(
        cls,
        sandbox: Sandbox | None = None,
        *,
        default_region: str | None = None,
        **options: Any,
    ) -> Self:
        """A client of an in-process sandbox (a new one unless given): no network, no account.

        ``client.embedded`` is the :class:`~surveykit.sandbox.Sandbox`, for its control
        methods (journal, clock, simulated replies, faults). ``default_region`` and the
        other options are the client's (see :class:`~surveykit.Client`).
        """
        from surveykit.sandbox import Sandbox

        sandbox = sandbox or Sandbox()
        client = cls(  # type: ignore[call-arg]
            sandbox.base_url,
            sandbox.admin_token,
            transport=cls._in_process(sandbox.app),
            default_region=default_region,
            **options,
        )
        client.embedded = sandbox
        return client

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
