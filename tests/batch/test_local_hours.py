"""Sending in the respondent's local hours: ``timezone=``, per-row ``when``, window zones.

Every expected time is worked out here independently: with zoneinfo, the first moment at
or after the submission that is inside the windows in each of the row's zones is either
the submission itself or one zone's window opening, so the candidates are scanned.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pandas as pd
import phonenumbers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phonenumbers import timezone as pn_timezone

import surveykit as sk
from surveykit.batch._local import SEVERAL_ZONES, LocalHours
from surveykit.models import Window
from surveykit.rules.windows import next_allowed, windows_from
from surveykit.sandbox import Sandbox

SOURCE = "447700900999"
HOURS = "Mon-Fri 09:00-18:00"
MONDAY_9_UTC = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

UK, SYDNEY, NEW_YORK = "447911123456", "61291234567", "12125550123"
AU_MOBILE = "61412345678"  # phonenumbers: eight Australian zones
NANP_ANY = "18005550123"  # toll-free: every North American and Pacific zone


def inside(moment: datetime, windows: list[Window], tz: ZoneInfo) -> bool:
    local = moment.astimezone(tz)
    return any(
        local.isoweekday() in w.days and w.from_ <= local.time().replace(tzinfo=None) < w.to
        for w in windows
    )


def expected_first(windows: list[Window], zones: list[str], submit: datetime) -> datetime | None:
    """The first moment >= submit inside the windows in every zone (candidate scan)."""
    candidates = {submit}
    for name in zones:
        tz = ZoneInfo(name)
        for offset in range(-2, 12):
            day = submit.astimezone(tz).date() + timedelta(days=offset)
            for w in windows:
                opening = datetime.combine(day, w.from_, tzinfo=tz)
                if opening >= submit:
                    candidates.add(opening)
    for moment in sorted(candidates):
        if all(inside(moment, windows, ZoneInfo(name)) for name in zones):
            return moment
    return None


def zones_of(number: str) -> list[str]:
    parsed = phonenumbers.parse("+" + number)
    return list(pn_timezone.time_zones_for_number(parsed))


def people(*numbers: str, **columns: list[object]) -> pd.DataFrame:
    return pd.DataFrame(
        {"firstName": [f"P{i}" for i in range(len(numbers))], "mobileNumber": list(numbers)}
        | columns,
        index=pd.Index([f"r{i}" for i in range(len(numbers))], name="row"),
    )


def sandbox_client(start: datetime = MONDAY_9_UTC) -> sk.Client:
    return sk.Client.sandbox(Sandbox(seed=1, sample_data=False, start=start))


def test_uk_au_us_numbers_are_sent_inside_local_hours() -> None:
    client = sandbox_client()
    df = people(UK, SYDNEY, NEW_YORK, AU_MOBILE)
    result = sk.send_batch(
        client, df, message="Hi", source=SOURCE, windows=HOURS, timezone="auto", progress=False
    )
    frame = result.frame
    assert list(frame["outcome"]) == ["sent"] * 4
    windows = windows_from(HOURS)
    assert windows is not None
    scheduled = {m.destination: m.scheduled_for for m in client.embedded.messages()}  # type: ignore[union-attr]
    for label, number in zip(df.index, df["mobileNumber"], strict=True):
        zones = zones_of(number)
        when = frame.at[label, "when"].to_pydatetime()
        assert when == expected_first(windows, zones, MONDAY_9_UTC), number
        for name in zones:
            assert inside(when, windows, ZoneInfo(name)), (number, name)
        # The platform, reading the windows sent on its own clock (UTC), sends at `when`.
        assert scheduled[number] == when
        local = frame.at[label, "local_send_time"]
        assert (
            local == when and local.utcoffset() == when.astimezone(ZoneInfo(zones[0])).utcoffset()
        )
    assert frame.at["r0", "timezone"] == ", ".join(zones_of(UK))
    assert frame.at["r1", "timezone"] == "Australia/Sydney"
    # Monday 09:00 UTC is 20:00 in Sydney: the next local 09:00 is Tuesday 09:00 AEDT.
    assert frame.at["r1", "when"] == datetime(2026, 3, 3, 9, tzinfo=ZoneInfo("Australia/Sydney"))
    assert frame.at["r2", "when"] == datetime(2026, 3, 2, 9, tzinfo=ZoneInfo("America/New_York"))


@pytest.mark.parametrize(
    ("zone", "start", "local_day"),
    [
        pytest.param(
            "Europe/London",
            datetime(2026, 3, 28, 20, tzinfo=UTC),
            date(2026, 3, 29),
            id="london-spring",
        ),
        pytest.param(
            "America/New_York",
            datetime(2026, 3, 7, 23, tzinfo=UTC),
            date(2026, 3, 8),
            id="new-york-spring",
        ),
        pytest.param(
            "Australia/Sydney",
            datetime(2026, 4, 4, 12, tzinfo=UTC),
            date(2026, 4, 5),
            id="sydney-autumn",
        ),
        pytest.param(
            "Europe/London",
            datetime(2026, 10, 24, 20, tzinfo=UTC),
            date(2026, 10, 25),
            id="london-autumn",
        ),
    ],
)
def test_local_hours_are_exact_across_a_daylight_saving_change(
    zone: str, start: datetime, local_day: date
) -> None:
    client = sandbox_client(start)
    df = people(UK, tz=[zone])
    windows = "daily 09:00-18:00"
    result = sk.send_batch(
        client, df, message="Hi", source=SOURCE, windows=windows, timezone="tz", progress=False
    )
    when = result.frame.at["r0", "when"].to_pydatetime()
    tz = ZoneInfo(zone)
    # The day of the change itself: 09:00 on the new offset, to the minute.
    assert when == datetime.combine(local_day, time(9), tzinfo=tz)
    assert when.astimezone(tz).utcoffset() != (when - timedelta(days=1)).astimezone(tz).utcoffset()
    message = client.embedded.messages()[0]  # type: ignore[union-attr]
    assert message.scheduled_for == when
    # The windows sent, read on the platform's clock (UTC), hold exactly the local hours
    # of the seven days from the send, minute by minute.
    sent = [Window.model_validate(w) for w in message.windows]
    parsed = windows_from(windows)
    assert parsed is not None
    day_start = when.astimezone(UTC).replace(hour=0, minute=0)
    for minute in range(0, 7 * 24 * 60, 7):
        moment = day_start + timedelta(minutes=minute)
        if moment.astimezone(UTC).time() == time(23, 59):
            continue  # a Window ends at 23:59 at the latest
        assert (next_allowed(sent, moment) == moment) == inside(moment, parsed, tz), moment


ZONES = [
    "Europe/London",
    "America/New_York",
    "America/Los_Angeles",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "UTC",
]
WINDOWS = ["Mon-Fri 09:00-18:00", "daily 08:30-20:45", "Sat,Sun 10:00-12:00", "Mon 00:00-23:59"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.sampled_from(ZONES), min_size=1, max_size=3, unique=True),
    windows=st.lists(st.sampled_from(WINDOWS), min_size=1, max_size=2, unique=True),
    minutes=st.integers(min_value=0, max_value=366 * 24 * 60),
    platform=st.sampled_from(["UTC", "Europe/London", "America/Chicago"]),
)
def test_first_allowed_moment_matches_an_independent_scan(
    zones: list[str], windows: list[str], minutes: int, platform: str
) -> None:
    parsed = windows_from(windows)
    assert parsed is not None
    submit = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes, seconds=17)
    platform_tz = ZoneInfo(platform)
    planned = LocalHours(parsed, platform_tz).plan(tuple(zones), submit)
    expected = expected_first(parsed, zones, submit)
    if planned is None:
        assert expected is None or expected - submit > timedelta(days=8)
        return
    assert planned.when == expected
    # The platform, reading the windows sent in its own zone, sends at exactly `when`.
    assert next_allowed(planned.windows, planned.when.astimezone(platform_tz)) == planned.when


def test_several_zones_auto_is_refused_and_a_timezone_column_sends() -> None:
    client = sandbox_client()
    df = people(NANP_ANY, AU_MOBILE)
    result = sk.send_batch(
        client, df, message="Hi", source=SOURCE, windows=HOURS, timezone="auto", progress=False
    )
    assert result.frame.at["r0", "outcome"] == "rejected"
    assert (
        result.frame.at["r0", "error"]
        == SEVERAL_ZONES
        == ("several time zones: give a timezone column")
    )
    # The Australian zones share some of 09:00-18:00: sent inside it in every one of them.
    assert result.frame.at["r1", "outcome"] == "sent"
    when = result.frame.at["r1", "when"].to_pydatetime()
    parsed = windows_from(HOURS)
    assert parsed is not None
    assert len(zones_of(AU_MOBILE)) > 1
    assert all(inside(when, parsed, ZoneInfo(name)) for name in zones_of(AU_MOBILE))
    assert when == expected_first(parsed, zones_of(AU_MOBILE), MONDAY_9_UTC)
    sent = {m.destination for m in client.embedded.messages()}  # type: ignore[union-attr]
    assert NANP_ANY not in sent

    named = people(NANP_ANY, AU_MOBILE, tz=["America/Chicago", "Australia/Perth"])
    again = sk.send_batch(
        sandbox_client(),
        named,
        message="Hi",
        source=SOURCE,
        windows=HOURS,
        timezone="tz",
        progress=False,
    )
    assert list(again.frame["outcome"]) == ["sent", "sent"]
    assert list(again.frame["timezone"]) == ["America/Chicago", "Australia/Perth"]
    for label, name in (("r0", "America/Chicago"), ("r1", "Australia/Perth")):
        moment = again.frame.at[label, "when"].to_pydatetime()
        assert moment == expected_first(parsed, [name], MONDAY_9_UTC)


def test_preview_shows_local_send_time_and_zone() -> None:
    client = sandbox_client()
    df = people(UK, SYDNEY, NANP_ANY)
    preview = sk.preview_batch(
        client, df, message="Hi", source=SOURCE, windows=HOURS, timezone="auto"
    )
    frame = preview.frame
    assert list(frame["outcome"]) == ["ready", "ready", "rejected"]
    assert frame.at["r2", "error"] == SEVERAL_ZONES
    sydney = ZoneInfo("Australia/Sydney")
    assert frame.at["r1", "local_send_time"] == datetime(2026, 3, 3, 9, tzinfo=sydney)
    assert str(frame.at["r1", "local_send_time"].tzinfo) == "Australia/Sydney"
    assert frame.at["r1", "send_at"] == datetime(2026, 3, 3, 9, tzinfo=sydney)
    assert frame.at["r1", "timezone"] == "Australia/Sydney"
    assert preview.totals["rejected"] == {f"rejected: {SEVERAL_ZONES}": 1}
    # Nothing was sent by the preview.
    assert client.embedded.messages() == []  # type: ignore[union-attr]


def test_without_timezone_windows_keep_the_platform_clock() -> None:
    df = people(SYDNEY)
    utc = sk.preview_batch(
        sandbox_client(), df, message="Hi", source=SOURCE, windows="Mon 10:00-11:00"
    )
    assert utc.frame.at["r0", "send_at"] == datetime(2026, 3, 2, 10, tzinfo=UTC)
    assert "local_send_time" not in utc.frame.columns
    london = sk.Client.sandbox(
        Sandbox(seed=1, sample_data=False, start=MONDAY_9_UTC), window_timezone="Europe/London"
    )
    assert london.window_timezone == ZoneInfo("Europe/London")
    shown = sk.preview_batch(london, df, message="Hi", source=SOURCE, windows="Mon 10:00-11:00")
    expected = datetime(2026, 3, 2, 10, tzinfo=ZoneInfo("Europe/London"))
    assert shown.frame.at["r0", "send_at"] == expected


def test_local_windows_move_to_the_clients_window_timezone() -> None:
    chicago = ZoneInfo("America/Chicago")
    parsed = windows_from(HOURS)
    assert parsed is not None
    planned = LocalHours(parsed, chicago).plan(("Europe/London",), MONDAY_9_UTC)
    assert planned is not None
    # 09:00-18:00 in London (GMT) is 03:00-12:00 in Chicago (CST) that week.
    assert {(w.from_, w.to) for w in planned.windows} == {(time(3), time(12))}
    assert planned.when == MONDAY_9_UTC


def test_bad_window_timezone_is_refused() -> None:
    with pytest.raises(sk.ValidationError, match="window_timezone: 'Mars/Olympus'"):
        sk.Client.sandbox(window_timezone="Mars/Olympus")


@pytest.mark.parametrize(
    ("options", "pattern"),
    [
        pytest.param(
            {"when": datetime(2026, 3, 2, 9)},
            r"^when: a timezone-aware .*'2026-03-02 09:00:00'",
            id="naive-datetime",
        ),
        pytest.param(
            {"when": pd.Timestamp("2026-03-02 09:00")},
            r"^when: a timezone-aware",
            id="naive-timestamp",
        ),
        pytest.param({"when": "2026-03-02T09:00"}, r"^when: a timezone-aware", id="naive-iso"),
        pytest.param(
            {"when": "next tuesday"}, r"^when: 'next tuesday' is not an ISO 8601", id="not-a-time"
        ),
        pytest.param(
            {"when": "at"},
            r"^when: a timezone-aware .*column 'at', row 'r1': '2026-03-02 10:00:00' has no time",
            id="naive-cell",
        ),
        pytest.param(
            {"windows": HOURS, "timezone": "Mars/Olympus"},
            r"^timezone: 'Mars/Olympus' is neither",
            id="unknown-zone",
        ),
        pytest.param(
            {"windows": HOURS, "timezone": "zone"},
            r"^timezone: 'zone' is neither .*columns are",
            id="missing-column",
        ),
        pytest.param(
            {"windows": HOURS, "timezone": "badtz"},
            r"^timezone: column 'badtz', row 'r1': 'Nowhere/Town'",
            id="bad-cell",
        ),
        pytest.param(
            {"timezone": "Europe/London"}, r"^timezone: local hours need windows", id="no-windows"
        ),
    ],
)
def test_bad_when_and_timezone_name_the_field(options: dict[str, object], pattern: str) -> None:
    df = people(
        UK,
        SYDNEY,
        at=["2026-03-02T10:00+00:00", "2026-03-02 10:00"],
        badtz=["Europe/London", "Nowhere/Town"],
    )
    client = sandbox_client()
    for call in (sk.send_batch, sk.preview_batch):
        with pytest.raises(sk.ValidationError, match=pattern):
            call(client, df, message="Hi", source=SOURCE, **options)  # type: ignore[operator]
    assert client.embedded.messages() == []  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "when",
    [
        pytest.param(datetime(2026, 3, 3, 7, tzinfo=ZoneInfo("Europe/Paris")), id="datetime"),
        pytest.param(pd.Timestamp("2026-03-03 07:00", tz="Europe/Paris"), id="timestamp"),
        pytest.param("2026-03-03T07:00:00+01:00", id="iso"),
    ],
)
def test_when_takes_a_datetime_a_timestamp_or_an_iso_string(when: object) -> None:
    client = sandbox_client()
    result = sk.send_batch(
        client, people(UK), message="Hi", source=SOURCE, when=when, progress=False
    )  # type: ignore[arg-type]
    assert result.frame.at["r0", "outcome"] == "sent"
    assert client.embedded.messages()[0].scheduled_for == datetime(2026, 3, 3, 6, tzinfo=UTC)  # type: ignore[union-attr]


def test_a_when_column_gives_each_row_its_time() -> None:
    client = sandbox_client()
    df = people(
        UK,
        SYDNEY,
        NEW_YORK,
        at=["2026-03-02T15:30:00+00:00", pd.Timestamp("2026-03-04 08:00", tz="Asia/Tokyo"), None],
    )
    result = sk.send_batch(client, df, message="Hi", source=SOURCE, when="at", progress=False)
    assert list(result.frame["outcome"]) == ["sent"] * 3
    scheduled = {m.destination: m.scheduled_for for m in client.embedded.messages()}  # type: ignore[union-attr]
    assert scheduled == {
        UK: datetime(2026, 3, 2, 15, 30, tzinfo=UTC),
        SYDNEY: datetime(2026, 3, 3, 23, tzinfo=UTC),
        NEW_YORK: MONDAY_9_UTC,  # an empty cell: now
    }
    # With local hours, each row's own time is where its search starts.
    local = sk.preview_batch(
        sandbox_client(), df, message="Hi", source=SOURCE, when="at", windows=HOURS, timezone="auto"
    )
    parsed = windows_from(HOURS)
    assert parsed is not None
    starts = [
        datetime(2026, 3, 2, 15, 30, tzinfo=UTC),
        datetime(2026, 3, 3, 23, tzinfo=UTC),
        MONDAY_9_UTC,
    ]
    for label, number, start in zip(df.index, df["mobileNumber"], starts, strict=True):
        assert local.frame.at[label, "send_at"] == expected_first(parsed, zones_of(number), start)


def test_email_rows_get_local_hours_through_their_when() -> None:
    client = sandbox_client()
    df = pd.DataFrame(
        {
            "emailAddress": ["a@example.org", "b@example.org"],
            "tz": ["Australia/Sydney", "America/New_York"],
        },
        index=["a", "b"],
    )
    result = sk.send_batch(
        client,
        df,
        channel="email",
        subject="S",
        content="C",
        source="surveys",
        windows=HOURS,
        timezone="tz",
        progress=False,
    )
    assert list(result.frame["outcome"]) == ["sent", "sent"]
    scheduled = {m.destination: m.scheduled_for for m in client.embedded.messages(channel="Email")}  # type: ignore[union-attr]
    assert scheduled == {
        "a@example.org": datetime(2026, 3, 3, 9, tzinfo=ZoneInfo("Australia/Sydney")),
        "b@example.org": datetime(2026, 3, 2, 9, tzinfo=ZoneInfo("America/New_York")),
    }
    with pytest.raises(sk.ValidationError, match=r"^timezone: 'auto' reads the zone from a phone"):
        sk.preview_batch(
            client,
            df,
            channel="email",
            subject="S",
            content="C",
            source="s",
            windows=HOURS,
            timezone="auto",
        )


def test_a_past_when_never_sends_outside_local_hours() -> None:
    # The sandbox clock is Monday 09:00 UTC, 20:00 in Sydney; `when` is in the past,
    # when it was 11:00 there.
    client = sandbox_client()
    past = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
    result = sk.send_batch(
        client,
        people(SYDNEY),
        message="Hi",
        source=SOURCE,
        when=past,
        windows=HOURS,
        timezone="auto",
        progress=False,
    )
    parsed = windows_from(HOURS)
    assert parsed is not None
    when = result.frame.at["r0", "when"].to_pydatetime()
    assert when == expected_first(parsed, ["Australia/Sydney"], MONDAY_9_UTC)
    assert client.embedded.messages()[0].scheduled_for == when  # type: ignore[union-attr]


async def test_an_async_client_sends_in_local_hours_too() -> None:
    sandbox = Sandbox(seed=1, sample_data=False, start=MONDAY_9_UTC)
    async with sk.AsyncClient.sandbox(sandbox) as client:
        result = await sk.send_batch(
            client,
            people(SYDNEY, NEW_YORK),
            message="Hi",
            source=SOURCE,
            windows=HOURS,
            timezone="auto",
            progress=False,
        )
    parsed = windows_from(HOURS)
    assert parsed is not None
    scheduled = {m.destination: m.scheduled_for for m in sandbox.messages()}
    for label, number in (("r0", SYDNEY), ("r1", NEW_YORK)):
        when = result.frame.at[label, "when"].to_pydatetime()
        assert when == expected_first(parsed, zones_of(number), MONDAY_9_UTC)
        assert scheduled[number] == when


def test_a_timezone_column_may_say_auto_for_some_rows() -> None:
    client = sandbox_client()
    df = people(UK, AU_MOBILE, NEW_YORK, tz=["auto", "Australia/Perth", "AUTO"])
    result = sk.send_batch(
        client, df, message="Hi", source=SOURCE, windows=HOURS, timezone="tz", progress=False
    )
    parsed = windows_from(HOURS)
    assert parsed is not None
    assert list(result.frame["outcome"]) == ["sent", "sent", "sent"]
    assert result.frame.at["r0", "timezone"] == ", ".join(zones_of(UK))
    assert result.frame.at["r1", "timezone"] == "Australia/Perth"
    assert result.frame.at["r2", "timezone"] == "America/New_York"
    for label, zones in (
        ("r0", zones_of(UK)),
        ("r1", ["Australia/Perth"]),
        ("r2", zones_of(NEW_YORK)),
    ):
        moment = result.frame.at[label, "when"].to_pydatetime()
        assert moment == expected_first(parsed, zones, MONDAY_9_UTC)


def test_auto_cells_are_refused_for_email_rows() -> None:
    df = pd.DataFrame(
        {"emailAddress": ["a@example.org"], "tz": ["auto"]}, index=pd.Index(["r0"], name="row")
    )
    with pytest.raises(sk.ValidationError, match=r"timezone: column 'tz', row 'r0': 'auto'"):
        sk.preview_batch(
            sandbox_client(),
            df,
            channel="email",
            subject="Hi",
            content="Hello",
            source="surveys@example.org",
            windows=HOURS,
            timezone="tz",
        )


def test_rows_and_journals_are_timed_on_the_sandbox_clock(tmp_path: Path) -> None:
    from surveykit.campaign._sources import send_table

    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    client = sandbox_client(start)
    client.embedded.advance(timedelta(minutes=90))  # type: ignore[union-attr]
    journal = tmp_path / "wave.sqlite"
    result = sk.send_batch(
        client,
        people(UK, NEW_YORK),
        message="Hi",
        source=SOURCE,
        journal=journal,
        progress=False,
    )
    expected = pd.Timestamp(start + timedelta(minutes=90))
    assert (result.frame["time"] == expected).all()
    table, _ = send_table([journal])
    assert (table["time"] == expected).all()


def test_a_numbers_own_country_zone_comes_first() -> None:
    mobile = "447400714265"  # phonenumbers: Guernsey, Isle of Man, Jersey and London
    assert zones_of(mobile)[0] != "Europe/London"
    preview = sk.preview_batch(
        sandbox_client(),
        people(mobile),
        message="Hi",
        source=SOURCE,
        windows=HOURS,
        timezone="auto",
    )
    zones = preview.frame.at["r0", "timezone"].split(", ")
    assert zones[0] == "Europe/London" and sorted(zones) == sorted(zones_of(mobile))
    assert str(preview.frame.at["r0", "local_send_time"].tzinfo) == "Europe/London"


@pytest.mark.parametrize("windows", ["us-tcpa", "legal"])
def test_a_legal_hours_preset_reads_each_respondent_s_local_time(windows: str) -> None:
    # Monday 09:00 UTC: 04:00 in New York, 20:00 in Sydney, 09:00 in London.
    client = sandbox_client()
    df = people(UK, SYDNEY, NEW_YORK)
    result = sk.send_batch(client, df, message="Hi", source=SOURCE, windows=windows, progress=False)
    frame = result.frame
    assert list(frame["outcome"]) == ["sent"] * 3
    assert frame.at["r0", "when"] == MONDAY_9_UTC
    assert frame.at["r1", "when"] == MONDAY_9_UTC, "20:00 in Sydney is inside 8:00-21:00"
    assert frame.at["r2", "when"] == datetime(2026, 3, 2, 8, tzinfo=ZoneInfo("America/New_York"))
    for label in frame.index:
        local = frame.at[label, "local_send_time"]
        assert 8 <= local.hour < 21, (label, local)


def test_a_legal_hours_preset_for_email_needs_a_timezone() -> None:
    df = pd.DataFrame({"email": ["a@example.org"]})
    with pytest.raises(sk.ValidationError, match=r"windows: 'us-tcpa'.*needs timezone="):
        sk.preview_batch(
            None, df, channel="email", to="email", subject="S", content="C",
            source="surveys@example.org", windows="us-tcpa",
        )
