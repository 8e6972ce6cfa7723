"""Data: respondent import."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surveykit.client._base import (
    APIRequest,
    M,
    Resource,
    endpoint,
    model_from,
    parse_model_list,
)
from surveykit.models import ImportRequest, ImportResult


class Data(Resource[M]):
    """POST /v3.2/Data/Import."""

    @endpoint
    def import_records(
        self,
        reference: str | ImportRequest,
        records: Sequence[Mapping[str, Any]] | None = None,
    ) -> APIRequest[list[ImportResult]]:
        """Import respondent records into the survey whose import definition is ``reference``.

        Returns one :class:`~surveykit.models.ImportResult` per record (Success or Error).
        An unknown reference raises :class:`~surveykit.NotFoundError`. Never retried once it
        may have reached the platform. For DataFrames use :func:`surveykit.import_frame`.

        Example:
            >>> client.data.import_records("CSAT-2026", [{"mobileNumber": "447911123456"}])
        """
        if isinstance(reference, ImportRequest):
            body = reference
        else:
            body = model_from(
                ImportRequest,
                None,
                {"reference": reference, "records": [dict(r) for r in records or []]},
            )
        return APIRequest(
            "POST",
            "/v3.2/Data/Import",
            parse_model_list(ImportResult),
            json=body.to_wire(),
            not_found=("survey or import definition", body.reference),
        )
