"""Respondent import: POST /v3.2/Data/Import."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final

from pydantic import Field, StringConstraints

from surveykit.models._base import RequestModel, ResponseModel, tolerant


class ImportRequest(RequestModel):
    """The body of POST /v3.2/Data/Import (ImportDataModel).

    ``records`` is the wire field ``list``: one dict per respondent, with the properties the
    import definition named by ``reference`` expects.
    """

    reference: Annotated[str, StringConstraints(min_length=1)]
    records: list[dict[str, Any]] = Field(alias="list")


class ImportStatus(StrEnum):
    """Per-record import outcome."""

    SUCCESS = "Success"
    ERROR = "Error"


#: The respondent properties of an import record (the wire names of the reference), which
#: ImportResponse echoes; every other property is a dynamic property of the definition.
RESPONDENT_FIELDS: Final[tuple[str, ...]] = (
    "title",
    "firstName",
    "lastName",
    "mobileNumber",
    "emailAddress",
    "website",
    "dateOfBirth",
)

ImportStatusValue = Annotated[ImportStatus | str, tolerant(ImportStatus)]


class ImportResult(ResponseModel):
    """One record's result from Data/Import (ImportResponse). All fields are strings."""

    status: ImportStatusValue | None = None
    message: str | None = None
    title: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    mobile_number: str | None = None
    email_address: str | None = None
    website: str | None = None
    date_of_birth: str | None = None
    when: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the record was imported."""
        return self.status == ImportStatus.SUCCESS
