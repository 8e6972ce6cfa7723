"""Writers of every results format (what the sandbox serves from GetResults).

They stream: the table is turned into text ``chunk_rows`` rows at a time and each piece
is yielded as soon as it is encoded, so millions of rows never sit in memory as one
payload. Readers give back exactly what the writers were given (see ``read_results``).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from surveykit.results._layouts import applies, check_layout, write_layout
from surveykit.results._source import DELIMITERS, normalize_format
from surveykit.results._text import to_text
from surveykit.results.xml._names import ILLEGAL_XML_RE, encode_name

_ILLEGAL_RE2: Final = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x{fffe}\x{ffff}]"
_XML_DECL: Final = b'<?xml version="1.0" encoding="UTF-8"?>\n'


def _s(text: str) -> pa.Scalar:
    return pa.scalar(text, pa.large_string())


def _xml_escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def _frames(
    table: pd.DataFrame | Iterable[pd.DataFrame], chunk_rows: int
) -> Iterator[pd.DataFrame]:
    frames: Iterable[pd.DataFrame] = [table] if isinstance(table, pd.DataFrame) else table
    for frame in frames:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"write_results takes DataFrames, got {type(frame).__name__}")
        for start in range(0, len(frame), chunk_rows):
            yield frame.iloc[start : start + chunk_rows]
        if len(frame) == 0:
            yield frame


def _check_names(columns: pd.Index) -> list[str]:
    names = list(columns)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"column names must be non-empty strings, got {name!r}")
        if ILLEGAL_XML_RE.search(name):
            raise ValueError(f"column name {name!r} holds a control character")
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate column names: {names!r}")
    return names


def _texts(frame: pd.DataFrame, names: Sequence[str]) -> list[pa.Array]:
    out = []
    for j, name in enumerate(names):
        try:
            out.append(to_text(frame.iloc[:, j], name))
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeError) as exc:
            raise ValueError(f"column {name!r} cannot be written as UTF-8 text: {exc}") from exc
    return out


def write_results(
    table: pd.DataFrame | Iterable[pd.DataFrame],
    format: str,
    *,
    header: bool = True,
    chunk_rows: int = 100_000,
    layout: str = "documented",
) -> Iterator[bytes]:
    """Encode results as CSV, PIPE, TAB, XML or JSON, yielding the payload in pieces.

    Args:
        table: a DataFrame, or an iterable of DataFrames with the same columns (e.g. the
            chunks of :func:`surveykit.sandbox.generator.generate_results`). Column names
            must be unique non-empty strings. Values: text, integers, floats (NaN is
            missing), booleans, timezone-aware timestamps (written in UTC), categories.
        format: ``"CSV"``, ``"PIPE"``, ``"TAB"``, ``"XML"`` or ``"JSON"``.
        header: write the header record (CSV, PIPE and TAB only; XML always lists its
            columns in ``<Columns>`` and JSON records carry their keys).
        chunk_rows: rows encoded per piece.
        layout: ``"documented"`` (``docs/results-format.md``), or another layout a
            platform may send and the readers accept (see
            :data:`surveykit.results.LAYOUTS`): ``"bom"``, ``"crlf"``,
            ``"trailing-delimiter"`` (CSV, PIPE, TAB), ``"aspnet"``, ``"namespaced"``,
            ``"attributes"`` (XML), ``"wrapped"``, ``"ndjson"``, ``"typed"``,
            ``"nested"`` (JSON). A layout that does not concern the format changes nothing.

    Example:
        >>> pieces = write_results(pd.DataFrame({"Q1": ["a,b", None]}), "CSV")
        >>> b"".join(pieces).splitlines()
        [b'"Q1"', b'"a,b"', b'']
    """
    fmt = normalize_format(format)
    assert fmt is not None
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    frames = _frames(table, chunk_rows)
    if layout == "bom" and check_layout(layout):
        return _with_bom(write_results(table, fmt, header=header, chunk_rows=chunk_rows))
    if applies(layout, fmt):
        return write_layout(_text_rows(frames), fmt, layout, header)
    if fmt in DELIMITERS:
        return _write_delimited(frames, fmt, header)
    if fmt == "XML":
        return _write_xml(frames)
    return _write_json(frames)


def _with_bom(pieces: Iterator[bytes]) -> Iterator[bytes]:
    yield b"\xef\xbb\xbf"
    yield from pieces


def _text_rows(
    frames: Iterator[pd.DataFrame],
) -> Iterator[tuple[list[str], list[list[str | None]]]]:
    names: list[str] | None = None
    for frame in frames:
        names = _same_names(names, frame)
        yield names, [t.to_pylist() for t in _texts(frame, names)] if len(frame) else []


def _same_names(names: list[str] | None, frame: pd.DataFrame) -> list[str]:
    current = _check_names(frame.columns)
    if names is not None and current != names:
        raise ValueError(f"every chunk must have the same columns: {current!r} != {names!r}")
    return current


def _write_delimited(frames: Iterator[pd.DataFrame], fmt: str, header: bool) -> Iterator[bytes]:
    delim = DELIMITERS[fmt].decode()
    names: list[str] | None = None
    options = pacsv.WriteOptions(include_header=False, delimiter=delim, quoting_style="needed")
    for frame in frames:
        first = names is None
        names = _same_names(names, frame)
        if first and header and names:
            quoted = ['"' + n.replace('"', '""') + '"' for n in names]
            yield (delim.join(quoted) + "\n").encode("utf-8")
        if not len(frame) or not names:
            continue
        texts = _texts(frame, names)
        out = io.BytesIO()
        pacsv.write_csv(
            pa.Table.from_arrays(texts, names=[f"f{i}" for i in range(len(names))]), out, options
        )
        yield out.getvalue()


def _concat(arr: pa.Array | pa.ChunkedArray) -> bytes:
    # A null-free string array's data buffer is its values laid end to end.
    if isinstance(arr, pa.ChunkedArray):
        return b"".join(_concat(chunk) for chunk in arr.chunks)
    if len(arr) == 0:
        return b""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)
    first, last = int(offsets[arr.offset]), int(offsets[arr.offset + len(arr)])
    data = arr.buffers()[2]
    return memoryview(data)[first:last].tobytes() if data is not None else b""


def _write_xml(frames: Iterator[pd.DataFrame]) -> Iterator[bytes]:
    names: list[str] | None = None
    tags: list[str] = []
    started = False
    for frame in frames:
        first = names is None
        names = _same_names(names, frame)
        if first:
            tags = [encode_name(n) for n in names]
            declared = "".join(f"<Column>{_xml_escape(n)}</Column>" for n in names)
            yield _XML_DECL + f"<Results>\n<Columns>{declared}</Columns>\n".encode()
            started = True
        if not len(frame) or not names:
            continue
        texts = _texts(frame, names)
        pieces = []
        flagged: dict[int, list[str]] = {}
        for tag, text in zip(tags, texts, strict=True):
            illegal = pc.fill_null(pc.match_substring_regex(text, _ILLEGAL_RE2), False)
            if pc.any(illegal).as_py():
                values = text.to_pylist()
                for i in pc.indices_nonzero(illegal).to_pylist():
                    values[i] = base64.b64encode(values[i].encode("utf-8")).decode("ascii")
                    flagged.setdefault(i, []).append(tag)
                text = pa.array(values, type=pa.large_string())
            escaped = text
            for old, new in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#13;")):
                escaped = pc.replace_substring(escaped, old, new)
            element = pc.binary_join_element_wise(_s(f"<{tag}>"), escaped, _s(f"</{tag}>"), _s(""))
            pieces.append(pc.fill_null(element, _s("")))
        opener: pa.Array | pa.Scalar = _s("<Result>")
        if flagged:
            openers = ["<Result>"] * len(frame)
            for i, flagged_tags in flagged.items():
                openers[i] = f'<Result base64="{" ".join(flagged_tags)}">'
            opener = pa.array(openers, type=pa.large_string())
        rows = pc.binary_join_element_wise(opener, *pieces, _s("</Result>\n"), _s(""))
        yield _concat(rows)
    if not started:
        yield _XML_DECL + b"<Results>\n<Columns></Columns>\n"
    yield b"</Results>\n"


def _write_json(frames: Iterator[pd.DataFrame]) -> Iterator[bytes]:
    names: list[str] | None = None
    yield b"["
    sep = b"\n"
    for frame in frames:
        names = _same_names(names, frame)
        if not len(frame) or not names:
            continue
        columns = [t.to_pylist() for t in _texts(frame, names)]
        try:
            encoded = [
                orjson.dumps(dict(zip(names, row, strict=True)))
                for row in zip(*columns, strict=True)
            ]
        except orjson.JSONEncodeError as exc:
            raise ValueError(f"results cannot be written as JSON: {exc}") from exc
        yield sep + b",\n".join(encoded)
        sep = b",\n"
    yield b"\n]\n"
