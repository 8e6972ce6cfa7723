"""The schemas of ``GET /openapi.json`` (``components.schemas``), apart from its paths.

The reference's schemas (ImportDataModel, MessageModel, Window, SendResponse...) and
what the sandbox chose where the reference shows nothing (ShortLink, the keyword answers,
ValidationProblemDetails). :mod:`surveykit.sandbox.http._openapi` puts them in the document.
"""

from __future__ import annotations

from typing import Any, Final

from surveykit.models.imports import RESPONDENT_FIELDS

_INT_STRING: Final = r"^-?(?:0|[1-9]\d*)$"


def ref(name: str) -> dict[str, Any]:
    """A reference to one of the components' schemas."""
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": [kind, "null"], **extra}


def _wire_int(fmt: str, description: str) -> dict[str, Any]:
    return {
        "type": ["integer", "string", "null"],
        "format": fmt,
        "pattern": _INT_STRING,
        "description": description + " An integer written as a string is accepted too.",
    }


def schemas() -> dict[str, Any]:
    """The components' schemas: the reference's, and the sandbox's where it shows none."""
    return {
        **_data_schemas(),
        **_keyword_schemas(),
        **_message_schemas(),
        **_survey_schemas(),
        **_tinyurl_schemas(),
        **_webhook_schemas(),
        **_problem_schemas(),
    }


def _data_schemas() -> dict[str, Any]:
    """Data: the import's request and answer."""
    string_or_null = _nullable("string")
    return {
        "ImportDataModel": {
            "type": "object",
            "required": ["reference", "list"],
            "properties": {
                "reference": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Identifies the survey and import definition.",
                },
                "list": {
                    "type": "array",
                    "items": {"type": "object", "additionalProperties": True},
                    "description": "One object per record; the property names allowed "
                    "depend on the import definition.",
                },
            },
            "xml": {"name": "ImportDataModel"},
        },
        "ImportResponse": {
            "type": "object",
            "properties": {
                name: string_or_null for name in ("status", "message", *RESPONDENT_FIELDS, "when")
            },
        },
    }


def _keyword_schemas() -> dict[str, Any]:
    """Keyword: a keyword and its answers."""
    string_or_null = _nullable("string")
    return {
        "KeywordModel": {
            "type": "object",
            "required": ["keyword"],
            "properties": {
                "keyword": {"type": "string"},
                "type": string_or_null,
                "response": string_or_null,
                "finishDate": _nullable("string", format="date-time"),
            },
            "xml": {"name": "KeywordModel"},
        },
    }


def _message_schemas() -> dict[str, Any]:
    """Message: a message and its windows, an email, the send and lookup answers."""
    string_or_null = _nullable("string")
    return {
        "Window": {
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "Time of day, HH:MM."},
                "to": {"type": "string", "description": "Time of day, HH:MM."},
                "days": {"type": "string", "description": "Day numbers, like 1,2,3,4,5."},
            },
        },
        "MessageModel": {
            "type": "object",
            "required": ["source", "destination", "message", "reply"],
            "properties": {
                "source": {"type": "string", "minLength": 1},
                "destination": {"type": "string", "pattern": r"^[1-9]\d{1,14}$"},
                "message": {"type": "string", "minLength": 1},
                "reply": {"type": "boolean"},
                "when": _nullable("string", format="date-time"),
                "window": {"type": ["array", "null"], "items": ref("Window")},
                "lookup": _nullable("boolean"),
                "test": _nullable("boolean"),
                "timeout": _wire_int("int32", "Minutes kept open for a reply (default 4320)."),
                "type": _wire_int("int16", "0 Sms, 1 WhatsApp, 2 Facebook, 3 WhatsAppTemplate."),
                "onBehalf": string_or_null,
                "surveyId": _wire_int("int32", "The survey the message belongs to."),
            },
        },
        "EmailModel": {
            "type": "object",
            "required": ["To", "From", "Subject", "Content"],
            "properties": {
                "To": {"type": "string", "minLength": 1},
                "From": {"type": "string", "minLength": 1},
                "Subject": {"type": "string", "minLength": 1},
                "Content": {"type": "string", "minLength": 1},
                "When": {"type": "string", "format": "date-time"},
                "Test": {"type": "boolean"},
                "Lookup": {"type": "boolean"},
                "MetaData": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "Objects of one name/value pair each.",
                },
                "Callback": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "Objects of one callback parameter each.",
                },
            },
        },
        "SendResponse": {
            "type": "object",
            "properties": {
                "MessageID": {"type": "string"},
                "Status": {"type": "string"},
                "Carrier": {"type": "string"},
                "Reachable": {"type": "boolean"},
                "NumberType": {"type": "string"},
            },
        },
        "LookupResponse": {
            "type": "object",
            "properties": {
                "messageID": string_or_null,
                "status": string_or_null,
                "carrier": string_or_null,
                "reachable": {"type": "boolean"},
                "numberType": string_or_null,
            },
        },
    }


def _survey_schemas() -> dict[str, Any]:
    """Survey: the results request."""
    return {
        "ResultsRequestModel": {
            "type": "object",
            "properties": {
                "format": {
                    "type": "string",
                    "description": "CSV, PIPE, XML or JSON (the sandbox adds TAB).",
                },
                "header": _nullable("boolean"),
                "since": _nullable("string", format="date-time"),
                "sortOrder": _wire_int("int32", "At least this question completed; 1 is all."),
                "surveyReference": {
                    "type": "string",
                    "description": "A survey reference, or * for all.",
                },
            },
            "xml": {"name": "ResultsRequestModel"},
        },
    }


def _tinyurl_schemas() -> dict[str, Any]:
    """TinyUrl: a long URL or a list of them, and the short link made."""
    string_or_null = _nullable("string")
    return {
        "UrlModel": {
            "type": "object",
            "properties": {
                "fullUrl": {"type": "string"},
                "tinyDomain": string_or_null,
                "reuse": _nullable("boolean"),
                "slashtag": string_or_null,
            },
            "xml": {"name": "UrlModel"},
        },
        "UrlListModel": {
            "type": "object",
            "properties": {
                "urls": {
                    "type": ["array", "null"],
                    "items": ref("UrlModel"),
                    "xml": {"wrapped": True},
                },
                "urlList": {
                    "type": ["array", "null"],
                    "items": ref("UrlModel"),
                    "xml": {"wrapped": True},
                },
            },
            "xml": {"name": "UrlListModel"},
        },
        "ShortLink": {
            "type": "object",
            "description": "The reference does not show this body; the sandbox's shape.",
            "properties": {
                "shortUrl": {"type": "string"},
                "fullUrl": {"type": "string"},
                "slashtag": string_or_null,
                "tinyDomain": string_or_null,
                "created": {"type": "string", "format": "date-time"},
                "clicks": {"type": "integer"},
            },
        },
    }


def _webhook_schemas() -> dict[str, Any]:
    """Webhook: a webhook."""
    string_or_null = _nullable("string")
    return {
        "WebHookModel": {
            "type": "object",
            "properties": {
                "name": string_or_null,
                "key": string_or_null,
                "secret": string_or_null,
                "payload": string_or_null,
                "contentType": string_or_null,
                "isActive": {"type": "boolean"},
                "events": {"type": ["array", "null"], "items": {"type": "string"}},
                "method": string_or_null,
                "timeout": {"type": "integer", "format": "int32"},
                "totalTimeout": {"type": "integer", "format": "int32"},
                "retries": {"type": "integer", "format": "int32"},
                "status": {"type": "integer", "format": "int32"},
            },
        },
    }


def _problem_schemas() -> dict[str, Any]:
    """The problems every group may answer with (RFC 9457 problem details)."""
    string_or_null = _nullable("string")
    return {
        "ProblemDetails": {
            "type": "object",
            "properties": {
                "type": string_or_null,
                "title": string_or_null,
                "status": _nullable("integer", format="int32"),
                "detail": string_or_null,
                "instance": string_or_null,
            },
            "additionalProperties": True,
        },
        "ValidationProblemDetails": {
            "allOf": [ref("ProblemDetails")],
            "type": "object",
            "properties": {
                "errors": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    }


__all__ = ["ref", "schemas"]
