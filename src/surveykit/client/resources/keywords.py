"""Keyword: register, update, delete and list the account's keywords."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx

from surveykit.client._base import (
    APIRequest,
    M,
    Resource,
    endpoint,
    model_from,
    read_json,
    unwrap_list,
)
from surveykit.errors import ValidationError
from surveykit.models import Keyword, KeywordRequest

PATH = "/v3.2/Keyword"


def _echo(sent: KeywordRequest) -> Any:
    # The reference does not show these bodies: use the server's keyword object if it sent
    # one, otherwise what we sent.
    def parse(response: httpx.Response) -> Keyword:
        body = read_json(response) if response.content.strip() else None
        if isinstance(body, dict) and any(str(key).lower() == "keyword" for key in body):
            echoed = Keyword.model_validate(body)
            if echoed.keyword is None:
                echoed.keyword = sent.keyword
            return echoed
        return Keyword.model_validate(sent.model_dump())

    return parse


def _keyword_list(response: httpx.Response) -> list[Keyword]:
    items = unwrap_list(read_json(response))
    return [
        Keyword(keyword=item) if isinstance(item, str) else Keyword.model_validate(item)
        for item in items
    ]


class Keywords(Resource[M]):
    """POST, PATCH, DELETE and GET /v3.2/Keyword."""

    @endpoint
    def create(
        self,
        keyword: str | KeywordRequest,
        *,
        type: str | None = None,
        response: str | None = None,
        finish_date: datetime | None = None,
    ) -> APIRequest[Keyword]:
        """Register a keyword on the account (POST). Not retried once it may have arrived."""
        body = _body(keyword, type, response, finish_date)
        return APIRequest("POST", PATH, _echo(body), json=body.to_wire())

    @endpoint
    def update(
        self,
        keyword: str | KeywordRequest,
        *,
        type: str | None = None,
        response: str | None = None,
        finish_date: datetime | None = None,
    ) -> APIRequest[Keyword]:
        """Update a registered keyword (PATCH)."""
        body = _body(keyword, type, response, finish_date)
        return APIRequest("PATCH", PATH, _echo(body), json=body.to_wire())

    @endpoint
    def delete(self, keyword: str) -> APIRequest[None]:
        """Delete a keyword (DELETE ?keyword=...)."""
        if not keyword or not keyword.strip():
            raise ValidationError(
                [("keyword", f"keyword: {keyword!r} is empty; expected the keyword's text.")]
            )
        return APIRequest(
            "DELETE", PATH, lambda _: None, params={"keyword": keyword.strip()}, idempotent=True
        )

    @endpoint
    def list(self) -> APIRequest[list[Keyword]]:
        """List the keywords registered to the account (GET)."""
        return APIRequest("GET", PATH, _keyword_list, idempotent=True)


def _body(
    keyword: str | KeywordRequest,
    type: str | None,
    response: str | None,
    finish_date: datetime | None,
) -> KeywordRequest:
    given = keyword if isinstance(keyword, KeywordRequest) else None
    fields: dict[str, Any] = {"type": type, "response": response, "finish_date": finish_date}
    if given is None:
        fields["keyword"] = keyword
    return model_from(KeywordRequest, given, fields)
