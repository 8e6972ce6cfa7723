"""Malformed, truncated and hostile payloads: only ResultsParseError, with its location."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveykit import ResultsParseError
from surveykit.results import read_results, write_results
from surveykit.sandbox.generator import generate_results_frame

FORMATS = ["CSV", "PIPE", "TAB", "XML", "JSON"]
SMALL = generate_results_frame(6, seed=11, questions=4)
PAYLOADS = {fmt: b"".join(write_results(SMALL, fmt)) for fmt in FORMATS}
WHOLE = read_results(PAYLOADS["CSV"])


def outcome(payload: bytes, fmt: str | None, **kw: object) -> pd.DataFrame | ResultsParseError:
    try:
        result = read_results(payload, fmt, **kw)  # type: ignore[call-overload]
        if kw.get("chunksize"):
            chunks = list(result)
            return pd.concat(chunks) if chunks else pd.DataFrame()
        return result
    except ResultsParseError as exc:
        return exc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fmt=st.sampled_from(FORMATS),
    given_format=st.booleans(),
    chunked=st.booleans(),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["cut", "delete", "insert", "replace"]),
            st.floats(0, 1),
            st.binary(min_size=1, max_size=6)
            | st.sampled_from(
                [
                    b'"',
                    b",",
                    b"|",
                    b"\t",
                    b"\n",
                    b"\r",
                    b"<",
                    b">",
                    b"&",
                    b"]",
                    b"{",
                    b"}",
                    b"\\",
                    b"\xff",
                    b"\xc3",
                    b"<!DOCTYPE x>",
                    b"&x;",
                    b"</Result>",
                    b"<Result>",
                    b"null",
                    b'"a":',
                ]
            ),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_fuzzed_payloads_raise_only_results_parse_error(
    fmt: str, given_format: bool, chunked: bool, edits: list[tuple[str, float, bytes]]
) -> None:
    payload = PAYLOADS[fmt]
    for op, where, data in edits:
        i = int(where * len(payload))
        if op == "cut":
            payload = payload[:i]
        elif op == "delete":
            payload = payload[:i] + payload[i + len(data) :]
        elif op == "insert":
            payload = payload[:i] + data + payload[i:]
        else:
            payload = payload[:i] + data + payload[i + len(data) :]
    kw = {"chunksize": 2} if chunked else {}
    result = outcome(payload, fmt if given_format else None, **kw)
    if isinstance(result, ResultsParseError):
        assert result.format
        assert "format" in str(result)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_is_detected_or_harmless(fmt: str) -> None:
    payload = PAYLOADS[fmt]
    for cut in range(1, len(payload)):
        part = payload[:cut]
        result = outcome(part, fmt)
        if isinstance(result, ResultsParseError):
            assert result.offset is not None, (cut, str(result))
            continue
        rest = payload[cut:]
        if fmt in ("XML", "JSON"):
            # Only trailing whitespace may go missing unnoticed.
            assert not rest.strip(), (cut, part[-40:])
            pd.testing.assert_frame_equal(result, WHOLE)
        else:
            # A cut right after a record: fewer whole records, never a damaged one.
            assert part.endswith((b"\n", b"\r")), (cut, part[-40:])
            assert len(result) < len(WHOLE) or not rest.strip(b"\r\n")


@pytest.mark.parametrize(
    ("payload", "fmt", "line", "record", "offset"),
    [
        (b"a,b\n1,2\n3\n", "CSV", 3, 1, 8),
        (b'a,b\n1,2\n"3,4\n', "CSV", 3, 1, 8),
        (b"a|b\n1|2\n3|4|5\n", "PIPE", 3, 1, 8),
        (b"a,b\n1,2\n3,4", "CSV", 3, 1, 11),
        (b"a,b\n1,\xff\n", "CSV", 2, None, 6),
    ],
    ids=["too-few-fields", "unterminated-quote", "too-many-fields", "no-final-newline", "bad-utf8"],
)
def test_delimited_errors_name_line_record_offset(
    payload: bytes, fmt: str, line: int, record: int | None, offset: int
) -> None:
    with pytest.raises(ResultsParseError) as info:
        read_results(payload, fmt)
    err = info.value
    assert (err.format, err.line, err.offset) == (fmt, line, offset)
    if record is not None:
        assert err.record == record


def test_streamed_csv_error_has_an_offset() -> None:
    payload = b"a,b\n" + b"1,2\n" * 1000 + b"3\n"
    with pytest.raises(ResultsParseError) as info:
        read_results(iter([payload[:100], payload[100:]]), "CSV")
    assert info.value.offset is not None and info.value.offset <= len(payload)


@pytest.mark.parametrize(
    ("payload", "record"),
    [
        (b"<Results><Result><a>1</a></Result><Result><a>2</a>", 1),
        (b"<Results><Result><a>1</a></Result><Result><a>2</b></Result></Results>", 1),
        (b"<Results><Result><a><b>1</b></a></Result></Results>", 0),
        (
            b"<Results>"
            + b"<Result><a>1</a></Result>" * 3
            + b"<Result><a>x<b>1</b></a></Result><Result><a>1</a></Result></Results>",
            3,
        ),
        (b"<Results><Result><a>1</a><a>2</a></Result></Results>", 0),
        (b"<Results><Result><a>&unknown;</a></Result></Results>", 0),
        (b"<Results><Result><a>1</a></Result><Junk/></Results>", 1),
    ],
    ids=[
        "not-closed",
        "mismatched-tag",
        "nested-field",
        "nested-field-in-fourth-row",
        "repeated-field",
        "undeclared-entity",
        "unexpected-element",
    ],
)
def test_xml_errors(payload: bytes, record: int) -> None:
    with pytest.raises(ResultsParseError) as info:
        read_results(payload, "XML")
    if b"<b>" in payload:
        assert "<a> has child elements" in str(info.value)
    assert info.value.format == "XML"
    assert info.value.record == record
    assert info.value.offset is not None


@pytest.mark.parametrize(
    "payload",
    [
        b'[{"a":"1"},{"a":"2"',
        b'[{"a":"1"},\n{"a":"2"},\n',
        b'[{"a":[1]}]',
        b"[1,2]",
        b'{"a":[{"b":"1"}],"c":[]}',
        b'[{"a":"1"}] trailing',
    ],
    ids=["cut", "cut-at-line", "array-value", "not-objects", "two-arrays", "trailing-garbage"],
)
@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_json_errors(payload: bytes, chunked: bool) -> None:
    def read() -> object:
        result = read_results(payload, "JSON", chunksize=1 if chunked else None)
        return list(result) if chunked else result

    with pytest.raises(ResultsParseError) as info:
        read()
    assert info.value.format == "JSON"


def test_json_cut_reports_end_offset() -> None:
    payload = PAYLOADS["JSON"][:-10]
    with pytest.raises(ResultsParseError) as info:
        read_results(payload)
    assert info.value.offset == len(payload)


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<Results><Result><a>&lol9;</a></Result></Results>
"""
XXE = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Results><Result><a>&xxe;</a></Result></Results>
"""
EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE Results SYSTEM "http://example.invalid/evil.dtd">
<Results><Result><a>1</a></Result></Results>
"""
LATE_DOCTYPE = b"<?xml version='1.0'?>\n<!--" + b" " * 200_000 + b"-->\n" + XXE.split(b"\n", 1)[1]


@pytest.mark.parametrize(
    "payload",
    [BILLION_LAUGHS, XXE, EXTERNAL_DTD, LATE_DOCTYPE, BILLION_LAUGHS.lower()],
    ids=[
        "billion-laughs",
        "xxe-file",
        "external-dtd",
        "doctype-after-long-comment",
        "lowercase-doctype",
    ],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["bytes", "stream-13B"])
def test_xml_attacks_refused(payload: bytes, streamed: bool) -> None:
    source: object = (
        (payload[i : i + 13] for i in range(0, len(payload), 13)) if streamed else payload
    )
    with pytest.raises(ResultsParseError, match=r"DOCTYPE|entity|malformed"):
        read_results(source, "XML")  # type: ignore[call-overload]


def test_xml_too_deep_refused() -> None:
    payload = b"<Results>" + b"<a>" * 5000 + b"</a>" * 5000 + b"</Results>"
    with pytest.raises(ResultsParseError):
        read_results(payload)


@pytest.mark.parametrize("chunked", [False, True])
def test_a_cut_inside_the_last_columns_quotes_is_detected(chunked: bool) -> None:
    # pyarrow reads an open quote to the end of the payload without complaint; the
    # reader must notice, whether the last value ends with a line break or not.
    def read(payload: bytes) -> pd.DataFrame:
        return outcome(iter([payload[:5], payload[5:]]) if chunked else payload, "CSV")  # type: ignore[arg-type]

    for cut in (b'a,b\n1,"x\n', b'a,b\n1,"x\r\n', b'a,b\n1,"x\ny\n', b'a,b\n1,2\n3,"""x\n'):
        assert isinstance(read(cut), ResultsParseError), cut
    whole = read(b'a,b\n1,"x\n"\n2,"y\r\n"\n')
    assert not isinstance(whole, ResultsParseError)
    assert whole["b"].tolist() == ["x\n", "y\r\n"]


@pytest.mark.parametrize("chunksize", [None, 1], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("payload", "words"),
    [
        pytest.param(
            '[{"respondentId": "1", "answers": {"Q1": {"deep": "x"}}}]',
            r"field 'Q1' holds an object inside an object.*record 0",
            id="two-levels",
        ),
        pytest.param(
            "[" + '{"a":' * 600 + "1" + "}" * 600 + "]",
            "holds an object inside an object|nested too deeply|depth limit",
            id="600-levels",
        ),
        pytest.param(
            "[" + '{"a":' * 5000 + "1" + "}" * 5000 + "]",
            "nested too deeply|depth limit",
            id="5000-levels",
        ),
        pytest.param(
            '{"respondentId": "1", "a": ' + "[" * 3000 + "]" * 3000 + "}\n",
            "nested too deeply|depth limit|holds a JSON list",
            id="deep-list-ndjson",
        ),
    ],
)
def test_deep_json_ends_in_a_results_parse_error(
    payload: str, words: str, chunksize: int | None
) -> None:
    """Only ResultsParseError leaves the reader: no internal error, no RecursionError."""
    with pytest.raises(ResultsParseError, match=words):
        _read_all(payload, chunksize)


def _read_all(payload: str, chunksize: int | None) -> None:
    if chunksize is None:
        read_results(payload, format="JSON")
        return
    for _ in read_results(payload, format="JSON", chunksize=chunksize):
        pass
