"""Other layouts of the results formats, as a platform may send them.

The documented layout (``docs/results-format.md``) is what surveykit writes by default;
these variants are what the readers also accept, written so the sandbox can serve them
and the tests can compare every one with the documented layout. Each layout applies to
some formats; for the others it is the documented layout.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Final

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv

from surveykit.results._columns import is_respondent_column
from surveykit.results._source import DELIMITERS
from surveykit.results.xml._names import ILLEGAL_XML_RE, encode_name

_DELIMITED: Final = frozenset(DELIMITERS)
#: Layout name -> the formats it changes (every other format is written as documented).
LAYOUTS: Final[dict[str, frozenset[str]]] = {
    "documented": frozenset({"CSV", "PIPE", "TAB", "XML", "JSON"}),
    "bom": frozenset({"CSV", "PIPE", "TAB", "XML", "JSON"}),
    "crlf": _DELIMITED,
    "trailing-delimiter": _DELIMITED,
    "aspnet": frozenset({"XML"}),
    "namespaced": frozenset({"XML"}),
    "attributes": frozenset({"XML"}),
    "wrapped": frozenset({"JSON"}),
    "ndjson": frozenset({"JSON"}),
    "typed": frozenset({"JSON"}),
    "nested": frozenset({"JSON"}),
}
_BOM: Final = b"\xef\xbb\xbf"
_XSI: Final = "http://www.w3.org/2001/XMLSchema-instance"
_NAMESPACE: Final = "urn:surveykit:results"
_INT: Final = re.compile(r"-?(0|[1-9][0-9]{0,18})")


def check_layout(layout: str) -> str:
    """Refuse an unknown layout name."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown results layout {layout!r}; expected one of {sorted(LAYOUTS)}")
    return layout


def applies(layout: str, fmt: str) -> bool:
    """Whether ``layout`` changes how ``fmt`` is written."""
    return layout != "documented" and fmt in LAYOUTS[check_layout(layout)]


Rows = Iterator[tuple[list[str], list[list[str | None]]]]


def write_layout(chunks: Rows, fmt: str, layout: str, header: bool) -> Iterator[bytes]:
    """The payload of ``fmt`` in ``layout`` from chunks of (names, columns of text)."""
    if layout == "bom":
        raise AssertionError("the BOM is added by write_results")
    if fmt in DELIMITERS:
        return _delimited(chunks, fmt, layout, header)
    if fmt == "XML":
        return _xml(chunks, layout)
    return _json(chunks, layout)


def _delimited(chunks: Rows, fmt: str, layout: str, header: bool) -> Iterator[bytes]:
    delim = DELIMITERS[fmt].decode()
    eol = "\r\n" if layout == "crlf" else "\n"
    trailing = layout == "trailing-delimiter"
    options = pacsv.WriteOptions(include_header=False, delimiter=delim, eol=eol)
    started = False
    for names, columns in chunks:
        if not started and header:
            quoted = ['"' + n.replace('"', '""') + '"' for n in names]
            yield (delim.join(quoted) + (delim if trailing else "") + eol).encode()
        started = True
        if not columns or not columns[0]:
            continue
        arrays = [pa.array(c, type=pa.large_string()) for c in columns]
        if trailing:
            arrays.append(pa.nulls(len(columns[0]), pa.large_string()))
        table = pa.Table.from_arrays(arrays, names=[f"f{i}" for i in range(len(arrays))])
        out = pa.BufferOutputStream()
        pacsv.write_csv(table, out, options)
        yield out.getvalue().to_pybytes()


def _escape(text: str, attribute: bool = False) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\r", "&#13;")
    if attribute:
        text = text.replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")
    return text


def _element_only(tag: str) -> bool:
    # Names an attribute cannot take: the layout's own, and those XML reserves.
    return tag == "base64" or tag.lower().startswith("xml")


def _xml(chunks: Rows, layout: str) -> Iterator[bytes]:
    root, record, declare, columns = "Results", "Result", "", True
    if layout == "aspnet":
        root, record, columns = "ArrayOfSurveyResult", "SurveyResult", False
        declare = f' xmlns:xsi="{_XSI}" xmlns:xsd="http://www.w3.org/2001/XMLSchema"'
    elif layout == "namespaced":
        declare = f' xmlns="{_NAMESPACE}" xmlns:xsi="{_XSI}"'
    yield f'<?xml version="1.0" encoding="utf-8"?>\n<{root}{declare}>\n'.encode()
    started = False
    for names, cols in chunks:
        tags = [encode_name(n) for n in names]
        if not started and columns:
            listed = "".join(f"<Column>{_escape(n)}</Column>" for n in names)
            yield f"  <Columns>{listed}</Columns>\n".encode()
        started = True
        out = []
        for row in zip(*cols, strict=True):
            attrs, fields, flagged = [], [], []
            for tag, value in zip(tags, row, strict=True):
                if value is not None and ILLEGAL_XML_RE.search(value):
                    flagged.append(tag)
                    encoded = base64.b64encode(value.encode()).decode()
                    fields.append(f"<{tag}>{encoded}</{tag}>")
                elif layout == "attributes" and not _element_only(tag):
                    if value is not None:
                        attrs.append(f' {tag}="{_escape(value, attribute=True)}"')
                elif value is None:
                    if layout == "aspnet":
                        fields.append(f'<{tag} xsi:nil="true" />')
                else:
                    fields.append(f"<{tag}>{_escape(value)}</{tag}>")
            if flagged:
                attrs.append(f' base64="{" ".join(flagged)}"')
            inner = "\n    ".join(fields)
            opening = f"<{record}{''.join(attrs)}"
            if inner:
                out.append(f"  {opening}>\n    {inner}\n  </{record}>\n")
            else:
                out.append(f"  {opening} />\n")
        yield "".join(out).encode()
    yield f"</{root}>\n".encode()


def _typed(value: str | None) -> object:
    """A value as the JSON type it looks like, written so that it reads back the same."""
    if value is None:
        return None
    if value in ("true", "false"):
        return value == "true"
    if _INT.fullmatch(value) and value != "-0" and -(2**63) <= int(value) < 2**63:
        return int(value)
    try:
        number = float(value)
    except ValueError:
        return value
    finite = number == number and abs(number) != float("inf")
    return number if finite and repr(number) == value else value


def _json(chunks: Rows, layout: str) -> Iterator[bytes]:
    if layout == "wrapped":
        yield b'{"data": ['
    elif layout != "ndjson":
        yield b"["
    total = 0
    sep = b"\n"
    for names, cols in chunks:
        questions = [not is_respondent_column(n) for n in names]
        encoded = []
        for row in zip(*cols, strict=True):
            values = [_typed(v) for v in row] if layout == "typed" else list(row)
            if layout == "nested":
                record = {n: v for n, v, q in zip(names, values, questions, strict=True) if not q}
                record["answers"] = {
                    n: v for n, v, q in zip(names, values, questions, strict=True) if q
                }
            else:
                record = dict(zip(names, values, strict=True))
            encoded.append(orjson.dumps(record))
        total += len(encoded)
        if not encoded:
            continue
        if layout == "ndjson":
            yield b"\n".join(encoded) + b"\n"
        else:
            yield sep + b",\n".join(encoded)
            sep = b",\n"
    if layout == "wrapped":
        yield f'\n], "total": {total}}}\n'.encode()
    elif layout != "ndjson":
        yield b"\n]\n"
