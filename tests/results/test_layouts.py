"""Every layout a platform may send gives the same typed frame as the documented layout.

For each layout, the same results are written in the documented layout and in the variant,
and the two frames read back must be equal (whole, streamed, and in chunks).
"""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from surveykit import ResultsParseError
from surveykit.results import LAYOUTS, ResultsNotice, read_results, sniff, write_results
from surveykit.results._json_keys import count_keys as _count_keys
from surveykit.results._json_keys import key_count as _key_count
from surveykit.sandbox.generator import generate_results_frame
from tests.helpers.results_strategies import tables

CASES = [
    (layout, fmt)
    for layout, formats in LAYOUTS.items()
    if layout != "documented"
    for fmt in sorted(formats)
]
IDS = [f"{layout}-{fmt}" for layout, fmt in CASES]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def encode(df: pd.DataFrame, fmt: str, **kw: object) -> bytes:
    return b"".join(write_results(df, fmt, **kw))  # type: ignore[arg-type]


def decategorize(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype(
        {c: pd.StringDtype("pyarrow") for c in df.columns if df[c].dtype == "category"}
    )


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return generate_results_frame(80, seed=5)


@pytest.mark.parametrize(("layout", "fmt"), CASES, ids=IDS)
def test_layout_reads_as_the_documented_one(results: pd.DataFrame, layout: str, fmt: str) -> None:
    documented = read_results(encode(results, fmt))
    payload = encode(results, fmt, layout=layout)
    assert payload != encode(results, fmt)
    assert sniff(payload[:4096].removeprefix(b"\xef\xbb\xbf")) == fmt
    pd.testing.assert_frame_equal(read_results(payload), documented)
    pd.testing.assert_frame_equal(read_results(payload, fmt), documented)
    pieces = (payload[i : i + 997] for i in range(0, len(payload), 997))
    pd.testing.assert_frame_equal(read_results(pieces, fmt), documented)
    pieces = (payload[i : i + 997] for i in range(0, len(payload), 997))
    chunks = list(read_results(pieces, fmt, chunksize=30, dtypes=dict(documented.dtypes)))
    assert [len(c) for c in chunks] == [30, 30, 20]
    pd.testing.assert_frame_equal(
        decategorize(pd.concat(chunks, ignore_index=True)), decategorize(documented)
    )


@pytest.mark.parametrize("layout", ["documented", "crlf", "trailing-delimiter", "bom"])
@pytest.mark.parametrize("fmt", ["CSV", "PIPE", "TAB"])
def test_headerless_layouts_read_with_names(results: pd.DataFrame, layout: str, fmt: str) -> None:
    documented = read_results(encode(results, fmt))
    payload = encode(results, fmt, layout=layout, header=False)
    names = list(results.columns)
    pd.testing.assert_frame_equal(read_results(payload, fmt, header=False, names=names), documented)
    codebook = [{"name": n, "label": f"label of {n}"} for n in names]
    pd.testing.assert_frame_equal(
        read_results(payload, fmt, header=False, names=codebook), documented
    )
    objects = [SimpleNamespace(key=n) for n in names]
    frame = pd.DataFrame({"column": names})
    for given_names in (objects, frame):
        back = read_results(payload, fmt, header=False, names=given_names)
        pd.testing.assert_frame_equal(back, documented)
    if layout != "trailing-delimiter":
        with pytest.warns(ResultsNotice, match="column_1"):
            anonymous = read_results(payload, fmt, header=False)
        expected = documented.set_axis([f"column_{i + 1}" for i in range(len(names))], axis=1)
        # Types follow the names (ids stay text): compare the text.
        assert anonymous.astype(str).equals(expected.astype(str))


@SETTINGS
@given(df=tables(), case=st.sampled_from(CASES))
def test_any_table_reads_the_same_in_every_layout(df: pd.DataFrame, case: tuple[str, str]) -> None:
    layout, fmt = case
    assume(len(df) > 0)
    documented = read_results(encode(df, fmt))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        variant = read_results(encode(df, fmt, layout=layout))
    pd.testing.assert_frame_equal(variant, documented)


# ----------------------------------------------------------------------------- XML


XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'


@pytest.mark.parametrize(
    "payload",
    [
        b"<results><result><Q1>7</Q1><Q2/></result><result><Q1>8</Q1></result></results>",
        f"<ArrayOfX {XSI}><X><Q1>7</Q1><Q2/></X><X><Q1>8</Q1><Q2 xsi:nil='true'/></X>"
        "</ArrayOfX>".encode(),
        b'<r xmlns="urn:a"><x><Q1>7</Q1><Q2></Q2></x><x><Q1>8</Q1></x></r>',
        b'<r><x Q1="7" Q2=""/><x Q1="8"/></r>',
        b'<r><x Q1="7"><Q2/></x><x Q1="8"/></r>',
        b"\xef\xbb\xbf<r><Columns><Column>Q1</Column></Columns><x><Q1>7</Q1><Q2/></x>"
        b"<x><Q1>8</Q1></x></r>",
    ],
    ids=["lower-case", "aspnet-nil", "default-namespace", "attributes", "mixed", "extra-element"],
)
def test_xml_layouts(payload: bytes) -> None:
    df = read_results(payload)
    expected = pd.DataFrame(
        {"Q1": pd.array([7, 8], dtype="Int64"), "Q2": pd.array(["", None], dtype="string[pyarrow]")}
    )
    pd.testing.assert_frame_equal(df, expected)


@pytest.mark.parametrize(
    "payload",
    [
        b'<!DOCTYPE r [<!ENTITY e "x">]><r><x><a>&e;</a></x></r>',
        f'<ArrayOfX {XSI}><!DOCTYPE x SYSTEM "file:///etc/passwd"><X/></ArrayOfX>'.encode(),
    ],
    ids=["entity", "doctype-inside"],
)
def test_xml_declarations_stay_refused(payload: bytes) -> None:
    with pytest.raises(ResultsParseError, match="DOCTYPE"):
        read_results(payload, "XML")


def test_xml_root_holding_text_is_not_a_record() -> None:
    with pytest.raises(ResultsParseError, match="holds text"):
        read_results(b"<Result><a>1</a></Result>")


# ----------------------------------------------------------------------------- JSON


@pytest.mark.parametrize(
    "payload",
    [
        b'[{"Q1":"7","Q2":true},{"Q1":8,"Q2":"false"}]',
        b'{"results":[{"Q1":"7","Q2":true},{"Q1":8,"Q2":"false"}]}',
        b'{"data":[{"Q1":7,"Q2":true},{"Q1":"8","Q2":false}],"total":2,"page":{"n":1}}',
        b'{"Q1":"7","Q2":true}\n\n{"Q1":8,"Q2":false}\n',
        b'[{"answers":{"Q1":"7","Q2":"true"}},{"answers":{"Q1":8,"Q2":false}}]',
        b'[\n  {\n    "Q1" : 7,\n    "Q2": true\n  },\n  {"Q1": 8, "Q2": false}\n]',
    ],
    ids=["array", "wrapped-results", "wrapped-data", "ndjson", "nested", "pretty"],
)
def test_json_layouts(payload: bytes) -> None:
    expected = pd.DataFrame(
        {"Q1": pd.array([7, 8], dtype="Int64"), "Q2": pd.array([True, False], dtype="boolean")}
    )
    pd.testing.assert_frame_equal(read_results(payload), expected)
    pd.testing.assert_frame_equal(
        pd.concat(list(read_results(payload, chunksize=1)), ignore_index=True), expected
    )


@pytest.mark.parametrize(
    ("payload", "record", "key"),
    [
        (b'[{"a":"1","b":"2"},{"a":"1","b":"2","a":"3"}]', 1, "a"),
        (b'[{"a":"1"},\n{"a":"2"},\n{"b":"1","b":"2"}\n]', 2, "b"),
        (b'{"a":"1"}\n{"a":"2","a":"2"}\n', 1, "a"),
        (b'{"data":[{"a":"1","a":"2"}],"total":1}', 0, "a"),
        (b'[{"id":"1","answers":{"Q1":"7","Q1":"8"}}]', 0, "Q1"),
        (b'[{"Q1":"1","answers":{"Q1":"7"}}]', 0, "Q1"),
        (b'[{"a\\"":"1","a\\"":"2"}]', 0, 'a"'),
        (b'[{"a" :"1","a":"2"}]', 0, "a"),
        (b'[{"a"  :"1", "b":"x\\":", "a":"2"}]', 0, "a"),
    ],
    ids=[
        "array",
        "one-per-line",
        "ndjson",
        "wrapped",
        "nested",
        "nested-and-top",
        "escaped-quote",
        "space",
        "spaces-and-colon-in-value",
    ],
)
@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_json_repeated_key_is_an_error(
    payload: bytes, record: int, key: str, chunked: bool
) -> None:
    def read() -> object:
        result = read_results(payload, "JSON", chunksize=1 if chunked else None)
        return list(result) if chunked else result

    with pytest.raises(ResultsParseError) as info:
        read()
    assert info.value.record == record
    assert repr(key) in str(info.value)


def test_json_text_like_keys_are_not_repeated_keys() -> None:
    payload = b'[{"a":"x\\":y","b":"\\\\","c":"\\\\\\":"}]'
    assert list(read_results(payload).columns) == ["a", "b", "c"]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(alphabet='a":\\ \n{}'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='a":\\ \n', max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@SETTINGS
@given(value=JSON_VALUES, indent=st.booleans())
def test_key_count_matches_the_parsed_keys(value: object, indent: bool) -> None:
    raw = json.dumps(value, indent=2 if indent else None).encode()
    counted = _key_count(raw)
    parsed = _count_keys(orjson.loads(raw))
    # Never fewer (a repeated key would hide); more only for text starting with ":".
    assert counted is None or counted >= parsed


def test_key_count_is_exact_on_written_results(results: pd.DataFrame) -> None:
    for layout in ("documented", "typed", "nested", "wrapped", "ndjson"):
        raw = encode(results, "JSON", layout=layout)
        if layout == "ndjson":
            raw = b"[" + b",".join(raw.splitlines()) + b"]"
        assert _key_count(raw) == _count_keys(orjson.loads(raw))


# ----------------------------------------------------------------------------- CSV


def test_field_of_50_megabytes() -> None:
    big = "x\n" * (25 << 20)
    df = pd.DataFrame({"respondentId": ["R1", "R2", "R3"], "Q1": ["a", big, "b"]})
    payload = encode(df, "CSV")
    expected = df.astype("string[pyarrow]")
    pd.testing.assert_frame_equal(read_results(payload), expected)
    pieces = (payload[i : i + (1 << 20)] for i in range(0, len(payload), 1 << 20))
    pd.testing.assert_frame_equal(read_results(pieces, "CSV"), expected)
    pieces = (payload[i : i + (1 << 20)] for i in range(0, len(payload), 1 << 20))
    with pytest.raises(ResultsParseError, match="too long to read in chunks"):
        list(read_results(pieces, "CSV", chunksize=2))


def test_trailing_delimiter_with_a_value_is_an_error() -> None:
    with pytest.raises(ResultsParseError, match="without a name"):
        read_results(b"a,b,\n1,2,\n3,4,5\n")


@pytest.mark.parametrize(
    ("payload", "offset"),
    [
        (b"a,b\n1,x\xff\n", 7),
        (b"<r><x><a>1</a><b>\xff</b></x></r>", 17),
        (b'[{"a":"1"},\n{"a":"\xc3("}]', 18),
        (b'{"a":"1"}\n{"a":"\xff"}\n', 16),
    ],
    ids=["CSV", "XML", "JSON", "NDJSON"],
)
def test_invalid_utf8_names_its_byte_offset(payload: bytes, offset: int) -> None:
    with pytest.raises(ResultsParseError) as info:
        read_results(payload)
    assert info.value.offset == offset
    assert str(info.value).count("(format") == 1


@pytest.mark.parametrize("fmt", ["CSV", "XML", "JSON"])
def test_encoding_reads_other_encodings(results: pd.DataFrame, fmt: str) -> None:
    df = pd.DataFrame({"respondentId": ["R1", "R2"], "Q1": ["né", "façade"]})
    text = encode(df, fmt).decode()
    expected = read_results(text)
    payload = text.encode("cp1252")
    with pytest.raises(ResultsParseError):
        read_results(payload, fmt)
    pd.testing.assert_frame_equal(read_results(payload, fmt, encoding="cp1252"), expected)
    pieces = iter([payload[:13], payload[13:]])
    pd.testing.assert_frame_equal(read_results(pieces, fmt, encoding="cp1252"), expected)


@pytest.mark.parametrize(
    "payload",
    [
        b"<Results><Result><a>1</a><a>2</a></Result></Results>",
        b"<Results><Result><a><b/></a></Result></Results>",
        b"<Results><Result><a>1</a></Result><Junk/></Results>",
        b"<Results><Result><a>1</Result></Results>",
        b'[{"a":"1","a":"2"}]',
        b'[{"a":[1]}]',
        b"a,b\n1,2,3\n",
        b"\x1f\x8b\x08",
    ],
)
def test_error_location_is_said_once(payload: bytes) -> None:
    with pytest.raises(ResultsParseError) as info:
        read_results(payload)
    assert str(info.value).count("(format") == 1
    assert str(info.value).endswith(")")


# ------------------------------------------------------------------- wide payloads


WIDE = [("documented", f) for f in sorted(LAYOUTS["bom"])] + [
    ("aspnet", "XML"),
    ("attributes", "XML"),
    ("nested", "JSON"),
    ("trailing-delimiter", "CSV"),
]


@pytest.mark.parametrize(("layout", "fmt"), WIDE, ids=[f"{a}-{b}" for a, b in WIDE])
def test_many_columns_few_rows_read_correctly(layout: str, fmt: str) -> None:
    """1,000 columns x 2 rows (bench_wide.py runs 100,000): every column typed right."""
    pairs = [("7", "8"), ("x", None), ("true", "false"), ("a", "a"), ("1.5", "")]
    text = {f"Q{i}": list(pairs[i % len(pairs)]) for i in range(1000)}
    payload = encode(pd.DataFrame(text, dtype="string[pyarrow]"), fmt, layout=layout)
    df = read_results(payload)
    assert list(df.columns) == list(text)
    for i, name in enumerate(df.columns):
        values = text[name]
        kind = i % len(pairs)
        if kind == 0:
            expected = pd.array([int(v) for v in values], dtype="Int64")
        elif kind == 2:
            expected = pd.array([v == "true" for v in values], dtype="boolean")
        elif kind == 3:
            expected = pd.Categorical(values, categories=pd.Index(["a"], dtype="string[pyarrow]"))
        elif kind == 1:
            expected = pd.array(values, dtype="string[pyarrow]")
        else:  # "1.5" beside "": a float column, the empty value missing
            assert str(df[name].dtype) == "float64"
            assert df[name].tolist()[0] == 1.5 and pd.isna(df[name].tolist()[1])
            continue
        pd.testing.assert_extension_array_equal(df[name].array, pd.array(expected))


@pytest.mark.parametrize("fmt", ["CSV", "XML", "JSON"])
def test_encoding_errors_name_their_offset(fmt: str) -> None:
    text = {"CSV": "a,b\n1,2\n", "XML": "<r><x><a>1</a></x></r>", "JSON": '[{"a":"1"}]'}[fmt]
    payload = text.encode("utf-16-le")
    with pytest.raises(ResultsParseError) as info:
        read_results(iter([payload, b"\x00\xd8"]), fmt, encoding="utf-16-le")
    assert info.value.offset == len(payload)
    with pytest.raises(ResultsParseError) as info:
        read_results(text.encode() + b"\xff", fmt, encoding="ascii")
    assert info.value.offset == len(text)
