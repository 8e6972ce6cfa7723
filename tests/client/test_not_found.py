"""A reference that does not exist: the 404 names it and suggests the closest known ones."""

from __future__ import annotations

import difflib

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app
from tests.helpers.sandbox_server import ServedSandbox

runner = CliRunner()
ENV = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""}


def known(sandbox: sk.Sandbox) -> list[str]:
    client = sk.Client.sandbox(sandbox)
    return sorted(client.surveys.results("*")["surveyReference"].dropna().unique())


def closest(reference: str, references: list[str]) -> list[str]:
    """difflib on upper-cased names: the sandbox's references are upper case."""
    return difflib.get_close_matches(reference.upper(), references, n=3, cutoff=0.6)


@pytest.mark.parametrize("typed", ["CSAT-SMS-2062", "csat-sms2026 ", "NPS-WA-Q1"])
def test_results_of_a_mistyped_survey_suggests_the_closest(typed: str) -> None:
    sandbox = sk.Sandbox(seed=2)
    with pytest.raises(sk.NotFoundError) as caught:
        sk.Client.sandbox(sandbox).surveys.results(typed)
    expected = closest(typed.strip(), known(sandbox))
    assert expected  # each typo is close to one of them
    assert list(caught.value.suggestions) == expected
    assert repr(typed) in str(caught.value)  # the reference asked for is named
    assert "id you mean " + " or ".join(map(repr, expected)) + "?" in str(caught.value)


def test_nothing_close_names_the_reference_and_suggests_nothing() -> None:
    with pytest.raises(sk.NotFoundError) as caught:
        sk.Client.sandbox(sk.Sandbox(seed=2)).surveys.results("QUARTERLY-PULSE")
    assert caught.value.suggestions == ()
    assert "'QUARTERLY-PULSE'" in str(caught.value) and "did you mean" not in str(caught.value)


def test_import_into_a_mistyped_reference_suggests_in_the_stop_error() -> None:
    sandbox = sk.Sandbox(seed=2)
    client = sk.Client.sandbox(sandbox)
    with pytest.raises(sk.NotFoundError) as caught:
        client.data.import_records("NPS-WA-Q1-2025", [{"mobileNumber": "447700900001"}])
    assert list(caught.value.suggestions) == closest("NPS-WA-Q1-2025", known(sandbox))
    df = pd.DataFrame({"mobileNumber": ["447911123456"]})
    with pytest.raises(sk.ImportStoppedError, match="Did you mean 'NPS-WA-Q1-2026'"):
        sk.import_frame(client, "NPS-WA-Q1-2025", df, progress=False)


def test_a_live_platform_404_without_a_list_only_names_the_reference() -> None:
    # The v3.2 reference has no endpoint listing surveys; its 404 detail may not say which.
    def platform(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            404, json={"type": "about:blank", "title": "Not Found", "status": 404}
        )

    client = sk.Client("https://api.example.test", "tok", transport=httpx.MockTransport(platform))
    with pytest.raises(sk.NotFoundError) as caught:
        client.surveys.results("CSAT-SMS-2062")
    assert caught.value.suggestions == ()
    assert str(caught.value).endswith(
        "404: Not Found (no survey has the reference 'CSAT-SMS-2062')"
    )


def test_other_404s_are_unchanged() -> None:
    with pytest.raises(sk.NotFoundError) as caught:
        sk.Client.sandbox(sk.Sandbox(seed=2)).keywords.delete("NOPE")
    assert caught.value.suggestions == ()
    assert "did you mean" not in str(caught.value).lower()


def test_a_served_sandbox_lists_its_references_over_http(served: ServedSandbox) -> None:
    client = sk.Client(served.base_url, served.token, max_retries=0)
    with client, pytest.raises(sk.NotFoundError) as caught:
        client.surveys.results("CSAT-SMS-2062")
    body = caught.value.body
    assert "CSAT-SMS-2026" in body["references"]
    assert list(caught.value.suggestions) == closest("CSAT-SMS-2062", body["references"])
    assert caught.value.suggestions[0] == "CSAT-SMS-2026"


def test_cli_results_and_import_print_the_suggestion(tmp_path: object) -> None:
    result = runner.invoke(app, ["results", "CSAT-SMS-2062"], env=ENV)
    assert result.exit_code == 1
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("surveykit: POST ") and "404" in last
    assert "No survey has the reference 'CSAT-SMS-2062'. Did you mean 'CSAT-SMS-2026'?" in last


def test_cli_import_prints_the_suggestion(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    source = Path(str(tmp_path)) / "people.csv"
    source.write_text("Phone\n07911 123001\n", encoding="utf-8")
    result = runner.invoke(app, ["import", "CSAT-SMS-206", str(source), "--region", "GB"], env=ENV)
    assert result.exit_code == 1, result.output
    assert "surveykit: import stopped:" in result.output
    assert "Did you mean 'CSAT-SMS-2026'?" in result.output


def test_cli_results_says_how_many_were_never_invited() -> None:
    frame = sk.Client.sandbox(sk.Sandbox()).surveys.results("*")
    invited = int(frame["invited"].notna().sum())
    never = len(frame) - invited
    assert never > 0  # the sample data holds imported respondents not invited yet
    result = runner.invoke(app, ["results"], env=ENV)
    assert result.exit_code == 0, result.output
    assert (
        f"all surveys: {len(frame)} respondents ({invited} invited, {never} never invited), "
        in result.output
    )
    funnel = sk.analysis.response_funnel(frame, by="surveyReference")
    assert funnel.loc[funnel["stage"] == "invited", "respondents"].sum() == invited
