"""import_frame: chunks, join-back in df order, 404, a chunk lost on the network."""

from __future__ import annotations

import inspect
import logging
from typing import Any

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.errors import ImportStoppedError
from surveykit.respondents._import import import_frame
from tests.helpers.fake_platform import FakePlatform


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def client_for(platform: FakePlatform, kind: str) -> Any:
    cls = sk.Client if kind == "sync" else sk.AsyncClient
    return cls(
        "https://api.example.test",
        "tok",
        transport=httpx.MockTransport(platform),
        retry=sk.RetryPolicy(max_retries=1, backoff_base=0.0),
    )


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def respondents(n: int = 7) -> pd.DataFrame:
    numbers = [f"+44 7911 123{i:03d}" for i in range(n)]
    numbers[2] = "not a number"
    return pd.DataFrame(
        {"First Name": [f"P{i}" for i in range(n)], "Mobile": numbers},
        index=pd.Index([f"id-{n - i}" for i in range(n)], name="crm_id"),
    )


async def test_chunks_and_join_back(kind: str) -> None:
    platform = FakePlatform()
    df = respondents()
    result = await run(
        import_frame(client_for(platform, kind), "CSAT-2026", df, chunk_size=2, progress=False)
    )
    assert list(result.index) == list(df.index)
    assert result["status"].tolist() == [
        "Success",
        "Success",
        "rejected",
        "Success",
        "Success",
        "Success",
        "Success",
    ]
    assert result.loc["id-5", "reason"] is not None
    assert result.loc["id-5", ["column", "value"]].tolist() == ["Mobile", "not a number"]
    assert result.loc["id-7", "when"] == "2026-03-02T09:00:00Z"
    chunks = [body for _, path, body in platform.requests if path == "/v3.2/Data/Import"]
    assert [len(body["list"]) for body in chunks] == [2, 2, 2]
    assert chunks[0]["list"][0] == {"firstName": "P0", "mobileNumber": "447911123000"}
    assert len(platform.imported) == 6


async def test_unknown_reference_stops_before_the_rest(kind: str) -> None:
    platform = FakePlatform()
    with pytest.raises(ImportStoppedError, match="does not know reference 'NOPE'") as caught:
        await run(
            import_frame(
                client_for(platform, kind), "NOPE", respondents(), chunk_size=2, progress=False
            )
        )
    assert "nothing was imported" in str(caught.value)
    assert len(platform.requests) == 1
    assert isinstance(caught.value.cause, sk.NotFoundError)
    assert caught.value.__cause__ is caught.value.cause
    # as documented: a SurveykitError, but `except sk.NotFoundError` does not catch it
    assert isinstance(caught.value, sk.SurveykitError)
    assert not isinstance(caught.value, sk.NotFoundError)
    assert set(caught.value.result["status"]) == {"not sent", "rejected"}
    assert caught.value.result["reason"].notna().all()  # every row says why


async def test_a_chunk_lost_on_the_network_is_reported_row_by_row(kind: str) -> None:
    platform = FakePlatform()
    platform.import_script = [None, httpx.ReadTimeout("no answer")]
    result = await run(
        import_frame(
            client_for(platform, kind), "CSAT-2026", respondents(), chunk_size=2, progress=False
        )
    )
    assert result["status"].tolist() == [
        "Success",
        "Success",
        "rejected",
        "unknown",
        "unknown",
        "Success",
        "Success",
    ]
    assert "not sent again" in result.loc["id-4", "reason"]
    calls = [path for _, path, _ in platform.requests if path == "/v3.2/Data/Import"]
    assert len(calls) == 3  # the ambiguous chunk was not retried


def test_connection_refused_chunk_is_not_sent() -> None:
    platform = FakePlatform()
    platform.import_script = [httpx.ConnectError("refused"), httpx.ConnectError("refused")]
    result = import_frame(
        client_for(platform, "sync"), "CSAT-2026", respondents(3), chunk_size=5, progress=False
    )
    assert result["status"].tolist() == ["not sent", "not sent", "rejected"]
    assert "never reached the platform" in result.iloc[0]["reason"]


def test_missing_results_are_unknown_not_lost() -> None:
    platform = FakePlatform()
    platform.import_script = [(200, [{"status": "Success"}])]
    result = import_frame(
        client_for(platform, "sync"), "CSAT-2026", respondents(3), chunk_size=5, progress=False
    )
    assert result["status"].tolist() == ["Success", "unknown", "rejected"]
    assert result.iloc[1]["reason"] == "the platform returned no result for this record"


def test_imported_respondents_appear_in_later_results() -> None:
    sandbox = sk.Sandbox(seed=9)
    client = sk.Client.sandbox(sandbox)
    before = client.surveys.results("CSAT-SMS-2026")
    df = pd.DataFrame(
        {
            "First Name": ["Ingrid", "Tomás", "Bad"],
            "Surname": ["Solberg", "Ruiz", "Row"],
            "Mobile": ["07911 123901", "+44 7911 123902", "12"],
            "Store": ["Leeds Briggate", "Paris Marais", "Leeds Briggate"],
        }
    )
    outcome = import_frame(
        client, "CSAT-SMS-2026", df, default_region="GB", mapping={"Store": "store"}, progress=False
    )
    assert outcome["status"].tolist() == ["Success", "Success", "rejected"]
    after = client.surveys.results("CSAT-SMS-2026")
    assert len(after) == len(before) + 2
    new = after[~after["respondentId"].isin(before["respondentId"])]
    assert sorted(new["mobileNumber"]) == ["447911123901", "447911123902"]
    assert sorted(new["firstName"]) == ["Ingrid", "Tomás"]
    assert new["completed"].isna().all()


async def test_a_404_on_a_later_chunk_keeps_the_earlier_chunks_and_says_why_the_rest_was_not_sent(
    kind: str,
) -> None:
    platform = FakePlatform()
    platform.import_script = [
        None,
        (404, {"title": "Not Found", "status": 404, "detail": "no import definition"}),
    ]
    with pytest.raises(ImportStoppedError, match="does not know reference 'CSAT-2026'") as caught:
        await run(
            import_frame(
                client_for(platform, kind), "CSAT-2026", respondents(), chunk_size=2, progress=False
            )
        )
    assert "2 records in earlier chunks were imported; the rest were not sent" in str(caught.value)
    result = caught.value.result
    assert list(result.index) == list(respondents().index)
    assert result["status"].tolist() == [
        "Success",
        "Success",
        "rejected",
        "not sent",  # the chunk that got the 404
        "not sent",
        "not sent",  # a later chunk, never requested
        "not sent",
    ]
    not_sent = result[result["status"] == "not sent"]
    assert (
        not_sent["reason"].tolist()
        == ["the import stopped: the platform does not know reference 'CSAT-2026' (404)"] * 4
    )
    assert result.loc[["id-7", "id-6"], "reason"].isna().all()
    calls = [path for _, path, _ in platform.requests if path == "/v3.2/Data/Import"]
    assert len(calls) == 2  # nothing after the 404
    assert len(platform.imported) == 2


def test_a_duplicate_row_points_at_the_first_row_with_its_number() -> None:
    platform = FakePlatform()
    df = pd.DataFrame(
        {"Mobile": ["+44 7911 123001", "07911 123002", "0044 7911 123001"]},
        index=pd.Index(["crm-9", "crm-4", "crm-7"], name="crm_id"),
    )
    result = import_frame(
        client_for(platform, "sync"), "CSAT-2026", df, default_region="GB", progress=False
    )
    assert result["status"].tolist() == ["Success", "Success", "rejected"]
    columns = ["status", "reason", "column", "value", "duplicate_of"]
    assert result.loc["crm-7", columns].tolist() == [
        "rejected",
        "duplicate",
        "Mobile",
        "0044 7911 123001",
        "crm-9",
    ]
    assert result[["column", "value", "duplicate_of"]].iloc[:2].isna().all().all()


def test_progress_shows_the_plan_with_its_inferred_mapping_and_counts_the_rows(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    platform = FakePlatform()
    caplog.set_level(logging.INFO, logger="surveykit.frames")
    result = import_frame(
        client_for(platform, "sync"), "CSAT-2026", respondents(), chunk_size=2, progress=True
    )
    err = capsys.readouterr().err
    assert "ImportPlan: 7 rows -> 6 records, 1 rejected" in err
    assert "'First Name' -> firstName (inferred)" in err
    assert "'Mobile' -> mobileNumber (inferred)" in err
    assert "import: 100%" in err and "6/6" in err  # the bar counted every record sent
    assert err.index("ImportPlan") < err.index("import: ")  # the plan above the bar
    logged = [r.getMessage() for r in caplog.records if r.name == "surveykit.frames"]
    assert len(logged) == 1 and logged[0].startswith("import into 'CSAT-2026': ImportPlan")
    assert "'Mobile' -> mobileNumber (inferred)" in logged[0]
    assert result.attrs["plan"] == {
        "rows": 7,
        "records": 6,
        "rejected": 1,
        "rejected_by_reason": {"not a phone number": 1},
        "warnings": 0,
        "unverified": 0,
        "mapping": {"First Name": "firstName", "Mobile": "mobileNumber"},
        "inferred": {"First Name": "firstName", "Mobile": "mobileNumber"},
    }


def test_in_a_notebook_the_plan_is_ordinary_output_not_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    # A real IPython shell with a kernel attached is what a Jupyter kernel runs.
    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "kernel", object(), raising=False)
    try:
        with capture_output(stdout=False, stderr=False) as captured:
            import_frame(
                client_for(FakePlatform(), "sync"), "CSAT-2026", respondents(), progress=True
            )
    finally:
        InteractiveShell.clear_instance()
    err = capsys.readouterr().err
    assert "ImportPlan" not in err  # stderr is painted as an error block by JupyterLab
    assert "import: 100%" in err  # (the tqdm bar is a widget in a real notebook)
    [shown] = captured.outputs
    assert "ImportPlan: 7 rows -> 6 records, 1 rejected" in shown.data["text/plain"]
    assert "<table" in shown.data["text/html"] and "mobileNumber" in shown.data["text/html"]


async def test_a_given_plan_is_not_shown_again_but_still_described(
    kind: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    platform = FakePlatform()
    df = respondents(3)
    plan = sk.build_import_list(df, {"First Name": None})
    caplog.set_level(logging.INFO, logger="surveykit.frames")
    result = await run(
        import_frame(client_for(platform, kind), "CSAT-2026", df, plan=plan, progress=True)
    )
    err = capsys.readouterr().err
    assert "ImportPlan" not in err and "2/2" in err
    assert not [r for r in caplog.records if r.name == "surveykit.frames"]
    assert result.attrs["plan"]["mapping"] == {"First Name": None, "Mobile": "mobileNumber"}
    assert result.attrs["plan"]["inferred"] == {"Mobile": "mobileNumber"}
