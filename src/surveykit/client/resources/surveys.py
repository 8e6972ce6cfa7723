"""Survey: results export."""

from __future__ import annotations

from datetime import datetime

import httpx

from surveykit.client._base import APIRequest, M, Resource, endpoint, model_from
from surveykit.models import ResultsFormat, ResultsRequest


def _text(response: httpx.Response) -> str:
    return response.text


class Surveys(Resource[M]):
    """POST /v3.2/Survey/GetResults."""

    @endpoint
    def get_results(
        self,
        survey_reference: str = "*",
        format: ResultsFormat | str = "JSON",
        header: bool | None = True,
        since: datetime | None = None,
        sort_order: int | None = None,
    ) -> APIRequest[str]:
        """Fetch results as the raw text of the chosen format (CSV, PIPE, TAB, XML, JSON).

        ``survey_reference="*"`` means all surveys; ``since`` (timezone-aware) keeps only
        newer results; ``sort_order`` keeps respondents who completed at least that many
        questions. Read-only, so retried on timeouts and 429/502/503/504.
        """
        body = model_from(
            ResultsRequest,
            None,
            {
                "survey_reference": survey_reference,
                "format": format,
                "header": header,
                "since": since,
                "sort_order": sort_order,
            },
        )
        return APIRequest(
            "POST",
            "/v3.2/Survey/GetResults",
            _text,
            json=body.to_wire(),
            idempotent=True,
            accept="*/*",
        )
