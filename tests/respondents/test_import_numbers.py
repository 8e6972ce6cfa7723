"""Imports keep numbers phonenumbers finds possible but not valid, marked in number_check.

The sandbox's own respondents (UK drama range 07700 900xxx, North American 555-01xx...)
must come back in: results -> build_import_list -> import_frame with nothing rejected.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import phonenumbers
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app
from surveykit.sandbox import Sandbox
from surveykit.sandbox.state._records import ImportField, Survey

SAMPLE_SURVEYS = ["CSAT-SMS-2026", "NPS-WA-Q1-2026", "EVT-DDLIS-2026"]


def is_valid(digits: str) -> bool:
    """phonenumbers' own verdict on E.164 digits, independent of surveykit."""
    return bool(phonenumbers.is_valid_number(phonenumbers.parse("+" + digits)))


def mixed() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "First Name": ["Ann", "Bob", "Cy", "Di", "Ed"],
            "Mobile": [
                "07911 123456",  # valid
                "+44 7700 900123",  # drama range: possible, not valid
                "0791112",  # not a number at all
                "(07700) 900-123",  # the same unverified number again
                None,
            ],
            "Email": [None, None, None, None, "ed@example.com"],
        },
        index=["a", "b", "c", "d", "e"],
    )


# --- build_import_list ---------------------------------------------------------------


def test_unverified_numbers_are_kept_and_marked() -> None:
    plan = sk.build_import_list(mixed(), default_region="GB")
    assert [r.get("mobileNumber") for r in plan.records] == ["447911123456", "447700900123", None]
    assert list(plan.index) == ["a", "b", "e"]
    assert plan.number_check.to_dict() == {
        "a": "valid",
        "b": "unverified",
        "c": None,
        "d": "unverified",
        "e": None,
    }
    assert plan.rejected["reason"].to_dict() == {
        "c": "not a valid number for region GB",
        "d": "duplicate",  # spellings of one unverified number are one number
    }
    assert plan.rejected.loc["d", "duplicate_of"] == "b"
    assert plan.summary.unverified == 1
    assert "1 number kept unverified" in str(plan.summary)
    assert "1 number kept unverified" in repr(plan) and ".number_check" in repr(plan)
    assert "1 number kept unverified" in plan._repr_html_()


def test_strict_refuses_unverified_numbers_with_a_reason() -> None:
    plan = sk.build_import_list(mixed(), default_region="GB", strict=True)
    assert list(plan.index) == ["a", "e"]
    reason = "not a valid number for region GB (unverified, refused as strict=True)"
    assert plan.rejected["reason"].to_dict() == {
        "b": reason,
        "c": "not a valid number for region GB",
        "d": reason,
    }
    assert plan.rejected.loc["b", ["column", "value"]].tolist() == ["Mobile", "+44 7700 900123"]
    assert plan.number_check.to_dict() == {
        "a": "valid",
        "b": None,
        "c": None,
        "d": None,
        "e": None,
    }
    assert plan.summary.unverified == 0
    assert "kept unverified" not in str(plan.summary)


def test_a_plan_without_a_number_column_has_no_checks() -> None:
    plan = sk.build_import_list(pd.DataFrame({"Email": ["a@example.com"]}))
    assert plan.number_check.tolist() == [None]
    assert plan.summary.unverified == 0


# --- import_frame ----------------------------------------------------------------------


def test_import_frame_outcome_has_number_check_and_strict_refuses() -> None:
    with sk.Client.sandbox() as client:
        assert client.embedded is not None
        client.embedded.add_survey(
            Survey(
                reference="NUMBERS",
                survey_id=9500,
                name="numbers",
                channel="SMS",
                import_fields=[
                    ImportField("firstName"),
                    ImportField("mobileNumber", kind="phone"),
                    ImportField("emailAddress", kind="email"),
                ],
            )
        )
        out = sk.import_frame(client, "NUMBERS", mixed(), default_region="GB", progress=False)
        assert out["status"].tolist() == ["Success", "Success", "rejected", "rejected", "Success"]
        assert out["number_check"].tolist()[:2] == ["valid", "unverified"]
        assert out["number_check"].isna().tolist() == [False, False, True, False, True]
        assert out.attrs["plan"]["unverified"] == 1
        strict = sk.import_frame(
            client, "NUMBERS", mixed(), default_region="GB", strict=True, progress=False
        )
        assert strict["status"].tolist() == [
            "Success",
            "rejected",
            "rejected",
            "rejected",
            "Success",
        ]
        assert "unverified" in strict.loc["b", "reason"]


def copy_of(survey: Survey, reference: str) -> Survey:
    """An empty survey with the same import definition, to import into."""
    return Survey(
        reference=reference,
        survey_id=survey.survey_id + 500,
        name=f"copy of {survey.reference}",
        channel=survey.channel,
        import_fields=[dataclasses.replace(f) for f in survey.import_fields],
    )


def round_trip(sandbox: Sandbox, reference: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Results of ``reference`` imported into an empty copy; (source rows, outcome)."""
    with sk.Client.sandbox(sandbox) as client:
        source = client.surveys.results(reference)
        with sandbox.state.transaction():
            survey = sandbox.state.find_survey(reference)
        assert survey is not None
        target = f"COPY-{reference}"
        sandbox.add_survey(copy_of(survey, target))
        plan = sk.build_import_list(source)
        assert plan.rejected.empty, plan.rejected
        outcome = sk.import_frame(client, target, source, plan=plan, progress=False)
        imported = client.surveys.results(target)
    assert outcome["status"].eq("Success").all(), outcome[outcome["status"] != "Success"]
    assert outcome.index.equals(source.index)
    # The sandbox holds every respondent, under the number it had.
    key = "emailAddress" if survey.channel == "Email" else "mobileNumber"
    assert sorted(imported[key].dropna()) == sorted(source[key].dropna())
    assert sorted(imported["mobileNumber"].dropna()) == sorted(source["mobileNumber"].dropna())
    # Every number is marked by phonenumbers' own verdict.
    has = source["mobileNumber"].notna()
    expected = source.loc[has, "mobileNumber"].map(
        lambda d: "valid" if is_valid(d) else "unverified"
    )
    assert outcome.loc[has, "number_check"].tolist() == expected.tolist()
    assert outcome.loc[~has, "number_check"].isna().all()
    return source, outcome


@pytest.mark.parametrize("reference", SAMPLE_SURVEYS)
def test_the_sandbox_sample_respondents_round_trip(reference: str) -> None:
    with Sandbox(seed=3) as sandbox:
        source, outcome = round_trip(sandbox, reference)
    # The sample data is in fictional ranges: most of it would be refused as invalid.
    assert (outcome["number_check"] == "unverified").any()
    strict = sk.build_import_list(source, strict=True)
    unverified = source["mobileNumber"].notna() & ~source["mobileNumber"].fillna("").map(
        lambda d: bool(d) and is_valid(d)
    )
    assert sorted(strict.rejected.index) == sorted(source.index[unverified])


@pytest.mark.parametrize(("seed", "wave"), [(1, 0), (2, 1), (7, 2)])
def test_generated_respondents_round_trip(seed: int, wave: int) -> None:
    with Sandbox(seed=seed) as sandbox:
        sandbox.add_generated_survey("GEN-NUMBERS", 400, seed=seed, wave=wave)
        _, outcome = round_trip(sandbox, "GEN-NUMBERS")
    assert len(outcome) == 400
    assert set(outcome["number_check"].dropna()) == {"valid", "unverified"}


# --- the command line ------------------------------------------------------------------


def test_import_command_keeps_unverified_numbers_and_strict_refuses_them(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    pd.DataFrame({"First Name": ["Ana", "Bo"], "Phone": ["07911 123001", "07700 900123"]}).to_csv(
        source, index=False
    )
    runner = CliRunner()
    env = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""}
    result = runner.invoke(app, ["import", "CSAT-SMS-2026", str(source), "--region", "GB"], env=env)
    assert result.exit_code == 0, result.output
    assert "1 number kept unverified" in result.output
    outcome = pd.read_csv(tmp_path / "people.csv.import.csv", dtype=str)
    assert outcome["status"].tolist() == ["Success", "Success"]
    assert outcome["number_check"].tolist() == ["valid", "unverified"]
    result = runner.invoke(
        app, ["import", "CSAT-SMS-2026", str(source), "--region", "GB", "--strict"], env=env
    )
    assert result.exit_code == 0, result.output
    outcome = pd.read_csv(tmp_path / "people.csv.import.csv", dtype=str)
    assert outcome["status"].tolist() == ["Success", "rejected"]
    assert outcome["reason"].iloc[1].endswith("(unverified, refused as strict=True)")


def test_import_command_reads_the_default_region_from_the_environment(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    pd.DataFrame({"First Name": ["Ana"], "Phone": ["07911 123001"]}).to_csv(source, index=False)
    env = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": "", "SURVEYKIT_DEFAULT_REGION": "GB"}
    runner = CliRunner()
    result = runner.invoke(app, ["import", "CSAT-SMS-2026", str(source), "--dry-run"], env=env)
    assert result.exit_code == 0, result.output
    assert "1 rows -> 1 records, 0 rejected" in result.output
    env["SURVEYKIT_DEFAULT_REGION"] = ""
    result = runner.invoke(app, ["import", "CSAT-SMS-2026", str(source), "--dry-run"], env=env)
    assert "rejected 1: no region given for a national number" in result.output
    env["SURVEYKIT_DEFAULT_REGION"] = "XX"
    result = runner.invoke(app, ["import", "CSAT-SMS-2026", str(source), "--dry-run"], env=env)
    assert result.exit_code == 2
    assert "SURVEYKIT_DEFAULT_REGION: 'XX' is not a region" in result.output
