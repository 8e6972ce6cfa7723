"""Values that must survive exactly: integers beyond 64 bits, ids, empty XML elements."""

from __future__ import annotations

from pathlib import Path

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.results import read_results
from surveykit.results._sync import sync_results

BIG = 18446744073709551617  # 2**64 + 1: orjson reads it as the float 2**64
NEXT = 18446744073709551616  # 2**64


def big_json(layout: str) -> bytes:
    rows = [
        f'{{"respondentId":{BIG},"contactId":{BIG},"Q1":{BIG},"Q2":"7"}}',
        f'{{"respondentId":{NEXT},"contactId":{NEXT},"Q1":-{NEXT},"Q2":"8"}}',
    ]
    if layout == "ndjson":
        return ("\n".join(rows) + "\n").encode()
    return ("[\n" + ",\n".join(rows) + "\n]\n").encode()


@pytest.mark.parametrize("layout", ["array", "ndjson"])
@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_json_integers_beyond_64_bits_keep_their_text(layout: str, chunked: bool) -> None:
    payload = big_json(layout)
    if chunked:
        frame = pd.concat(list(read_results(payload, chunksize=1)))
    else:
        frame = read_results(payload)
    assert frame["respondentId"].tolist() == [str(BIG), str(NEXT)]
    assert frame["contactId"].tolist() == [str(BIG), str(NEXT)]
    assert frame["Q1"].tolist() == [str(BIG), f"-{NEXT}"]  # not an Int64, not a float
    assert str(frame["Q1"].dtype) == "string"
    assert frame["Q2"].tolist() == [7, 8]


def test_big_integers_read_the_same_in_every_format() -> None:
    json_frame = read_results(big_json("array"))
    csv = (
        '"respondentId","contactId","Q1","Q2"\n'
        f'"{BIG}","{BIG}","{BIG}","7"\n"{NEXT}","{NEXT}","-{NEXT}","8"\n'
    ).encode()
    xml = (
        "<Results>"
        f"<Result><respondentId>{BIG}</respondentId><contactId>{BIG}</contactId>"
        f"<Q1>{BIG}</Q1><Q2>7</Q2></Result>"
        f"<Result><respondentId>{NEXT}</respondentId><contactId>{NEXT}</contactId>"
        f"<Q1>-{NEXT}</Q1><Q2>8</Q2></Result>"
        "</Results>"
    ).encode()
    pd.testing.assert_frame_equal(read_results(csv), json_frame)
    pd.testing.assert_frame_equal(read_results(xml), json_frame)


def test_numeric_household_ids_stay_text() -> None:
    # The design's PSU is an id like respondentId: never a number that could round.
    frame = read_results(b'[{"household":17,"baseWeight":2.5},{"household":18,"baseWeight":1.5}]')
    assert frame["household"].tolist() == ["17", "18"]
    assert str(frame["baseWeight"].dtype) == "float64"


def test_sync_keeps_two_respondents_whose_ids_differ_beyond_64_bits(tmp_path: Path) -> None:
    # Before: both ids became 1.8446744073709552e+19 and "fetched 2, added 1".
    payload = big_json("array")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=payload)

    client = sk.Client("https://api.example.test", "t", transport=httpx.MockTransport(handler))
    report = sync_results(client, "S", store=tmp_path, format="JSON")
    assert (report.fetched, report.added, report.total) == (2, 2, 2)
    stored = pd.read_parquet(report.path)
    assert sorted(stored["respondentId"]) == sorted([str(BIG), str(NEXT)])


# --------------------------------------------------------------------------- XML empties

TYPED = {
    "respondentId": ["R1", "R2", "R3"],
    "Q1": ["7", None, "9"],  # Int64
    "Q2": ["1.5", None, "2.25"],  # float64
    "Q3": ["2024-08-07T21:51:26+00:00", None, "2024-08-08T09:00:00+00:00"],  # datetime
    "Q4": ["true", None, "false"],  # boolean
    "Q5": ["a", "", "b"],  # text: the empty string stays
}


def xml_with_empties() -> bytes:
    rows = []
    for i in range(3):
        fields = []
        for name, values in TYPED.items():
            value = values[i]
            fields.append(f"<{name}/>" if value in (None, "") else f"<{name}>{value}</{name}>")
        rows.append("<Result>" + "".join(fields) + "</Result>\n")
    return ("<Results>\n" + "".join(rows) + "</Results>\n").encode()


def csv_with_missing() -> bytes:
    lines = [",".join(f'"{n}"' for n in TYPED)]
    for i in range(3):
        cells = []
        for values in TYPED.values():
            value = values[i]
            cells.append("" if value is None else f'"{value}"')
        lines.append(",".join(cells))
    return ("\n".join(lines) + "\n").encode()


def json_with_null() -> bytes:
    import json

    return json.dumps([{n: v[i] for n, v in TYPED.items()} for i in range(3)]).encode()


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-reader", "lxml-reader"])
def test_an_empty_xml_element_is_missing_in_a_typed_column(bulk: bool) -> None:
    payload = xml_with_empties()
    if not bulk:  # a comment keeps the bulk reader out
        payload = payload.replace(b"<Results>", b"<!-- x --><Results>", 1)
    xml = read_results(payload)
    csv = read_results(csv_with_missing())
    js = read_results(json_with_null())
    pd.testing.assert_frame_equal(xml, csv)
    pd.testing.assert_frame_equal(js, csv)
    assert [str(xml[c].dtype) for c in ("Q1", "Q2", "Q4")] == ["Int64", "float64", "boolean"]
    assert str(xml["Q3"].dtype) == "datetime64[us, UTC]"
    assert xml["Q1"].isna().tolist() == [False, True, False]
    assert xml["Q5"].tolist() == ["a", "", "b"]  # text keeps the empty string


def test_an_empty_xml_element_in_a_column_of_text_stays_empty_text() -> None:
    frame = read_results(b"<Results><Result><Q1/></Result><Result><Q1>x</Q1></Result></Results>")
    assert frame["Q1"].tolist() == ["", "x"]
    frame = read_results(b"<Results><Result><Q1/></Result><Result><Q1/></Result></Results>")
    assert frame["Q1"].tolist() == ["", ""]
