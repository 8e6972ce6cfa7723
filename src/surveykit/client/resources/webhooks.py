"""Webhook: list the user's webhooks."""

from __future__ import annotations

from surveykit.client._base import APIRequest, M, Resource, endpoint, parse_model_list
from surveykit.models import Webhook


class Webhooks(Resource[M]):
    """GET /v3.2/Webhook."""

    @endpoint
    def list(self) -> APIRequest[list[Webhook]]:
        """List the webhooks of the authenticated user."""
        return APIRequest("GET", "/v3.2/Webhook", parse_model_list(Webhook), idempotent=True)
