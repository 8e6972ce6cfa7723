"""Survey: results export."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from surveykit._util.atomic import atomic_path
from surveykit.client._base import APIRequest, M, Resource, endpoint, model_from
from surveykit.errors import ValidationError
from surveykit.models import ResultsFormat, ResultsRequest

if TYPE_CHECKING:
    import pandas as pd  # imported with the readers, on the first results call

T = TypeVar("T")

ROW_COUNT_HEADER = "X-Total-Count"
"""A response header giving the number of result rows, compared with the rows read.

The reference documents no row count; this is the common convention, honoured when a
platform or proxy sends it (the sandbox does not)."""

logger = logging.getLogger("surveykit")


def _completeness(response: httpx.Response, rows: int) -> dict[str, Any]:
    """Whether the whole body arrived, as far as the response can tell; attrs for the frame.

    HTTP/1.x marks a body's end by its Content-Length or chunked framing, which httpx
    checks (a cut body raises). A body delimited only by the connection closing cannot be
    told apart from one cut on a row boundary: it is marked unchecked. HTTP/2 frames every
    body, and an in-process transport (the embedded sandbox) has no connection to lose.
    Raises ``httpx.ReadError`` (an incomplete download) when the platform's row count
    header disagrees with the rows read.
    """
    attrs: dict[str, Any] = {"complete": True, "completeness": "checked by the HTTP framing"}
    version = response.extensions.get("http_version")
    framed = (
        "content-length" in response.headers
        or "chunked" in response.headers.get("transfer-encoding", "").lower()
    )
    if version is not None and bytes(version).startswith(b"HTTP/1") and not framed:
        attrs = {
            "complete": None,
            "completeness": "could not be checked: the answer had neither Content-Length nor "
            "chunked framing, so a download cut on a row boundary looks complete",
        }
    reported = response.headers.get(ROW_COUNT_HEADER)
    if reported is not None:
        try:
            expected = int(reported)
        except ValueError:
            expected = -1
        if expected < 0:
            logger.warning("ignored %s: %r is not a row count", ROW_COUNT_HEADER, reported)
        elif expected != rows:
            raise httpx.ReadError(
                f"{rows:,} rows arrived but the platform's {ROW_COUNT_HEADER} says {expected:,}"
            )
        else:
            attrs = {
                "complete": True,
                "completeness": f"the {rows:,} rows read match {ROW_COUNT_HEADER}",
            }
        attrs["reported_rows"] = expected if expected >= 0 else None
    if attrs["complete"] is None:
        logger.warning("survey results: completeness %s", attrs["completeness"])
    return attrs


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
        not_found=("survey", body.survey_reference),
    )


def _results_format(format: ResultsFormat | str) -> ResultsFormat:
    try:
        return ResultsFormat(str(format).strip().upper())
    except ValueError as exc:
        choices = ", ".join(member.value for member in ResultsFormat)
        sentence = f"format: {format!r} is not a results format; expected one of {choices}."
        raise ValidationError([("format", sentence)]) from exc


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

        Completeness: a download cut part-way raises
        :class:`~surveykit.APIConnectionError`. ``df.attrs["complete"]`` is True when the
        HTTP framing (Content-Length, chunked, HTTP/2) or the platform's row count
        (``X-Total-Count``, compared with the rows read; a mismatch raises) proves the
        body whole, and None when the answer was delimited only by the connection closing,
        so a cut on a row boundary could not be detected; ``df.attrs["completeness"]``
        says which, and a warning is logged when unchecked.

        Example:
            >>> df = client.surveys.results("CSAT-SMS-2026")
        """
        from surveykit.results import read_results

        chosen = _results_format(format)

        def parse(response: httpx.Response) -> pd.DataFrame:
            frame: pd.DataFrame = read_results(
                _body(response), chosen.value, names=names, header=header, dtypes=dtypes
            )
            frame.attrs.update(_completeness(response, len(frame)))
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

        The file is written under a temporary name beside ``path`` and replaces it only
        when the download is complete: a failure part-way raises and leaves an existing
        file as it was. A row count header that disagrees with the rows read raises too;
        an answer without length framing is logged as unchecked (see :meth:`results`).
        """
        from surveykit.results import results_to_parquet

        chosen = _results_format(format)

        def parse(response: httpx.Response) -> int:
            with atomic_path(path) as temporary:
                rows: int = results_to_parquet(
                    _body(response), temporary, format=chosen.value, chunksize=chunksize
                )
                _completeness(response, rows)  # raises before the file is replaced
            return rows

        return _results_request(
            parse, survey_reference, chosen, True, since, sort_order, stream=True
        )


def _body(response: httpx.Response) -> bytes | Iterator[bytes]:
    """The body already read (the async client reads it whole): no copy; else a stream."""
    try:
        return response.content
    except httpx.ResponseNotRead:
        return response.iter_bytes()
