"""The bulk XML reader (``_xml_fast``) reads what lxml reads, or steps aside.

Each payload is read twice: in bulk, and with lxml's pull parser (``_iter_lxml``, the
reader of every other payload). The two must give the same names and values; a payload
outside the bulk reader's subset must raise ``_Unsupported`` (never a different answer),
and ``read_results`` must then still give lxml's frame or lxml's error.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveykit import ResultsParseError
from surveykit.results import read_results, write_results
from surveykit.results._common import RawChunk
from surveykit.results._source import Payload
from surveykit.results.xml import _fast as _xml_fast
from surveykit.results.xml import _reader as _xml
from surveykit.results.xml import _slice as _xml_slice
from surveykit.sandbox.generator import generate_results_frame
from tests.helpers.results_strategies import tables

XML_LAYOUTS = ["documented", "aspnet", "namespaced", "attributes"]
XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def merged(chunks: list[RawChunk]) -> dict[str, list[Any]]:
    """Column name -> every value, chunks joined (a column new in a later chunk is null
    in the earlier ones)."""
    names = chunks[-1].names if chunks else []
    out: dict[str, list[Any]] = {n: [] for n in names}
    for chunk in chunks:
        have = dict(zip(chunk.names, chunk.columns, strict=True))
        for n in names:
            col = have.get(n)
            out[n].extend(col.to_pylist() if col is not None else [None] * chunk.nrows)
    return out


def bulk(data: bytes, streaming: bool = False) -> dict[str, list[Any]]:
    return merged(list(_xml_fast.fast_chunks(data, streaming=streaming)))


def pulled(data: bytes) -> dict[str, list[Any]]:
    return merged(list(_xml._iter_lxml(Payload(data), streaming=False)))


def encode(frame: pd.DataFrame, layout: str) -> bytes:
    return b"".join(write_results(frame, "XML", layout=layout))


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of about 200 bytes: a few records each, so every payload spans many."""
    monkeypatch.setattr(_xml_fast, "_SLICE", 200)


@pytest.mark.parametrize("layout", XML_LAYOUTS)
def test_generated_results_read_in_bulk_as_lxml_reads_them(layout: str) -> None:
    payload = encode(generate_results_frame(400, seed=11), layout)
    expected = pulled(payload)
    assert bulk(payload) == expected
    assert bulk(payload, streaming=True) == expected


@pytest.mark.parametrize("layout", XML_LAYOUTS)
def test_many_small_slices_join_up(layout: str, small_slices: None) -> None:
    payload = encode(generate_results_frame(120, seed=3), layout)
    chunks = list(_xml_fast.fast_chunks(payload, streaming=True))
    assert len(chunks) > 20
    assert merged(chunks) == pulled(payload)
    assert bulk(payload) == pulled(payload)


@SETTINGS
@given(df=tables())
def test_any_table_reads_in_bulk_as_lxml_reads_it(df: pd.DataFrame) -> None:
    """Hostile text (markup, references, line breaks, emoji) in every layout."""
    _xml_fast._SLICE, saved = 97, _xml_fast._SLICE  # hypothesis runs outside fixtures
    try:
        for layout in XML_LAYOUTS:
            payload = encode(df, layout)
            if b'base64="' in payload:  # values XML cannot carry: lxml's to read
                with pytest.raises(_xml_fast._Unsupported):
                    bulk(payload)
                continue
            assert bulk(payload) == pulled(payload), layout
    finally:
        _xml_fast._SLICE = saved


ACCEPTED = {
    "empty forms": b"<R><r><a/><b /><c></c><d>x</d></r></R>",
    "nil on an empty element": f'<R {XSI}><r><a xsi:nil="true" /><b>1</b></r></R>'.encode(),
    "nil with text is text": f'<R {XSI}><r><a xsi:nil="true">x</a><b xsi:nil="1"/>'
    f'<c xsi:nil="false"/><d nil="true"></d></r></R>'.encode(),
    "white space around": b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b"<R>\n\t<r>\n\t\t<a>1</a>\n\t</r>\n\t<r\n/>\n</R>\n",
    "attributes and elements": b'<R><r a="1"\tb="2"\n><c>3</c></r><r c="4"/></R>',
    "references": b"<R><r><a>&lt;&amp;lt;&#38;amp;&#x1F600;&#233;&quot;&apos;&gt;</a>"
    b'<b>x&#10;y</b></r><r v="&#9;&quot;&amp;"/></R>',
    "non-ASCII names": "<R><r><città>é</città><_x0031_st>1</_x0031_st></r></R>".encode(),
    "columns declared, more found": b"<Results><Columns><Column>z</Column><Column>a</Column>"
    b"</Columns><Result><a>1</a><b>2</b></Result></Results>",
    "no records": b"<Results>\n<Columns><Column>a</Column></Columns>\n</Results>",
    "greater-than in text": b"<R><r><a>1 > 0</a></r></R>",
    "ignored attribute on a field": b'<R><r><a unit="kg">5</a></r></R>',
    "namespace on the root": b'<R xmlns="urn:x" xmlns:p="urn:p"><r><a p:k="v">1</a></r></R>',
}


@pytest.mark.parametrize("payload", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_plain_variants_are_read_in_bulk(payload: bytes) -> None:
    assert bulk(payload) == pulled(payload)


REFUSED = {
    "comment": b"<R><r><a>1</a><!-- x --></r></R>",
    "CDATA": b"<R><r><a><![CDATA[<x>]]></a></r></R>",
    "processing instruction": b"<R><?pi x?><r><a>1</a></r></R>",
    "DOCTYPE": b"<!DOCTYPE R><R><r><a>1</a></r></R>",
    "carriage return": b"<R>\r\n<r><a>1\r\n2</a></r></R>",
    "single quotes": b"<R><r a='1'/></R>",
    "spaces around =": b'<R><r a = "1"/></R>',
    "prefixed element": b'<R xmlns:p="urn:p"><r><p:a>1</p:a></r></R>',
    "xmlns on a record": b'<R><r xmlns="urn:x"><a>1</a></r></R>',
    "nested element": b"<R><r><a><b>1</b></a></r></R>",
    "field twice": b"<R><r><a>1</a><a>2</a></r></R>",
    "attribute and element alike": b'<R><r a="1"><a>2</a></r></R>',
    "base64": b'<R><r base64="a"><a>AQ==</a></r></R>',
    "latin-1 declared": b'<?xml version="1.0" encoding="ISO-8859-1"?><R><r><a>1</a></r></R>',
    "invalid UTF-8": b"<R><r><a>\xff</a></r></R>",
    "control character": b"<R><r><a>\x01</a></r></R>",
    "U+FFFF": "<R><r><a>\uffff</a></r></R>".encode(),
    "]]> in text": b"<R><r><a>]]></a></r></R>",
    "undefined entity": b"<R><r><a>&nbsp;</a></r></R>",
    "reference to NUL": b"<R><r><a>&#0;</a></r></R>",
    "bare ampersand": b"<R><r><a>a & b</a></r></R>",
    "raw line break in an attribute": b'<R><r a="1\n2"/></R>',
    "text in a record": b"<R><r>loose<a>1</a></r></R>",
    "unexpected root child": b"<R><r><a>1</a></r><s><a>2</a></s></R>",
    "unclosed": b"<R><r><a>1</a></r>",
    "mismatched": b"<R><r><a>1</b></r></R>",
    "text after the root": b"<R><r><a>1</a></r></R>junk",
    "reference in an ignored attribute": b'<R><r><a u="&#0;">1</a></r></R>',
    "reference in a nil mark": f'<R {XSI}><r><a xsi:nil="&#116;rue"/></r></R>'.encode(),
    "field named like the record": b"<R><r><r>1</r></r></R>",
    "attribute twice on a field": b'<R><r><a u="1" u="2">1</a></r></R>',
    "undeclared prefix": b'<R><r><a q:nil="true"/></r></R>',
    "empty column name": b"<Results><Columns><Column>a</Column><Column></Column></Columns>"
    b"<Result><a>1</a></Result></Results>",
}


@pytest.mark.parametrize("payload", REFUSED.values(), ids=REFUSED.keys())
def test_other_xml_is_left_to_lxml(payload: bytes) -> None:
    with pytest.raises(_xml_fast._Unsupported):
        bulk(payload)
    try:
        expected: Any = pulled(payload)
    except ResultsParseError as exc:
        expected = exc
    got: Any
    try:
        got = merged(list(_xml.iter_xml(Payload(payload), names=None, streaming=False)))
    except ResultsParseError as exc:
        got = exc
    if isinstance(expected, ResultsParseError):
        assert isinstance(got, ResultsParseError) and str(got) == str(expected)
    else:
        assert got == expected


def test_streaming_hands_over_to_lxml_without_losing_or_repeating_rows(
    small_slices: None,
) -> None:
    """Refused after some chunks: lxml reads the rest, skipping what was handed out."""
    rows = [f"<r><id>{i}</id><v>{i * i}</v></r>" for i in range(300)]
    rows[250] = "<r><id>250</id><!-- late --><v>62500</v></r>"
    payload = ("<R>\n" + "\n".join(rows) + "\n</R>\n").encode()
    with pytest.raises(_xml_fast._Unsupported):
        list(_xml_fast.fast_chunks(payload, streaming=True))
    chunks = list(_xml.iter_xml(Payload(payload), names=None, streaming=True))
    assert merged(chunks) == {
        "id": [str(i) for i in range(300)],
        "v": [str(i * i) for i in range(300)],
    }
    frames = list(read_results(payload, "XML", chunksize=41, infer_types=False))
    assert pd.concat(frames)["id"].tolist() == [str(i) for i in range(300)]


def test_hash_collisions_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a mix that merges strings of one length, the exact check refuses to merge."""
    mix = np.zeros(8, dtype=np.uint64)
    mix[-1] = 1  # only the length counts
    monkeypatch.setattr(_xml_slice, "_MIX", mix)
    payload = (
        b"<R><r><alpha_long_name>1</alpha_long_name></r>"
        b"<r><gamma_long_name>2</gamma_long_name></r></R>"
    )
    with pytest.raises(_xml_fast._Unsupported):
        bulk(payload)
    frame = read_results(payload, "XML", infer_types=False)
    assert frame.to_dict("list") == {"alpha_long_name": ["1", None], "gamma_long_name": [None, "2"]}


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The row counts of the chunks the bulk reader hands to ``read_results``."""
    rows: list[int] = []
    real = _xml_fast.fast_chunks

    def counting(data: Any, *, streaming: bool) -> Any:
        for chunk in real(data, streaming=streaming):
            rows.append(chunk.nrows)
            yield chunk

    monkeypatch.setattr(_xml, "fast_chunks", counting)
    return rows


def test_a_mapped_file_is_read_in_bulk(tmp_path: Any, used: list[int]) -> None:
    """Files arrive as a memoryview of a memory map; the bulk reader takes those too."""
    frame = generate_results_frame(200, seed=2)
    path = tmp_path / "results.xml"
    path.write_bytes(encode(frame, "documented"))
    got = read_results(path, "XML")
    assert sum(used) == 200
    pd.testing.assert_frame_equal(got, read_results(encode(frame, "documented"), "XML"))


def test_values_are_arrow_large_strings() -> None:
    chunk = next(_xml_fast.fast_chunks(b"<R><r><a>1</a></r><r/></R>", streaming=False))
    assert chunk.nrows == 2
    assert chunk.columns[0].type == pa.large_string()
    assert chunk.columns[0].to_pylist() == ["1", None]


MUTATIONS = [b"<", b">", b"/", b'"', b"'", b"&", b";", b"&amp;", b"&#0;", b"&#x41;", b"]]>"]
MUTATIONS += [b"<!--x-->", b"\r", b"\x01", b"\xff", b" ", b"\n", b"=", b"<a>", b"</a>", b"nil"]
MUTATIONS += [b'x:nil="true"', b'xmlns="u"', b"\xef\xbf\xbf", b"<Result>", b"</Result>"]


@pytest.fixture(scope="module")
def mutable() -> list[bytes]:
    frame = generate_results_frame(4, seed=1)
    payloads = [encode(frame, layout) for layout in XML_LAYOUTS]
    payloads.append(
        b'<R xmlns:x="urn:x"><r a="1" b="&amp;x"><c>&#233;</c><d x:nil="true"/></r><r/></R>'
    )
    return payloads


@settings(max_examples=400, deadline=None, derandomize=True)
@given(data=st.data())
def test_a_damaged_payload_is_refused_or_read_as_lxml_reads_it(
    mutable: list[bytes], data: st.DataObject
) -> None:
    """Bytes inserted, deleted or changed: the bulk reader never accepts what lxml refuses,
    and never reads it differently."""
    payload = bytearray(data.draw(st.sampled_from(mutable)))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(payload) - 1))
        how = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        if how == "insert":
            payload[at:at] = data.draw(st.sampled_from(MUTATIONS))
        elif how == "delete":
            del payload[at : at + data.draw(st.integers(1, 4))]
        else:
            payload[at] = data.draw(st.integers(0, 255))
    damaged = bytes(payload)
    _xml_fast._SLICE, saved = 150, _xml_fast._SLICE
    try:
        got = bulk(damaged)
    except _xml_fast._Unsupported:
        return
    finally:
        _xml_fast._SLICE = saved
    assert got == pulled(damaged)  # pulled raises if lxml refuses it


def test_a_download_read_whole_is_read_in_bulk_and_one_read_in_chunks_streams(
    used: list[int],
) -> None:
    """Pieces (as the client streams a response) are gathered once for a whole read; with
    chunksize they stream through lxml, so memory stays bounded."""
    frame = generate_results_frame(300, seed=4)
    payload = encode(frame, "aspnet")
    pieces = [payload[i : i + 1000] for i in range(0, len(payload), 1000)]
    whole = read_results(iter(pieces), "XML")
    assert sum(used) == 300
    pd.testing.assert_frame_equal(whole, read_results(payload, "XML"))
    used.clear()
    parts = list(read_results(iter(pieces), "XML", chunksize=70))
    assert used == []
    in_memory = list(read_results(payload, "XML", chunksize=70))  # in bulk, streamed
    assert sum(used) == 300
    for got, expected in zip(parts, in_memory, strict=True):
        pd.testing.assert_frame_equal(got, expected)


def test_the_client_hands_a_body_already_read_over_as_it_is() -> None:
    """The async client reads a body whole: the reader gets those bytes (read in bulk, no
    copy); a body still streaming is handed over as a stream."""
    import httpx

    from surveykit.client.resources import surveys

    read = httpx.Response(200, content=b"<R><r><a>1</a></r></R>")
    assert surveys._body(read) is read.content
    streamed = httpx.Response(200, stream=httpx.ByteStream(b"<R><r><a>1</a></r></R>"))
    body = surveys._body(streamed)
    assert not isinstance(body, bytes)
    assert b"".join(body) == b"<R><r><a>1</a></r></R>"
