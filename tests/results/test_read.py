"""read_results: sources, sniffing, headers, empty answers, chunks."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from surveykit import ResultsParseError
from surveykit.results import ResultsNotice, read_results, sniff, write_results
from surveykit.sandbox.generator import generate_results_frame

STRING = pd.StringDtype("pyarrow")
FORMATS = ["CSV", "PIPE", "TAB", "XML", "JSON"]


@pytest.mark.parametrize(
    ("payload", "fmt"),
    [
        (b"a,b\n1,2\n", "CSV"),
        (b"a|b\n1|2\n", "PIPE"),
        (b"a\tb\n1\t2\n", "TAB"),
        (b'"a,x"|b\n1|2\n', "PIPE"),  # a comma inside quotes does not count
        (b"a\n1\n", "CSV"),
        (b"\xef\xbb\xbf<Results/>", "XML"),
        (b"  \n[]", "JSON"),
    ],
    ids=["csv", "pipe", "tab", "quoted-comma", "one-column", "xml-bom", "json"],
)
def test_sniff(payload: bytes, fmt: str) -> None:
    assert sniff(payload.removeprefix(b"\xef\xbb\xbf")) == fmt


@pytest.mark.parametrize(
    "payload",
    [b"\x1f\x8b\x08\x00gzip", b"PK\x03\x04zip", b"\xff\xfe\x00\x00bad", b"<!DOCTYPE html><html>"],
    ids=["gzip", "zip", "not-utf8", "html"],
)
def test_unknown_payload_names_first_bytes(payload: bytes) -> None:
    with pytest.raises(ResultsParseError, match="first bytes"):
        read_results(payload)


@pytest.mark.parametrize(
    ("payload", "fmt"),
    [(b"a,b\n1,2\n", "JSON"), (b"a,b\n1,2\n", "XML"), (b"[]", "XML")],
    ids=["csv-as-json", "csv-as-xml", "json-as-xml"],
)
def test_wrong_format_given(payload: bytes, fmt: str) -> None:
    with pytest.raises(ResultsParseError, match="first bytes") as info:
        read_results(payload, fmt)
    assert info.value.format == fmt
    assert info.value.offset == 0


def test_unknown_format_name() -> None:
    with pytest.raises(ResultsParseError, match="unknown results format"):
        read_results(b"a\n", "XLSX")


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"  \r\n",
        b"No results since 2024-08-07T00:00:00Z",
        b'"No results since yesterday"',
        b"[]",
        b"[\n]\n",
        b"<Results/>",
        b'<?xml version="1.0"?>\n<Results>\n</Results>\n',
    ],
    ids=[
        "empty",
        "blank",
        "no-results-text",
        "no-results-json-string",
        "json-empty",
        "json-empty-lines",
        "xml-empty",
        "xml-empty-decl",
    ],
)
def test_empty_answers(payload: bytes) -> None:
    df = read_results(payload)
    assert df.shape == (0, 0)
    chunks = list(read_results(payload, chunksize=10))
    assert len(chunks) <= 1
    assert all(c.shape == (0, 0) for c in chunks)


@pytest.mark.parametrize("fmt", FORMATS)
def test_header_only_keeps_columns(fmt: str) -> None:
    empty = pd.DataFrame(
        {"respondentId": pd.array([], dtype=STRING), "Q1": pd.array([], dtype=STRING)}
    )
    payload = b"".join(write_results(empty, fmt))
    df = read_results(payload)
    assert len(df) == 0
    if fmt != "JSON":  # a JSON array of no records cannot name columns
        assert list(df.columns) == ["respondentId", "Q1"]


@pytest.mark.parametrize("fmt", ["CSV", "PIPE", "TAB"])
def test_header_false_generated_and_given_names(fmt: str) -> None:
    df = generate_results_frame(20, seed=4)
    with_header = read_results(b"".join(write_results(df, fmt)))
    payload = b"".join(write_results(df, fmt, header=False))
    with pytest.warns(ResultsNotice, match="column_1, column_2"):
        generated = read_results(payload, fmt, header=False)
    assert list(generated.columns) == [f"column_{i}" for i in range(1, 23)]
    named = read_results(payload, fmt, header=False, names=list(df.columns))
    pd.testing.assert_frame_equal(named, with_header)
    # names= with a header replaces the header's names
    renamed = read_results(b"".join(write_results(df, fmt)), names=[f"c{i}" for i in range(22)])
    assert list(renamed.columns) == [f"c{i}" for i in range(22)]


def test_names_count_must_match() -> None:
    with pytest.raises(ResultsParseError, match="2 names given"):
        read_results(b"a,b,c\n1,2,3\n", names=["x", "y"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunksize(fmt: str) -> None:
    df = generate_results_frame(1000, seed=5)
    payload = b"".join(write_results(df, fmt))
    whole = read_results(payload)
    chunks = list(read_results(payload, chunksize=300))
    assert [len(c) for c in chunks] == [300, 300, 300, 100]
    assert [c.index[0] for c in chunks] == [0, 300, 600, 900]
    for chunk in chunks:
        assert list(chunk.dtypes.astype(str)) == list(whole.dtypes.astype(str)) or all(
            isinstance(a, pd.CategoricalDtype) == isinstance(b, pd.CategoricalDtype)
            for a, b in zip(chunk.dtypes, whole.dtypes, strict=True)
        )
    cat = [c for c in whole.columns if isinstance(whole[c].dtype, pd.CategoricalDtype)]
    joined = pd.concat(chunks).astype(dict.fromkeys(cat, STRING))
    pd.testing.assert_frame_equal(joined, whole.astype(dict.fromkeys(cat, STRING)))


def test_chunk_type_decided_on_first_chunk() -> None:
    payload = b"Q1\n" + b"1\n" * 10 + b"N/A\n"
    chunks = read_results(payload, chunksize=5)
    assert next(chunks)["Q1"].dtype == "Int64"
    with pytest.raises(ResultsParseError, match=r"record 10"):
        list(chunks)


def test_duplicate_header_names_refused() -> None:
    with pytest.raises(ResultsParseError, match="duplicate column name"):
        read_results(b"a,a\n1,2\n")


def test_max_bytes() -> None:
    payload = b"a\n" + b"1\n" * 100
    with pytest.raises(ResultsParseError, match="max_bytes"):
        read_results(payload, max_bytes=50)
    with pytest.raises(ResultsParseError, match="max_bytes"):
        read_results(iter([payload[:100], payload[100:]]), max_bytes=150)
    assert len(read_results(payload, max_bytes=1000)) == 100


def test_crlf_records_accepted() -> None:
    df = read_results(b'a,b\r\n1,"x\r\ny"\r\n')
    assert df["b"].tolist() == ["x\r\ny"]


def test_json_tolerates_numbers_booleans_and_absent_keys() -> None:
    df = read_results(b'[{"Q1":7,"Q2":true,"Q3":1.5},{"Q1":"8","Q4":"new"}]')
    assert df["Q1"].tolist() == [7, 8]
    assert df["Q2"].astype(object).tolist() == [True, pd.NA]
    assert df["Q3"].tolist()[0] == 1.5
    assert list(df.columns) == ["Q1", "Q2", "Q3", "Q4"]


def test_xml_without_columns_takes_first_appearance_order() -> None:
    df = read_results(
        b"<Results><Result><b>1</b></Result><Result><a>x</a><b>2</b></Result></Results>"
    )
    assert list(df.columns) == ["b", "a"]
    assert df["a"].astype(object).tolist() == [pd.NA, "x"]


def test_xml_encoded_names_round_trip() -> None:
    names = ["a b", "x:y", "1st", "_x0041_", "Result", "Columns", "é", "😀"]
    df = pd.DataFrame({n: pd.array(["v"], dtype=STRING) for n in names})
    payload = b"".join(write_results(df, "XML"))
    assert b"<_x0052_esult>" in payload and b"<a_x0020_b>" in payload
    assert list(read_results(payload).columns) == names
    # Without <Columns>, names are decoded from the element names.
    bare = payload.replace(
        payload[payload.index(b"<Columns>") : payload.index(b"</Columns>") + 10], b""
    )
    assert list(read_results(bare).columns) == names


def test_xml_cr_written_as_char_ref_and_controls_as_base64() -> None:
    df = pd.DataFrame({"Q1": pd.array(["a\rb", "v\x0bt"], dtype=STRING)})
    payload = b"".join(write_results(df, "XML"))
    assert b"a&#13;b" in payload
    assert b'<Result base64="Q1">' in payload
    assert b"\x0b" not in payload
    assert read_results(payload)["Q1"].tolist() == ["a\rb", "v\x0bt"]


def test_streamed_error_quotes_the_real_first_bytes() -> None:
    payload = b"<Results><Result><a>1</a></Result><Result><a>2</b></Result></Results>"
    pieces = [payload[i : i + 5] for i in range(0, len(payload), 5)]
    with pytest.raises(ResultsParseError) as info:
        read_results(iter(pieces), "XML")
    assert info.value.record == 1
    assert info.value.offset is not None


def _holding(path: Path) -> list[str]:
    """The descriptors and memory maps of this process that still refer to ``path``."""
    target = str(path.resolve())
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == target:
                held.append(f"fd {fd}")
        except OSError:  # closed between listdir and readlink (another thread's socket)
            continue
    with open("/proc/self/maps") as maps:
        held += [line.strip() for line in maps if line.rstrip().endswith(target)]
    return held


@pytest.mark.parametrize("fmt", ["CSV", "TAB", "XML", "JSON"])
def test_a_file_is_read_mapped_and_let_go(fmt: str, tmp_path: Path) -> None:
    from surveykit.results import write_results
    from surveykit.sandbox.generator import generate_results_frame

    df = generate_results_frame(40, seed=5)
    payload = b"".join(write_results(df, fmt))
    path = tmp_path / "results.out"
    path.write_bytes(b"\xef\xbb\xbf" + payload)  # a BOM, as some exports have
    assert _holding(path) == []
    for _ in range(3):
        pd.testing.assert_frame_equal(read_results(path, fmt), read_results(payload, fmt))
        chunks = list(read_results(path, fmt, chunksize=15))
        assert [len(c) for c in chunks] == [15, 15, 10]
    # The file and its mapping are let go each time. Counting all descriptors instead was
    # flaky: a socket of an earlier test closed by the garbage collector changed the count.
    assert _holding(path) == []
    path.write_bytes(b"")
    assert read_results(path, fmt).empty


def test_a_mapped_file_gets_every_predicted_type(tmp_path: Path) -> None:
    from surveykit.results._csv import iter_csv
    from surveykit.results._source import Payload
    from surveykit.results._types import predict_types

    path = tmp_path / "r.csv"
    path.write_bytes(b"Q1,Q2,Q3,Q4\n" + b"a,true,7,2024-08-07T21:51:26Z\nb,false,8,\n" * 5)

    def predict(names: list[str], sample: list[object]) -> dict[int, str]:
        return predict_types(names, sample, dtypes=None, infer=True)  # type: ignore[return-value]

    payload = Payload(path)
    try:
        (chunk,) = iter_csv(
            payload, "CSV", header=True, names=None, streaming=False, predict=predict
        )
    finally:
        payload.close()
    assert chunk.predicted == {0: "category", 1: "boolean", 2: "Int64", 3: "datetime"}
