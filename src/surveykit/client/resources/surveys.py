"""Survey: results export."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from os import PathLike
from typing import Any, TypeVar

import httpx
import pandas as pd

from surveykit.client._base import APIRequest, M, Resource, endpoint, model_from
from surveykit.models import ResultsFormat, ResultsRequest

T = TypeVar("T")


def _text(response: httpx.Response) -> str:
    return response.text


def _results_request(
    parse: Callable[[httpx.Response], T],
    survey_reference: str,
    format: ResultsFormat | str,
    header: bool | None,
    since: datetime | None,
    sort_order: int | None,
    *,
    stream: bool = False,
) -> APIRequest[T]:
    """POST Survey/GetResults (read-only, so retried), its answer read by ``parse``."""
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
    return _results_body_request(parse, body, stream=stream)


def _results_body_request(
    parse: Callable[[httpx.Response], T], body: ResultsRequest, *, stream: bool = False
) -> APIRequest[T]:
    return APIRequest(
        "POST",
        "/v3.2/Survey/GetResults",
        parse,
        json=body.to_wire(),
        idempotent=True,
        accept="*/*",
        stream=stream,
    )


class Surveys(Resource[M]):
    """POST /v3.2/Survey/GetResults."""

    @endpoint
    def get_results(
        self,
        survey_reference: str | ResultsRequest | Mapping[str, Any] = "*",
        format: ResultsFormat | str = "JSON",
        header: bool | None = True,
        since: datetime | None = None,
        sort_order: int | None = None,
    ) -> APIRequest[str]:
        """Fetch results as the raw text of the chosen format (CSV, PIPE, TAB, XML, JSON).

        ``survey_reference="*"`` means all surveys; ``since`` (timezone-aware) keeps only
        newer results; ``sort_order`` keeps respondents who completed at least that many
        questions. Read-only, so retried on timeouts and 429/502/503/504.

        The first argument may also be a :class:`~surveykit.models.ResultsRequest` (or a
        dict of its fields), sent as built. Arguments given with it override its fields:
        ``since`` and ``sort_order`` when not None, ``format`` and ``header`` when they
        differ from their defaults (``"JSON"``, ``True``).

        Example:
            >>> client.surveys.get_results(ResultsRequest(survey_reference="NPS", format="CSV"))
        """
        if isinstance(survey_reference, str):
            return _results_request(_text, survey_reference, format, header, since, sort_order)
        overrides: dict[str, Any] = {"since": since, "sort_order": sort_order}
        if format != "JSON":
            overrides["format"] = format
        if header is not True:
            overrides["header"] = header
        return _results_body_request(_text, model_from(ResultsRequest, survey_reference, overrides))

    @endpoint
    def results(
        self,
        survey_reference: str = "*",
        format: ResultsFormat | str = "CSV",
        header: bool = True,
        since: datetime | None = None,
        sort_order: int | None = None,
        *,
        names: list[str] | None = None,
        dtypes: Mapping[str, Any] | None = None,
    ) -> APIRequest[pd.DataFrame]:
        """Fetch results and read them into a typed DataFrame (see :func:`read_results`).

        The HTTP body is streamed into the parser as it arrives (sync client), so no
        second full copy of a large download is kept. CSV is the fastest format to read;
        every format gives the same DataFrame. With ``header=False`` pass ``names`` or get
        ``column_1``..``column_N`` (with a ResultsNotice warning).

        Example:
            >>> df = client.surveys.results("CSAT-SMS-2026")
        """
        from surveykit.results import read_results

        chosen = ResultsFormat(str(format).strip().upper())

        def parse(response: httpx.Response) -> pd.DataFrame:
            frame: pd.DataFrame = read_results(
                response.iter_bytes(), chosen.value, names=names, header=header, dtypes=dtypes
            )
            return frame

        return _results_request(
            parse, survey_reference, chosen, header, since, sort_order, stream=True
        )

    @endpoint
    def results_to_parquet(
        self,
        path: str | PathLike[str],
        survey_reference: str = "*",
        format: ResultsFormat | str = "CSV",
        since: datetime | None = None,
        sort_order: int | None = None,
        *,
        chunksize: int = 100_000,
    ) -> APIRequest[int]:
        """Stream results into a Parquet file, a row group per ``chunksize`` rows.

        For results larger than memory: the body is parsed and written as it arrives.
        Returns the number of rows written. Open the file with pandas, DuckDB, Dask or Spark.
        """
        from surveykit.results import results_to_parquet

        chosen = ResultsFormat(str(format).strip().upper())

        def parse(response: httpx.Response) -> int:
            rows: int = results_to_parquet(
                response.iter_bytes(), path, format=chosen.value, chunksize=chunksize
            )
            return rows

        return _results_request(
            parse, survey_reference, chosen, True, since, sort_order, stream=True
        )
