"""Keywords: POST, PATCH, DELETE and GET /v3.2/Keyword."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import StringConstraints

from surveykit.models._base import AwareDatetime, RequestModel, ResponseModel


class KeywordRequest(RequestModel):
    """The body of POST and PATCH /v3.2/Keyword (KeywordModel).

    The meaning and allowed values of ``type`` and ``response`` are not shown in the
    reference; they are passed through as given.
    """

    keyword: Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
    type: str | None = None
    response: str | None = None
    finish_date: AwareDatetime | None = None


class Keyword(ResponseModel):
    """A keyword registered on the account, as the platform lists it.

    The reference does not show the shape of keyword answers, so every field is optional:
    an item without ``keyword`` is still read (``keyword`` is None, its other fields kept).
    """

    keyword: str | None = None
    type: str | None = None
    response: str | None = None
    finish_date: datetime | None = None
