"""The sandbox serves every results layout; the client reads each as the documented one."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

from surveykit.client import Client
from surveykit.results import LAYOUTS, RESPONDENT_COLUMNS
from surveykit.sandbox import Sandbox
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

CASES = [(layout, fmt) for layout, formats in LAYOUTS.items() for fmt in sorted(formats)]
IDS = [f"{layout}-{fmt}" for layout, fmt in CASES]
GENERATED = "GEN-LAYOUTS"


def make_sandbox(layout: str) -> Sandbox:
    sandbox = Sandbox(seed=3, results_layout=layout)
    sandbox.add_generated_survey(GENERATED, rows=300, questions=6, nasty=True)
    return sandbox


@pytest.fixture(scope="module")
def documented() -> dict[str, pd.DataFrame]:
    with Client.sandbox(make_sandbox("documented"), max_retries=0) as client:
        return {ref: client.surveys.results(ref, "CSV") for ref in ("*", GENERATED)}


@pytest.fixture(scope="module")
def raw_documented() -> dict[str, str]:
    with Client.sandbox(make_sandbox("documented"), max_retries=0) as client:
        return {fmt: client.surveys.get_results("*", format=fmt) for fmt in LAYOUTS["bom"]}


@pytest.mark.parametrize(("layout", "fmt"), CASES, ids=IDS)
def test_client_reads_every_layout_as_documented(
    documented: dict[str, pd.DataFrame], raw_documented: dict[str, str], layout: str, fmt: str
) -> None:
    with Client.sandbox(make_sandbox(layout), max_retries=0) as client:
        for ref, expected in documented.items():
            got = client.surveys.results(ref, fmt)
            pd.testing.assert_frame_equal(got, expected, obj=f"{layout} {fmt} {ref}")
        raw = client.surveys.get_results("*", format=fmt)
        assert (raw == raw_documented[fmt]) == (layout == "documented")


@pytest.mark.parametrize("layout", ["documented", "crlf", "trailing-delimiter", "bom"])
@pytest.mark.parametrize("fmt", ["CSV", "PIPE", "TAB"])
def test_headerless_answers_read_with_names(
    documented: dict[str, pd.DataFrame], layout: str, fmt: str
) -> None:
    expected = documented[GENERATED]
    with Client.sandbox(make_sandbox(layout), max_retries=0) as client:
        got = client.surveys.results(GENERATED, fmt, header=False, names=list(expected.columns))
    pd.testing.assert_frame_equal(got, expected)


def test_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown results layout 'soap'"):
        Sandbox(results_layout="soap")


@pytest.fixture(scope="module", params=["aspnet", "ndjson", "trailing-delimiter"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, ServedSandbox]]:
    with serve_sandbox("--results-layout", request.param) as server:
        yield request.param, server


def test_served_sandbox_answers_in_its_layout(served: tuple[str, ServedSandbox]) -> None:
    layout, server = served
    with Client.sandbox(Sandbox(), max_retries=0) as plain:  # what serve holds by default
        expected = plain.surveys.results("*", "CSV")
    with Client(server.base_url, server.token, max_retries=0) as client:
        for fmt in sorted(LAYOUTS[layout]):
            raw = client.surveys.get_results("*", format=fmt)
            marker = {"aspnet": "<ArrayOfSurveyResult", "ndjson": "}\n{"}.get(layout, ",\n")
            assert marker in raw
            got = client.surveys.results("*", fmt)
            assert list(got.columns[: len(RESPONDENT_COLUMNS)]) == list(RESPONDENT_COLUMNS)
            pd.testing.assert_frame_equal(got, expected)


def test_serve_refuses_an_unknown_layout() -> None:
    with pytest.raises(RuntimeError), serve_sandbox("--results-layout", "soap"):
        pass
