"""send_batch and preview_batch against a fake platform at the transport, sync and async."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.batch import (
    BatchInterrupted,
    BatchResult,
    JournalMismatchError,
    lookup_frame,
    preview_batch,
    send_batch,
)
from surveykit.batch._runner import TokenBucket
from tests.helpers.fake_platform import BLOCKED, LANDLINE, FakePlatform

BASE = "https://api.example.test"


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def client_for(platform: FakePlatform, kind: str) -> Any:
    policy = sk.RetryPolicy(max_retries=1, backoff_base=0.0)
    cls = sk.Client if kind == "sync" else sk.AsyncClient
    return cls(BASE, "tok", transport=httpx.MockTransport(platform), retry=policy)


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def people() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "firstName": ["Zoë", "Ana", None, "Kwame", "Li", "Sven"],
            "mobileNumber": [
                "447700900001",
                "447700900002",
                "447700900003",
                "0044 7700",
                "447700900005",
                "447700900006",
            ],
            "survey_url": [f"https://example.org/s/{i}" for i in range(6)],
        },
        index=pd.Index(["r1", "r2", "r3", "r4", "r5", "r6"], name="respondent"),
    )


SEND = {"message": "Hi {firstName}, rate us 0-10", "source": "447700900999", "progress": False}


async def test_every_row_gets_one_outcome(kind: str) -> None:
    platform = FakePlatform()
    platform.fail("447700900005", (400, LANDLINE))
    platform.fail("447700900006", (400, BLOCKED))
    result = await run(send_batch(client_for(platform, kind), people(), **SEND, lookup=True))
    frame = result.frame
    assert list(frame.index) == ["r1", "r2", "r3", "r4", "r5", "r6"]
    assert frame["outcome"].astype(str).tolist() == [
        "sent",
        "sent",
        "rejected",
        "invalid",
        "landline",
        "blocked",
    ]
    assert frame.loc["r1", "text"] == "Hi Zoë, rate us 0-10"
    assert frame.loc["r1", "message_id"].startswith("MS")
    assert frame.loc["r3", "error"] == "missing value for {firstName}"
    assert frame.loc["r4", "error"] == (
        "mobileNumber: '0044 7700': too short (a local number without its area code)"
    )
    assert frame.loc["r5", "number_type"] == "Landline"
    assert frame.loc["r6", "reachable"] == False  # noqa: E712 - a nullable boolean
    assert frame.loc["r1", "segments"] == 1
    assert result.summary.to_dict() == {
        "sent": 2,
        "landline": 1,
        "blocked": 1,
        "invalid": 1,
        "rejected": 1,
    }
    # Four requests went out; the platform refused two of them (landline, blocked) with a
    # 400, so this run sent two rows, as the summary says.
    assert result.sent_now == result.summary["sent"] == 2
    assert result.requested_now == 4
    # Only sendable rows reached the platform, each once, with the options asked for.
    bodies = [body for _, path, body in platform.requests if path == "/v3.2/Message"]
    assert sorted(b["destination"] for b in bodies) == [
        "447700900001",
        "447700900002",
        "447700900005",
        "447700900006",
    ]
    assert all(b["lookup"] is True and b["reply"] is False for b in bodies)


async def test_windows_channel_and_options_reach_the_wire(kind: str) -> None:
    platform = FakePlatform()
    df = people().iloc[:2]
    when = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    await run(
        send_batch(
            client_for(platform, kind),
            df,
            message="Hi {firstName}",
            source="447700900999",
            channel="whatsapp",
            reply=True,
            windows="Mon-Fri 09:00-18:00",
            when=when,
            timeout=60,
            survey_id=12,
            on_behalf="acme",
            progress=False,
        )
    )
    body = platform.requests[0][2]
    assert body["type"] == 1 and body["reply"] is True
    assert body["window"] == [{"from": "09:00", "to": "18:00", "days": "1,2,3,4,5"}]
    assert body["when"] == "2026-03-02T08:00:00Z"
    assert (body["timeout"], body["surveyId"], body["onBehalf"]) == (60, 12, "acme")


def test_branded_source_with_reply_is_rejected_per_row() -> None:
    platform = FakePlatform()
    result = send_batch(
        client_for(platform, "sync"),
        people().iloc[:2],
        message="Hi",
        source="AcmeResearch",
        reply=True,
        progress=False,
    )
    assert result.frame["outcome"].astype(str).tolist() == ["rejected", "rejected"]
    for error in result.frame["error"]:
        assert "source: a branded source" in error
    assert platform.requests == []


def test_windows_that_never_open_reject_rows() -> None:
    platform = FakePlatform()
    result = send_batch(
        client_for(platform, "sync"),
        people().iloc[:2],
        message="Hi",
        source="447700900999",
        windows=[],
        progress=False,
    )
    assert set(result.frame["error"]) == {"no sending window ever opens"}
    assert platform.requests == []


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ({"message": "Hi {nickname}"}, r"message: no column for \{nickname\}"),
        ({"destination": "phone"}, "destination: no column 'phone'"),
        ({"channel": "pigeon"}, "channel"),
        ({"links": "url"}, "links: no column 'url'"),
        ({"when": datetime(2026, 3, 2, 9, 0)}, "when: a timezone-aware"),
        ({"only": "sent", "journal": "x.sqlite"}, "only"),
        ({"only": "failed"}, "needs the journal"),
    ],
)
def test_bad_arguments_fail_before_sending(
    argument: dict[str, Any], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    platform = FakePlatform()
    with pytest.raises(ValueError, match=message):
        send_batch(client_for(platform, "sync"), people(), **{**SEND, **argument})
    assert platform.requests == []


def test_duplicate_index_is_refused() -> None:
    df = pd.concat([people().iloc[:1], people().iloc[:1]])
    with pytest.raises(ValueError, match="index must be unique"):
        send_batch(client_for(FakePlatform(), "sync"), df, **SEND)


async def test_resume_with_journal_never_sends_twice(kind: str, tmp_path: Path) -> None:
    journal = tmp_path / "campaign.sqlite"
    platform = FakePlatform()
    platform.fail("447700900001", httpx.ReadTimeout("no answer"))  # ambiguous -> unknown
    platform.fail("447700900002", (503, {"title": "Service Unavailable"}))  # definite -> failed
    client = client_for(platform, kind)
    first = await run(send_batch(client, people(), **SEND, journal=journal))
    assert first.frame.loc["r1", "outcome"] == "unknown"
    assert first.frame.loc["r2", "outcome"] == "failed"
    assert first.frame.loc["r5", "outcome"] == "sent"
    sent_before = len(platform.requests)

    again = await run(send_batch(client, people(), **SEND, journal=journal))
    assert len(platform.requests) == sent_before, "a plain re-run sends nothing new"
    assert again.sent_now == 0
    assert again.frame["outcome"].astype(str).tolist() == (
        first.frame["outcome"].astype(str).tolist()
    )
    assert again.frame.loc["r5", "message_id"] == first.frame.loc["r5", "message_id"]

    retried = await run(send_batch(client, people(), **SEND, journal=journal, only="failed"))
    new = [body["destination"] for _, _, body in platform.requests[sent_before:]]
    assert new == ["447700900002"]
    assert retried.frame.loc["r2", "outcome"] == "sent"
    assert retried.frame.loc["r2", "attempts"] == 2
    assert retried.frame.loc["r1", "outcome"] == "unknown"

    resent = await run(send_batch(client, people(), **SEND, journal=journal, resend_unknown=True))
    assert [b["destination"] for _, _, b in platform.requests[sent_before + 1 :]] == [
        "447700900001"
    ]
    assert resent.frame.loc["r1", "outcome"] == "sent"
    assert max(platform.sends_per_destination().values()) == 1


def test_rows_in_flight_at_a_crash_are_unknown_and_not_resent(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    platform = FakePlatform()
    send_batch(client_for(platform, "sync"), people().iloc[:2], **SEND, journal=journal)
    with sqlite3.connect(journal) as db:  # as if the process died right after marking r2
        db.execute("UPDATE rows SET state='in_flight', outcome=NULL WHERE row_key='\"r2\"'")
    before = len(platform.requests)
    result = send_batch(client_for(platform, "sync"), people().iloc[:2], **SEND, journal=journal)
    assert len(platform.requests) == before
    assert result.frame.loc["r2", "outcome"] == "unknown"
    assert "in flight" in result.frame.loc["r2", "error"]


def test_journal_of_another_batch_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    client = client_for(FakePlatform(), "sync")
    send_batch(client, people().iloc[:1], **SEND, journal=journal)
    with pytest.raises(JournalMismatchError, match="templates"):
        send_batch(client, people().iloc[:1], **{**SEND, "message": "Other"}, journal=journal)


async def test_rate_limited_rows_wait_and_are_sent(kind: str, tmp_path: Path) -> None:
    platform = FakePlatform()
    platform.fail("447700900001", (429, {"title": "Too Many Requests"}, {"Retry-After": "0"}))
    result = await run(
        send_batch(
            client_for(platform, kind), people().iloc[:1], **SEND, journal=tmp_path / "j.sqlite"
        )
    )
    assert result.frame.loc["r1", "outcome"] == "sent"
    assert result.frame.loc["r1", "attempts"] == 2
    assert platform.sends_per_destination()["447700900001"] == 1


def test_short_links_in_chunks_and_remembered(tmp_path: Path) -> None:
    platform = FakePlatform()
    df = pd.DataFrame(
        {
            "mobileNumber": [f"4477009{i:05d}" for i in range(250)],
            "url": [f"https://example.org/s/{i}" for i in range(250)],
        }
    )
    journal = tmp_path / "j.sqlite"
    result = send_batch(
        client_for(platform, "sync"),
        df,
        message="Survey: {link}",
        source="447700900999",
        links="url",
        reuse_links=True,
        journal=journal,
        progress=False,
        concurrency=16,
    )
    register = [body for _, path, body in platform.requests if path.endswith("RegisterList")]
    assert [len(body["urls"]) for body in register] == [100, 100, 50]
    assert register[0]["urls"][0] == {"fullUrl": "https://example.org/s/0", "reuse": True}
    assert result.frame.loc[0, "text"] == "Survey: https://t.example/1"
    assert result.frame.loc[249, "text"] == "Survey: https://t.example/250"
    assert (result.frame["outcome"] == "sent").all()
    send_batch(
        client_for(platform, "sync"),
        df,
        message="Survey: {link}",
        source="447700900999",
        links="url",
        reuse_links=True,
        journal=journal,
        progress=False,
    )
    assert platform.links_registered == 250


async def test_email_batch(kind: str) -> None:
    platform = FakePlatform()
    df = pd.DataFrame(
        {
            "email": ["ana@example.org", "not-an-address", "li@example.net"],
            "name": ["Ana", "X", "Li"],
            "campaign": ["spring", "spring", None],
            "wave": [1, 1, 2],
        }
    )
    result = await run(
        send_batch(
            client_for(platform, kind),
            df,
            channel="email",
            source="surveys",
            to="{email}",
            subject="Hello {name}",
            content="<p>Dear {name}</p>",
            metadata=["campaign", "wave"],
            callback={"url": "https://cb.example.org/in"},
            progress=False,
        )
    )
    assert result.frame["outcome"].astype(str).tolist() == ["sent", "invalid", "sent"]
    bodies = [body for _, path, body in platform.requests]
    assert {path for _, path, _ in platform.requests} == {"/v3.2/Message/SendEmail"}
    assert bodies[0] == {
        "To": "ana@example.org",
        "From": "surveys",
        "Subject": "Hello Ana",
        "Content": "<p>Dear Ana</p>",
        "MetaData": [{"campaign": "spring"}, {"wave": 1}],
        "Callback": [{"Url": "https://cb.example.org/in"}],
    }
    assert bodies[1]["MetaData"] == [{"wave": 2}]


def test_test_mode_outcome_is_tested() -> None:
    platform = FakePlatform()
    result = send_batch(client_for(platform, "sync"), people().iloc[:1], **SEND, test=True)
    assert result.frame.loc["r1", "outcome"] == "tested"
    assert platform.requests[0][2]["test"] is True


def test_interrupt_stops_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    platform = FakePlatform()
    df = pd.DataFrame({"mobileNumber": [f"4477009{i:05d}" for i in range(40)]})
    platform.fail("447700900010", KeyboardInterrupt())
    with pytest.raises(BatchInterrupted) as caught:
        send_batch(
            client_for(platform, "sync"),
            df,
            message="Hi",
            source="447700900999",
            journal=journal,
            concurrency=1,
            progress=False,
        )
    partial = caught.value.result.frame
    assert (partial.loc[:9, "outcome"] == "sent").all()
    assert set(partial.loc[11:, "outcome"].astype(str)) == {"skipped"}
    assert len(platform.accepted) == 10
    resumed = send_batch(
        client_for(platform, "sync"),
        df,
        message="Hi",
        source="447700900999",
        journal=journal,
        progress=False,
    )
    assert resumed.frame.loc[10, "outcome"] == "unknown"  # it may have gone out
    assert (resumed.frame.drop(index=10)["outcome"] == "sent").all()
    assert len(platform.accepted) == 39
    assert max(platform.sends_per_destination().values()) == 1


async def test_a_progress_function_sees_every_row_once(kind: str) -> None:
    platform = FakePlatform()
    platform.fail("447700900006", (400, BLOCKED))
    seen: list[dict[str, int]] = []
    options = {**SEND, "progress": seen.append}
    result = await run(send_batch(client_for(platform, kind), people(), **options))
    assert [sum(counts.values()) for counts in seen] == [1, 2, 3, 4, 5, 6]
    assert seen[-1] == result.summary.to_dict()
    assert seen[0] is not seen[1]  # a new dict each call, safe to keep


def test_raising_keyboardinterrupt_in_progress_stops_between_rows(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    platform = FakePlatform()
    df = pd.DataFrame({"mobileNumber": [f"4477009{i:05d}" for i in range(10)]})

    def stop_after_four(counts: dict[str, int]) -> None:
        if sum(counts.values()) == 4:
            raise KeyboardInterrupt

    options = {"message": "Hi", "source": "447700900999", "journal": journal}
    client = client_for(platform, "sync")
    with pytest.raises(BatchInterrupted) as caught:
        send_batch(client, df, **options, concurrency=1, progress=stop_after_four)
    partial = caught.value.result
    assert partial.frame["outcome"].astype(str).tolist() == ["sent"] * 4 + ["skipped"] * 6
    assert (partial.frame.loc[4:, "error"] == "interrupted").all()
    assert partial.sent_now == len(platform.accepted) == 4
    resumed = send_batch(client, df, **options, progress=False)
    assert resumed.sent_now == 6  # exactly the rows the stop left, none of them unknown
    assert (resumed.frame["outcome"] == "sent").all()
    assert max(platform.sends_per_destination().values()) == 1


def test_keyboardinterrupt_in_progress_stops_an_async_batch_inside_its_own_task(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "j.sqlite"
    platform = FakePlatform()
    df = pd.DataFrame({"mobileNumber": [f"4477009{i:05d}" for i in range(20)]})

    def stop_after_four(counts: dict[str, int]) -> None:
        if sum(counts.values()) == 4:
            raise KeyboardInterrupt

    options = {"message": "Hi", "source": "447700900999", "journal": journal}

    async def interrupted() -> BatchResult:
        try:
            await send_batch(
                client_for(platform, "async"), df, **options, concurrency=4,
                progress=stop_after_four,
            )
        except BatchInterrupted as stop:
            return stop.result
        raise AssertionError("the batch was not interrupted")

    # Raised in a worker task, the interrupt used to escape the event loop as well.
    partial = asyncio.run(interrupted())
    done = partial.frame["outcome"].astype(str)
    assert 4 <= (done == "sent").sum() <= 7  # rows in flight finish, none starts after
    assert (done[done != "sent"] == "skipped").all()
    assert partial.sent_now == len(platform.accepted)
    resumed = asyncio.run(send_batch(client_for(platform, "async"), df, **options, progress=False))
    assert resumed.sent_now == 20 - partial.sent_now  # none left unknown
    assert (resumed.frame["outcome"] == "sent").all()
    assert max(platform.sends_per_destination().values()) == 1


async def test_lookup_frame_and_skip(kind: str, tmp_path: Path) -> None:
    platform = FakePlatform()
    df = pd.DataFrame(
        {
            "mobileNumber": [
                "447700900001",
                "447700900010",
                "447700900001",
                "447700900019",
                None,
                "0123",
            ]
        }
    )
    cache = tmp_path / "lookups.sqlite"
    looked = await run(lookup_frame(client_for(platform, kind), df, cache=cache))
    assert looked.attrs["requests"] == 3  # distinct valid numbers only
    assert looked["number_type"].tolist()[:4] == ["Mobile", "Landline", "Mobile", "Mobile"]
    assert looked["reachable"].tolist()[:4] == [True, True, True, False]
    assert looked.loc[4, "error"] == "no number"
    assert looked.loc[5, "error"] == "no region given for a national number"
    assert looked["number_check"].iloc[:4].tolist() == ["unverified"] * 4
    assert looked["number_check"].iloc[4:].isna().all()
    again = await run(lookup_frame(client_for(platform, kind), df, cache=cache))
    assert again.attrs["requests"] == 0
    assert again["cached"].tolist()[:4] == [True] * 4
    looked_paths = [p for _, p, _ in platform.requests]
    assert len(looked_paths) == 3

    result = await run(
        send_batch(
            client_for(platform, kind),
            df.iloc[:4],
            message="Hi",
            source="447700900999",
            skip={"landline", "unreachable"},
            lookups=looked,
            progress=False,
        )
    )
    assert result.frame["outcome"].astype(str).tolist() == ["sent", "skipped", "sent", "skipped"]
    assert result.frame.loc[1, "error"] == "skip: landline"
    assert result.frame.loc[3, "error"] == "skip: unreachable"


def test_lookup_cache_expires(tmp_path: Path) -> None:
    from datetime import timedelta

    platform = FakePlatform()
    df = pd.DataFrame({"mobileNumber": ["447700900001"]})
    cache = tmp_path / "c.sqlite"
    lookup_frame(client_for(platform, "sync"), df, cache=cache)
    again = lookup_frame(client_for(platform, "sync"), df, cache=cache, ttl=timedelta(0))
    assert again.attrs["requests"] == 1


def test_preview_sends_nothing_and_totals() -> None:
    df = people()
    df.loc["r2", "firstName"] = "Ana " + "ł" * 80
    preview = preview_batch(
        None,
        df,
        message="Hi {firstName}: {link}",
        source="447700900999",
        links="survey_url",
        windows="Mon-Fri 09:00-18:00",
        start=datetime(2026, 3, 6, 17, 59, 59, tzinfo=UTC),
        rate=1.0,
    )
    frame = preview.frame
    assert frame["outcome"].tolist() == ["ready", "ready", "rejected", "invalid", "ready", "ready"]
    assert frame.loc["r1", "text"] == "Hi Zoë: https://sho.rt/AbCd123"
    assert frame.loc["r2", "encoding"] == "UCS-2" and frame.loc["r2", "segments"] == 2
    totals = preview.totals
    assert totals["rows"] == 6 and totals["ready"] == 4 and totals["segments"] == 5
    assert totals["rejected"] == {
        "rejected: missing value for {firstName}": 1,
        "invalid: mobileNumber: '0044 7700': too short (a local number without its area "
        "code)": 1,
    }
    # Friday 17:59:59 at one per second: the first goes now, the rest wait for Monday 09:00.
    assert totals["first_send"] == pd.Timestamp("2026-03-06 17:59:59", tz="UTC")
    assert totals["last_send"] == pd.Timestamp("2026-03-09 09:00", tz="UTC")


def test_token_bucket_spaces_requests() -> None:
    bucket = TokenBucket(rate=10.0)
    waits = [bucket.reserve() for _ in range(5)]
    assert waits[0] == 0.0
    assert all(later > earlier for earlier, later in itertools.pairwise(waits[1:]))
    assert 0.35 < waits[4] <= 0.4
    assert TokenBucket(None).reserve() == 0.0
    with pytest.raises(ValueError, match="rate"):
        TokenBucket(0)


def test_result_reprs() -> None:
    result = send_batch(client_for(FakePlatform(), "sync"), people().iloc[:2], **SEND)
    assert repr(result) == "BatchResult(rows=2, sent=2, sent_now=2, requested_now=2)"
    assert "<table>" in result._repr_html_()


def test_resume_with_windows_and_nested_options(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    options = {
        **SEND,
        "windows": ["Mon-Fri 09:00-18:00", {"from": "10:00", "to": "12:00", "days": "6"}],
    }
    platform = FakePlatform()
    send_batch(client_for(platform, "sync"), people().iloc[:2], **options, journal=journal)
    again = send_batch(client_for(platform, "sync"), people().iloc[:2], **options, journal=journal)
    assert again.sent_now == 0
    assert len(platform.accepted) == 2


def test_preview_on_a_sandbox_uses_the_sandbox_clock() -> None:
    sandbox = sk.Sandbox(seed=1, sample_data=False)  # its clock starts on Monday 2026-03-02 09:00
    preview = preview_batch(
        sk.Client.sandbox(sandbox),
        people().iloc[:1],
        message="Hi",
        source="447700900999",
        windows="Tue 10:00-11:00",
    )
    assert preview.totals["first_send"] == pd.Timestamp("2026-03-03 10:00", tz="UTC")


async def test_gateway_errors_are_unknown_and_never_resent_by_only_failed(
    kind: str, tmp_path: Path
) -> None:
    platform = FakePlatform()
    platform.fail("447700900001", (502, {"title": "Bad Gateway"}))
    platform.fail("447700900002", (504, {"title": "Gateway Timeout"}))
    platform.fail("447700900003", (500, {"title": "Internal Server Error"}))
    platform.fail("447700900005", (503, {"title": "Service Unavailable"}))
    df = people().loc[["r1", "r2", "r3", "r5"]].assign(firstName="Zoë")
    journal = tmp_path / "j.sqlite"
    client = client_for(platform, kind)
    first = await run(send_batch(client, df, **SEND, journal=journal))
    assert first.frame["outcome"].astype(str).tolist() == [
        "unknown",
        "unknown",
        "unknown",
        "failed",
    ]
    assert "502" in first.frame.loc["r1", "error"] and "504" in first.frame.loc["r2", "error"]
    assert len(platform.requests) == 4, "none of them was retried"

    again = await run(send_batch(client, df, **SEND, journal=journal, only="failed"))
    resent = [body["destination"] for _, _, body in platform.requests[4:]]
    assert resent == ["447700900005"]
    assert again.frame["outcome"].astype(str).tolist() == ["unknown", "unknown", "unknown", "sent"]


def test_platform_refusals_are_rejected_not_failed(tmp_path: Path) -> None:
    platform = FakePlatform()
    platform.fail("447700900001", (400, {"title": "Bad Request", "detail": "unable to route"}))
    platform.fail("447700900002", (503, {"title": "Service Unavailable"}))
    journal = tmp_path / "j.sqlite"
    client = client_for(platform, "sync")
    first = send_batch(client, people().iloc[:2], **SEND, journal=journal)
    assert first.frame["outcome"].astype(str).tolist() == ["rejected", "failed"]
    assert "unable to route" in first.frame.loc["r1", "error"]
    again = send_batch(client, people().iloc[:2], **SEND, journal=journal, only="failed")
    resent = [body["destination"] for _, _, body in platform.requests[2:]]
    assert resent == ["447700900002"]
    assert again.frame["outcome"].astype(str).tolist() == ["rejected", "sent"]


EMAIL = {
    "channel": "email",
    "source": "surveys",
    "destination": "email",
    "subject": "Hello {name}",
    "content": "<p>Dear {name}</p>",
}


def email_people() -> pd.DataFrame:
    return pd.DataFrame({"email": ["ana@example.org", "li@example.net"], "name": ["Ana", "Li"]})


@pytest.mark.parametrize(
    ("options", "named"),
    [
        pytest.param({"reply": True}, "reply", id="reply"),
        pytest.param({"survey_id": 7}, "survey_id", id="survey-id"),
        pytest.param({"on_behalf": "acme"}, "on_behalf", id="on-behalf"),
        pytest.param({"timeout": 30}, "timeout", id="timeout"),
        pytest.param({"reply": True, "survey_id": 7}, "reply, survey_id", id="two"),
        pytest.param({"region": "GB"}, "region", id="region"),
        pytest.param({"strict": True}, "strict", id="strict"),
    ],
)
def test_an_option_an_email_cannot_carry_is_refused_by_name(
    options: dict[str, Any], named: str
) -> None:
    platform = FakePlatform()
    client = client_for(platform, "sync")
    for call in (send_batch, preview_batch):
        with pytest.raises(ValueError, match=rf"^{named}: not for channel='email'"):
            call(client, email_people(), **EMAIL, **options)  # type: ignore[operator]
    assert platform.requests == []


@pytest.mark.parametrize("option", ["metadata", "callback"])
def test_an_email_option_on_another_channel_is_refused_by_name(option: str) -> None:
    platform = FakePlatform()
    value: Any = ["firstName"] if option == "metadata" else {"url": "https://cb.example.org/in"}
    with pytest.raises(ValueError, match=rf"^{option}: only for channel='email'"):
        send_batch(client_for(platform, "sync"), people(), **SEND, **{option: value})
    assert platform.requests == []


def test_windows_of_an_email_batch_go_out_as_each_rows_when() -> None:
    platform = FakePlatform()
    monday = datetime(2030, 1, 7, 8, 0, tzinfo=UTC)  # a Monday, so Saturday is 5 days on
    saturday_nine = datetime(2030, 1, 12, 9, 0, tzinfo=UTC)
    client = client_for(platform, "sync")
    shown = preview_batch(client, email_people(), **EMAIL, windows="Sat 09:00-10:00", start=monday)
    assert shown.frame["send_at"].tolist() == [saturday_nine, saturday_nine]
    result = send_batch(
        client, email_people(), **EMAIL, windows="Sat 09:00-10:00", when=monday, progress=False
    )
    assert result.frame["outcome"].astype(str).tolist() == ["sent", "sent"]
    whens = [datetime.fromisoformat(body["When"]) for _, _, body in platform.requests]
    assert whens == [saturday_nine, saturday_nine]


def test_an_email_inside_its_window_keeps_its_own_when() -> None:
    platform = FakePlatform()
    saturday_half_past = datetime(2030, 1, 12, 9, 30, tzinfo=UTC)
    send_batch(
        client_for(platform, "sync"),
        email_people(),
        **EMAIL,
        windows="Sat 09:00-10:00",
        when=saturday_half_past,
        progress=False,
    )
    whens = [datetime.fromisoformat(body["When"]) for _, _, body in platform.requests]
    assert whens == [saturday_half_past, saturday_half_past]


def test_lookup_goes_out_on_an_email_batch() -> None:
    platform = FakePlatform()
    send_batch(client_for(platform, "sync"), email_people(), **EMAIL, lookup=True, progress=False)
    assert [body.get("Lookup") for _, _, body in platform.requests] == [True, True]
