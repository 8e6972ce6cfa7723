"""The sandbox's surveys carry codebooks: in-process and over the served sandbox's HTTP."""

from __future__ import annotations

import httpx
import pytest

import surveykit as sk
from surveykit.report import Codebook
from surveykit.sandbox import generator
from surveykit.sandbox.data._seed import SURVEY_FILES, load_sample_data
from tests.helpers.sandbox_server import ServedSandbox

SAMPLE_REFERENCES = [s.reference for s in load_sample_data().surveys]


def test_every_sample_survey_has_a_codebook_its_results_fit(client: sk.Client) -> None:
    assert len(SAMPLE_REFERENCES) == len(SURVEY_FILES)
    for reference in SAMPLE_REFERENCES:
        cb = client.embedded.codebook(reference)  # type: ignore[union-attr]
        survey = client.embedded.state.find_survey(reference)  # type: ignore[union-attr]
        assert survey is not None
        assert [(q.key, q.text) for q in cb.values()] == [
            (q.key, q.text) for q in survey.questions
        ]
        for question in survey.questions:
            if question.kind == "choice":
                assert list(cb[question.key].labels) == question.choices
        # every answer of the sample data is known to the codebook
        sk.label(client.surveys.results(reference), cb)


def test_rating_labels_follow_the_wording(sandbox: sk.Sandbox) -> None:
    csat = sandbox.codebook("CSAT-SMS-2026")["Q1"]
    assert (csat.kind, csat.min, csat.max) == ("rating", 1, 5)
    assert list(csat.labels.values()) == ["Very unhappy", "Unhappy", "Neither happy nor unhappy",
                                          "Happy", "Very happy"]
    event = sandbox.codebook("evt-ddlis-2026")  # letter case ignored, as the platform does
    assert list(event["Q1"].labels.values())[::4] == ["Poor", "Excellent"]
    nps = sandbox.codebook("NPS-WA-Q1-2026")["Q1"]
    assert nps.kind == "nps" and nps.labels == {"0": "Not at all likely",
                                                "10": "Extremely likely"}
    assert sandbox.codebook("CSAT-SMS-2026")["Q3"].missing["N/A"] == "No answer (typed 'N/A')"


def test_simulated_answers_fit_the_codebook(sandbox: sk.Sandbox, client: sk.Client) -> None:
    for _ in range(3):
        sandbox.simulate_answers("CSAT-SMS-2026")
    df = client.surveys.results("CSAT-SMS-2026")
    out = sk.label(df, sandbox.codebook("CSAT-SMS-2026"))
    assert out["Q1"].notna().sum() == df["Q1"].notna().sum()


@pytest.mark.parametrize("nasty", [False, True], ids=["plain", "nasty"])
def test_generated_surveys_have_codebooks(sandbox: sk.Sandbox, client: sk.Client,
                                          nasty: bool) -> None:
    sandbox.add_generated_survey("GEN-CB", 3000, questions=8, nasty=nasty)
    cb = sandbox.codebook("GEN-CB")
    assert [q.kind for q in cb.values()] == ["nps", "choice", "multi", "text"] * 2
    assert cb["Q3"].labels == {o: o for o in generator.MULTI}
    assert cb["Q2"].missing["Prefer not to say"] == "Prefer not to say"
    df = client.surveys.results("GEN-CB")
    out = sk.label(df, cb)  # raises if the generator draws an answer the codebook lacks
    declined = df["Q2"].astype("string") == "Prefer not to say"
    reasons = out.attrs["missing_reasons"]["Q2"]
    assert sum(r == "Prefer not to say" for r in reasons.values()) == int(declined.sum())
    assert set(out["Q2"].cat.categories) == {"Yes", "No", "Not sure"}
    if nasty:
        typed = df["Q2"].astype("string").isin(list(generator.NA_ANSWERS))
        assert len(reasons) == int((declined | typed).sum())


def test_unknown_reference(sandbox: sk.Sandbox) -> None:
    with pytest.raises(KeyError, match="no survey with the reference 'NOPE'"):
        sandbox.codebook("NOPE")


def get(served: ServedSandbox, path: str) -> httpx.Response:
    return httpx.get(served.base_url + path, timeout=30,
                     headers={"Authorization": f"Basic {served.token}"})


def test_served_codebook_route(served: ServedSandbox) -> None:
    response = get(served, "/_sandbox/surveys/CSAT-SMS-2026/codebook")
    assert response.status_code == 200
    cb = Codebook.from_dict(response.json())
    assert cb == sk.Sandbox().codebook("CSAT-SMS-2026")


def test_served_codebook_route_404_names_the_reference(served: ServedSandbox) -> None:
    response = get(served, "/_sandbox/surveys/NO-SUCH-SURVEY/codebook")
    assert response.status_code == 404
    assert "'NO-SUCH-SURVEY'" in response.json()["detail"]


def test_served_codebook_route_needs_the_token(served: ServedSandbox) -> None:
    response = httpx.get(served.base_url + "/_sandbox/surveys/CSAT-SMS-2026/codebook", timeout=30)
    assert response.status_code == 401
