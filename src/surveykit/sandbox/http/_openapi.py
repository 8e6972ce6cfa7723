"""``GET /openapi.json``: an OpenAPI 3.1 document of the v3.2 routes and schemas.

It describes the reference (``api-v3.2.md``); where the reference says "not shown", it
describes what the sandbox does (documented in ``docs/sandbox.md``): the keyword, short
link and error bodies. Only the v3.2 routes are in it, not ``/_sandbox`` or short links.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, Final

from surveykit.sandbox.http._openapi_schemas import ref as _ref
from surveykit.sandbox.http._openapi_schemas import schemas as _schemas

JSON_BODY: Final = ("application/json", "text/json", "application/*+json", "text/plain")
XML_BODY: Final = ("application/xml", "text/xml", "application/*+xml")
RESPONSE_TYPES: Final = (
    "text/plain",
    "application/json",
    "text/json",
    "application/xml",
    "text/xml",
)


def _content(schema: dict[str, Any], types: tuple[str, ...] = RESPONSE_TYPES) -> dict[str, Any]:
    return {media: {"schema": copy.deepcopy(schema)} for media in types}


def _body(name: str, xml: bool = False) -> dict[str, Any]:
    types = JSON_BODY + (XML_BODY if xml else ())
    return {"required": True, "content": _content(_ref(name), types)}


def _problem(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": description, "content": _content(schema or _ref("ProblemDetails"))}


_ERRORS: Final = {
    "400": _problem(
        "Validation failed or the request could not be processed.", _ref("ValidationProblemDetails")
    ),
    "401": _problem("Authentication missing or invalid."),
    "415": _problem("The body's content type is not accepted."),
}


def _op(
    op_id: str,
    tag: str,
    summary: str,
    responses: dict[str, Any],
    body: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": op_id,
        "tags": [tag],
        "summary": summary,
        "responses": {**copy.deepcopy(_ERRORS), **responses},
        **extra,
    }
    if body is not None:
        operation["requestBody"] = body
        operation["responses"]["413"] = _problem("The body is too large.")
    else:
        operation["responses"].pop("415")
    return operation


def _ok(schema: dict[str, Any], description: str = "Success") -> dict[str, Any]:
    return {"description": description, "content": _content(schema)}


def _paths() -> dict[str, Any]:
    """The paths, one endpoint group after another (the document's order)."""
    return {
        **_data_paths(),
        **_keyword_paths(),
        **_message_paths(),
        **_survey_paths(),
        **_tinyurl_paths(),
        **_webhook_paths(),
    }


def _data_paths() -> dict[str, Any]:
    """Data: the respondent import."""
    return {
        "/v3.2/Data/Import": {
            "post": _op(
                "Data_Import",
                "Data",
                "Import respondent records into a survey",
                {
                    "200": _ok({"type": "array", "items": _ref("ImportResponse")}),
                    "404": _problem("No survey or import definition has this reference."),
                },
                _body("ImportDataModel"),
            )
        },
    }


def _keyword_paths() -> dict[str, Any]:
    """Keyword: register, update, delete and list keywords."""
    keyword_404 = {"404": _problem("No such keyword on the account.")}
    return {
        "/v3.2/Keyword": {
            "post": _op(
                "Keyword_Create",
                "Keyword",
                "Register a keyword",
                {
                    "200": _ok(_ref("KeywordModel")),
                    "409": _problem("The keyword is already registered."),
                },
                _body("KeywordModel"),
            ),
            "patch": _op(
                "Keyword_Update",
                "Keyword",
                "Update a keyword",
                {"200": _ok(_ref("KeywordModel")), **keyword_404},
                _body("KeywordModel"),
            ),
            "delete": _op(
                "Keyword_Delete",
                "Keyword",
                "Delete a keyword",
                {"200": _ok(_ref("KeywordModel")), **keyword_404},
                parameters=[
                    {
                        "name": "keyword",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
            ),
            "get": _op(
                "Keyword_List",
                "Keyword",
                "List the account's keywords",
                {"200": _ok({"type": "array", "items": _ref("KeywordModel")})},
            ),
        },
    }


def _message_paths() -> dict[str, Any]:
    """Message: send a message or an email, look a number up."""
    send_or_problem = {"anyOf": [_ref("SendResponse"), _ref("ValidationProblemDetails")]}
    return {
        "/v3.2/Message": {
            "post": _op(
                "Message_Send",
                "Message",
                "Send an SMS, WhatsApp, Facebook or template message",
                {
                    "200": _ok(_ref("SendResponse")),
                    "400": _problem(
                        "Invalid, refused (landline, blocked) or a problem sending: a "
                        "Send response or validation problem details.",
                        send_or_problem,
                    ),
                },
                _body("MessageModel"),
            )
        },
        "/v3.2/Message/SendEmail": {
            "post": _op(
                "Message_SendEmail",
                "Message",
                "Send one email",
                {
                    "200": _ok(_ref("SendResponse")),
                    "400": {
                        "description": "Validation failed, MetaData problem, stop list, or no "
                        "email route.",
                        "content": {
                            **_content(send_or_problem),
                            "text/plain": {
                                "schema": {"anyOf": [{"type": "string"}, send_or_problem]}
                            },
                        },
                    },
                    "403": _problem("The account lacks the sa, Admin or Organization role."),
                },
                {"required": True, "content": _content(_ref("EmailModel"), ("application/json",))},
            )
        },
        "/v3.2/Message/Lookup/{number}": {
            "get": _op(
                "Message_Lookup",
                "Message",
                "Look up a telephone number",
                {
                    "200": _ok(_ref("LookupResponse")),
                    "400": _problem(
                        "The number is invalid or the lookup failed.",
                        {"anyOf": [_ref("LookupResponse"), _ref("ValidationProblemDetails")]},
                    ),
                },
                parameters=[
                    {
                        "name": "number",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": r"^[1-9]\d{1,14}$"},
                    }
                ],
            )
        },
    }


def _survey_paths() -> dict[str, Any]:
    """Survey: the results."""
    results_types = {
        "text/csv": {"schema": {"type": "string"}},
        "text/plain": {"schema": {"type": "string"}},
        "text/tab-separated-values": {"schema": {"type": "string"}},
        "application/xml": {"schema": {"type": "string"}},
        "application/json": {
            "schema": {
                "type": "array",
                "items": {"type": "object", "additionalProperties": {"type": ["string", "null"]}},
            }
        },
    }
    return {
        "/v3.2/Survey/GetResults": {
            "post": _op(
                "Survey_GetResults",
                "Survey",
                "Survey results in CSV, PIPE, TAB, XML or JSON",
                {
                    "200": {
                        "description": "The results, streamed, in the requested format.",
                        "content": results_types,
                    },
                    "404": _problem("No survey has this reference."),
                },
                _body("ResultsRequestModel", xml=True),
            )
        },
    }


def _tinyurl_paths() -> dict[str, Any]:
    """TinyUrl: short links, one or a list."""
    return {
        "/v3.2/TinyUrl/Register": {
            "post": _op(
                "TinyUrl_Register",
                "TinyUrl",
                "Shorten one URL",
                {
                    "200": _ok(_ref("ShortLink")),
                    "409": _problem("The slashtag already links to another URL."),
                },
                _body("UrlModel", xml=True),
            )
        },
        "/v3.2/TinyUrl/RegisterList": {
            "post": _op(
                "TinyUrl_RegisterList",
                "TinyUrl",
                "Shorten several URLs",
                {
                    "200": _ok({"type": "array", "items": _ref("ShortLink")}),
                    "409": _problem("A slashtag already links to another URL."),
                },
                _body("UrlListModel", xml=True),
            )
        },
    }


def _webhook_paths() -> dict[str, Any]:
    """Webhook: the user's webhooks."""
    return {
        "/v3.2/Webhook": {
            "get": _op(
                "Webhook_List",
                "Webhook",
                "List the user's webhooks",
                {"200": _ok({"type": "array", "items": _ref("WebHookModel")})},
            )
        },
    }


@cache
def _document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Messaging, Survey Data and Short-Link Service (surveykit sandbox)",
            "version": "3.2",
            "description": "The v3.2 routes as the reference describes them; bodies the "
            "reference does not show are the sandbox's (docs/sandbox.md).",
        },
        "servers": [{"url": "/"}],
        "tags": [
            {"name": name}
            for name in ("Data", "Keyword", "Message", "Survey", "TinyUrl", "Webhook")
        ],
        "security": [{"accessToken": []}],
        "paths": _paths(),
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "accessToken": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "Authorization: Basic <ACCESS_TOKEN> (the token as issued,"
                    " not a base64 user:password pair).",
                },
            },
        },
    }


def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a fresh copy each time)."""
    return copy.deepcopy(_document())
