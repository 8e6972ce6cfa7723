"""``read_results``: sniff, parse into text columns, type them the same way for every format."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import pandas as pd
import pyarrow as pa

from surveykit.errors import ResultsParseError
from surveykit.results._columns import ColumnPlan, TypeName
from surveykit.results._common import RawChunk, column_names
from surveykit.results._csv import Predictor, iter_csv
from surveykit.results._json import iter_json
from surveykit.results._source import (
    DELIMITERS,
    Payload,
    Source,
    first_bytes,
    looks_like_no_results,
    normalize_format,
    sniff,
)
from surveykit.results._types import build_frame, check_names, predict_types


@overload
def read_results(
    source: Source,
    format: str | None = ...,
    *,
    header: bool = ...,
    names: Sequence[Any] | None = ...,
    chunksize: None = ...,
    dtypes: Mapping[str, Any] | None = ...,
    infer_types: bool = ...,
    max_bytes: int | None = ...,
    encoding: str | None = ...,
) -> pd.DataFrame: ...


@overload
def read_results(
    source: Source,
    format: str | None = ...,
    *,
    header: bool = ...,
    names: Sequence[Any] | None = ...,
    chunksize: int,
    dtypes: Mapping[str, Any] | None = ...,
    infer_types: bool = ...,
    max_bytes: int | None = ...,
    encoding: str | None = ...,
) -> Iterator[pd.DataFrame]: ...


def read_results(
    source: Source,
    format: str | None = None,
    *,
    header: bool = True,
    names: Sequence[Any] | None = None,
    chunksize: int | None = None,
    dtypes: Mapping[str, Any] | None = None,
    infer_types: bool = True,
    max_bytes: int | None = None,
    encoding: str | None = None,
) -> pd.DataFrame | Iterator[pd.DataFrame]:
    """Read survey results (CSV, PIPE, TAB, XML or JSON) into a typed DataFrame.

    Args:
        source: the payload as ``bytes`` (or ``bytearray``/``memoryview``), as ``str``
            (always the text of the payload, never a file name), an ``os.PathLike``
            (a file), a binary file object, or an iterable of ``bytes`` chunks (a streamed
            HTTP body).
        format: ``"CSV"``, ``"PIPE"``, ``"TAB"``, ``"XML"`` or ``"JSON"``; ``None``
            sniffs it from the first bytes.
        header: whether delimited results start with a header record. Without one,
            columns are named by ``names`` or ``column_1``, ``column_2``, ... (with a
            :class:`~surveykit.results.ResultsNotice` warning).
        names: column names to use instead of the header's (same number of columns;
            renames XML and JSON columns in their order too): names, or a codebook-like
            list of entries with a ``name`` (or ``column``, ``key``) key or attribute.
        chunksize: return an iterator of DataFrames of this many rows instead. Types are
            decided on the first chunk; a later value that does not fit raises
            :class:`~surveykit.ResultsParseError` (pass ``dtypes`` to fix them).
        dtypes: column -> ``"string"``, ``"Int64"``, ``"float64"``, ``"boolean"``,
            ``"datetime"`` or ``"category"`` (or the pandas dtype), instead of inference.
        infer_types: when false, columns not in ``dtypes`` stay text.
        max_bytes: refuse payloads larger than this.
        encoding: the payload's text encoding when it is not UTF-8 (e.g. ``"cp1252"``);
            without it, bytes that are not UTF-8 are an error naming their byte offset.

    Returns:
        A DataFrame with a RangeIndex; see ``docs/results-format.md`` for the types.
        Empty payloads, and the "No results since ..." answer, give an empty DataFrame.

    Raises:
        ResultsParseError: the payload is malformed, truncated or in another format; the
            message names the format, the line or record and the byte offset.
    """
    if chunksize is not None and chunksize < 1:
        raise ValueError("chunksize must be at least 1")
    names = column_names(names)
    payload = Payload(source, max_bytes=max_bytes, encoding=encoding)
    try:
        fmt = _format(payload, normalize_format(format))
    except BaseException:
        payload.close()
        raise
    if chunksize is None:
        try:
            return _read_whole(payload, fmt, header, names, dtypes, infer_types)
        finally:
            payload.close()
    return _read_chunks(payload, fmt, header, names, chunksize, dtypes, infer_types)


def _format(payload: Payload, given: str | None) -> str | None:
    """The format to parse with, or None for an empty answer."""
    try:
        head = payload.head()
    except ResultsParseError as exc:
        raise ResultsParseError(
            exc.detail, format=given or "?", offset=exc.offset, line=exc.line
        ) from None
    if not head.strip() or looks_like_no_results(head):
        return None
    if given is None:
        return sniff(head)
    first = head.lstrip()[:1]
    if (given == "XML" and first != b"<") or (given == "JSON" and first not in (b"[", b"{")):
        raise ResultsParseError(
            f"expected {given} results but the first bytes are {first_bytes(head)}",
            format=given,
            offset=0,
        )
    return given


def _raw(
    payload: Payload,
    fmt: str,
    header: bool,
    names: Sequence[str] | None,
    streaming: bool,
    predict: Predictor | None = None,
) -> Iterator[RawChunk]:
    if fmt in DELIMITERS:
        yield from iter_csv(
            payload, fmt, header=header, names=names, streaming=streaming, predict=predict
        )
        return
    if fmt == "XML":
        # lxml is loaded by the first XML read, not by ``import surveykit``.
        from surveykit.results.xml._reader import iter_xml

        chunks = iter_xml(payload, names=names, streaming=streaming)
    else:
        chunks = iter_json(payload, streaming=streaming)
    for chunk in chunks:
        if names is not None:
            if len(names) != len(chunk.names):
                raise ResultsParseError(
                    f"{len(names)} names given but the results have {len(chunk.names)} columns",
                    format=fmt,
                )
            chunk.names = list(names)
        yield chunk


def _read_whole(
    payload: Payload,
    fmt: str | None,
    header: bool,
    names: Sequence[str] | None,
    dtypes: Mapping[str, Any] | None,
    infer: bool,
) -> pd.DataFrame:
    if fmt is None:
        return pd.DataFrame()

    def predict(col_names: list[str], sample: list[pa.Array]) -> dict[int, TypeName]:
        return predict_types(col_names, sample, dtypes=dtypes, infer=infer)

    raws = list(_raw(payload, fmt, header, names, streaming=False, predict=predict))
    raw = raws[0] if len(raws) == 1 else _concat(raws, fmt)
    check_names(raw.names, format=fmt)
    frame, _ = build_frame(
        raw.names,
        raw.columns,
        dtypes=dtypes,
        infer=infer,
        plans=None,
        format=fmt,
        nrows=raw.nrows,
        predicted=raw.predicted,
    )
    return frame


def _concat(raws: list[RawChunk], fmt: str) -> RawChunk:
    names = raws[0].names
    for r in raws:
        if r.names != names:
            raise ResultsParseError("columns changed between chunks", format=fmt)
    cols = [
        pa.chunked_array(
            [c for r in raws for c in _chunks_of(r.columns[j])], type=pa.large_string()
        )
        for j in range(len(names))
    ]
    return RawChunk(list(names), cols, sum(r.nrows for r in raws))


def _chunks_of(col: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(col.chunks) if isinstance(col, pa.ChunkedArray) else [col]


def _read_chunks(
    payload: Payload,
    fmt: str | None,
    header: bool,
    names: Sequence[str] | None,
    chunksize: int,
    dtypes: Mapping[str, Any] | None,
    infer: bool,
) -> Iterator[pd.DataFrame]:
    try:
        if fmt is None:
            return
        plans: list[ColumnPlan] | None = None
        col_names: list[str] | None = None
        pending: list[list[pa.Array]] = []
        have = 0
        record = 0
        for raw in _raw(payload, fmt, header, names, streaming=True):
            if col_names is None:
                col_names = raw.names
                check_names(col_names, format=fmt)
                pending = [[] for _ in col_names]
            elif raw.names != col_names:
                new = [n for n in raw.names if n not in col_names]
                raise ResultsParseError(
                    f"columns {new!r} first appear after the first chunk; read without "
                    "chunksize, or have the writer declare them",
                    format=fmt,
                    record=record + have,
                )
            for j, col in enumerate(raw.columns):
                pending[j].extend(_chunks_of(col))
            have += raw.nrows
            while have >= chunksize:
                cols = [pa.chunked_array(p, type=pa.large_string()) for p in pending]
                head = [c.slice(0, chunksize) for c in cols]
                frame, plans = build_frame(
                    col_names,
                    head,
                    dtypes=dtypes,
                    infer=infer,
                    plans=plans,
                    format=fmt,
                    first_record=record,
                    nrows=chunksize,
                )
                yield frame
                record += chunksize
                have -= chunksize
                pending = [list(c.slice(chunksize).chunks) for c in cols]
        if col_names is None:
            return
        if have or record == 0:
            cols = [pa.chunked_array(p, type=pa.large_string()) for p in pending]
            frame, plans = build_frame(
                col_names,
                cols,
                dtypes=dtypes,
                infer=infer,
                plans=plans,
                format=fmt,
                first_record=record,
                nrows=have,
            )
            yield frame
    finally:
        payload.close()
