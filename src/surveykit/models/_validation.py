"""pydantic's validation errors in surveykit's words: one sentence per field.

A request model refuses an argument with a pydantic ``ValidationError``, whose text is
written for pydantic's users (``Input should be a valid boolean [type=bool_parsing, ...]``
and a link to pydantic's site). :func:`validate` builds the model and, when it refuses,
raises :class:`surveykit.ValidationError` instead: for each problem the field, what is
wrong with the value, and the form expected; the original stays as ``__cause__``.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from surveykit.errors import ValidationError

ModelT = TypeVar("ModelT", bound=BaseModel)

_E164 = "^[1-9][0-9]{1,14}$"
E164_FORM = "E.164 number as ASCII digits, without '+' or leading zeros (447911123456)"

# A message that starts with its own field name ("type: unknown message type ...",
# "MetaData[0]: ...") names the field more precisely than pydantic's location does.
_OWN_PREFIX = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*(?:\.[A-Za-z_][\w.]*)?): ")
_COMPARISONS = {
    "greater_than": ("too small", "greater than {gt}"),
    "greater_than_equal": ("too small", "at least {ge}"),
    "less_than": ("too large", "less than {lt}"),
    "less_than_equal": ("too large", "at most {le}"),
}


def validate(cls: type[ModelT], values: Mapping[str, Any]) -> ModelT:
    """Build ``cls`` from ``values``; refusals become :class:`surveykit.ValidationError`."""
    try:
        return cls.model_validate(values)
    except PydanticValidationError as exc:
        raise explain(exc, cls) from exc


def explain(exc: PydanticValidationError, cls: type[BaseModel] | None = None) -> ValidationError:
    """The :class:`surveykit.ValidationError` saying what ``exc`` says, one sentence a field."""
    problems: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        field, sentence = _sentence(error, cls)
        problems.append((field, sentence))
    return ValidationError(problems)


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _normal(name: str) -> str:
    return name.replace("_", "").lower()


def _where(loc: tuple[int | str, ...]) -> str:
    where = ""
    for part in loc:
        if isinstance(part, int):
            where += f"[{part}]"
        else:
            where += f".{part}" if where else str(part)
    return where


def _sentence(error: Mapping[str, Any], cls: type[BaseModel] | None) -> tuple[str, str]:
    loc = tuple(error.get("loc", ()))
    where = _where(loc)
    kind = str(error.get("type", ""))
    value = error.get("input")
    context = error.get("ctx") or {}
    if kind in ("value_error", "assertion_error"):
        message = str(context.get("error", error.get("msg", "")))
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        own = _OWN_PREFIX.match(message)
        last = next((str(p) for p in reversed(loc) if isinstance(p, str)), "")
        if own and (not where or _normal(own[1]) == _normal(last)):
            # Our own spelling of the field, with the message's finer position ("[0]").
            where = (where or own[1]) + own[2]
            message = message[own.end() :]
        return where, f"{where or _model_name(cls)}: {_period(message)}"
    problem, expected = _problem_and_form(kind, value, context, loc, cls)
    field = where or _model_name(cls)
    return where, f"{field}: {problem}; expected {expected}."


def _model_name(cls: type[BaseModel] | None) -> str:
    return cls.__name__ if cls is not None else "arguments"


def _period(message: str) -> str:
    message = message.strip()
    return message if message.endswith((".", "?", "!")) else message + "."


def _problem_and_form(
    kind: str,
    value: Any,
    context: Mapping[str, Any],
    loc: tuple[int | str, ...],
    cls: type[BaseModel] | None,
) -> tuple[str, str]:
    shown = _shown(value)
    if kind == "missing":
        return "required but not given", _form_of_field(cls, loc)
    if kind == "extra_forbidden":
        names = ", ".join(cls.model_fields) if cls is not None else "the documented fields"
        return "not a field of " + _model_name(cls), f"one of {names}"
    if kind == "string_pattern_mismatch":
        pattern = str(context.get("pattern", ""))
        form = E164_FORM if pattern == _E164 else f"text matching the pattern {pattern}"
        return f"{shown} is not in the expected form", form
    if kind in ("string_too_long", "too_long"):
        limit = context.get("max_length")
        size = len(value) if hasattr(value, "__len__") else "too many"
        unit = "characters" if kind == "string_too_long" else "items"
        return f"{shown} has {size} {unit}", f"at most {limit} {unit}"
    if kind in ("string_too_short", "too_short"):
        limit = context.get("min_length")
        unit = "character" if kind == "string_too_short" else "item"
        return f"{shown} is too short", f"at least {limit} {unit}{'' if limit == 1 else 's'}"
    if kind in _COMPARISONS:
        problem, form = _COMPARISONS[kind]
        return f"{shown} is {problem}", form.format(**context)
    if kind.startswith("bool_"):
        return f"{shown} is not a boolean", "True or False"
    if kind.startswith("int_"):
        return f"{shown} is not a whole number", "an integer"
    if kind.startswith(("float_", "decimal_")):
        return f"{shown} is not a number", "a number"
    if kind.startswith(("datetime_", "date_", "time_", "timezone_")):
        return f"{shown} is not a date and time", _form_of_field(cls, loc)
    if kind in ("string_type", "string_unicode"):
        return f"{shown} is a {type(value).__name__}", "text"
    if kind in ("enum", "literal_error"):
        return f"{shown} is not one of the choices", f"one of {context.get('expected', '?')}"
    if kind.startswith("url_"):
        return f"{shown} is not a URL", "an http(s) URL"
    if kind in ("list_type", "tuple_type", "set_type", "iterable_type"):
        return f"{shown} is a {type(value).__name__}", "a list"
    if kind in ("dict_type", "mapping_type", "model_type", "model_attributes_type"):
        return f"{shown} is a {type(value).__name__}", _form_of_field(cls, loc)
    # Anything else: pydantic's own words, reworded from "Input should be ...".
    message = str(context.get("error", "")) or _rewrite(kind)
    return f"{shown} is not accepted", message


def _rewrite(kind: str) -> str:
    return "a value of the documented type (" + kind.replace("_", " ") + " refused)"


def _form_of_field(cls: type[BaseModel] | None, loc: tuple[int | str, ...]) -> str:
    if cls is None or not loc or not isinstance(loc[0], str):
        return "a value"
    field = cls.model_fields.get(loc[0])
    if field is None:
        return "a value"
    return describe_type(field.annotation)


def describe_type(annotation: Any) -> str:
    """A type in words: ``bool`` -> ``True or False``, an enum -> its choices, ..."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return describe_type(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        choices = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return " or ".join(dict.fromkeys(describe_type(arg) for arg in choices))
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return "a list"
    if origin in (dict, Mapping) or annotation is dict:
        return "a dict"
    if annotation is bool:
        return "True or False"
    if annotation is int:
        return "an integer"
    if annotation is float:
        return "a number"
    if annotation is str:
        return "text"
    if annotation is dt.datetime:
        return "a timezone-aware datetime (datetime(..., tzinfo=UTC) or ISO 8601 with an offset)"
    if annotation is dt.time:
        return "a time of day as HH:MM"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(str(member.value) for member in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"a {annotation.__name__} or a dict of its fields"
    return "a value of the documented type"
