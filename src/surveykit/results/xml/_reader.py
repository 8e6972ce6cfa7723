"""XML results, read in bulk when plain (``_xml_fast``), else with lxml's pull parser.

The hardened lxml pull parser reads everything the bulk reader leaves (and gives every
error) into column arrays.

Documented layout::

    <?xml version="1.0" encoding="UTF-8"?>
    <Results>
    <Columns><Column>respondentId</Column><Column>Q1</Column></Columns>
    <Result><respondentId>R1</respondentId><Q1>7</Q1></Result>
    </Results>

``Columns`` (optional when reading) gives the column names and order; without it columns
are taken in order of first appearance. Readers take any root name and any record name
(the repeated child of the root, e.g. ASP.NET's ``<ArrayOfSurveyResult>`` of
``<SurveyResult>``), a default namespace, and fields as child elements or as attributes
of the record; an element or attribute not in ``Columns`` becomes a column. In a record,
an absent element or one with ``nil="true"`` (any namespace, e.g. ``xsi:nil``) is
missing; an empty element is ``""``.
Values XML 1.0 cannot carry (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+FFFE,
U+FFFF) are written in base64 of their UTF-8, and the ``Result`` lists those elements in
its ``base64`` attribute.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import operator
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lxml import etree

from surveykit.errors import ResultsParseError
from surveykit.results._common import RawChunk, check_shape
from surveykit.results._source import Payload, first_bytes
from surveykit.results.xml._fast import _Unsupported, fast_chunks
from surveykit.results.xml._names import decode_name, encode_name

_BATCH: Final = 65_536
_FORBIDDEN: Final = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)
_TAG: Final = operator.attrgetter("tag")
_TEXT: Final = operator.attrgetter("text")
# Checked once per batch of rows, on the root (the batch's records are its children):
# whether a value element of some row holds an element,
_has_nested: Final = etree.XPath("boolean(*/*/*)")
# whether some value element may be marked nil (then each is checked),
_may_have_nil: Final = etree.XPath("boolean(*/*/@*[local-name() = 'nil'])")
# whether some row has values written in base64,
_has_base64: Final = etree.XPath("boolean(*/@base64)")
# and whether some row carries fields as attributes.
_has_attributes: Final = etree.XPath("boolean(*/@*[namespace-uri() = '' and name() != 'base64'])")
# How far into the payload the first record is looked for (past a long <Columns>).
_DETECT_MAX: Final = 256 << 20
_SAFE: Final[dict[str, Any]] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_pis": True,
    "collect_ids": False,
}


def _parser(record: str | None, columns: str) -> Any:
    tags = (record, columns) if record is not None else (columns,)
    return etree.XMLPullParser(events=("end",), tag=tags, **_SAFE)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _namespace(tag: str | None) -> str:
    return tag[: tag.index("}") + 1] if tag and tag.startswith("{") else ""


def _detect(payload: Payload) -> tuple[str | None, str | None]:
    """The root's tag and the record's tag (the root's first child other than Columns).

    ``None`` where the start of the payload does not tell (no record, or malformed XML,
    which the real parse then reports).
    """
    parser: Any = etree.XMLPullParser(events=("start", "end"), **_SAFE)
    size, fed, depth = 64 * 1024, 0, 0
    root: str | None = None
    while True:
        head = payload.head(size)
        if _FORBIDDEN.search(head):
            return None, None
        failed = False
        try:
            parser.feed(head[fed:])
        except etree.XMLSyntaxError:
            failed = True  # the events before the fault still tell
        fed = len(head)
        try:
            for event, elem in parser.read_events():
                if not isinstance(elem.tag, str):
                    continue
                if event == "end":
                    depth -= 1
                    continue
                depth += 1
                if depth == 1:
                    root = elem.tag
                elif depth == 2 and _local(elem.tag) != "Columns":
                    return root, elem.tag
        except etree.XMLSyntaxError:
            failed = True
        if failed or len(head) < size or size >= _DETECT_MAX:
            return root, None
        size *= 4


class _Columns:
    """Column text gathered row by row, turned into arrow arrays every few rows.

    Rows are kept flat (every value in document order, and the pattern of element
    names each row had) and split into columns in bulk by :meth:`flush`: one Python
    step per row and value, the rest vectorised per column.
    """

    def __init__(self, declared: list[str] | None, namespace: str = "") -> None:
        self.names: list[str] = list(declared) if declared else []
        self.by_name: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        # Element tags (in the records' namespace) and attribute names ("@" + name).
        self.index: dict[str, int] = {
            namespace + encode_name(n): i for i, n in enumerate(self.names)
        }
        self.patterns: dict[tuple[Any, ...], int] = {}
        self.positions: list[tuple[int, ...]] = []  # per pattern: column of each element
        self.flat: list[str | None] = []
        self.pids: list[int] = []  # pattern of each row
        # In flat, None is an empty element (""); the places of nil elements are kept here.
        self.nil: list[int] = []
        self.chunks: list[list[pa.Array]] = [[] for _ in self.names]
        self.done = 0  # rows already in chunks
        self.payload_bytes = 0  # read so far, for the shape budget

    def check(self, columns: int) -> None:
        """Refuse a shape beyond the budget (the rows and columns seen so far)."""
        rows = self.done + len(self.pids)
        check_shape(rows, columns, self.payload_bytes, format="XML", record=rows)

    def learn(self, tags: tuple[Any, ...]) -> int | str:
        """The pattern number of a row's sequence of element names, or what is wrong."""
        positions = []
        for tag in tags:
            if not isinstance(tag, str):
                positions.append(-1)  # a comment or processing instruction
                continue
            j = self.index.get(tag)
            if j is None:
                # Not declared (or a new namespace, or an attribute): a column all the
                # same, found by name; an unknown one is added.
                name = decode_name(_local(tag.removeprefix("@")))
                j = self.by_name.get(name)
                if j is None:
                    j = len(self.names)
                    self.check(j + 1)
                    self.names.append(name)
                    self.by_name[name] = j
                    self.chunks.append(
                        [pa.nulls(self.done, pa.large_string())] if self.done else []
                    )
                self.index[tag] = j
            positions.append(j)
        seen: set[int] = set()
        for j in positions:
            if j in seen:
                return f"field {self.names[j]!r} appears twice in one record"
            if j >= 0:
                seen.add(j)
        pid = len(self.positions)
        self.positions.append(tuple(positions))
        self.patterns[tags] = pid
        return pid

    def flush(self) -> int:
        nrows = len(self.pids)
        if not nrows:
            return 0
        self.check(len(self.names))
        values = pc.fill_null(pa.array(self.flat, type=pa.large_string()), "")
        if self.nil:
            nil = np.zeros(len(values), dtype=bool)
            nil[self.nil] = True
            values = pc.if_else(pa.array(nil), pa.scalar(None, pa.large_string()), values)
        pids = np.array(self.pids, dtype=np.int64)
        self.flat, self.pids, self.nil = [], [], []
        # where[p, j]: the place of column j's element in a row of pattern p (-1: absent).
        where = np.full((len(self.positions), len(self.names)), -1, dtype=np.int64)
        for p, positions in enumerate(self.positions):
            for k, j in enumerate(positions):
                if j >= 0:
                    where[p, j] = k
        lengths = np.array([len(ps) for ps in self.positions], dtype=np.int64)[pids]
        starts = np.cumsum(lengths) - lengths
        for j in range(len(self.names)):
            place = where[pids, j]
            spot = starts + place
            self.chunks[j].append(values.take(pa.array(spot, mask=place < 0)))
        self.done += nrows
        return nrows

    def pending(self) -> bool:
        """Whether rows were gathered since the last :meth:`take`."""
        return bool(self.done or self.pids)

    def take(self) -> RawChunk:
        """Everything gathered so far, as one chunk (and forget it)."""
        n = self.done
        cols = [pa.chunked_array(c, type=pa.large_string()) for c in self.chunks]
        self.chunks = [[] for _ in self.names]
        self.done = 0
        return RawChunk(list(self.names), cols, n)


def iter_xml(
    payload: Payload, *, names: Sequence[str] | None, streaming: bool
) -> Iterator[RawChunk]:
    """Parse XML results into text columns.

    A payload in memory (or a download read whole) is read in bulk (``_xml_fast``) when
    it keeps to the plain XML real services write; anything else, and every error, is the
    lxml pull parser's. Read in chunks, a download streams through lxml.
    """
    _ = names
    done = 0
    if payload.data is None and not streaming:
        # A download read whole: its frame is kept whole anyway, so the payload is
        # gathered once (one copy, freed after the parse) to be read in bulk.
        payload.whole()
    if payload.data is not None:
        try:
            for chunk in fast_chunks(payload.data, streaming=streaming):
                done += chunk.nrows
                yield chunk
            return
        except _Unsupported:
            pass
    for chunk in _iter_lxml(payload, streaming=streaming):
        if done and done >= chunk.nrows:  # rows the bulk reader handed out already
            done -= chunk.nrows
            continue
        if done:
            chunk = RawChunk(
                chunk.names, [c.slice(done) for c in chunk.columns], chunk.nrows - done
            )
            done = 0
        yield chunk


def _iter_lxml(payload: Payload, *, streaming: bool) -> Iterator[RawChunk]:
    """Parse XML results with lxml's pull parser."""
    yield from _PullReader(payload).chunks(streaming=streaming)


class _PullReader:
    """One XML payload through lxml's pull parser: records in batches, into column arrays."""

    def __init__(self, payload: Payload) -> None:
        self.payload = payload
        root_tag, self.record_tag = _detect(payload)
        self.columns_tag = _namespace(root_tag) + "Columns"
        self.parser = _parser(self.record_tag, self.columns_tag)
        self.cols: _Columns | None = None
        self.record = 0  # records read so far: the one an error names
        self.fed = 0  # bytes fed to the parser
        self.root: Any = None
        self.data = payload.data
        self.root_name = f"<{_local(root_tag)}>" if root_tag else "the root"

    def error(self, message: str, exc: etree.XMLSyntaxError | None = None) -> ResultsParseError:
        """A parse error at the current record (and the line and offset of ``exc``)."""
        line = exc.position[0] if exc is not None and exc.position else None
        offset: int | None = self.fed
        if exc is not None and self.data is not None and line:
            column = exc.position[1]
            raw = bytes(self.data)
            start = 0
            for _ in range(line - 1):
                start = raw.find(b"\n", start) + 1
                if start == 0:
                    break
            offset = min(len(raw), start + max(0, column - 1))
        return ResultsParseError(
            message, format="XML", line=line or None, record=self.record, offset=offset
        )

    def chunks(self, *, streaming: bool) -> Iterator[RawChunk]:
        """Feed the payload to the parser; the columns read (in batches when streaming)."""
        parser, payload = self.parser, self.payload
        tail = b""
        try:
            for chunk in payload.chunks():
                # Refused before lxml sees it: no DTD, hence no entity can ever be declared.
                found = _FORBIDDEN.search(tail + chunk[:9]) or _FORBIDDEN.search(chunk)
                if found:
                    raise ResultsParseError(
                        "XML with a DOCTYPE or entity declarations is refused",
                        format="XML",
                        offset=max(0, self.fed - len(tail)),
                    )
                tail = (tail + chunk[-9:])[-9:]
                parser.feed(chunk)
                self.fed += len(chunk)
                if self.cols is not None:
                    self.cols.payload_bytes = self.fed
                self.process(parser.read_events())
                if streaming and self.cols is not None and self.cols.pending():
                    self.cols.flush()
                    yield self.cols.take()
            if self.fed == 0:
                raise ResultsParseError("empty XML payload", format="XML", offset=0)
            final = parser.close()
            self.process(parser.read_events())
        except etree.XMLSyntaxError as exc:
            with contextlib.suppress(etree.XMLSyntaxError):  # records done before the fault
                self.record += sum(1 for _, el in parser.read_events() if el.tag == self.record_tag)
            hint = f"; first bytes {first_bytes(payload.head(40))}" if self.record == 0 else ""
            raise self.error(f"malformed XML: {exc.msg}{hint}", exc) from exc
        except (ValueError, LookupError, UnicodeError) as exc:  # bad encoding declarations etc.
            if isinstance(exc, ResultsParseError):
                raise
            raise self.error(f"malformed XML: {exc}") from exc
        cols = self.finish(final)
        if not streaming or cols.done or self.record == 0:
            yield cols.take()

    def finish(self, final: Any) -> _Columns:
        """Check what follows the records (no DOCTYPE, no other element); the last columns."""
        if final.getroottree().docinfo.doctype:
            raise self.error("XML with a DOCTYPE is refused")
        for leftover in final:
            if isinstance(leftover.tag, str):
                raise self.error(
                    f"unexpected element <{_local(leftover.tag)}> in <{_local(final.tag)}>"
                )
        if self.cols is None:
            self.cols = _Columns(None)
        self.cols.flush()
        return self.cols

    def process(self, events: Iterator[tuple[str, Any]]) -> None:
        """Read the records (and a first ``<Columns>``) the parser has ended, then drop them."""
        done = []
        ended = [elem for _, elem in events]
        parent = ended[0].getparent() if ended else None
        nil_possible = parent is None or bool(_may_have_nil(parent))
        special = parent is None or bool(_has_base64(parent))
        attributes = parent is None or bool(_has_attributes(parent))
        row, columns_tag = self.row, self.columns_tag
        for elem in ended:
            # After the first row, a <Columns> is just a row with unknown fields.
            if self.cols is None and elem.tag == columns_tag:
                declared = [c.text or "" for c in elem if isinstance(c.tag, str)]
                if len(set(declared)) != len(declared):
                    raise self.error(f"duplicate column names in <Columns>: {declared!r}")
                self.cols = _Columns(declared, _namespace(self.record_tag))
                self.cols.payload_bytes = self.fed
            else:
                if self.cols is None:
                    self.cols = _Columns(None)
                    self.cols.payload_bytes = self.fed
                row(elem, self.cols, nil_possible, special, attributes)
                self.record += 1
            done.append(elem)
        if done:
            self.release(done)

    def release(self, done: list[Any]) -> None:
        """Check that the records read sit right under the root, and free them."""
        parent = done[0].getparent()
        if parent is not None and _has_nested(parent):
            # Some value holds an element: find the first such row to name it.
            for i, elem in enumerate(done):
                bad = next((ch for ch in elem if len(ch)), None)
                if bad is not None and elem.tag == self.record_tag:
                    self.record -= sum(1 for e in done[i:] if e.tag == self.record_tag)
                    raise self.error(f"element <{_local(bad.tag)}> has child elements")
        if self.root is None:
            self.root = done[0].getparent()
            if self.root is None or self.root.getparent() is not None:
                raise self.error(f"<{_local(done[0].tag)}> must be a child of {self.root_name}")
        root = self.root
        # Done elements are the root's first children unless something else sits there.
        k = len(done)
        if len(root) < k or root[k - 1] is not done[-1] or root[0] is not done[0]:
            for elem in done:
                if elem.getparent() is not root:
                    raise self.error(f"<{_local(elem.tag)}> must be a child of {self.root_name}")
            for child in root:
                if child not in done and isinstance(child.tag, str) and child is not root[-1]:
                    raise self.error(
                        f"unexpected element <{_local(child.tag)}> in {self.root_name}"
                    )
            for elem in done:
                root.remove(elem)
        else:
            del root[:k]

    def row(
        self, elem: Any, c: _Columns, nil_possible: bool, special: bool, attributes: bool
    ) -> None:
        """Add one record's values to the columns (per record: keep it lean)."""
        children = elem[:]
        tags = tuple(map(_TAG, children))
        fields: list[tuple[str, str]] = []
        if attributes:
            fields = [(k, v) for k, v in _attributes(elem) if k[0] != "{" and k != "base64"]
            if fields:
                tags = tuple("@" + k for k, _ in fields) + tags
        if not tags and (elem.text or "").strip():
            raise self.error(f"<{_local(elem.tag)}> holds text, not fields: not a record")
        pid = c.patterns.get(tags)
        if pid is None:
            learned = c.learn(tags)
            if isinstance(learned, str):
                raise self.error(learned)
            pid = learned
        encoded = elem.get("base64") if special else None
        if not (encoded or nil_possible or fields):
            c.flat.extend(map(_TEXT, children))  # the common row: nothing to look at
            c.pids.append(pid)
            if len(c.pids) >= _BATCH:
                c.flush()
            return
        texts = list(map(_TEXT, children))
        if nil_possible and None in texts:  # an empty element is "", unless marked nil
            base = len(c.flat) + len(fields)
            c.nil.extend(
                base + i
                for i, (t, ch) in enumerate(zip(texts, children, strict=True))
                if t is None and _nil(ch)
            )
        if encoded:
            for tag in encoded.split():
                i = next((i for i, ch in enumerate(children) if _local(ch.tag) == tag), -1)
                if i < 0 or (texts[i] is None and _nil(children[i])):
                    raise self.error(f"base64 names <{tag}>, which this record lacks")
                try:
                    texts[i] = base64.b64decode(texts[i] or "", validate=True).decode("utf-8")
                except (binascii.Error, ValueError) as exc:
                    raise self.error(f"element <{tag}> is not valid base64 UTF-8") from exc
        if fields:
            c.flat.extend(v for _, v in fields)
        c.flat.extend(texts)
        c.pids.append(pid)
        if len(c.pids) >= _BATCH:
            c.flush()


_ATTRIBUTE_VALUES: Final[Any] = etree.XPath("@*", smart_strings=False)


def _attributes(elem: Any) -> list[tuple[str, str]]:
    """An element's attributes, in order.

    lxml's ``items()`` looks each value up by name: quadratic over a record of 100,000
    attributes. Names and values are read in one pass each instead.
    """
    names = elem.keys()
    if len(names) <= 64:
        return list(elem.items())
    values: list[str] = _ATTRIBUTE_VALUES(elem)  # the same attributes, in the same order
    if len(values) != len(names):
        return list(elem.items())
    return list(zip(names, values, strict=True))


def _nil(child: Any) -> bool:
    # nil="true" or "1" in no namespace or any (xsi:nil is the usual one).
    return any(
        (name == "nil" or name.endswith("}nil")) and value in ("true", "1")
        for name, value in child.attrib.items()
    )
