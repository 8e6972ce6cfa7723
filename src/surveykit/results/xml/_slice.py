"""One slice of an XML results payload (whole records) read in bulk; see ``_xml_fast``.

A slice is read on its own, so several can be read at once on threads (numpy and arrow
let go of the GIL): ``<`` and ``>`` give the tags, pairs of ``"`` inside tags the
attributes, the distinct tag texts are checked once each, depth counts check the
nesting, and one arrow ``take`` cuts every value out of the payload.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from surveykit.results._common import cell_budget, check_shape
from surveykit.results.xml._names import _NCNAME, decode_name

Ints = npt.NDArray[np.int64]

_LT, _GT, _QUOTE, _EQUALS, _AMP = 60, 62, 34, 61, 38
_OPEN, _CLOSE, _EMPTY = 0, 1, 2
_WORDS: Final = 8  # strings compared in bulk are at most 8 words (64 bytes) long
_MASKS: Final = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=np.uint64)
_MIX: Final = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
     0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x2545F4914F6CDD1D, 0x94D049BB133111EB],
    dtype=np.uint64,
)  # fmt: skip
_SPACES: Final = re.compile(r"[ \t\n]*")
_NAME: Final = _NCNAME.pattern
_TAG: Final = re.compile(f"(/?)({_NAME})[ \t\n]*(/?)")
# The bytes before an attribute's ="...": the element's name first, then a space.
_ATTRIBUTE: Final = re.compile(f"({_NAME})?[ \t\n]+(?:({_NAME}):)?({_NAME})")
_TAIL: Final = re.compile(r"[ \t\n]*(/?)")
_NAMED: Final = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_XML_CHARS: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class _Unsupported(Exception):
    """The payload is outside what the bulk reader takes; the lxml reader takes over."""


def _check(condition: Any) -> None:
    if not condition:
        raise _Unsupported


@dataclass
class SliceColumns:
    """The records of one slice: text columns named in order of first appearance."""

    names: list[str]
    columns: list[pa.Array]
    nrows: int


@dataclass
class Shared:
    """What every slice of one payload reads: the payload, and what its root declares."""

    data: bytes | memoryview
    prefixes: set[str]  # namespace prefixes declared on the root
    record: str  # the record element's name
    buffer: pa.Buffer = field(init=False)
    tags: dict[bytes, tuple[int, str]] = field(default_factory=dict)
    regions: dict[bytes, tuple[str | None, str | None, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.buffer = pa.py_buffer(self.data)

    def tag(self, text: bytes) -> tuple[int, str]:
        """A tag's kind and element name, from its text between < and >."""
        found = self.tags.get(text)
        if found is None:
            match = _TAG.fullmatch(_decode(text))
            _check(match and not (match.group(1) and match.group(3)))
            assert match is not None
            kind = _CLOSE if match.group(1) else _EMPTY if match.group(3) else _OPEN
            found = self.tags[text] = (kind, match.group(2))
        return found

    def region(self, text: bytes) -> tuple[str | None, str | None, str]:
        """The element name (first attribute only), prefix and name before ``="``."""
        found = self.regions.get(text)
        if found is None:
            match = _ATTRIBUTE.fullmatch(_decode(text))
            _check(match)
            assert match is not None
            found = self.regions[text] = (match.group(1), match.group(2), match.group(3))
        return found


def read_slice(shared: Shared, cut: int, until: int) -> SliceColumns:
    """The records in ``shared.data[cut:until]`` (whole records and white space)."""
    return _Slice(shared, cut, until).read()


class _Slice:
    """One slice's bytes, padded so that 8 bytes can be loaded from any position."""

    def __init__(self, shared: Shared, cut: int, until: int) -> None:
        self.shared = shared
        self.cut = cut
        self.chunk = np.frombuffer(shared.data, dtype=np.uint8, count=until - cut, offset=cut)
        size = until - cut
        self.bytes = np.zeros(size + 8 * _WORDS + 8, dtype=np.uint8)
        self.bytes[:size] = self.chunk
        # Every 8 bytes from each position, as one little-endian word (unaligned loads).
        self.words = np.ndarray(
            (size + 8 * _WORDS,), dtype="<u8", buffer=self.bytes.data, strides=(1,)
        )
        self.ignored_opens = self.ignored_closes = np.zeros(0, dtype=np.int64)

    def _distinct(self, starts: Ints, ends: Ints) -> tuple[Ints, list[bytes]]:
        """A code per byte range of the slice (equal bytes, equal codes), each code's bytes."""
        padded = self.words
        if not len(starts):
            return np.zeros(0, dtype=np.int64), []
        lengths = ends - starts
        _check(lengths.min() >= 0 and lengths.max() <= 8 * _WORDS)
        # The first word masked to the length; further words end at most at the end (so
        # need no mask), and are zero for strings of one word.
        first_word = padded[starts] & _MASKS[np.minimum(lengths, 8)]
        if int(lengths.max()) <= 8:
            # The slice holds no NUL byte (refused above), so a masked word is its string.
            codes, _ = pd.factorize(first_word)
            codes = codes.astype(np.int64)
            first = _firsts(codes)
        else:
            words = [first_word]
            mixed = lengths.astype(np.uint64) * _MIX[-1] ^ first_word * _MIX[0]
            # Further words end at most at the end (so need no mask); zero for short ones.
            longer = lengths > 8
            for k in range(1, (int(lengths.max()) + 7) // 8):
                word = padded[np.minimum(starts + 8 * k, ends - 8)] * longer
                words.append(word)
                mixed ^= word * _MIX[k]
            codes, _ = pd.factorize(mixed)
            codes = codes.astype(np.int64)
            first = _firsts(codes)
            # Equal mixes of different strings would be merged: check every word.
            _check(np.array_equal(lengths, lengths[first][codes]))
            for word in words:
                _check(np.array_equal(word, word[first][codes]))
        raw = self.bytes
        return codes, [raw[s:e].tobytes() for s, e in zip(starts[first], ends[first], strict=True)]

    def read(self) -> SliceColumns:
        """The records of the slice as text columns, named in order of appearance."""
        # Whole on purpose: split into steps it cost ~7% CPU (page faults, bench_results XML).
        shared, chunk, cut, size = self.shared, self.chunk, self.cut, len(self.chunk)
        breaks = np.flatnonzero(chunk < 32)
        _check(np.all((chunk[breaks] == 10) | (chunk[breaks] == 9)))  # no \r, no C0
        marks = np.flatnonzero((chunk == _LT) | (chunk == _GT))
        opening = chunk[marks] == _LT
        starts_at = np.flatnonzero(opening)
        lt = marks[starts_at]
        if not len(lt):
            _check(_SPACES.fullmatch(chunk.tobytes().decode("ascii", "replace")))
            return SliceColumns([], [], 0)
        # A tag ends at the next '>', before any other '<' ('>' may also stand in text).
        _check(starts_at[-1] + 1 < len(marks))
        _check(not np.any(opening[starts_at + 1]))
        gt = marks[starts_at + 1]
        gts = marks[~opening]
        late = gts[gts >= 2]
        _check(not np.any((chunk[late - 1] == 93) & (chunk[late - 2] == 93)))  # "]]>"
        _check(_valid_utf8(shared.buffer, cut, cut + size) and not _nonchars(chunk))
        ntags = len(lt)

        # Attributes: pairs of double quotes inside tags.
        quotes = np.flatnonzero(chunk == _QUOTE)
        owner = np.minimum(np.searchsorted(gt, quotes), ntags - 1)  # the first tag ending after
        inside = (lt[owner] < quotes) & (quotes < gt[owner])
        quotes, owner = quotes[inside], owner[inside]
        _check(len(quotes) % 2 == 0)
        opens, closes, tag_of = quotes[0::2], quotes[1::2], owner[0::2]
        _check(np.array_equal(tag_of, owner[1::2]))
        _check(np.all(chunk[opens - 1] == _EQUALS))
        nattr = len(opens)
        kinds = np.empty(ntags, dtype=np.int8)
        names = np.empty(ntags, dtype=np.int64)  # element name ids, per slice
        name_ids: dict[str, int] = {}
        has_attr = np.zeros(ntags, dtype=bool)
        attr_name = np.empty(nattr, dtype=np.int64)
        attr_prefix = np.zeros(nattr, dtype=bool)
        attr_names: list[str] = []
        if nattr:
            has_attr[tag_of] = True
            first_attr = np.ones(nattr, dtype=bool)
            first_attr[1:] = tag_of[1:] != tag_of[:-1]
            region_start = np.where(first_attr, lt[tag_of] + 1, np.roll(closes, 1) + 1)
            codes, texts = self._distinct(region_start, opens - 1)
            regions = [shared.region(t) for t in texts]
            has_name = np.array([r[0] is not None for r in regions], dtype=bool)
            _check(np.array_equal(has_name[codes], first_attr))
            attr_ids: dict[str, int] = {}
            code_attr = np.empty(len(regions), dtype=np.int64)
            code_prefix = np.zeros(len(regions), dtype=bool)
            for c, (_, prefix, local) in enumerate(regions):
                _check(prefix is None or prefix in shared.prefixes)
                _check(local != "xmlns" and prefix != "xmlns")
                qualified = f"{prefix}:{local}" if prefix else local
                code_attr[c] = attr_ids.setdefault(qualified, len(attr_ids))
                code_prefix[c] = prefix is not None
            attr_names = list(attr_ids)
            attr_name = code_attr[codes]
            attr_prefix = code_prefix[codes]
            # The element's name (before its first attribute) and what follows the last.
            tagged = tag_of[first_attr]
            element_of = [
                -1 if r[0] is None else name_ids.setdefault(r[0], len(name_ids)) for r in regions
            ]
            names[tagged] = np.array(element_of, dtype=np.int64)[codes[first_attr]]
            last_attr = np.ones(nattr, dtype=bool)
            last_attr[:-1] = tag_of[:-1] != tag_of[1:]
            tcodes, ttexts = self._distinct(closes[last_attr] + 1, gt[tagged])
            tails = [_TAIL.fullmatch(_decode(t)) for t in ttexts]
            _check(all(tails))
            empty = np.array([bool(m and m.group(1)) for m in tails], dtype=bool)
            kinds[tagged] = np.where(empty[tcodes], _EMPTY, _OPEN)
            # Raw tabs and line breaks in attribute values would read as spaces.
            if len(breaks):
                tag = np.searchsorted(lt, breaks, side="right") - 1
                within = breaks[(tag >= 0) & (breaks < gt[np.maximum(tag, 0)])]
                pair = np.searchsorted(opens, within, side="right") - 1
                _check(not np.any((pair >= 0) & (within < closes[np.maximum(pair, 0)])))
        plain = np.flatnonzero(~has_attr)
        codes, texts = self._distinct(lt[plain] + 1, gt[plain])
        record_text = shared.record.encode("utf-8")
        if len(texts) > 1024 and record_text in texts:
            # Many distinct tags in many records may name a table beyond the shape
            # budget: the lxml reader, which refuses it early and cheaply, decides
            # (a column gives two tags, <Q1> and </Q1>, or a few with odd spacing).
            rows = int(np.count_nonzero(codes == texts.index(record_text)))
            _check(rows * (len(texts) // 4) <= cell_budget(len(shared.data)))
        parsed = [shared.tag(t) for t in texts]
        kinds[plain] = np.array([k for k, _ in parsed], dtype=np.int8)[codes]
        element_of = [name_ids.setdefault(n, len(name_ids)) for _, n in parsed]
        names[plain] = np.array(element_of, dtype=np.int64)[codes]
        _check(shared.record in name_ids or not ntags)
        record_id = name_ids.get(shared.record, -1)

        # Nesting: records at depth 0, fields at depth 1 holding only text.
        step = np.where(kinds == _OPEN, 1, np.where(kinds == _CLOSE, -1, 0))
        depth = np.cumsum(step) - step  # before each tag
        _check(depth.min() >= 0 and depth[-1] + step[-1] == 0)
        top = depth == 0
        _check(not np.any(top & (kinds == _CLOSE)))
        _check(np.all(names[top] == record_id))
        _check(np.all(depth <= 2))
        field = (depth == 1) & (kinds == _OPEN)
        closing = depth == 2
        _check(np.all(kinds[closing] == _CLOSE))
        fields = np.flatnonzero(field)
        _check(np.array_equal(np.flatnonzero(closing), fields + 1))
        _check(np.array_equal(names[fields + 1], names[fields]))
        ends = (depth == 1) & (kinds == _CLOSE)
        _check(np.all(names[ends] == record_id))
        # A field named like a record or <Columns> is one the lxml reader would see as such.
        inner = np.flatnonzero((depth == 1) & (kinds != _CLOSE))
        reserved = [name_ids[n] for n in (shared.record, "Columns") if n in name_ids]
        _check(not np.any(np.isin(names[inner], reserved)))
        _check(not np.any(has_attr & (kinds == _CLOSE)))
        # Text between tags, except a field's value, is white space.
        text_start = gt + 1
        text_end = np.empty(ntags, dtype=np.int64)
        text_end[:-1] = lt[1:]
        text_end[-1] = size
        other = np.flatnonzero(~field & (text_end > text_start))
        _check(self._all_space(text_start[other], text_end[other]))
        lead = chunk[: int(lt[0])].tobytes().decode("ascii", "replace")
        _check(_SPACES.fullmatch(lead))

        records = top & (kinds != _CLOSE)
        record_of = np.cumsum(records) - 1  # the record each tag belongs to
        nrec = int(records.sum())
        empty = (depth == 1) & (kinds == _EMPTY)
        # Values, in document order: fields with text, empty fields, attributes of records.
        item_tag = np.flatnonzero(field | empty)
        item_start = text_start[item_tag]
        item_end = np.where(field[item_tag], text_end[item_tag], item_start)
        item_name = names[item_tag]
        element_names = list(name_ids)
        nil = np.zeros(len(item_tag), dtype=bool)
        self.ignored_opens = self.ignored_closes = np.zeros(0, dtype=np.int64)
        if nattr:
            on_record = top[tag_of]
            # An attribute twice in a tag: a record's are caught as a field twice in a
            # record (_gather); other tags seldom have two.
            elsewhere = np.flatnonzero(~on_record)
            if len(elsewhere) > len(np.unique(tag_of[elsewhere])):
                key = tag_of[elsewhere] * len(attr_names) + attr_name[elsewhere]
                _check(len(np.unique(key)) == len(key))
            locals_ = np.array([n.rpartition(":")[2] for n in attr_names], dtype=object)
            is_nil = (locals_ == "nil")[attr_name]
            # Prefixed attributes of a record (xsi:type, ...) and base64 are the lxml
            # reader's; so is a record marked nil.
            special = attr_prefix | is_nil | (locals_ == "base64")[attr_name]
            _check(not np.any(on_record & special))
            marks = np.flatnonzero(~on_record & is_nil)
            if len(marks):
                vcodes, vtexts = self._distinct(opens[marks] + 1, closes[marks])
                truth = np.array([t in (b"true", b"1") for t in vtexts], dtype=bool)
                flagged = np.zeros(ntags, dtype=bool)
                flagged[tag_of[marks[truth[vcodes]]]] = True
                nil = flagged[item_tag] & (item_end == item_start)  # a nil with text is text
            self.ignored_opens, self.ignored_closes = opens[~on_record], closes[~on_record]
            own = np.flatnonzero(on_record)
            if len(own):
                offset = len(element_names)
                element_names += attr_names
                if len(item_tag):
                    # A record's attributes come before its fields: by tag, then place.
                    keys = np.concatenate([item_tag * 2 + 1, tag_of[own] * 2])
                    order = np.argsort(keys, kind="stable")
                else:
                    order = np.arange(len(own))
                item_tag = np.concatenate([item_tag, tag_of[own]])[order]
                item_start = np.concatenate([item_start, opens[own] + 1])[order]
                item_end = np.concatenate([item_end, closes[own]])[order]
                item_name = np.concatenate([item_name, attr_name[own] + offset])[order]
                nil = np.concatenate([nil, np.zeros(len(own), dtype=bool)])[order]
        # Columns in order of first appearance (an element and an attribute may share one).
        _, first_names = pd.factorize(item_name)
        index: dict[str, int] = {}
        column_of = np.full(len(element_names), -1, dtype=np.int64)
        for u in first_names.tolist():
            column_of[u] = index.setdefault(decode_name(element_names[u]), len(index))
        item_col = column_of[item_name]
        item_rec = record_of[item_tag]
        slot = item_col * nrec + item_rec
        check_shape(nrec, len(index), len(shared.data), format="XML")
        decoded = self._references(item_start, item_end)
        if decoded is None:
            decoded = (shared.buffer, item_start + cut, item_end + cut)
        columns = _gather(*decoded, slot, nil, nrec, len(index))
        return SliceColumns(list(index), columns, nrec)

    def _references(self, starts: Ints, ends: Ints) -> tuple[pa.Buffer, Ints, Ints] | None:
        """The slice with its references decoded, and where the values now lie.

        ``None`` when the slice holds no '&'. Every '&' must start a valid reference
        inside a value. A reference is never shorter than the UTF-8 of its character
        (``&#9;`` is 4 bytes for 1), so each is overwritten in place and the bytes left
        over are dropped.
        """
        chunk = self.chunk
        amps = np.flatnonzero(chunk == _AMP)
        if not len(amps):
            return None
        semis = np.flatnonzero(chunk == 59)
        at = np.searchsorted(semis, amps)
        _check(at[-1] < len(semis))
        stops = semis[at] + 1
        codes, refs = self._distinct(amps + 1, stops - 1)
        # A reference's name has no '<' or '"', so it cannot run past the end of a
        # value; white space between tags was checked; tag names hold no '&'. What is
        # left: the attributes of fields other than records, which are not values.
        if len(self.ignored_opens):
            inside = np.searchsorted(amps, self.ignored_closes) - np.searchsorted(
                amps, self.ignored_opens
            )
            _check(not np.any(inside))
        chars = [_reference(r).encode("utf-8") for r in refs]
        # The padded copy is overwritten: nothing reads it after this (the last _distinct
        # of the slice is the one above).
        out = self.bytes[: len(chunk)]
        for c, char in enumerate(chars):
            places = amps[codes == c]
            for k, byte in enumerate(char):
                out[places + k] = byte
        kept = np.array([len(c) for c in chars], dtype=np.int64)[codes]
        dropped = stops - amps - kept
        keep = np.ones(len(out), dtype=bool)
        for size in np.unique(dropped).tolist():
            first = (amps + kept)[dropped == size]
            for k in range(size):
                keep[first + k] = False
        compact = out[keep]
        holder = np.searchsorted(starts, amps, side="right") - 1
        if holder[0] >= 0 and np.all(amps < ends[holder]):
            # Every reference lies in a value: a value moves by what those before lost.
            lost = np.bincount(holder, weights=dropped, minlength=len(starts)).astype(np.int64)
            before = np.cumsum(lost) - lost
            return pa.py_buffer(compact), starts - before, ends - before - lost
        shift = np.concatenate([[0], np.cumsum(dropped)])
        new_starts = starts - shift[np.searchsorted(amps, starts)]
        new_ends = ends - shift[np.searchsorted(amps, ends)]
        return pa.py_buffer(compact), new_starts, new_ends

    def _all_space(self, starts: Ints, ends: Ints) -> bool:
        """Whether every byte range of the slice holds only spaces, tabs and line breaks."""
        if not len(starts):
            return True
        if int((ends - starts).max()) <= 8 * _WORDS:
            _, texts = self._distinct(starts, ends)
            return all(_SPACES.fullmatch(t.decode("ascii", "replace")) for t in texts)
        chunk = self.chunk
        space = (chunk == 32) | (chunk == 10) | (chunk == 9)
        total = np.concatenate([[0], np.cumsum(~space, dtype=np.int64)])
        return bool(np.all(total[ends] == total[starts]))


def _gather(
    buffer: pa.Buffer,
    starts: Ints,
    ends: Ints,
    slot: Ints,
    nil: npt.NDArray[np.bool_],
    nrec: int,
    ncols: int,
) -> list[pa.Array]:
    """Cut the values out of ``buffer``: ``slot`` = column * records + record."""
    if not len(starts):
        table = pa.nulls(ncols * nrec, pa.large_string())
    else:
        # Values laid end to end with what lies between: value i is item i // 2 when
        # i is even; the last one is empty (what absent values take, before nulling).
        n = len(starts)
        offsets = np.empty(2 * n + 1, dtype=np.int64)
        offsets[0 : 2 * n : 2] = starts
        offsets[1 : 2 * n : 2] = ends
        offsets[2 * n] = ends[-1]
        values = pa.LargeStringArray.from_buffers(2 * n, pa.py_buffer(offsets), buffer)
        where = np.full(ncols * nrec, 2 * n - 1, dtype=np.int64)
        where[slot] = np.arange(0, 2 * n, 2)
        valid = np.zeros(ncols * nrec, dtype=bool)
        valid[slot] = True
        _check(np.count_nonzero(valid) == n)  # no field twice in a record
        if np.any(nil):
            valid[slot[nil]] = False
        # A take without nulls is several times faster; the nulls are set after.
        taken = values.take(pa.array(where))
        table = pa.LargeStringArray.from_buffers(
            len(taken),
            taken.buffers()[1],
            taken.buffers()[2],
            pa.py_buffer(np.packbits(valid, bitorder="little")),
        )
    return [table.slice(j * nrec, nrec) for j in range(ncols)]


def _firsts(codes: Ints) -> Ints:
    """Where each code first appears (codes number strings in order of appearance)."""
    seen = np.maximum.accumulate(codes)
    fresh = np.empty(len(codes), dtype=bool)
    fresh[0] = True
    fresh[1:] = codes[1:] > seen[:-1]
    return np.flatnonzero(fresh)


def _decode(text: bytes) -> str:
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unsupported from exc


def _valid_utf8(buffer: pa.Buffer, start: int, end: int) -> bool:
    """Whether the bytes are UTF-8 (surrogates are not)."""
    offsets = pa.py_buffer(np.array([start, end], dtype=np.int64))
    text = pa.LargeStringArray.from_buffers(1, offsets, buffer)
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _nonchars(chunk: npt.NDArray[np.uint8]) -> bool:
    """Whether U+FFFE or U+FFFF (EF BF BE, EF BF BF) occurs: XML refuses both."""
    lead = np.flatnonzero(chunk[:-2] == 0xEF)
    return bool(np.any((chunk[lead + 1] == 0xBF) & (chunk[lead + 2] >= 0xBE)))


def _reference(ref: bytes) -> str:
    """The character of a reference's name (``amp``, ``#10``, ``#x1F600``)."""
    text = _decode(ref)
    if text in _NAMED:
        return _NAMED[text]
    match = re.fullmatch(r"#(?:([0-9]{1,7})|x([0-9A-Fa-f]{1,6}))", text)
    _check(match)
    assert match is not None
    code = int(match.group(1)) if match.group(1) else int(match.group(2), 16)
    _check(code <= 0x10FFFF)
    char = chr(code)
    _check(not _XML_CHARS.match(char))
    return char
