"""The platform's strict reading of JSON types in request bodies.

surveykit's request models are pydantic models in lax mode: built from Python values, they
take ``"true"`` or ``"yes"`` for a boolean. The platform reads JSON as ASP.NET does: a
boolean must be ``true`` or ``false`` (an invalid field type is a 400), and only integers
may also be written as strings (:data:`surveykit.models._base.INT_STRING`, which the
models already apply strictly). The sandbox checks the booleans here, before a model is
built, so that the models stay as they are for the client.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel


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


__all__ = ["boolean_errors"]
