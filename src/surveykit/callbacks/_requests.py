"""The receiver's refusals and the parts of a request read without the app's state.

A refusal is a :class:`_Rejected` (status, title, detail, per-field errors) answered as an
RFC 7807 problem; a GET callback's query string becomes the same fields a POST body has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson
from starlette.responses import JSONResponse, Response

_GET_OFFSET = re.compile(r" (\d{2}:?\d{2})$")


class _Rejected(Exception):
    """A request refused with a 4xx problem answer."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = errors
        self.headers = headers


def _problem(rejected: _Rejected) -> Response:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": rejected.title,
        "status": rejected.status,
        "detail": rejected.detail,
    }
    if rejected.errors:
        body["errors"] = rejected.errors
    return JSONResponse(
        body,
        status_code=rejected.status,
        headers=rejected.headers,
        media_type="application/problem+json",
    )


def query_fields(items: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The payload fields of a GET callback's query string (MetaData as JSON or by name)."""
    data: dict[str, Any] = {}
    seen: set[str] = set()
    pairs: list[dict[str, Any]] = []
    for key, value in items:
        low = key.lower()
        if low == "metadata":
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise _Rejected(
                    422,
                    "Invalid callback payload",
                    "MetaData in a query string must be JSON, e.g. "
                    '[{"campaign":"spring"}], or use MetaData[campaign]=spring',
                    errors=[{"field": "MetaData", "message": "not JSON"}],
                ) from None
            if isinstance(parsed, dict):
                pairs.extend({name: item} for name, item in parsed.items())
            else:
                pairs.extend(parsed if isinstance(parsed, list) else [parsed])
            continue
        if low.startswith("metadata[") and low.endswith("]") and len(key) > 10:
            pairs.append({key[9:-1]: value})
            continue
        if low in seen:
            raise _Rejected(
                422,
                "Invalid callback payload",
                f"{key} is given more than once in the query string",
                errors=[{"field": key, "message": "given more than once"}],
            )
        seen.add(low)
        if low == "timestamp":
            # An unencoded '+' of the UTC offset arrives as a space.
            value = _GET_OFFSET.sub(r"+\1", value)
        data[key] = value
    if pairs:
        data["MetaData"] = pairs
    return data


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"
