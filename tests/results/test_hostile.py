"""Hostile results in bounded memory: a small payload cannot make the readers build a
huge table, and every refusal is a ResultsParseError naming the shape.

Each probe runs in a child process whose address space is limited (``RLIMIT_AS``), so a
reader that tries to build the table fails with a ``MemoryError`` there instead of
taking the machine's memory; the child reports what came out and its peak memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import surveykit

SRC = str(Path(surveykit.__file__).resolve().parents[1])
# Enough for the interpreter, pandas, pyarrow and lxml with room to work; far below
# what the tables these payloads name would take (gigabytes).
LIMIT_MB = 900

CHILD = """
import gc, json, resource, sys
limit = {limit} << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from surveykit import ResultsParseError
from surveykit.results import read_results
read_results(b"a,b\\n1,2\\n")
read_results(b'[{{"a":"1"}}]')
read_results(b"<R><r><a>1</a></r></R>")
{make}
gc.collect()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
base = rss()
try:  # Linux: reset the peak (VmHWM) to what the process holds now
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
try:
    frame = read_results(payload, **{kwargs})
    if not hasattr(frame, "shape"):
        frame = list(frame)
    out = {{"outcome": "frame"}}
    if hasattr(frame, "shape"):
        out["frame"] = int(frame.memory_usage(deep=True).sum())
except ResultsParseError as exc:
    out = {{"outcome": "ResultsParseError", "message": str(exc)}}
except BaseException as exc:
    out = {{"outcome": type(exc).__name__, "message": str(exc)[:300]}}
out.update(payload=len(payload), growth=peak() - base)
print(json.dumps(out))
"""


def probe(make: str, limit_mb: int = LIMIT_MB, **kwargs: object) -> dict[str, object]:
    """Read the payload ``make`` builds (as ``payload``) in a memory-limited child."""
    code = CHILD.format(limit=limit_mb, make=textwrap.dedent(make), kwargs=repr(kwargs))
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    lines = done.stdout.strip().splitlines()
    assert lines, f"the child died: {done.stderr[-2000:]}"
    result: dict[str, object] = json.loads(lines[-1])
    return result


SPARSE_JSON = """
n = 25_000
payload = ("[\\n" + ",\\n".join('{"field%d":"1"}' % i for i in range(n)) + "\\n]\\n").encode()
"""
SPARSE_XML = """
n = 25_000
rows = "".join("<Result><field%d>1</field%d></Result>\\n" % (i, i) for i in range(n))
head = '<?xml version="1.0" encoding="UTF-8"?>\\n<Results>\\n'
payload = (head + rows + "</Results>\\n").encode()
"""
# A comment keeps the bulk XML reader out: lxml's pull parser reads it.
SPARSE_XML_LXML = (
    SPARSE_XML
    + """
payload = payload.replace(b"<Results>", b"<!-- x --><Results>", 1)
"""
)
MILLION_KEYS = """
payload = ("[{" + ",".join('"k%d":"1"' % i for i in range(1_000_000)) + "}]\\n").encode()
"""


def unclosed(megabytes: int) -> str:
    return f"""
payload = b'a,b\\n1,2\\n3,"' + (b"x" * 99 + b"\\n") * ({megabytes} * 10_486)
"""


@pytest.mark.parametrize(
    ("make", "kwargs"),
    [
        pytest.param(SPARSE_JSON, {}, id="json-25k-records-each-a-new-field"),
        pytest.param(SPARSE_JSON, {"chunksize": 1000}, id="json-sparse-chunked"),
        pytest.param(SPARSE_XML, {}, id="xml-bulk-25k-records-each-a-new-field"),
        pytest.param(SPARSE_XML_LXML, {}, id="xml-lxml-25k-records-each-a-new-field"),
        pytest.param(SPARSE_XML_LXML, {"chunksize": 1000}, id="xml-lxml-sparse-chunked"),
    ],
)
def test_a_sparse_payload_is_refused_naming_its_shape(make: str, kwargs: dict[str, int]) -> None:
    # 25,000 records each naming a field no other record has: 25,000 x 25,000 cells
    # from under a megabyte. Before the budget: MemoryError (3.6 GB for JSON, a 4.66 GiB
    # numpy array for XML).
    out = probe(make, **kwargs)
    assert out["outcome"] == "ResultsParseError", out
    message = str(out["message"])
    assert "rows x" in message and "columns" in message and "shape budget" in message
    assert int(out["growth"]) < 200 << 20, out  # type: ignore[call-overload]


def test_a_million_keys_are_refused_as_too_many_columns() -> None:
    # 13 MB: before, 48 s and 2.9 GB for a frame of one row and a million columns.
    out = probe(MILLION_KEYS, limit_mb=1500)  # orjson reserves address space by the payload
    assert out["outcome"] == "ResultsParseError", out
    assert "more than 100,000 columns" in str(out["message"])


def test_a_csv_header_of_200_000_columns_is_refused() -> None:
    out = probe('payload = ",".join(f"c{i}" for i in range(200_000)).encode() + b"\\n"')
    assert out["outcome"] == "ResultsParseError", out
    assert "more than 100,000 columns (200,000 found)" in str(out["message"])


@pytest.mark.parametrize("megabytes", [10, 20])
def test_an_unclosed_quote_is_refused_where_it_opened(megabytes: int) -> None:
    # Before: 1.36 GB at 10 MB (a backtracking regular expression), MemoryError at 20 MB.
    out = probe(unclosed(megabytes))
    assert out["outcome"] == "ResultsParseError", out
    message = str(out["message"])
    assert "unterminated quoted field" in message
    assert "line 3" in message and "byte offset 10" in message  # where the quote opened
    assert int(out["growth"]) < 8 * int(out["payload"]) + (64 << 20), out  # type: ignore[call-overload]


#: docs/reliability.md: peak memory while reading stays within this multiple of the
#: payload plus the frame returned (measured: 2.3x to 6.1x at 60,000 rows),
MULTIPLE = 8
#: give or take what a fresh process's first large read allocates once (thread pools,
#: arrow's memory pool).
SLACK = 48 << 20

LAYOUTS = [
    ("CSV", "documented"),
    ("XML", "documented"),
    ("XML", "aspnet"),
    ("JSON", "documented"),
    ("JSON", "nested"),
]


@pytest.mark.parametrize(("fmt", "layout"), LAYOUTS, ids=[f"{f}-{lay}" for f, lay in LAYOUTS])
def test_peak_memory_is_within_the_stated_multiple(fmt: str, layout: str) -> None:
    make = f"""
        from surveykit.results import write_results
        from surveykit.sandbox.generator import generate_results_frame
        table = generate_results_frame(30_000, seed=1, questions=10)
        payload = b"".join(write_results(table, "{fmt}", layout="{layout}"))
        del table
        """
    out = probe(make, limit_mb=2000)
    assert out["outcome"] == "frame", out
    payload, frame, growth = (int(out[k]) for k in ("payload", "frame", "growth"))  # type: ignore[call-overload]
    assert growth <= MULTIPLE * (payload + frame) + SLACK, out
