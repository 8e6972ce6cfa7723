"""CSV, PIPE and TAB results: pyarrow's CSV reader, with our own checks around it.

Layout: RFC 4180 with the format's delimiter; a field holding the delimiter, a quote, CR
or LF is quoted, quotes inside doubled. An empty unquoted field is missing, a quoted empty
field ``""`` is the empty string. Every record ends with LF (CRLF accepted), including the
last one: a payload that stops elsewhere, or inside a quoted field, was cut short.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Final

import pyarrow as pa
import pyarrow.csv as pacsv

from surveykit.errors import ResultsParseError
from surveykit.results._columns import TypeName
from surveykit.results._common import RawChunk, check_shape, generated_names, line_of
from surveykit.results._source import DELIMITERS, ChunkFile, Payload
from surveykit.results._types import reader_type

_MAX_HEADER: Final = 16 << 20
BLOCK_BYTES: Final = 4 << 20
_LOSSLESS: Final = frozenset({"category", "Int64"})
# Bytes of the payload whose rows predict column types (see iter_csv's ``predict``);
# 0 predicts nothing.
SAMPLE_BYTES = 256 << 10

#: Given the column names and the text of the first rows, the type to parse some columns
#: into (by position); see :func:`surveykit.results._types.predict_types`.
Predictor = Callable[[list[str], list[pa.Array]], dict[int, TypeName]]


class _Tracker:
    """Passes chunks through while noting what the end-of-payload checks need."""

    def __init__(self, chunks: Iterator[bytes], *, keep: bool = False) -> None:
        self._chunks = chunks
        self.quotes = 0
        self.total = 0
        self.last = b""
        # The chunks seen, while a whole read may need them again (a record longer than
        # pyarrow's block is read again with larger blocks); references, not copies.
        self.kept: list[bytes] | None = [] if keep else None

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self.quotes += chunk.count(b'"')
            self.total += len(chunk)
            self.last = chunk[-1:]
            if self.kept is not None:
                self.kept.append(chunk)
            yield chunk

    def replay(self) -> bytes:
        """The whole payload: the chunks seen, then the rest (for a second read)."""
        assert self.kept is not None
        rest = list(self)
        data = b"".join(self.kept)
        self.kept = None
        del rest
        return data


def _maybe_open_at_end(table: pa.Table) -> bool:
    """Whether a payload ending in a line break might have been cut inside a quote.

    pyarrow reads an unterminated quoted field to the end of the payload, so a payload
    cut inside quotes (and ending in a line break) gives a last row whose last value
    ends with that line break (a cut in an earlier column leaves the row short, which
    pyarrow refuses). A last value that does not end with CR or LF rules the cut out
    without counting every quote of the payload.
    """
    if table.num_rows == 0 or table.num_columns == 0:
        return True
    value = table.column(table.num_columns - 1)[table.num_rows - 1].as_py()
    return isinstance(value, str) and value.endswith(("\n", "\r"))


def _first_record(head: bytes, delim: int) -> tuple[list[bytes], int] | None:
    """Fields of the first record and where it ends, or None if ``head`` cuts it."""
    fields: list[bytes] = []
    field = bytearray()
    quoted = False
    i, n = 0, len(head)
    while i < n:
        c = head[i]
        if quoted:
            if c == 0x22:
                if i + 1 < n and head[i + 1] == 0x22:
                    field.append(0x22)
                    i += 1
                elif i + 1 >= n:
                    return None
                else:
                    quoted = False
            else:
                field.append(c)
        elif c == 0x22:
            quoted = True
        elif c == delim:
            fields.append(bytes(field))
            field.clear()
        elif c in (0x0A, 0x0D):
            fields.append(bytes(field))
            end = i + 2 if c == 0x0D and i + 1 < n and head[i + 1] == 0x0A else i + 1
            if c == 0x0D and i + 1 >= n:
                return None
            return fields, end
        else:
            field.append(c)
        i += 1
    return None


def _header(payload: Payload, fmt: str, delim: int) -> list[bytes]:
    size = 64 * 1024
    while True:
        head = payload.head(size)
        found = _first_record(head, delim)
        if found is not None:
            return found[0]
        if len(head) < size:  # the whole payload is one record without a line break
            raise ResultsParseError(
                "the first record does not end (no line break, or an unterminated quote): "
                "the payload was cut short",
                format=fmt,
                line=1,
                record=0,
                offset=len(head),
            )
        if size >= _MAX_HEADER:
            raise ResultsParseError(
                f"the first record is longer than {_MAX_HEADER} bytes", format=fmt, line=1
            )
        size *= 4


def _decode_names(raw: Sequence[bytes], fmt: str) -> list[str]:
    try:
        return [f.decode("utf-8") for f in raw]
    except UnicodeDecodeError as exc:
        raise ResultsParseError(
            f"header is not UTF-8: {exc.reason}", format=fmt, line=1, offset=exc.start
        ) from exc


def iter_csv(
    payload: Payload,
    fmt: str,
    *,
    header: bool,
    names: Sequence[str] | None,
    streaming: bool,
    predict: Predictor | None = None,
) -> Iterator[RawChunk]:
    """Parse delimited results into text columns (one chunk, or many when streaming).

    With ``predict``, the first rows are read as text, ``predict`` names the columns to
    parse straight into a type, and the payload is read with those types. A payload in
    memory whose later value does not convert is read again as text; a stream (a file,
    an HTTP body) is read once, so there only dictionary-encoded kinds are predicted.
    """
    reader = _DelimitedReader(payload, fmt, header=header, names=names, streaming=streaming)
    if streaming:
        yield from reader.batches()
    else:
        yield reader.whole(predict)


class _DelimitedReader:
    """One delimited payload: its columns, pyarrow's options, and the checks around them."""

    def __init__(
        self,
        payload: Payload,
        fmt: str,
        *,
        header: bool,
        names: Sequence[str] | None,
        streaming: bool,
    ) -> None:
        self.payload, self.fmt, self.header = payload, fmt, header
        delim = DELIMITERS[fmt]
        raw_header = _header(payload, fmt, delim[0])
        self.ncols = ncols = len(raw_header)
        check_shape(0, ncols, 0, format=fmt)  # the column budget (a CSV cannot be sparse)
        self.names = _column_names(raw_header, fmt, header=header, names=names)
        # A delimiter ending every line: an unnamed last column that must stay empty.
        self.trailing = len(self.names) == ncols - 1
        self.internal = _internal_names(ncols)
        # Blocks of 4 MiB rather than 1: a quarter of the chunks for every later step
        # (typing a column costs per chunk too), the same parse speed.
        self.read_options = _read_options(ncols, header, threads=True, block=BLOCK_BYTES)
        self.parse_options = pacsv.ParseOptions(
            delimiter=delim.decode(),
            quote_char='"',
            double_quote=True,
            escape_char=False,
            newlines_in_values=True,
            ignore_empty_lines=False,
        )
        self.convert_options = _text_options(ncols)
        self.data = payload.data
        self.tracker: _Tracker | None = None
        if self.data is not None:
            self.stream: object = pa.BufferReader(pa.py_buffer(self.data))
        else:
            self.tracker = _Tracker(payload.chunks(), keep=not streaming)
            self.stream = ChunkFile(iter(self.tracker))

    def kept(
        self, columns: Sequence[pa.Array | pa.ChunkedArray]
    ) -> list[pa.Array | pa.ChunkedArray]:
        """The named columns; the unnamed trailing one must be empty."""
        if not self.trailing:
            return list(columns)
        last = columns[-1]
        if last.null_count != len(last):
            raise ResultsParseError(
                "a value after the delimiter that ends the lines (a column without a name)",
                format=self.fmt,
            )
        return list(columns[: len(self.names)])

    def fail(self, exc: Exception | None, detail: str) -> ResultsParseError:
        """The error to raise: the first fault found in the payload, else ``detail``."""
        if self.data is not None:
            found = diagnose(self.data, self.fmt, ncols=self.ncols, header=self.header)
            if found is not None:
                return found
        where = self.tracker.total if self.tracker is not None else None
        return ResultsParseError(
            f"{detail}{'; at or before this byte offset' if where is not None else ''}",
            format=self.fmt,
            offset=where,
        )

    def end_checks(self, table: pa.Table | None = None) -> None:
        """Refuse a payload cut short: inside a quoted field, or after a record's last field."""
        data = self.data
        if data is not None:
            quotes = 0
            if table is None or _maybe_open_at_end(table):
                quotes = data.count(b'"') if isinstance(data, bytes) else bytes(data).count(b'"')
            last = bytes(data[-1:])
        else:
            assert self.tracker is not None
            quotes, last = self.tracker.quotes, self.tracker.last
        if quotes % 2:
            raise self.fail(None, "unterminated quoted field: the payload was cut short")
        if last not in (b"\n", b"\r", b""):
            raise self.fail(None, "the last record has no line break: the payload was cut short")

    def predicted(self, predict: Predictor | None) -> dict[int, TypeName]:
        """The columns to parse straight into a type, by position, from the first rows."""
        data = self.data
        # A wide payload the sample holds whole is typed once, after reading: predicting
        # would type each of its many short columns twice.
        small = data is not None and len(data) <= 2 * SAMPLE_BYTES and self.ncols > 256
        if predict is None or SAMPLE_BYTES <= 0 or small:
            return {}
        predicted: dict[int, TypeName] = {}
        head = data if data is not None else self.payload.head(2 * SAMPLE_BYTES)
        sample = _sample(head, self.ncols, self.header, self.parse_options)
        if sample is not None:
            predicted = predict(list(self.names), sample[: len(self.names)])
        if data is None:
            # A stream cannot be read twice: only the kinds the reader keeps as text
            # (dictionary-encoded), which no value can make it refuse.
            predicted = {j: k for j, k in predicted.items() if k in _LOSSLESS}
        return predicted

    def read(self, kinds: dict[int, TypeName]) -> pa.Table:
        """The whole payload in one table, the columns in ``kinds`` parsed into their type."""
        self.convert_options.column_types = {
            name: reader_type(kinds[j]) if j in kinds else pa.large_string()
            for j, name in enumerate(self.internal)
        }
        data = self.data
        source = self.stream if data is None else pa.BufferReader(pa.py_buffer(data))
        return pacsv.read_csv(
            source,
            read_options=self.read_options,
            parse_options=self.parse_options,
            convert_options=self.convert_options,
        )

    def whole(self, predict: Predictor | None) -> RawChunk:
        """The payload as one chunk (read again as text if a predicted type was wrong)."""
        predicted = self.predicted(predict)
        try:
            try:
                table = self.read(predicted)
            except (pa.ArrowInvalid, pa.ArrowException, UnicodeDecodeError) as exc:
                if _straddles(exc):
                    # A record longer than a block: read again with blocks that hold it.
                    if self.data is None:
                        assert self.tracker is not None
                        self.data = self.tracker.replay()
                    table = _read_long_records(
                        self.data,
                        kinds=predicted,
                        read=self.read_options,
                        parse=self.parse_options,
                        convert=self.convert_options,
                        names=self.internal,
                    )
                else:
                    if not predicted or self.data is None:
                        raise
                    predicted = {}
                    table = self.read({})  # a later value did not convert as predicted
        except (pa.ArrowInvalid, pa.ArrowException, UnicodeDecodeError) as exc:
            raise self.fail(exc, f"cannot parse: {exc}") from exc
        if self.tracker is not None:
            self.tracker.kept = None
        self.end_checks(table)
        columns = self.kept([table.column(i) for i in range(self.ncols)])
        return RawChunk(self.names, columns, table.num_rows, dict(predicted))

    def batches(self) -> Iterator[RawChunk]:
        """The payload in chunks of about a megabyte, read once."""
        read_options = self.read_options
        read_options.use_threads = False
        read_options.block_size = 1 << 20  # streamed: batches of about a megabyte
        try:
            reader = pacsv.open_csv(
                self.stream,
                read_options=read_options,
                parse_options=self.parse_options,
                convert_options=self.convert_options,
            )
        except (pa.ArrowInvalid, pa.ArrowException) as exc:
            raise self.fail(exc, _too_long(exc, read_options.block_size)) from exc
        pending: pa.RecordBatch | None = None
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (pa.ArrowInvalid, pa.ArrowException, UnicodeDecodeError) as exc:
                raise self.fail(exc, _too_long(exc, read_options.block_size)) from exc
            if pending is not None:
                yield RawChunk(self.names, self.kept(pending.columns), pending.num_rows)
            pending = batch
        self.end_checks()
        if pending is not None:
            yield RawChunk(self.names, self.kept(pending.columns), pending.num_rows)


def _column_names(
    raw_header: list[bytes], fmt: str, *, header: bool, names: Sequence[str] | None
) -> list[str]:
    """The column names: given, read from the header, or generated.

    One fewer than the fields when a delimiter ends every line (an unnamed last column).
    """
    ncols = len(raw_header)
    trailing = ncols > 1 and (
        (header and raw_header[-1] == b"")
        or (not header and names is not None and len(names) == ncols - 1)
    )
    if names is not None:
        if len(names) != ncols - trailing:
            raise ResultsParseError(
                f"{len(names)} names given but the records have {ncols} fields",
                format=fmt,
                line=1,
            )
        return list(names)
    if header:
        return _decode_names(raw_header[: ncols - trailing], fmt)
    return generated_names(ncols)


def _straddles(exc: BaseException) -> bool:
    return "straddl" in str(exc)


def _too_long(exc: BaseException, block: int) -> str:
    if not _straddles(exc):
        return f"cannot parse: {exc}"
    return (
        f"a record is longer than {block} bytes (or a quoted field never closes), too long "
        "to read in chunks; read it without chunksize"
    )


def _read_long_records(
    data: bytes | memoryview,
    *,
    kinds: dict[int, TypeName],
    read: pacsv.ReadOptions,
    parse: pacsv.ParseOptions,
    convert: pacsv.ConvertOptions,
    names: list[str],
) -> pa.Table:
    """Read a payload holding a record longer than the block size, with larger blocks."""
    convert.column_types = {
        name: reader_type(kinds[j]) if j in kinds else pa.large_string()
        for j, name in enumerate(names)
    }
    block = read.block_size
    while True:
        block = min(block * 16, len(data) + 1, (1 << 31) - 1)
        options = _read_options(len(names), read.skip_rows > 0, threads=True, block=block)
        try:
            return pacsv.read_csv(
                pa.BufferReader(pa.py_buffer(data)),
                read_options=options,
                parse_options=parse,
                convert_options=convert,
            )
        except pa.ArrowInvalid as exc:
            if not _straddles(exc) or block > len(data):
                raise


def _internal_names(ncols: int) -> list[str]:
    # Names pyarrow sees: the real ones may repeat or be empty (checked later, by name).
    return [f"f{i}" for i in range(ncols)]


def _read_options(ncols: int, header: bool, *, threads: bool, block: int) -> pacsv.ReadOptions:
    return pacsv.ReadOptions(
        column_names=_internal_names(ncols),
        skip_rows=1 if header else 0,
        use_threads=threads,
        block_size=block,
    )


def _text_options(ncols: int) -> pacsv.ConvertOptions:
    """Every column as text: unquoted empty is missing, quoted empty is ``""``."""
    return pacsv.ConvertOptions(
        column_types=dict.fromkeys(_internal_names(ncols), pa.large_string()),
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        null_values=[""],
        true_values=["true"],  # for columns read as predicted booleans
        false_values=["false"],
        check_utf8=True,
    )


def _sample(
    data: bytes | memoryview,
    ncols: int,
    header: bool,
    parse_options: pacsv.ParseOptions,
) -> list[pa.Array] | None:
    """The text of the first rows (whole rows only), or None if they do not parse."""
    # A block of SAMPLE_BYTES out of twice as many: the reader hands back the rows that
    # end inside the first block and keeps the rest, so no row is cut.
    head = memoryview(data)[: 2 * SAMPLE_BYTES]
    try:
        reader = pacsv.open_csv(
            pa.BufferReader(pa.py_buffer(head)),
            read_options=_read_options(ncols, header, threads=False, block=SAMPLE_BYTES),
            parse_options=parse_options,
            convert_options=_text_options(ncols),
        )
        batch = reader.read_next_batch()
    except (pa.ArrowException, StopIteration, UnicodeDecodeError):
        return None
    return list(batch.columns)


def diagnose(
    data: bytes | memoryview, fmt: str, *, ncols: int, header: bool
) -> ResultsParseError | None:
    """Find the first fault in a delimited payload: where it is, by line, record and byte."""
    data = bytes(data)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ResultsParseError(
            f"invalid UTF-8 ({exc.reason})",
            format=fmt,
            offset=exc.start,
            line=line_of(data, exc.start),
        )
    delim = DELIMITERS[fmt]
    # Possessive: a quote that never closes fails in one pass, without a backtracking
    # stack (the alternation form kept one entry per byte: 1.3 GB for a 10 MB field).
    quoted = re.compile(rb'"[^"]*+(?:""[^"]*+)*+"')
    plain = re.compile(rb'[^"' + re.escape(delim) + rb"\r\n]*")
    pos, line, n = 0, 1, len(data)
    record = -1 if header else 0
    while pos < n:
        start, start_line, fields = pos, line, 0
        while True:
            if data[pos : pos + 1] == b'"':
                m = quoted.match(data, pos)
                if m is None:
                    return ResultsParseError(
                        "unterminated quoted field: the payload was cut short",
                        format=fmt,
                        offset=pos,
                        line=line,
                        record=max(record, 0),
                    )
                line += data.count(b"\n", pos, m.end())
            else:
                m = plain.match(data, pos)
                assert m is not None
            pos = m.end()
            fields += 1
            if pos >= n:
                return ResultsParseError(
                    "the last record has no line break: the payload was cut short",
                    format=fmt,
                    offset=n,
                    line=line,
                    record=max(record, 0),
                )
            c = data[pos : pos + 1]
            if c == delim:
                pos += 1
                continue
            if c == b"\r" or c == b"\n":
                pos += 2 if data[pos : pos + 2] == b"\r\n" else 1
                line += 1
                break
            return ResultsParseError(
                "a quote inside an unquoted field, or text after a closing quote",
                format=fmt,
                offset=pos,
                line=line,
                record=max(record, 0),
            )
        if fields != ncols:
            return ResultsParseError(
                f"expected {ncols} fields, got {fields}",
                format=fmt,
                offset=start,
                line=start_line,
                record=max(record, 0),
            )
        record += 1
    return None
