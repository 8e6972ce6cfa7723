"""Where results bytes come from, and what format they are in.

A source is ``bytes``/``bytearray``/``memoryview`` (the payload), ``str`` (the payload as
text, never a file name), an :class:`os.PathLike` (a file), a binary file object, or an
iterable of ``bytes`` chunks (an HTTP body being streamed).
"""

from __future__ import annotations

import codecs
import contextlib
import io
import mmap
import os
from collections.abc import Iterable, Iterator
from typing import IO, Final, TypeAlias

from surveykit.errors import ResultsParseError

Source: TypeAlias = (
    bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes] | Iterable[bytes]
)

FORMATS: Final[tuple[str, ...]] = ("CSV", "PIPE", "TAB", "XML", "JSON")
DELIMITERS: Final[dict[str, bytes]] = {"CSV": b",", "PIPE": b"|", "TAB": b"\t"}
_BOM: Final = b"\xef\xbb\xbf"
_READ_SIZE: Final = 1 << 20
_SNIFF_SIZE: Final = 64 * 1024


def normalize_format(format: str | None) -> str | None:
    """Upper-case a format name and check it is known."""
    if format is None:
        return None
    upper = str(format).upper()
    if upper not in FORMATS:
        raise ResultsParseError(
            f"unknown results format {format!r}; expected one of {', '.join(FORMATS)}",
            format=str(format),
        )
    return upper


class Payload:
    """A results payload read once, front to back, with a peek at its first bytes.

    In-memory payloads keep ``data``; streamed ones are read chunk by chunk through
    :meth:`chunks` without a second full copy. ``max_bytes`` bounds what is read.
    """

    def __init__(
        self, source: Source, *, max_bytes: int | None = None, encoding: str | None = None
    ) -> None:
        self.max_bytes = max_bytes
        self.data: bytes | memoryview | None = None
        self._chunks: Iterator[bytes] | None = None
        self._close: IO[bytes] | None = None
        self._map: mmap.mmap | None = None
        self.consumed = 0  # bytes handed out by chunks()
        if isinstance(source, str):
            self.data = source.encode("utf-8")
        elif isinstance(source, bytes | bytearray | memoryview):
            self.data = memoryview(source).cast("B") if not isinstance(source, bytes) else source
        elif isinstance(source, os.PathLike):
            handle = open(os.fspath(source), "rb")  # noqa: SIM115 - closed in close()
            self._close = handle
            self._map = _map_file(handle)
            if self._map is not None:
                # A file is read like a payload in memory, without copying it in: the
                # pages come from the OS's cache as the parser reaches them.
                self.data = memoryview(self._map)
            else:
                self._chunks = _read_file(handle)
        elif hasattr(source, "read"):
            self._chunks = _read_file(source)  # type: ignore[arg-type]
        elif isinstance(source, Iterable):
            self._chunks = (bytes(c) if not isinstance(c, bytes) else c for c in source)
        else:
            raise TypeError(f"cannot read results from {type(source).__name__}")
        if encoding is not None and codecs.lookup(encoding).name != "utf-8":
            if self.data is not None:
                self.data = _transcode_all(self.data, encoding)
            else:
                assert self._chunks is not None
                self._chunks = _transcode(self._chunks, encoding)
        if self.data is not None:
            if max_bytes is not None and len(self.data) > max_bytes:
                raise ResultsParseError(
                    f"results payload is larger than max_bytes={max_bytes}",
                    format="?",
                    offset=max_bytes,
                )
            if bytes(self.data[:3]) == _BOM:
                self.data = self.data[3:]
        self._head = b""
        self._peeked = False
        self.first = b""  # the first bytes, kept for error messages

    def head(self, size: int = _SNIFF_SIZE) -> bytes:
        """The first ``size`` bytes (fewer at the end of the payload), BOM removed."""
        if self.data is not None:
            return bytes(self.data[:size])
        if self._peeked and not self._head:  # already streamed past the start
            return self.first[:size]
        assert self._chunks is not None
        parts = [self._head]
        have = len(self._head)
        while have < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            parts.append(chunk)
            have += len(chunk)
        self._head = b"".join(parts)
        if not self._peeked:
            self._peeked = True
            if self._head.startswith(_BOM):
                self._head = self._head[3:]
            self.first = self._head[:64]
        return self._head[:size]

    def chunks(self) -> Iterator[bytes]:
        """The payload's bytes, front to back, in chunks (each at most about 1 MiB)."""
        if self.data is not None:
            data = self.data
            for start in range(0, len(data), _READ_SIZE):
                piece = bytes(data[start : start + _READ_SIZE])
                self.consumed += len(piece)
                yield piece
            return
        self.head(4)  # strips a BOM and keeps the first bytes
        assert self._chunks is not None
        pending = [self._head] if self._head else []
        self._head = b""
        for chunk in _chain(pending, self._chunks):
            if not chunk:
                continue
            self.consumed += len(chunk)
            if self.max_bytes is not None and self.consumed > self.max_bytes:
                raise ResultsParseError(
                    f"results payload is larger than max_bytes={self.max_bytes}",
                    format="?",
                    offset=self.max_bytes,
                )
            yield chunk

    def whole(self) -> bytes | memoryview:
        """The whole payload in memory (streamed payloads are gathered in one buffer)."""
        if self.data is not None:
            return self.data
        buffer = bytearray()
        for chunk in self.chunks():
            buffer += chunk
        self.data = memoryview(buffer)
        return self.data

    def close(self) -> None:
        """Close a file this payload opened."""
        if self._map is not None:
            # A buffer still exported (an arrow buffer not yet collected) keeps the map
            # open; it is unmapped when that goes.
            with contextlib.suppress(BufferError):
                if isinstance(self.data, memoryview):
                    self.data.release()
                self._map.close()
            self.data = None
            self._map = None
        if self._close is not None:
            self._close.close()
            self._close = None


def _decode_error(exc: UnicodeDecodeError, base: int, encoding: str) -> ResultsParseError:
    return ResultsParseError(
        f"bytes that are not {encoding}: {exc.reason}", format="?", offset=base + exc.start
    )


def _transcode_all(data: bytes | memoryview, encoding: str) -> bytes:
    try:
        return bytes(data).decode(encoding).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, 0, encoding) from None


def _transcode(chunks: Iterator[bytes], encoding: str) -> Iterator[bytes]:
    """Chunks of another encoding as UTF-8 (a character cut between chunks is kept)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    seen = 0
    for chunk in chunks:
        held = len(decoder.getstate()[0])  # bytes of a character cut at the last chunk
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise _decode_error(exc, seen - held, encoding) from None
        seen += len(chunk)
        if text:
            yield text.encode("utf-8")
    held = len(decoder.getstate()[0])
    try:
        tail = decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, seen - held, encoding) from None
    if tail:
        yield tail.encode("utf-8")


def _chain(first: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from first
    yield from rest


def _map_file(handle: IO[bytes]) -> mmap.mmap | None:
    """The file mapped read-only, or None (empty, not a regular file, or not mappable)."""
    try:
        if os.fstat(handle.fileno()).st_size == 0:
            return None
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


def _read_file(handle: IO[bytes]) -> Iterator[bytes]:
    while True:
        chunk = handle.read(_READ_SIZE)
        if not chunk:
            return
        if isinstance(chunk, str):
            raise TypeError("results file objects must be opened in binary mode")
        yield chunk


class ChunkFile(io.RawIOBase):
    """A read-only file object over a chunk iterator (what pyarrow's CSV reader reads)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buf = b""
        self._pos = 0

    def readable(self) -> bool:
        """Always readable."""
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        """Fill ``b`` completely unless the payload ends (pyarrow takes a short read as EOF)."""
        view = memoryview(b).cast("B")
        filled = 0
        while filled < len(view):
            if self._pos >= len(self._buf):
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                self._buf, self._pos = chunk, 0
                continue
            n = min(len(view) - filled, len(self._buf) - self._pos)
            view[filled : filled + n] = self._buf[self._pos : self._pos + n]
            self._pos += n
            filled += n
        return filled


def first_bytes(head: bytes, size: int = 40) -> str:
    """The first bytes of a payload, for error messages."""
    return repr(head[:size])


def looks_like_no_results(head: bytes) -> bool:
    """The platform's "no results since ..." style answer (plain text or a JSON string)."""
    text = head.lstrip().lstrip(b'"').lower()
    return text.startswith(b"no results")


def sniff(head: bytes) -> str | None:
    """Guess the format of a payload from its first bytes; ``None`` for an empty payload.

    ``<`` starts XML, ``[`` or ``{`` JSON; otherwise the delimiter that occurs most often
    in the first line (outside quotes) decides between CSV, PIPE and TAB (CSV when none).
    """
    stripped = head.lstrip(b" \t\r\n")
    if not stripped:
        return None
    first = stripped[:1]
    low = stripped[:64].lower()
    if low.startswith((b"<!doctype html", b"<html")):
        raise ResultsParseError(
            f"results look like an HTML page, not results; first bytes {first_bytes(head)}",
            format="?",
            offset=0,
        )
    if first == b"<":
        return "XML"
    if first in (b"[", b"{"):
        return "JSON"
    if _binaryish(stripped[:512]):
        raise ResultsParseError(
            f"cannot tell the results format; first bytes {first_bytes(head)}",
            format="?",
            offset=0,
        )
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for byte in head:
        if byte == 0x22:
            quoted = not quoted
        elif quoted:
            continue
        elif byte in (0x0A, 0x0D):
            break
        elif byte == 0x2C:
            counts["CSV"] += 1
        elif byte == 0x7C:
            counts["PIPE"] += 1
        elif byte == 0x09:
            counts["TAB"] += 1
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] > 0 else "CSV"


def _binaryish(sample: bytes) -> bool:
    if sample.startswith((b"\x1f\x8b", b"PK\x03\x04", b"%PDF")):
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3  # a character cut at the sample's end is fine
    return False
