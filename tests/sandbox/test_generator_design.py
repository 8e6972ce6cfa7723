"""Generated panels (``design=True``): strata, households and base weights, drawn as documented."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

import surveykit as sk
from surveykit.results import DESIGN_COLUMNS, LAYOUTS, RESPONDENT_COLUMNS, split_columns
from surveykit.sandbox import generator
from surveykit.sandbox.generator import generate_results, generate_results_frame

POPULATION = {
    "Capital": 3_241_517,
    "North": 2_104_283,
    "South": 1_796_441,
    "East": 903_127,
    "Islands": 391_609,
}
"""The documented populations, written out here rather than read from the module."""
SAMPLE_SHARE = {"Capital": 0.28, "North": 0.22, "South": 0.20, "East": 0.16, "Islands": 0.14}


def _panel(rows: int = 6_000, **kwargs: object) -> pd.DataFrame:
    options: dict[str, object] = {"seed": 11, "questions": 4, "nasty": False, "wave": 1}
    options.update(kwargs)
    return generate_results_frame(rows, design=True, **options)  # type: ignore[arg-type]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(
        Q1=pd.to_numeric(frame["Q1"]),
        baseWeight=pd.to_numeric(frame["baseWeight"]),
        Q2=frame["Q2"].replace({"Prefer not to say": None}),
    )


def test_same_seed_same_panel_and_another_seed_another() -> None:
    pd.testing.assert_frame_equal(_panel(), _panel())
    other = _panel(seed=12)
    assert not other["household"].equals(_panel()["household"])
    assert not other["region"].equals(_panel()["region"])


@pytest.mark.parametrize(
    ("wave", "nasty", "questions"),
    [
        pytest.param(0, True, 10, id="uniform-nasty"),
        pytest.param(1, False, 4, id="wave-1"),
        pytest.param(2, True, 6, id="wave-2-nasty"),
    ],
)
def test_every_other_column_keeps_its_values(wave: int, nasty: bool, questions: int) -> None:
    plain = generate_results_frame(3_000, seed=3, questions=questions, nasty=nasty, wave=wave)
    panel = generate_results_frame(
        3_000, seed=3, questions=questions, nasty=nasty, wave=wave, design=True
    )
    pd.testing.assert_frame_equal(panel.drop(columns=list(DESIGN_COLUMNS)), plain)
    # The design columns come after the respondent fields, before the answers.
    at = len(RESPONDENT_COLUMNS)
    assert list(panel.columns[at : at + 3]) == list(DESIGN_COLUMNS)


def test_households_are_nested_in_regions_and_hold_one_to_four() -> None:
    frame = _panel(12_000)
    assert set(frame["region"]) == set(generator.REGIONS)
    assert frame.groupby("household")["region"].nunique().max() == 1
    sizes = frame.groupby("household").size()
    assert sizes.between(1, 4).all()
    assert set(sizes) == {1, 2, 3, 4}
    # A household is named after its first respondent's row.
    first = frame.reset_index().groupby("household")["index"].min()
    assert all(h == f"H{i:09d}" for h, i in first.items())


def test_households_stay_nested_across_blocks_and_chunks() -> None:
    rows = 55_000  # two of the generator's blocks
    frame = pd.concat(
        list(
            generate_results(rows, seed=2, questions=2, nasty=False, design=True, chunk_rows=20_000)
        )
    )
    whole = generate_results_frame(rows, seed=2, questions=2, nasty=False, design=True)
    pd.testing.assert_frame_equal(frame, whole)
    assert frame.groupby("household")["region"].nunique().max() == 1
    assert frame.groupby("household").size().max() <= 4


def test_base_weights_are_the_inverse_selection_probability_of_the_region() -> None:
    rows = 6_000
    frame = _typed(_panel(rows))
    weights = frame.groupby("region")["baseWeight"]
    assert (frame["baseWeight"] > 0).all()
    assert (weights.nunique() == 1).all()  # one selection probability per stratum
    per_region = weights.first()
    for region, weight in per_region.items():
        expected = POPULATION[str(region)] / (rows * SAMPLE_SHARE[str(region)])
        assert weight == pytest.approx(expected, abs=0.005)
    assert (per_region != per_region.round()).all()  # not counts
    # The small regions are oversampled, so they weigh less.
    assert per_region["Islands"] < per_region["East"] < per_region["North"]
    assert per_region["Capital"] == per_region.max()
    # The weights add up to the population, within the sampling error of the regions' sizes.
    assert frame["baseWeight"].sum() == pytest.approx(sum(POPULATION.values()), rel=0.05)


def test_the_channel_mix_differs_by_region() -> None:
    frame = _panel(12_000)
    table = pd.crosstab(frame["region"], frame["channel"])
    assert stats.chi2_contingency(table).pvalue < 1e-6
    shares = table.div(table.sum(axis=1), axis=0)
    assert shares.loc["Capital", "WhatsApp"] > shares.loc["Islands", "WhatsApp"]
    assert shares.loc["Islands", "SMS"] > shares.loc["Capital", "SMS"]


def test_members_of_a_household_answer_alike() -> None:
    frame = _typed(_panel(6_000))
    clustered = sk.Design(frame, strata="region", psu="household")
    for estimate in (
        sk.analysis.means(clustered, "Q1"),
        sk.analysis.nps(clustered, "Q1"),
        sk.analysis.proportions(clustered, "Q2").query("option == 'Yes'"),
    ):
        assert estimate["deff"].iloc[0] > 1.2
    # Without the households, the same respondents show no such effect.
    alone = sk.analysis.means(sk.Design(frame, strata="region"), "Q1")
    assert alone["deff"].iloc[0] < 1.05
    # A one-way ANOVA of the ratings by household: far more between-household variation
    # than chance gives.
    rated = frame.dropna(subset=["Q1"])
    groups = [g.to_numpy(float) for _, g in rated.groupby("household")["Q1"] if len(g) > 1]
    assert stats.f_oneway(*groups).pvalue < 1e-6


def test_design_columns_are_respondent_fields_not_questions() -> None:
    frame = _panel(2_000)
    respondent, questions = split_columns(list(frame.columns))
    assert set(DESIGN_COLUMNS) <= set(respondent)
    assert questions == ["Q1", "Q2", "Q3", "Q4"]
    assert sk.analysis.question_columns(frame) == ["Q1", "Q2", "Q3", "Q4"]


def test_sandbox_serves_a_panel_typed_and_its_codebooks_leave_the_design_out() -> None:
    with sk.Sandbox(seed=7) as sandbox:
        client = sk.Client.sandbox(sandbox)
        survey = sandbox.add_generated_survey(
            "PANEL", 1_500, questions=4, seed=11, wave=1, design=True
        )
        assert survey.generated_design
        served = client.surveys.results("PANEL")
        codebook = sandbox.codebook("PANEL")
        plain = sandbox.add_generated_survey("PLAIN", 10, questions=4, seed=11)
        assert not plain.generated_design
        assert not set(DESIGN_COLUMNS) & set(client.surveys.results("PLAIN").columns)
    direct = generate_results_frame(1_500, seed=11, questions=4, nasty=False, wave=1, design=True)
    assert list(served.columns) == list(direct.columns)
    for column in DESIGN_COLUMNS:
        assert served[column].astype("string").tolist() == direct[column].tolist()
    assert served["baseWeight"].dtype == "float64"
    assert pd.api.types.is_string_dtype(served["region"])
    assert pd.api.types.is_string_dtype(served["household"])
    assert list(codebook) == ["Q1", "Q2", "Q3", "Q4"]
    assert list(sk.Codebook.infer(served)) == ["Q1", "Q2", "Q3", "Q4"]
    design = sk.Design(served, weights="baseWeight", strata="region", psu="household")
    assert design.n_strata == len(generator.REGIONS)
    assert design.n_psu == served["household"].nunique()


def test_stored_respondents_leave_the_design_fields_missing() -> None:
    with sk.Sandbox(seed=7) as sandbox:
        client = sk.Client.sandbox(sandbox)
        sandbox.add_generated_survey("PANEL", 20, questions=4, design=True)
        everything = client.surveys.results("*")
    generated = everything["surveyReference"] == "PANEL"
    assert generated.sum() == 20
    assert everything.loc[generated, "region"].notna().all()
    assert everything.loc[~generated, list(DESIGN_COLUMNS)].isna().all().all()


def test_design_must_be_true_or_false() -> None:
    with sk.Sandbox() as sandbox, pytest.raises(ValueError, match="design: expected true or"):
        sandbox.add_generated_survey("P", 10, design="yes")  # type: ignore[arg-type]


def test_every_layout_carries_the_design_columns_alike() -> None:
    frames = []
    for layout in sorted(LAYOUTS):
        with sk.Sandbox(results_layout=layout) as sandbox:
            sandbox.add_generated_survey("PANEL", 200, questions=4, design=True)
            with sk.Client.sandbox(sandbox, max_retries=0) as client:
                frames += [(layout, f, client.surveys.results("*", f)) for f in LAYOUTS[layout]]
    first = frames[0][2]
    assert set(DESIGN_COLUMNS) <= set(first.columns)
    for layout, fmt, frame in frames[1:]:
        pd.testing.assert_frame_equal(frame, first, obj=f"{layout} {fmt}")
