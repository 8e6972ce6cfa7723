"""The platform's strict reading of JSON types in request bodies.

surveykit's request models are pydantic models in lax mode: built from Python values, they
take ``"true"`` or ``"yes"`` for a boolean. The platform reads JSON as ASP.NET does: a
boolean must be ``true`` or ``false`` (an invalid field type is a 400), and only integers
may also be written as strings (:data:`surveykit.models._base.INT_STRING`, which the
models already apply strictly). The sandbox checks the booleans here, before a model is
built, so that the models stay as they are for the client.

The models also take conveniences a Python caller may use and the platform's types do
not allow: a Window's ``days`` as a list, one Window instead of an array, a message
``type`` by name (``"whatsapp"``). :func:`message_shape_errors` refuses those on the
wire, and :func:`import_list_errors` a record of an import list that is not an object.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from surveykit.models._base import INT_STRING

WINDOW_STRINGS = ("from", "to", "days")
"""The Window object's properties: all strings in the reference (``days`` as ``1,2,3``)."""


def _is_bool(annotation: Any) -> bool:
    if annotation is bool:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return args == [bool]
    return False


def boolean_errors(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, list[str]]:
    """The boolean fields of ``model`` that ``data`` (wire names) gives as anything else.

    ``null`` is left to the model (nullable fields take it, required ones refuse it).
    """
    errors: dict[str, list[str]] = {}
    for name, field in model.model_fields.items():
        if not _is_bool(field.annotation):
            continue
        wire = field.alias or name
        if wire not in data:
            continue
        value = data[wire]
        if value is None or isinstance(value, bool):
            continue
        kind = "a string" if isinstance(value, str) else f"a JSON {type(value).__name__}"
        errors[wire] = [
            "The JSON value could not be converted to System.Boolean: expected true or false, "
            f"got {value!r} ({kind})."
        ]
    return errors


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, bool):
        return "a JSON boolean"
    return f"a JSON {type(value).__name__}"


def message_shape_errors(data: Mapping[str, Any]) -> dict[str, list[str]]:
    """The MessageModel properties of ``data`` (folded wire names) of a type the reference refuses.

    ``window`` is an array of Window objects (or null), each Window's ``from``, ``to`` and
    ``days`` strings; ``type`` an int16, as a number or a string of one (not a name).
    ``null`` and absent properties are left to the model.
    """
    errors: dict[str, list[str]] = {}
    window = data.get("window")
    if window is not None and not isinstance(window, list):
        errors["window"] = [
            "The JSON value could not be converted to System.Collections.Generic.List`1[Window]"
            f": expected an array of Window objects, got {_kind(window)}."
        ]
    for index, item in enumerate(window if isinstance(window, list) else []):
        if not isinstance(item, dict):
            errors[f"window.{index}"] = [
                "The JSON value could not be converted to Window: expected an object, "
                f"got {_kind(item)}."
            ]
            continue
        for name in WINDOW_STRINGS:
            value = item.get(name)
            if value is not None and not isinstance(value, str):
                example = "like '1,2,3,4,5'" if name == "days" else "HH:MM"
                errors[f"window.{index}.{name}"] = [
                    "The JSON value could not be converted to System.String: expected "
                    f"{name} as a string ({example}), got {value!r} ({_kind(value)})."
                ]
    kind = data.get("type")
    if isinstance(kind, str) and not INT_STRING.fullmatch(kind):
        errors["type"] = [
            "The JSON value could not be converted to System.Int16: expected a number "
            f"(0 Sms, 1 WhatsApp, 2 Facebook, 3 WhatsAppTemplate), got {kind!r} (a string)."
        ]
    return errors


def import_list_errors(records: list[Any]) -> dict[str, list[str]]:
    """The first record of an import ``list`` that is not a JSON object, as a validation error.

    The reference's ``list`` is an array of objects: a body holding anything else in it is
    refused as a whole, as a type the platform cannot read (no record is imported).
    """
    wrong = [index for index, record in enumerate(records) if not isinstance(record, dict)]
    if not wrong:
        return {}
    first = wrong[0]
    others = f"; {len(wrong)} of {len(records)} records are not objects" if len(wrong) > 1 else ""
    return {
        f"list.{first}": [
            "The JSON value could not be converted to an import record: expected an object, "
            f"got {_kind(records[first])}{others}."
        ]
    }


__all__ = ["boolean_errors", "import_list_errors", "message_shape_errors"]
