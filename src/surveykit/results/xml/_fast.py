"""XML results read in bulk with numpy and arrow, for the layouts real services write.

A results document is a flat list of records. When it sticks to a plain subset of XML
(UTF-8; no comments, CDATA, processing instructions or DOCTYPE after the declaration;
elements without prefixes; attributes in double quotes), its tags and values can be
found by byte position without a Python step per field: ``<`` starts a tag, the next
``>`` ends it, a record's field is an element holding only text, and every value is a
byte range of the payload, cut out by one arrow ``take`` per batch of records.

Every byte is accounted for: tag names, attribute names and the text between tags are
checked against the XML grammar (one regular expression per distinct string), the
nesting is checked with depth counts, the payload must be valid UTF-8 without the
characters XML refuses, and entity references are decoded and checked. Whatever falls
outside the subset (or is malformed) raises :class:`_Unsupported`, and the lxml reader
(``_xml.py``) reads the payload instead: it gives the same frame, or the error.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final

import pyarrow as pa

from surveykit.results._common import RawChunk, check_shape
from surveykit.results.xml._slice import (
    Shared,
    SliceColumns,
    _check,
    _Unsupported,
    read_slice,
)

__all__ = ["_Unsupported", "fast_chunks"]

_SLICE: Final = 4 << 20  # bytes of records read in one numpy pass
_THREADS: Final = 4  # slices read at once, at most (and at most one per CPU)
_DECLARATION: Final = re.compile(
    rb"""<\?xml\s+version\s*=\s*(["'])1\.0\1"""
    rb"""(?:\s+encoding\s*=\s*(["'])(?i:utf-?8)\2)?"""
    rb"""(?:\s+standalone\s*=\s*(["'])(?:yes|no)\3)?\s*\?>"""
)
_ROOT: Final = re.compile(rb"\s*<([^\s/>]+)(\s[^<>]*)?>")
_FIRST: Final = re.compile(rb"[ \t\n]*<([^\s/>]+)")  # the first element's name
_ROOT_END: Final = re.compile(rb"</([^\s<>]+)\s*>\s*\Z")


def fast_chunks(data: bytes | memoryview, *, streaming: bool) -> Iterator[RawChunk]:
    """The records of an XML payload as text columns, or :class:`_Unsupported`.

    Streaming yields a chunk per slice of about 4 MiB; otherwise one chunk at the end.
    :class:`_Unsupported` may come after some chunks were yielded (streaming only).
    """
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    start, end, prefixes, declared, record = _frame(view)
    shared = Shared(view, prefixes, record.decode("utf-8", "replace"))
    del view
    columns = _Columns(declared, len(data))
    for part in _read_all(shared, list(_slices(shared.data, start, end, record))):
        columns.add(part)
        if streaming and columns.rows:
            yield columns.take()
    if columns.rows or not streaming or columns.done == 0:
        yield columns.take()


def _read_all(shared: Shared, slices: list[tuple[int, int]]) -> Iterator[SliceColumns]:
    """Each slice read, in order; a few at once on threads when there are several."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = min(_THREADS, cpus or 1, len(slices))
    if workers <= 1:
        for cut, until in slices:
            yield read_slice(shared, cut, until)
        return
    pending: deque[Future[SliceColumns]] = deque()
    with ThreadPoolExecutor(workers, thread_name_prefix="surveykit-xml") as pool:
        try:
            for cut, until in slices:
                pending.append(pool.submit(read_slice, shared, cut, until))
                if len(pending) > workers:  # read ahead, but not the whole payload
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _frame(data: bytes | memoryview) -> tuple[int, int, set[str], list[str], bytes]:
    """Where the records lie, the root's namespace prefixes, <Columns>, the record name."""
    from lxml import etree

    head = bytes(data[:65536])
    declaration = _DECLARATION.match(head)
    pos = declaration.end() if declaration else 0
    _check(not head.startswith(b"<?") or declaration)
    root = _ROOT.match(head, pos)
    _check(root)
    assert root is not None
    name = root.group(1)
    tail = bytes(data[max(0, len(data) - 1024) :])
    closing = _ROOT_END.search(tail)
    _check(closing and closing.group(1) == name)
    assert closing is not None
    end = len(data) - len(tail) + closing.start()
    start = root.end()
    _check(start <= end)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:  # the root's own tag, checked by lxml, for its namespace declarations
        element = etree.fromstring(head[pos : root.end()] + b"</" + name + b">", parser)
    except etree.XMLSyntaxError as exc:
        raise _Unsupported from exc
    prefixes = {p for p in element.nsmap if p} | {"xml"}
    declared: list[str] = []
    first = _FIRST.match(bytes(data[start : min(end, start + 65536)]))
    if first and first.group(1) == b"Columns":
        stop = _find(data, b"</Columns>", start, end)
        _check(stop >= 0)
        stop += len(b"</Columns>") - start
        fragment = bytes(data[start : start + stop])
        try:
            columns = etree.fromstring(fragment.strip(), parser)
        except etree.XMLSyntaxError as exc:
            raise _Unsupported from exc
        declared = [c.text or "" for c in columns if isinstance(c.tag, str)]
        _check(len(set(declared)) == len(declared) and len(columns) == len(declared))
        _check(all(declared))  # an empty name is an error, the lxml reader's to give
        _check(not (columns.text or "").strip())
        start += stop
        first = _FIRST.match(bytes(data[start : min(end, start + 65536)]))
    record = first.group(1) if first else b""
    return start, end, prefixes, declared, record


def _slices(
    data: bytes | memoryview, start: int, end: int, record: bytes
) -> Iterator[tuple[int, int]]:
    """Byte ranges of about ``_SLICE`` bytes, each cut where a record starts."""
    mark = b"<" + record
    while start < end:
        until = end
        probe = start + _SLICE
        while record and probe < end:
            found = _find(data, mark, probe, end)
            if found < 0:
                break
            after = found + len(mark)
            if after < end and data[after] in b" \t\n/>":
                until = found
                break
            probe = found + 1
        yield start, until
        start = until


def _find(data: bytes | memoryview, needle: bytes, start: int, end: int) -> int:
    """``data.find(needle, start, end)`` for a memoryview too, a window at a time."""
    if isinstance(data, bytes):
        return data.find(needle, start, end)
    window = 1 << 20
    while start < end:
        stop = min(end, start + window + len(needle))
        found = bytes(data[start:stop]).find(needle)
        if found >= 0:
            return start + found
        start += window
    return -1


class _Columns:
    """The slices' columns joined up: a name keeps its column, new ones come last."""

    def __init__(self, declared: list[str], payload_bytes: int) -> None:
        self.payload_bytes = payload_bytes  # for the shape budget
        self.names: list[str] = list(declared)
        self.column: dict[str, int] = {n: i for i, n in enumerate(declared)}
        self.chunks: list[list[pa.Array]] = [[] for _ in declared]
        self.rows = 0  # rows added since the last take
        self.done = 0  # rows handed out

    def add(self, part: SliceColumns) -> None:
        """Append a slice's rows (null in the columns it lacks)."""
        if not part.nrows:
            return
        new = sum(1 for name in part.names if name not in self.column)
        check_shape(
            self.done + self.rows + part.nrows,
            len(self.names) + new,
            self.payload_bytes,
            format="XML",
            record=self.done + self.rows,
        )
        seen = set()
        for name, values in zip(part.names, part.columns, strict=True):
            j = self.column.get(name)
            if j is None:
                j = self.column[name] = len(self.names)
                self.names.append(name)
                self.chunks.append([pa.nulls(self.done + self.rows, pa.large_string())])
            self.chunks[j].append(values)
            seen.add(j)
        for j in range(len(self.names)):
            if j not in seen:
                self.chunks[j].append(pa.nulls(part.nrows, pa.large_string()))
        self.rows += part.nrows

    def take(self) -> RawChunk:
        """The rows added since the last take, as one chunk."""
        columns = [pa.chunked_array(c, type=pa.large_string()) for c in self.chunks]
        chunk = RawChunk(list(self.names), columns, self.rows)
        self.chunks = [[] for _ in self.names]
        self.done += self.rows
        self.rows = 0
        return chunk
