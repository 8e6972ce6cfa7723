"""TinyUrl: short links."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from surveykit.client._base import APIRequest, M, Resource, endpoint, model_from, unwrap_list
from surveykit.errors import UnexpectedResponseError, describe_request
from surveykit.models import UrlListRequest, UrlRequest
from surveykit.models._validation import validate

_LINK_KEYS = ("shortUrl", "shortLink", "tinyUrl", "short", "link", "url")


def link_from(item: Any) -> str | None:
    """Pick the short link out of one answer: a string, or an object with a link field.

    The reference does not show the body of TinyUrl answers; these are the shapes accepted.
    """
    if isinstance(item, str):
        return item.strip() or None
    if isinstance(item, dict):
        folded = {str(key).lower(): value for key, value in item.items()}
        for key in _LINK_KEYS:
            value = folded.get(key.lower())
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def _body(response: httpx.Response) -> Any:
    text = response.text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text  # a plain-text link


def _unreadable(response: httpx.Response, what: str) -> UnexpectedResponseError:
    return UnexpectedResponseError(
        f"{describe_request(response.request)} -> {response.status_code}: "
        f"no {what} in the body: {response.text[:300]!r}",
        response=response,
        body=response.text,
    )


def _one(response: httpx.Response) -> str:
    link = link_from(_body(response))
    if link is None:
        raise _unreadable(response, "short link")
    return link


def _many(expected: int) -> Any:
    def parse(response: httpx.Response) -> list[str]:
        body = _body(response)
        try:
            items = unwrap_list(body)
        except ValueError:
            raise _unreadable(response, "list of short links") from None
        links = [link_from(item) for item in items]
        if len(links) != expected or any(link is None for link in links):
            raise _unreadable(response, f"list of {expected} short links")
        return [link for link in links if link is not None]

    return parse


def _url(item: str | UrlRequest, tiny_domain: str | None, reuse: bool | None) -> UrlRequest:
    if isinstance(item, UrlRequest):
        return item
    return validate(UrlRequest, {"full_url": item, "tiny_domain": tiny_domain, "reuse": reuse})


class TinyUrl(Resource[M]):
    """POST /v3.2/TinyUrl/Register and /v3.2/TinyUrl/RegisterList."""

    @endpoint
    def register(
        self,
        full_url: str | UrlRequest,
        *,
        tiny_domain: str | None = None,
        reuse: bool | None = None,
        slashtag: str | None = None,
    ) -> APIRequest[str]:
        """Shorten one URL and return the short link.

        Example:
            >>> client.tinyurl.register("https://example.org/survey?id=42", reuse=True)
        """
        body = (
            full_url
            if isinstance(full_url, UrlRequest)
            else validate(
                UrlRequest,
                {
                    "full_url": full_url,
                    "tiny_domain": tiny_domain,
                    "reuse": reuse,
                    "slashtag": slashtag,
                },
            )
        )
        return APIRequest("POST", "/v3.2/TinyUrl/Register", _one, json=body.to_wire())

    @endpoint
    def register_list(
        self,
        urls: Sequence[str | UrlRequest] | UrlListRequest | Mapping[str, Any],
        *,
        tiny_domain: str | None = None,
        reuse: bool | None = None,
    ) -> APIRequest[list[str]]:
        """Shorten several URLs in one request; the links come back in the same order.

        ``urls`` is a list of URLs (strings, to which ``tiny_domain`` and ``reuse`` apply,
        or :class:`~surveykit.models.UrlRequest` objects, sent as built), or a whole
        :class:`~surveykit.models.UrlListRequest` (or a dict of its fields), sent as built.

        Example:
            >>> client.tinyurl.register_list(["https://example.org/a", "https://example.org/b"])
        """
        if isinstance(urls, str):
            raise TypeError("urls: expected a list of URLs, got one string")
        if isinstance(urls, UrlListRequest | Mapping):
            if tiny_domain is not None or reuse is not None:
                # Its items are UrlRequests, which carry their own settings; dropping the
                # arguments silently would surprise.
                raise TypeError(
                    "tiny_domain, reuse: set them on the UrlRequest items of a UrlListRequest"
                )
            body = model_from(UrlListRequest, urls, {})
            count = len(body.urls or []) + len(body.url_list or [])
        else:
            items = [_url(item, tiny_domain, reuse) for item in urls]
            body = validate(UrlListRequest, {"urls": items})
            count = len(items)
        return APIRequest("POST", "/v3.2/TinyUrl/RegisterList", _many(count), json=body.to_wire())
