"""Callbacks: the per-request Callback settings and the payload the platform posts to us."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import Field, field_validator, model_serializer, model_validator

from surveykit.models._base import RequestModel, ResponseModel, WireInt, tolerant

MetaDataValue = str | int | float | bool
"""A value in a MetaData pair."""

PLACEHOLDER_MESSAGE_IDS: Final = frozenset({"", "unknown"})
"""MessageIDs (compared stripped, in lower case) that name no message: the platform sends
``Unknown`` when no transaction exists (failed lookups, replies to no open message)."""


def is_placeholder_id(message_id: str | None) -> bool:
    """Whether a MessageID names no message: None, empty or ``Unknown`` (any letter case)."""
    return message_id is None or message_id.strip().lower() in PLACEHOLDER_MESSAGE_IDS


def metadata_list(value: Any, field: str = "MetaData") -> list[dict[str, MetaDataValue]] | None:
    """Turn ``{"campaign": "x"}`` into the wire form ``[{"campaign": "x"}]``.

    A list of single-pair objects is accepted as it is, after checking that each element has
    exactly one pair with a non-empty name.
    """
    if value is None:
        return None
    if isinstance(value, dict):
        items = [{key: item} for key, item in value.items()]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise ValueError(f"{field}: expected a dict or a list of one-pair dicts, got {value!r}")
    for position, item in enumerate(items):
        if not isinstance(item, dict) or len(item) != 1:
            raise ValueError(f"{field}[{position}]: each element must be one name/value pair")
        ((name, pair_value),) = item.items()
        if not isinstance(name, str) or not name:
            raise ValueError(f"{field}[{position}]: the name must be a non-empty string")
        if pair_value is not None and not isinstance(pair_value, MetaDataValue):
            raise ValueError(
                f"{field}[{position}] ({name}): value must be a string, number or boolean"
            )
    return items


def _received_metadata(value: Any) -> list[dict[str, Any]] | None:
    """Read MetaData as the platform sent it, tolerantly.

    The reference shows one name/value pair per element; an element with none or several
    pairs, or a value of any type, is kept as sent rather than refused (refusing a callback
    makes the platform send it again). An object becomes one-pair elements. Only what is
    not name/value pairs at all (a string, a number, a list holding one) is an error.
    """
    if value is None:
        return None
    if isinstance(value, dict):
        return [{key: item} for key, item in value.items()]
    if not isinstance(value, list | tuple):
        raise ValueError(f"MetaData: expected name/value pairs, got {value!r}")
    for position, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"MetaData[{position}]: expected an object of name/value pairs")
    return [dict(item) for item in value]


class CallbackMethod(StrEnum):
    """HTTP method of a callback; POST (JSON body) is the platform's default."""

    POST = "POST"
    GET = "GET"


class CallbackSettings(RequestModel):
    """Per-request callback settings (the Callback array of the email body).

    On the wire each setting is its own one-pair object::

        [{"Url": "https://example.org/cb"}, {"Timeout": 5000}, {"Method": "POST"}]

    ``url`` may be a list of fallback URLs, tried in order. Times are in milliseconds.
    ``action`` names the failure alerts (``"Email"``, ``"Sms"`` or both).
    """

    url: str | list[str] = Field(alias="Url")
    timeout: Annotated[WireInt, Field(ge=1)] | None = Field(default=None, alias="Timeout")
    total_timeout: Annotated[WireInt, Field(ge=1)] | None = Field(
        default=None, alias="TotalTimeout"
    )
    retries: Annotated[WireInt, Field(ge=0)] | None = Field(default=None, alias="Retries")
    action: str | None = Field(default=None, alias="Action")
    method: CallbackMethod | None = Field(default=None, alias="Method")
    content_type: Literal["application/json"] | None = Field(default=None, alias="ContentType")

    @model_validator(mode="before")
    @classmethod
    def _from_pairs(cls, data: Any) -> Any:
        # Accept the wire form (a list of one-pair objects) as well as a plain dict.
        if isinstance(data, list | tuple):
            merged: dict[str, Any] = {}
            for position, item in enumerate(data):
                if not isinstance(item, dict) or len(item) != 1:
                    raise ValueError(f"Callback[{position}]: each element must be one parameter")
                merged.update(item)
            return merged
        return data

    @field_validator("url")
    @classmethod
    def _urls(cls, value: str | list[str]) -> str | list[str]:
        urls = [value] if isinstance(value, str) else value
        if not urls:
            raise ValueError("Url: at least one URL is needed")
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"Url: {url!r} is not an http(s) URL")
        return value

    @field_validator("action", mode="before")
    @classmethod
    def _action(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return ",".join(str(item) for item in value)
        return value

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @model_serializer(mode="wrap")
    def _to_pairs(self, handler: Any) -> Any:
        data: dict[str, Any] = handler(self)
        return [{key: value} for key, value in data.items() if value is not None]

    def to_wire(self) -> list[dict[str, Any]]:  # type: ignore[override]
        """The wire form: a list of one-parameter objects."""
        wire: Any = self.model_dump(mode="json", by_alias=True)
        return list(wire)


class CallbackType(StrEnum):
    """The Type of a callback (see Events in the reference)."""

    RECEIPT = "Receipt"
    LOOKUP = "Lookup"
    MESSAGE = "Message"
    INFO = "Info"
    HELP = "Help"
    STOP = "Stop"
    UNSTOP = "Unstop"
    KEYWORD = "Keyword"
    CLICK = "Click"
    KILLED = "Killed"
    NOT_KILLED = "NotKilled"


RESPONSE_TYPES = frozenset({CallbackType.MESSAGE, CallbackType.KEYWORD})
"""Callback types whose answer may carry a message to send back to the recipient."""

CallbackTypeValue = Annotated[CallbackType | str, tolerant(CallbackType)]


class CallbackPayload(ResponseModel):
    """What the platform sends to a callback URL about a message.

    Field names are read in any letter case; unknown fields are kept.
    """

    source: str | None = Field(default=None, alias="Source")
    destination: str | None = Field(default=None, alias="Destination")
    message: str | None = Field(default=None, alias="Message")
    type: CallbackTypeValue | None = Field(default=None, alias="Type")
    timestamp: datetime | None = Field(default=None, alias="Timestamp")
    inbound: bool | None = Field(default=None, alias="Inbound")
    lookup: bool | None = Field(default=None, alias="Lookup")
    test: bool | None = Field(default=None, alias="Test")
    status: str | None = Field(default=None, alias="Status")
    segments: WireInt | None = Field(default=None, alias="Segments")
    metadata: list[dict[str, Any]] | None = Field(default=None, alias="MetaData")
    message_id: str | None = Field(default=None, alias="MessageID")
    carrier: str | None = Field(default=None, alias="Carrier")
    reachable: bool | None = Field(default=None, alias="Reachable")
    number_type: str | None = Field(default=None, alias="NumberType")

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> Any:
        return _received_metadata(value)

    @property
    def metadata_dict(self) -> dict[str, Any]:
        """MetaData as one dict: every pair of every element; later pairs win on a repeat."""
        merged: dict[str, Any] = {}
        for pair in self.metadata or []:
            merged.update(pair)
        return merged

    @property
    def wants_reply(self) -> bool:
        """Whether this is a response-type callback (Message, Keyword)."""
        return self.type in RESPONSE_TYPES
