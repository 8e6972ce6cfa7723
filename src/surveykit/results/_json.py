"""JSON results: orjson, then rows to column arrays.

Layout: a top-level array with one object per respondent, one object per line::

    [
    {"respondentId":"R1","Q1":"7","Q2":null},
    {"respondentId":"R2","Q1":"","Q2":"N/A"}
    ]

Every value is a JSON string, or ``null`` for missing; ``""`` is the empty string. Readers
also accept an absent key (missing) and numbers or booleans (read as their JSON text:
``7``, ``1.5``, ``true``), an object wrapping the array under one key (``{"results":
[...], "total": 31}``), newline-delimited records (NDJSON), and an object of answers in a
record (``"answers": {"Q1": "7"}``), whose keys become columns. Columns come in order of
first appearance. A key twice in one record is an error (JSON parsers keep the last).
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

import orjson
import pyarrow as pa
import pyarrow.json as pajson

from surveykit.errors import ResultsParseError
from surveykit.results._common import RawChunk, check_shape
from surveykit.results._json_keys import count_keys, key_count, pairs, repeated
from surveykit.results._source import Payload, first_bytes

_BATCH: Final = 65_536
_BLOCK: Final = 4 << 20
# Twenty digits in a row: maybe an integer beyond 64 bits, which orjson reads as a float.
_LONG_DIGITS: Final = re.compile(rb"[0-9]{20}")


def _exact_int(text: str) -> str:
    return "0" if text == "-0" else text  # JSON integers are canonical but for -0


def _loads(data: bytes | memoryview | bytearray) -> Any:
    """``orjson.loads``, with integers beyond 64 bits kept exact (as their text).

    orjson reads an integer outside the 64-bit range as the nearest float, so two ids
    such as 18446744073709551617 and 18446744073709551616 would read the same. A
    document that may hold one (twenty digits in a row) is read again with the
    standard library's parser, which keeps every integer's text.
    """
    doc = orjson.loads(data)
    if _LONG_DIGITS.search(data) is None:
        return doc
    del doc
    return json.loads(bytes(data), parse_int=_exact_int)


class _Nested(Exception):
    """A record holds an object: flatten the records and build again."""


def _text(value: Any, record: int, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        raise _Nested
    raise ResultsParseError(
        f"field {key!r} holds a JSON {type(value).__name__}; values must be strings or null",
        format="JSON",
        record=record,
    )


def _column(values: Sequence[Any], first_record: int, key: str) -> pa.Array:
    try:
        return pa.array(values, type=pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(
            [_text(v, first_record + i, key) for i, v in enumerate(values)],
            type=pa.large_string(),
        )


class _Builder:
    def __init__(self, names: list[str] | None, fixed: bool) -> None:
        self.names: list[str] = names or []
        self.flattened = False  # whether some record held an object of answers
        self.fixed = fixed
        self.chunks: list[list[pa.Array]] = [[] for _ in self.names]
        self.rows = 0
        self.record = 0
        # For the shape budget: the payload's bytes read so far, and the rows the frame
        # will have at least (all of them when the whole document is parsed).
        self.payload_bytes = 0
        self.expected = 0

    def check(self, columns: int, record: int) -> None:
        """Refuse a shape beyond the budget before building its columns."""
        check_shape(
            max(self.expected, self.rows),
            columns,
            self.payload_bytes,
            format="JSON",
            record=record,
        )

    def add(self, rows: list[Any], payload_bytes: int) -> None:
        """Turn rows (dicts) into column chunks, releasing the dicts as it goes.

        ``payload_bytes``: the bytes of the payload these rows (and those before) came
        from, for the shape budget.
        """
        self.payload_bytes = payload_bytes
        self.expected = self.rows + len(rows)
        for start in range(0, len(rows), _BATCH):
            part = rows[start : start + _BATCH]
            rows[start : start + _BATCH] = [None] * len(part)
            self._add(part)

    def _add(self, part: list[Any]) -> None:
        first = self.record
        for i, r in enumerate(part):
            if type(r) is not dict:
                raise ResultsParseError(
                    f"record is a JSON {type(r).__name__}, expected an object",
                    format="JSON",
                    record=first + i,
                )
        known = len(self.names)
        try:
            arrays = self._arrays(part, first)
        except _Nested:
            # Undo what this part added, then read its answer objects as columns.
            del self.names[known:]
            del self.chunks[known:]
            part = [_flatten(r, first + i) for i, r in enumerate(part)]
            self.flattened = True
            try:
                arrays = self._arrays(part, first)
            except _Nested:  # an object inside the object of answers: not results
                record, key = _deeper(part, first)
                raise ResultsParseError(
                    f"field {key!r} holds an object inside an object; results hold fields "
                    "and at most one object of answers",
                    format="JSON",
                    record=record,
                ) from None
        for j, array in enumerate(arrays):
            self.chunks[j].append(array)
        self.rows += len(part)
        self.record += len(part)

    def _arrays(self, part: list[Any], first: int) -> list[pa.Array]:
        if not self.names and part:
            self.check(len(part[0]), first)
            self.names = list(part[0])
            self.chunks = [[] for _ in self.names]
        names = self.names
        n = len(names)
        values: list[Sequence[Any]] | None = None
        if n and sum(map(len, part)) == n * len(part):
            getter = operator.itemgetter(*names)
            try:
                got = list(map(getter, part))
            except KeyError:
                pass
            else:
                values = list(zip(*got, strict=True)) if n > 1 else [[g for g in got]]
        if values is None:
            values = self._slow(part, first)
        return [_column(column, first, self.names[j]) for j, column in enumerate(values)]

    def _slow(self, part: list[Any], first: int) -> list[Sequence[Any]]:
        known = set(self.names)
        new: list[str] = []
        for i, r in enumerate(part):
            for key in r:
                if key not in known:
                    if self.fixed:
                        raise ResultsParseError(
                            f"field {key!r} was not in the first chunk's records; read "
                            "without chunksize to gather every field",
                            format="JSON",
                            record=first + i,
                        )
                    known.add(key)
                    new.append(key)
            if new and i % 1024 == 0:  # refused early, not after a pass over every record
                self.check(len(self.names) + len(new), first + i)
        if new:
            self.check(len(self.names) + len(new), first)
            for key in new:
                self.names.append(key)
                self.chunks.append([pa.nulls(self.rows, pa.large_string())] if self.rows else [])
        return [[r.get(k) for r in part] for k in self.names]

    def take(self) -> RawChunk:
        cols = [pa.chunked_array(c, type=pa.large_string()) for c in self.chunks]
        chunk = RawChunk(list(self.names), cols, self.rows)
        self.chunks = [[] for _ in self.names]
        self.rows = 0
        return chunk


def _deeper(part: list[dict[str, Any]], first: int) -> tuple[int, str]:
    """The first record and field of ``part`` (flattened once) that still hold an object."""
    for i, record in enumerate(part):
        for key, value in record.items():
            if isinstance(value, dict):
                return first + i, key
    return first, "?"  # pragma: no cover - only called when one was found


def _flatten(record: dict[str, Any], index: int) -> dict[str, Any]:
    """A record whose objects (e.g. ``"answers": {"Q1": "7"}``) are spliced in as fields."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        inner = value.items() if type(value) is dict else ((key, value),)
        for name, item in inner:
            if name in out:
                raise ResultsParseError(
                    f"field {name!r} appears twice in one record",
                    format="JSON",
                    record=index,
                )
            out[name] = item
    return out


def _top(doc: Any) -> tuple[list[Any], int]:
    """The records of a document, and the keys of an object wrapping them.

    A top-level array is the records; an object with one array among its values (e.g.
    ``{"data": [...], "total": 31}``) wraps them; an object without any is one record.
    """
    if isinstance(doc, list):
        return doc, 0
    if isinstance(doc, dict):
        arrays = [key for key, value in doc.items() if isinstance(value, list)]
        if len(arrays) == 1:
            return doc[arrays[0]], len(doc)
        if not arrays:
            return [doc], 0
        raise ResultsParseError(
            f"the top-level JSON object holds several arrays ({', '.join(map(repr, arrays))}); "
            "expected one array of records",
            format="JSON",
            offset=0,
        )
    raise ResultsParseError(
        f"the top-level JSON value is a {type(doc).__name__}, expected an array of records",
        format="JSON",
        offset=0,
    )


def _parse(data: bytes | memoryview | bytearray, base: int, record: int) -> Any:
    """The document, or the records of newline-delimited JSON as one array."""
    try:
        return _loads(data)
    except orjson.JSONDecodeError as exc:
        if "not enough memory" in exc.msg.lower():  # the machine's fault, not the payload's
            raise MemoryError(f"orjson: {exc.msg} ({len(data):,} bytes of JSON)") from exc
        ndjson = _ndjson(data, base, record)
        if ndjson is None:
            raise _error(data, exc, base, record) from exc
        return ndjson


def _ndjson(data: bytes | memoryview | bytearray, base: int, record: int) -> list[Any] | None:
    """Records one per line (NDJSON), or None when the first line is not a whole object."""
    raw = bytes(data)
    lines = raw.split(b"\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not lines[first].lstrip().startswith(b"{"):
        return None
    try:
        orjson.loads(lines[first])
    except orjson.JSONDecodeError:
        return None
    kept = [line for line in lines if line.strip()]
    try:
        return list(_loads(b"[" + b",".join(kept) + b"]"))
    except orjson.JSONDecodeError:
        pass
    start, n = 0, 0
    for line in lines:  # find the bad line, to say where it is
        if line.strip():
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise _error(line, exc, base + start, record + n) from exc
            n += 1
        start += len(line) + 1
    return None


def _error(
    data: bytes | memoryview | bytearray, exc: orjson.JSONDecodeError, base: int, record: int
) -> ResultsParseError:
    raw = bytes(data)
    if "UTF-8" in exc.msg:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            return ResultsParseError(
                f"invalid UTF-8 ({bad.reason})",
                format="JSON",
                offset=base + bad.start,
                line=None if base else raw.count(b"\n", 0, bad.start) + 1,
                record=record,
            )
    line_start = 0
    for _ in range(exc.lineno - 1):
        line_start = raw.find(b"\n", line_start) + 1
    line_end = raw.find(b"\n", line_start)
    line_bytes = raw[line_start : line_end if line_end >= 0 else len(raw)]
    col = len(line_bytes.decode("utf-8", "replace")[: exc.colno - 1].encode("utf-8"))
    offset = min(len(raw), line_start + col)
    hint = f"; first bytes {first_bytes(raw[:40])}" if base == 0 and offset < 8 else ""
    return ResultsParseError(
        f"malformed JSON: {exc.msg}{hint}",
        format="JSON",
        offset=max(0, base + offset),
        line=None if base else exc.lineno,
        record=record,
    )


def _check_duplicates(raw: bytes, doc: Any, records: list[Any], wrapper: int, first: int) -> None:
    """Refuse a key twice in one record, which every JSON parser silently resolves."""
    text = key_count(raw)
    try:
        parsed = wrapper + sum(map(len, records))
    except TypeError:
        return  # a record that is not an object: the builder says which
    if text is not None and text == parsed:
        return
    if text is not None and text == count_keys(doc):
        return  # objects inside records or beside them: counted, and all accounted for
    # Look closer: with a parser that sees every key (slow, so only when the counts
    # differ: a repeated key, text starting with ":", or unusual spacing).
    body = raw.decode("utf-8", "replace")
    try:
        slow = json.loads(body, object_pairs_hook=pairs)
    except json.JSONDecodeError:
        lines = [line for line in body.split("\n") if line.strip()]
        slow = [json.loads(line, object_pairs_hook=pairs) for line in lines]
    if repeated(slow, deep=False) is not None:
        raise ResultsParseError(
            f"key {repeated(slow, deep=False)!r} appears twice in the top-level object",
            format="JSON",
        )
    rows, _ = _top(slow)
    for i, row in enumerate(rows):
        key = repeated(row)
        if key is not None:
            raise ResultsParseError(
                f"field {key!r} appears twice in one record", format="JSON", record=first + i
            )


def _records(data: bytes | memoryview | bytearray, base: int, first: int) -> list[Any]:
    """The records of a whole document (any layout), checked for repeated keys."""
    doc = _parse(data, base, first)
    records, wrapper = _top(doc)
    raw = data if isinstance(data, bytes) else bytes(data)
    _check_duplicates(raw, doc, records, wrapper, first)
    return records


def iter_json(payload: Payload, *, streaming: bool) -> Iterator[RawChunk]:
    """Parse JSON results into text columns.

    Every bad payload ends in a :class:`ResultsParseError`: a document nested deeper than
    Python's parsers can follow included (never a ``RecursionError``).
    """
    try:
        yield from _iter_json(payload, streaming=streaming)
    except RecursionError:
        raise ResultsParseError(
            "JSON nested too deeply to be survey results (records hold fields, and at most "
            "one object of answers)",
            format="JSON",
        ) from None


def _iter_json(payload: Payload, *, streaming: bool) -> Iterator[RawChunk]:
    if not streaming:
        fast = _arrow_lines(payload.whole())
        if fast is not None:
            yield fast
            return
        builder = _Builder(None, fixed=False)
        records = _records(payload.whole(), 0, 0)
        size = len(payload.whole())
        payload.data = None  # the parsed document replaces the bytes
        builder.add(records, size)
        del records
        yield builder.take()
        return
    yield from _iter_lines(payload)


def _arrow_lines(data: bytes | memoryview) -> RawChunk | None:
    """Our own layout (one record per line, strings and nulls) with pyarrow's JSON reader.

    A raw line break cannot sit inside a JSON string, so ``},<LF>{`` only ever separates
    records: dropping those commas leaves newline-delimited JSON. Anything unusual
    (another layout, numbers, new keys, a missing comma, bad UTF-8) gives ``None`` and
    the payload is read by the general orjson path, which also reports errors.
    """
    raw = data if isinstance(data, bytes) else bytes(data)
    head = raw[:4096]
    start = len(head) - len(head.lstrip())
    end = raw.rfind(b"]")
    if raw[end + 1 :].strip():
        return None
    if raw[start : start + 2] != b"[\n" or end < start + 2 or raw[end - 1 : end] != b"\n":
        return None
    first_end = raw.find(b"\n", start + 2, end - 1)
    first = raw[start + 2 : first_end if first_end >= 0 else end - 1].rstrip(b",")
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict or not record:
        return None
    names = list(record)
    # The pattern cannot overlap "[<LF>" or "<LF>]": replacing in the whole payload and
    # slicing the result (without a copy) reads the same body. One byte less per separator.
    lines = raw.replace(b"},\n{", b"}\n{")
    separators = len(raw) - len(lines)
    body = pa.py_buffer(lines).slice(start + 2, end - 1 - (start + 2) - separators)
    schema = pa.schema([(name, pa.large_string()) for name in names])
    try:
        table = pajson.read_json(
            pa.BufferReader(body),
            read_options=pajson.ReadOptions(block_size=_BLOCK),
            parse_options=pajson.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="error"
            ),
        )
        if table.num_rows != separators + 1 or table.column_names != names:
            return None
        for column in table.columns:
            column.validate(full=True)  # UTF-8
    except pa.ArrowException:
        return None
    return RawChunk(names, table.columns, table.num_rows)


def _iter_lines(payload: Payload) -> Iterator[RawChunk]:
    """Stream a JSON array written one record per line, block by block.

    Raw line breaks can only sit between tokens in JSON, so a block of whole lines holds
    whole records. A payload laid out otherwise is read whole after the blocks that fit.
    """
    builder = _Builder(None, fixed=False)
    pieces: list[bytes] = []
    have = 0
    consumed = 0  # bytes of the payload already parsed
    state = "start"  # start -> body -> end
    chunks = payload.chunks()
    for chunk in chunks:
        pieces.append(chunk)
        have += len(chunk)
        if have < _BLOCK:
            continue
        buf = b"".join(pieces)
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            pieces, have = [buf], len(buf)
            continue
        block, rest = buf[:cut], buf[cut:]
        pieces, have = [rest], len(rest)
        state, ok = _block(block, state, builder, consumed)
        if not ok:
            yield from _fallback(block + rest, chunks, state, builder, consumed)
            return
        consumed += len(block)
        if builder.rows:
            yield builder.take()
            builder.fixed = True
    block = b"".join(pieces)
    if state == "start" and not block.strip():
        raise ResultsParseError("empty JSON payload", format="JSON", offset=0)
    state, ok = _block(block, state, builder, consumed, last=True)
    if not ok:
        yield from _fallback(block, iter(()), state, builder, consumed)
        return
    yield builder.take()


def _block(
    block: bytes, state: str, builder: _Builder, base: int, *, last: bool = False
) -> tuple[str, bool]:
    body = block.strip()
    if state == "start":
        if not body.startswith(b"["):
            return state, False
        body = body[1:].lstrip()
        state = "body"
    if state == "end":
        return state, not body
    if body.endswith(b"]"):
        body = body[:-1].rstrip()
        state = "end"
    elif last:
        return state, False
    elif body:
        if not body.endswith(b","):
            return state, False
        body = body[:-1]
    if not body:
        return state, True
    try:
        rows = _loads(b"[" + body + b"]")
    except orjson.JSONDecodeError:
        return state, False
    _check_duplicates(b"[" + body + b"]", rows, rows, 0, builder.record)
    builder.add(rows, base + len(block))
    return state, True


def _fallback(
    head: bytes, rest: Iterator[bytes], state: str, builder: _Builder, base: int
) -> Iterator[RawChunk]:
    buffer = bytearray(b"[" if state == "body" else b"")
    buffer += head
    for chunk in rest:
        buffer += chunk
    offset = base - (1 if state == "body" else 0)
    records = _records(buffer, offset, builder.record)
    size = offset + len(buffer)
    del buffer
    builder.add(records, size)
    yield builder.take()
