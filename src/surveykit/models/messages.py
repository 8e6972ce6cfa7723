"""Message sending and number lookup: POST /v3.2/Message, GET /v3.2/Message/Lookup/{number}."""

from __future__ import annotations

import re
from datetime import time
from enum import IntEnum, StrEnum
from typing import Annotated, Any

from pydantic import (
    Field,
    StringConstraints,
    field_serializer,
    field_validator,
    model_validator,
)

from surveykit.models._base import (
    INT_STRING,
    AwareDatetime,
    RequestModel,
    ResponseModel,
    WireInt,
    tolerant,
)

# The reference writes ``^[1-9]\d{1,14}$``; ``\d`` is spelled ``[0-9]`` here because Python's
# ``re`` and pydantic's regex engine read ``\d`` as any Unicode digit ("４４７７…", "٤٤٧٧…"),
# which the platform would not take and which would go out URL-encoded in a lookup path.
E164_DIGITS = re.compile(r"^[1-9][0-9]{1,14}$")
"""The reference's destination and lookup number rule: E.164 digits (ASCII), no ``+``."""

E164Digits = Annotated[str, StringConstraints(pattern=E164_DIGITS.pattern)]
"""A telephone number as the platform takes it: country code and number, ASCII digits only."""

BRANDED_SOURCE_MAX = 11
"""The longest branded (alphanumeric) source the platform takes."""
_NUMBER_SOURCE = re.compile(r"^\+?[0-9]+$")


def is_branded(source: str) -> bool:
    """Whether a source is a branded sender name rather than a number or short code.

    A number or short code is ASCII digits with an optional leading ``+``; anything else
    is branded (at most :data:`BRANDED_SOURCE_MAX` characters, no replies, SMS only).
    """
    return not _NUMBER_SOURCE.fullmatch(source)


class MessageType(IntEnum):
    """The ``type`` of a message: which channel it goes out on."""

    SMS = 0
    WHATSAPP = 1
    FACEBOOK = 2
    WHATSAPP_TEMPLATE = 3

    @classmethod
    def parse(cls, value: Any) -> MessageType:
        """Read a type from an int, an int string, or a name in any case (``"whatsapp"``).

        A number written as a string follows the reference's integer rule exactly
        (``"1"``; not ``" 1"``, ``"01"`` or ``"1.0"``). A name ignores case and the
        separators ``_``, ``-`` and space (``"WhatsApp Template"``).
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, bool):
            raise ValueError("type: expected a message type, got a boolean")
        number: int | None = None
        if isinstance(value, int):
            number = value
        elif isinstance(value, str) and INT_STRING.fullmatch(value):
            number = int(value)
        elif isinstance(value, str):
            key = value.lower().replace("_", "").replace("-", "").replace(" ", "")
            for member in cls:
                if key and key == member.name.lower().replace("_", ""):
                    return member
        if number is not None and number in cls._value2member_map_:
            return cls(number)
        names = ", ".join(f"{m.name.lower()}={m.value}" for m in cls)
        raise ValueError(f"type: unknown message type {value!r}; expected one of {names}")


class SendStatus(StrEnum):
    """Initial statuses of a send seen in the reference; others are kept as plain strings."""

    SENT = "Sent"
    BLOCKED = "Blocked"
    REACHABLE = "Reachable"


class NumberType(StrEnum):
    """Number types named by the reference; others are kept as plain strings."""

    MOBILE = "Mobile"
    LANDLINE = "Landline"
    VOIP = "VoIP"
    UNKNOWN = "Unknown"


class LookupStatus(StrEnum):
    """Lookup statuses named by the reference; others are kept as plain strings."""

    SUCCESS = "Success"
    ERROR = "Error"


_HHMM = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")


_DAY = re.compile(r"[0-9]+")


def _parse_hhmm(value: Any, field: str) -> time:
    if isinstance(value, time):
        return value.replace(second=0, microsecond=0, tzinfo=None)
    if isinstance(value, str):
        match = _HHMM.fullmatch(value.strip())
        if match:
            return time(int(match[1]), int(match[2]))
    raise ValueError(f"{field}: expected a time of day as HH:MM (00:00 to 23:59), got {value!r}")


class Window(RequestModel):
    """An allowed sending window: a time span on some days of the week.

    Days are numbered as in ISO 8601: 1 is Monday, 7 is Sunday. Times are HH:MM and
    ``from_`` must come before ``to`` (an overnight span is two windows). Which clock the
    platform applies (account or recipient time zone) is not shown in the reference.

    Example:
        >>> Window(from_="09:00", to="17:30", days=[1, 2, 3, 4, 5]).to_wire()
        {'from': '09:00', 'to': '17:30', 'days': '1,2,3,4,5'}
    """

    from_: time = Field(alias="from")
    to: time
    days: list[int] = Field(default_factory=lambda: [1, 2, 3, 4, 5, 6, 7])

    @field_validator("from_", mode="before")
    @classmethod
    def _from(cls, value: Any) -> time:
        return _parse_hhmm(value, "from")

    @field_validator("to", mode="before")
    @classmethod
    def _to(cls, value: Any) -> time:
        return _parse_hhmm(value, "to")

    @field_validator("days", mode="before")
    @classmethod
    def _days(cls, value: Any) -> list[int]:
        items: list[Any]
        if isinstance(value, str):
            items = [part.strip() for part in value.split(",")]
        elif isinstance(value, list | tuple | set | frozenset):
            items = sorted(value) if isinstance(value, set | frozenset) else list(value)
        else:
            raise ValueError(f"days: expected day numbers like '1,2,3' or [1, 2, 3], got {value!r}")
        days: list[int] = []
        for item in items:
            if isinstance(item, bool) or not (
                isinstance(item, int) or (isinstance(item, str) and _DAY.fullmatch(item))
            ):
                raise ValueError(f"days: {item!r} is not a day number (1=Monday .. 7=Sunday)")
            day = int(item)
            if not 1 <= day <= 7:
                raise ValueError(f"days: {day} is not a day number (1=Monday .. 7=Sunday)")
            if day in days:
                raise ValueError(f"days: day {day} is given twice")
            days.append(day)
        if not days:
            raise ValueError("days: at least one day is needed")
        return days

    @model_validator(mode="after")
    def _order(self) -> Window:
        if self.from_ >= self.to:
            raise ValueError(
                f"from ({self.from_:%H:%M}) must be before to ({self.to:%H:%M}); "
                "split an overnight window in two"
            )
        return self

    @field_serializer("from_", "to")
    def _hhmm(self, value: time) -> str:
        return value.strftime("%H:%M")

    @field_serializer("days")
    def _days_wire(self, value: list[int]) -> str:
        return ",".join(str(day) for day in value)


SendStatusValue = Annotated[SendStatus | str, tolerant(SendStatus)]
NumberTypeValue = Annotated[NumberType | str, tolerant(NumberType)]
LookupStatusValue = Annotated[LookupStatus | str, tolerant(LookupStatus)]


class SendRequest(RequestModel):
    """The body of POST /v3.2/Message (MessageModel in the reference).

    Example:
        >>> SendRequest(destination="447911123456", source="Acme", message="Hi",
        ...             reply=False).to_wire()
        {'source': 'Acme', 'destination': '447911123456', 'message': 'Hi', 'reply': False}
    """

    source: Annotated[str, StringConstraints(min_length=1)]
    destination: E164Digits
    message: Annotated[str, StringConstraints(min_length=1)]
    reply: bool
    when: AwareDatetime | None = None
    window: list[Window] | None = None
    lookup: bool | None = None
    test: bool | None = None
    timeout: Annotated[WireInt, Field(ge=-(2**31), le=2**31 - 1)] | None = None
    type: MessageType | None = None
    on_behalf: str | None = None
    survey_id: Annotated[WireInt, Field(ge=-(2**31), le=2**31 - 1)] | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> MessageType | None:
        return None if value is None else MessageType.parse(value)

    @field_validator("window", mode="before")
    @classmethod
    def _one_window(cls, value: Any) -> Any:
        return [value] if isinstance(value, Window | dict) else value

    @model_validator(mode="after")
    def _branded(self) -> SendRequest:
        if is_branded(self.source):
            if len(self.source) > BRANDED_SOURCE_MAX:
                raise ValueError(
                    f"source: a branded source is at most {BRANDED_SOURCE_MAX} characters, "
                    f"{self.source!r} has {len(self.source)}"
                )
            if self.reply:
                raise ValueError(
                    f"source: a branded source ({self.source!r}) cannot be used with reply=True;"
                    " use a number or short code to receive replies"
                )
        return self


class SendResponse(ResponseModel):
    """The platform's answer to a message or email send (shared response object).

    ``status`` is a :class:`SendStatus` when the value is known (in any letter case), else the
    string as sent. ``message_id`` is ``"Unknown"`` when no transaction was created.
    """

    message_id: str | None = Field(default=None, alias="MessageID")
    status: SendStatusValue | None = Field(default=None, alias="Status")
    carrier: str | None = Field(default=None, alias="Carrier")
    reachable: bool | None = Field(default=None, alias="Reachable")
    number_type: NumberTypeValue | None = Field(default=None, alias="NumberType")

    @property
    def created(self) -> bool:
        """Whether the platform created a transaction (a real MessageID, not ``Unknown``)."""
        return bool(self.message_id) and self.message_id != "Unknown"


class LookupResponse(ResponseModel):
    """The answer of GET /v3.2/Message/Lookup/{number}."""

    message_id: str | None = Field(default=None, alias="messageID")
    status: LookupStatusValue | None = None
    carrier: str | None = None
    reachable: bool | None = None
    number_type: NumberTypeValue | None = None
