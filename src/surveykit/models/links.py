"""Short links: POST /v3.2/TinyUrl/Register and /v3.2/TinyUrl/RegisterList."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints, field_validator

from surveykit.models._base import RequestModel


class UrlRequest(RequestModel):
    """One URL to shorten (UrlModel)."""

    full_url: Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
    tiny_domain: str | None = None
    reuse: bool | None = None
    slashtag: str | None = None

    @field_validator("full_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.lower().startswith(("http://", "https://")):
            raise ValueError(f"expected an http(s) URL, got {value!r}")
        return value


class UrlListRequest(RequestModel):
    """Several URLs to shorten (UrlListModel). surveykit fills ``urls``.

    The reference has two list fields, ``urls`` and ``urlList``, and does not say how they
    differ; surveykit sends ``urls`` only, so no URL is ever shortened twice.
    """

    urls: list[UrlRequest] | None = None
    url_list: list[UrlRequest] | None = None
