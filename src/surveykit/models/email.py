"""Email sending: POST /v3.2/Message/SendEmail (PascalCase body)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from surveykit.models._base import RequestModel, UTCDatetime
from surveykit.models.callbacks import CallbackSettings, MetaDataValue, metadata_list

NOT_ACCEPTED_FOR_EMAIL = {
    "destination": "use to=",
    "source": "use from_=",
    "message": "use content=",
    "reply": "email has no reply option",
    "window": "email has no send windows",
    "timeout": "email has no reply timeout",
    "type": "the message type is chosen automatically for email",
    "onbehalf": "not accepted for email",
    "surveyid": "not accepted for email",
    "cc": "one recipient per request: send one email per address",
    "bcc": "one recipient per request: send one email per address",
    "attachments": "attachments are not supported",
    "attachment": "attachments are not supported",
    "text": "the plain-text alternative is derived from the HTML content",
    "plaintext": "the plain-text alternative is derived from the HTML content",
    "textcontent": "the plain-text alternative is derived from the HTML content",
    "plaintextcontent": "the plain-text alternative is derived from the HTML content",
}
"""Fields the reference lists as not accepted for email, with what to do instead."""

_NonEmpty = Annotated[str, StringConstraints(min_length=1)]


def _scan(value: str) -> Iterator[tuple[str, bool]]:
    """Each character of ``value`` and whether quotes or angle brackets shield it.

    Shielded: a quote or angle bracket itself, or a character inside a quoted name or an
    angle-bracketed address.
    """
    quoted = angled = False
    for char in value:
        if char == '"' and not angled:
            quoted = not quoted
        elif char == "<" and not quoted:
            angled = True
        elif char == ">" and not quoted:
            angled = False
        elif not quoted and not angled:
            yield char, False
            continue
        yield char, True


def _parts(value: str) -> list[str]:
    """``value`` split at commas and semicolons outside quotes and angle brackets."""
    parts: list[str] = []
    current: list[str] = []
    for char, shielded in _scan(value):
        if char in ",;" and not shielded:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _bare_addresses(part: str) -> int:
    """How many ``@`` words stand outside a quoted name and an angle-bracketed address."""
    outside = "".join(" " if shielded else char for char, shielded in _scan(part))
    return sum(1 for word in outside.split() if "@" in word)


def recipient_count(value: str) -> int:
    """How many recipients an email's ``To`` names.

    The reference takes one recipient per request and does not validate address syntax,
    so ``Ana Silva <ana@example.org>`` and ``"Silva, Ana" <ana@example.org>`` are one
    recipient; a list separated by commas or semicolons (outside quotes and angle
    brackets), or several bare addresses separated by spaces, is several.

    Example:
        >>> recipient_count("Ana Silva <ana@example.org>")
        1
        >>> recipient_count("ana@example.org; bo@example.org")
        2
    """
    parts = _parts(value)
    return sum(max(1, _bare_addresses(part)) for part in parts)


class EmailRequest(RequestModel):
    """The body of POST /v3.2/Message/SendEmail.

    Wire names are PascalCase (``To``, ``From``, ``Subject``, ``Content``, ``When``, ``Test``,
    ``Lookup``, ``MetaData``, ``Callback``). One recipient per request. ``metadata`` may be a
    plain dict (``{"campaign": "spring"}``); ``callback`` a dict of callback settings.

    Example:
        >>> EmailRequest(to="ana@example.org", from_="surveys", subject="Hi",
        ...              content="<p>Hello</p>", metadata={"campaign": "spring"}).to_wire()
        {'To': 'ana@example.org', 'From': 'surveys', 'Subject': 'Hi', 'Content': '<p>Hello</p>', 'MetaData': [{'campaign': 'spring'}]}
    """  # noqa: E501

    model_config = ConfigDict(alias_generator=None)

    to: _NonEmpty = Field(alias="To")
    from_: _NonEmpty = Field(alias="From")
    subject: _NonEmpty = Field(alias="Subject")
    content: _NonEmpty = Field(alias="Content")
    when: UTCDatetime | None = Field(default=None, alias="When")
    test: bool | None = Field(default=None, alias="Test")
    lookup: bool | None = Field(default=None, alias="Lookup")
    metadata: list[dict[str, MetaDataValue]] | None = Field(default=None, alias="MetaData")
    callback: CallbackSettings | None = Field(default=None, alias="Callback")

    @model_validator(mode="before")
    @classmethod
    def _refuse_not_accepted(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                folded = str(key).replace("_", "").lower()
                if folded in NOT_ACCEPTED_FOR_EMAIL:
                    raise ValueError(
                        f"{key}: not accepted for email ({NOT_ACCEPTED_FOR_EMAIL[folded]})"
                    )
        return data

    @field_validator("to", "from_", "subject", "content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("to")
    @classmethod
    def _one_recipient(cls, value: str) -> str:
        value = value.strip()
        if recipient_count(value) > 1:
            raise ValueError(
                f"To: one recipient per request, got {value!r}; send one email per address"
            )
        return value

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> Any:
        return metadata_list(value)
