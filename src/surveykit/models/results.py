"""Survey results: POST /v3.2/Survey/GetResults."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, StringConstraints, field_validator

from surveykit.models._base import AwareDatetime, RequestModel, WireInt


class ResultsFormat(StrEnum):
    """Report formats. CSV, PIPE, XML and JSON are the reference's; TAB is the sandbox's."""

    CSV = "CSV"
    PIPE = "PIPE"
    TAB = "TAB"
    XML = "XML"
    JSON = "JSON"


class ResultsRequest(RequestModel):
    """The body of POST /v3.2/Survey/GetResults (ResultsRequestModel).

    ``survey_reference`` is a survey's reference or ``"*"`` for all surveys; ``sort_order``
    keeps respondents who completed at least that many questions (1 returns all).
    """

    format: ResultsFormat = ResultsFormat.JSON
    header: bool | None = None
    since: AwareDatetime | None = None
    sort_order: Annotated[WireInt, Field(ge=-(2**31), le=2**31 - 1)] | None = None
    survey_reference: Annotated[str, StringConstraints(min_length=1)] = "*"

    @field_validator("format", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value
