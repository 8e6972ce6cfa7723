"""Widget logic, driven by setting widget values and clicking buttons as a person would."""

from __future__ import annotations

from typing import Any

import httpx
import matplotlib
import pandas as pd
import pytest

import surveykit as sk
from surveykit.widgets import BatchComposer
from surveykit.widgets import _widgets as widgets
from tests.helpers.fake_platform import FakePlatform

matplotlib.use("Agg")


@pytest.fixture
def platform() -> FakePlatform:
    return FakePlatform()


@pytest.fixture
def client(platform: FakePlatform) -> sk.Client:
    return sk.Client("https://api.example.test", "tok", transport=httpx.MockTransport(platform))


@pytest.fixture
def people() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "firstName": ["Zoë", "Ana", None],
            "mobileNumber": ["447700900001", "447700900002", "447700900003"],
        }
    )


def test_composer_preview_follows_the_template(client: sk.Client, people: pd.DataFrame) -> None:
    composer = BatchComposer(client, people, source="447700900999", message="Hi {firstName}")
    assert "Hi Zoë" in composer.preview.value
    assert "<b>2</b> of 3 rows ready" in composer.preview.value
    assert "missing value for {firstName}: 1" in composer.preview.value
    composer.template.value = "Hi {firstName} " + "ł" * 70
    assert "<b>4</b> SMS segments" in composer.preview.value
    composer.template.value = "Hi {nickname}"
    assert "no column for {nickname}" in composer.preview.value
    assert composer.send_button.disabled


def test_composer_windows_and_channel(client: sk.Client, people: pd.DataFrame) -> None:
    composer = BatchComposer(client, people, source="447700900999", message="Hi")
    composer.windows.value = "Mon-Fri 09:00-18:00; Sat 10:00-12:00"
    assert "first send" in composer.preview.value
    composer.windows.value = "Funday 09:00-10:00"
    assert "is not a day" in composer.preview.value


def test_test_mode_sends_in_one_click(
    client: sk.Client, people: pd.DataFrame, platform: FakePlatform
) -> None:
    composer = BatchComposer(client, people, source="447700900999", message="Hi {firstName}")
    composer.send_button.click()
    assert composer.result is not None
    assert composer.result.summary.to_dict() == {"tested": 2, "rejected": 1}
    assert all(body["test"] is True for _, _, body in platform.requests)
    assert "Done: tested 2, rejected 1" in composer.status.value


def test_real_send_needs_a_second_click(
    client: sk.Client, people: pd.DataFrame, platform: FakePlatform
) -> None:
    composer = BatchComposer(client, people, source="447700900999", message="Hi {firstName}")
    composer.test.value = False
    composer.send_button.click()
    assert platform.requests == []
    assert "Click Send again to confirm" in composer.status.value
    composer.template.value = "Hello {firstName}"  # an edit disarms
    composer.send_button.click()
    assert platform.requests == []
    composer.send_button.click()
    # The batch sends concurrently: which of the two arrives first is not part of the contract.
    assert sorted(body["message"] for _, _, body in platform.requests) == ["Hello Ana", "Hello Zoë"]
    assert composer.result.summary.to_dict() == {"sent": 2, "rejected": 1}


def test_send_moves_the_bar_and_counts_as_rows_finish(
    client: sk.Client, people: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widgets, "PROGRESS_INTERVAL", 0.0)  # every row redraws
    composer = BatchComposer(client, people, source="447700900999", message="Hi {firstName}")
    assert composer.progress in composer.widget.children[-1].children
    assert (composer.progress.value, composer.progress.max) == (0, 3)
    bar: list[int] = []
    composer.progress.observe(lambda change: bar.append(change["new"]), names="value")
    composer.test.value = False
    composer.send_button.click()
    assert bar == []  # armed, nothing sent yet
    composer.send_button.click()
    assert bar == [1, 2, 3]  # one step per row, as each got its outcome
    assert composer.progress.value == len(people)
    assert composer.outcomes.value == "sent 2, rejected 1"
    assert composer.progress.bar_style == "success"


def test_the_bar_is_redrawn_at_most_every_interval_and_ends_exact(
    client: sk.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widgets, "PROGRESS_INTERVAL", 3600.0)  # only the first and last
    rows = pd.DataFrame({"mobileNumber": [f"4477009{i:05d}" for i in range(30)]})
    composer = BatchComposer(client, rows, source="447700900999", message="Hi")
    bar: list[int] = []
    composer.progress.observe(lambda change: bar.append(change["new"]), names="value")
    composer.send()
    assert bar == [1, 30]
    assert composer.outcomes.value == "tested 30"


def test_a_second_send_starts_the_bar_again(client: sk.Client, people: pd.DataFrame) -> None:
    composer = BatchComposer(client, people.head(2), source="447700900999", message="Hi")
    composer.send()
    bar: list[int] = []
    composer.progress.observe(lambda change: bar.append(change["new"]), names="value")
    composer.send()
    assert bar == [0, 1, 2]
    assert composer.outcomes.value == "tested 2"


def test_an_interrupted_send_keeps_the_rows_so_far(
    client: sk.Client, people: pd.DataFrame, platform: FakePlatform
) -> None:
    from surveykit.batch import BatchInterrupted

    platform.fail("447700900002", KeyboardInterrupt())
    composer = BatchComposer(client, people, source="447700900999", message="Hi {firstName}")
    with pytest.raises(BatchInterrupted):
        composer.send()
    assert len(composer.result.frame) == len(people)
    assert composer.progress.bar_style == "warning"
    assert "Stopped" in composer.status.value and "Without a journal" in composer.status.value
    assert not composer.send_button.disabled


def test_results_explorer_follows_its_selectors() -> None:
    from datetime import date

    from surveykit.widgets import ResultsExplorer

    sandbox = sk.Sandbox(seed=2)
    explorer = ResultsExplorer(sk.Client.sandbox(sandbox))
    assert list(explorer.survey.options) == ["CSAT-SMS-2026", "EVT-DDLIS-2026", "NPS-WA-Q1-2026"]
    assert explorer.survey.value == "CSAT-SMS-2026"
    assert explorer.question.options == ("Q1", "Q2", "Q3")
    assert explorer.summary.value.startswith("CSAT-SMS-2026: 12 respondents, ")
    assert bytes(explorer.chart.value).startswith(b"\x89PNG")
    first_chart = explorer.chart.value
    explorer.question.value = "Q2"
    assert explorer.chart.value != first_chart
    assert "Q2" in explorer.table.value
    explorer.survey.value = "NPS-WA-Q1-2026"
    assert explorer.summary.value.startswith("NPS-WA-Q1-2026: 11 respondents, ")
    assert explorer.empty.layout.display == "none"
    explorer.since.value = date(2030, 1, 1)
    assert explorer.summary.value == "NPS-WA-Q1-2026: 0 respondents, 0 completed"


def test_events_monitor_shows_callbacks_as_they_arrive() -> None:
    from surveykit.widgets import EventsMonitor
    from tests.helpers.callbacks import receipt

    with sk.listen() as listener:
        monitor = EventsMonitor(listener)
        assert monitor.counts.value == "<i>no events yet</i>"
        for i, kind in enumerate(["Receipt", "Receipt", "Click"]):
            body = receipt(f"MS{i}", Type=kind)
            httpx.post(listener.url, json=body).raise_for_status()
        monitor.refresh_button.click()
        assert monitor.counts.value == "<b>3 events</b>: Receipt 2, Click 1"
        assert "MS2" in monitor.latest.value


def test_events_monitor_with_auto_refreshes_by_itself_until_stopped() -> None:
    import threading
    import time

    from surveykit.widgets import EventsMonitor
    from tests.helpers.callbacks import receipt

    def monitor_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "surveykit-events-monitor"]

    def wait_until(condition: Any, seconds: float = 10.0) -> bool:
        deadline = time.monotonic() + seconds  # bounded: fails instead of hanging
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.02)
        return bool(condition())

    with sk.listen() as listener:
        monitor = EventsMonitor(listener, auto=True, interval=0.05)
        try:
            assert monitor.counts.value == "<i>no events yet</i>"
            httpx.post(listener.url, json=receipt("MS1")).raise_for_status()
            # No click on Refresh: the background thread picks the event up.
            assert wait_until(lambda: "MS1" in monitor.latest.value)  # set after the counts
            assert monitor.counts.value == "<b>1 events</b>: Receipt 1"
        finally:
            monitor.stop()
        assert wait_until(lambda: not monitor_threads())
        httpx.post(listener.url, json=receipt("MS2")).raise_for_status()
        time.sleep(0.2)  # four intervals: a running thread would have refreshed by now
        assert "MS2" not in monitor.latest.value


def test_results_explorer_shows_an_empty_state_not_a_broken_image() -> None:
    from datetime import date

    from surveykit.widgets import ResultsExplorer

    explorer = ResultsExplorer(sk.Client.sandbox(sk.Sandbox(seed=2)))
    assert explorer.chart.layout.display is None and explorer.empty.layout.display == "none"
    explorer.since.value = date(2030, 1, 1)
    # No empty <img> left visible (a browser draws it as a broken image): it is hidden,
    # and a sentence says why there is nothing.
    assert explorer.chart.layout.display == "none"
    assert explorer.table.layout.display == "none"
    assert explorer.empty.layout.display is None
    assert "No results for CSAT-SMS-2026 since 2030-01-01" in explorer.empty.value
    assert "<" not in explorer.summary.value  # a plain sentence, no markup
    explorer.since.value = None
    assert explorer.chart.layout.display is None
    assert bytes(explorer.chart.value).startswith(b"\x89PNG")
    assert explorer.empty.layout.display == "none"


def test_results_explorer_question_without_answers_is_an_empty_state() -> None:
    from surveykit.widgets import ResultsExplorer

    explorer = ResultsExplorer(sk.Client.sandbox(sk.Sandbox(seed=2)))
    explorer.frame = explorer.frame.assign(Q2=pd.NA)
    explorer.question.value = "Q2"
    assert explorer.chart.layout.display == "none"
    assert "No answers to Q2 yet." in explorer.empty.value


def test_an_edit_that_breaks_the_preview_clears_the_last_send(
    client: sk.Client, people: pd.DataFrame
) -> None:
    composer = BatchComposer(client, people, source="447700900999", message="Hi {firstName}")
    composer.send()
    assert composer.status.value.startswith("Done: ")
    assert (composer.progress.value, composer.progress.bar_style) == (3, "success")
    assert composer.outcomes.value == "tested 2, rejected 1"
    composer.template.value = "Hi {nickname}"
    assert "no column for {nickname}" in composer.preview.value
    assert composer.status.value == ""
    assert (composer.progress.value, composer.progress.bar_style) == (0, "")
    assert composer.outcomes.value == ""
    assert composer.send_button.disabled


def test_an_edit_disarms_and_says_so(client: sk.Client, people: pd.DataFrame) -> None:
    composer = BatchComposer(client, people, source="447700900999", message="Hi")
    composer.test.value = False
    composer.send_button.click()
    assert "Click Send again" in composer.status.value
    composer.template.value = "Hello"
    assert composer.status.value == ""  # no stale "Click Send again" once disarmed


def test_composer_links_fill_the_link_and_are_registered_on_send(
    client: sk.Client, platform: FakePlatform
) -> None:
    rows = pd.DataFrame(
        {
            "mobileNumber": ["447700900001", "447700900002"],
            "url": ["https://example.test/s?r=1", "https://example.test/s?r=2"],
        }
    )
    composer = BatchComposer(client, rows, source="447700900999", message="Go {link}")
    assert "no column for {link}" in composer.preview.value and composer.send_button.disabled
    assert composer.links.value is None
    composer.links.value = "url"
    assert "Go https://sho.rt/AbCd123" in composer.preview.value
    assert not composer.send_button.disabled
    composer.send()
    assert composer.result.summary.to_dict() == {"tested": 2}
    paths = [path for _, path, _ in platform.requests]
    assert paths == ["/v3.2/TinyUrl/RegisterList", "/v3.2/Message", "/v3.2/Message"]
    registered = platform.requests[0][2]["urls"]
    assert [u["fullUrl"] for u in registered] == rows["url"].tolist()
    texts = [body["message"] for _, _, body in platform.requests[1:]]
    assert all(t.startswith("Go https://") and "AbCd123" not in t for t in texts)
    with pytest.raises(sk.ValidationError, match="links: no column 'link'"):
        BatchComposer(client, rows, source="447700900999", message="Go {link}", links="link")
    assert BatchComposer(client, rows, source="S", message="{link}", links="url").links.value == (
        "url"
    )


def test_composer_opt_outs_marks_and_skips_those_rows(
    client: sk.Client, people: pd.DataFrame, platform: FakePlatform, tmp_path: Any
) -> None:
    optouts = sk.OptOutList(tmp_path / "optouts.sqlite")
    optouts.add(["+44 7700 900002"], reason="STOP")
    composer = BatchComposer(
        client,
        people,
        source="447700900999",
        message="Hi {firstName}",
        opt_outs=tmp_path / "optouts.sqlite",  # a path works as well as the list
    )
    assert "<b>1</b> of 3 rows ready" in composer.preview.value
    assert "on the opt-out list: 1" in composer.preview.value
    assert "<b>1</b> opted out (not sent)" in composer.preview.value
    assert "447700900002</td>" in composer.preview.value.split("opted out (not sent)")[1]
    composer.send()
    assert composer.result.summary.to_dict() == {"tested": 1, "opted_out": 1, "rejected": 1}
    assert [body["destination"] for _, _, body in platform.requests] == ["447700900001"]


def test_composer_timezone_shows_local_send_times() -> None:
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from surveykit.sandbox import Sandbox

    # The sandbox's virtual clock: the preview's times do not move between two calls.
    start = datetime(2026, 3, 2, 9, tzinfo=UTC)
    client = sk.Client.sandbox(Sandbox(sample_data=False, start=start))
    rows = pd.DataFrame(
        {"mobileNumber": ["447911123456", "61291234567"], "tz": ["Europe/London", "Asia/Tokyo"]}
    )
    composer = BatchComposer(
        client, rows, source="447700900999", message="Hi", timezone="Australia/Sydney"
    )
    assert composer.timezone.value == "Australia/Sydney"
    assert "local hours need windows" in composer.preview.value  # no windows yet
    composer.windows.value = "Mon-Fri 09:00-18:00"
    assert "local_send_time" in composer.preview.value
    assert "Australia/Sydney" in composer.preview.value
    composer.timezone.value = "tz"
    assert "Asia/Tokyo" in composer.preview.value
    preview = sk.preview_batch(client, rows, **composer._options())
    for label, name in zip(rows.index, rows["tz"], strict=True):
        local = preview.frame.at[label, "local_send_time"]
        assert str(local.tzinfo) == name
        assert local == preview.frame.at[label, "send_at"].astimezone(ZoneInfo(name))
        assert local.isoweekday() <= 5 and 9 <= local.hour < 18
        assert str(local) in composer.preview.value
    composer.timezone.value = "Mars/Olympus"
    assert "timezone: &#x27;Mars/Olympus&#x27;" in composer.preview.value
    assert composer.send_button.disabled


def test_links_dropdown_shows_none_rather_than_a_blank_box(
    client: sk.Client, people: pd.DataFrame
) -> None:
    # A Dropdown given value=None selects nothing: the browser draws an empty box.
    composer = BatchComposer(client, people, source="447700900999", message="Hi")
    assert (composer.links.index, composer.links.label) == (0, "(none)")
    assert composer.links.value is None
    chosen = BatchComposer(client, people, source="S", message="Hi", links="firstName")
    assert (chosen.links.label, chosen.links.value) == ("firstName", "firstName")


def test_auto_timezone_names_the_first_zone_and_keeps_times_on_one_line() -> None:
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from surveykit.sandbox import Sandbox

    client = sk.Client.sandbox(
        Sandbox(sample_data=False, start=datetime(2026, 3, 2, 9, tzinfo=UTC))
    )
    rows = pd.DataFrame(
        {"mobileNumber": ["447400714265", "61491570120", "12125550177"]},
        index=pd.Index(["gb<1>", "au", "us"], name="who&"),
    )
    composer = BatchComposer(
        client, rows, source="447700900999", message="Hi <b>there</b>", timezone="auto"
    )
    composer.windows.value = "Mon-Fri 09:00-18:00"
    shown = composer.preview.value
    preview = sk.preview_batch(client, rows, **composer._options())
    several = 0
    for label in rows.index:
        zones = preview.frame.at[label, "timezone"].split(", ")
        local = preview.frame.at[label, "local_send_time"]
        assert local == preview.frame.at[label, "send_at"].astimezone(ZoneInfo(zones[0]))
        # The time, offset included, never breaks across two lines.
        assert f"<span style='white-space:nowrap'>{local}</span>" in shown
        if len(zones) > 1:
            several += 1
            assert f"{zones[0]} (+{len(zones) - 1} more)</span>" in shown
            assert ", ".join(zones) not in shown  # not the whole list in the table
        else:
            assert f"nowrap'>{zones[0]}</span>" in shown
    assert several >= 1  # an Australian mobile has several zones
    assert "its local time is given in the first" in shown
    # The cells, labels and names are still escaped.
    assert "Hi &lt;b&gt;there&lt;/b&gt;" in shown and "<b>there" not in shown
    assert "gb&lt;1&gt;" in shown and "who&amp;" in shown
    composer.timezone.value = "Europe/London"
    assert "its local time is given in the first" not in composer.preview.value


def test_windows_and_timezone_are_read_when_typed_not_per_key(
    client: sk.Client, people: pd.DataFrame
) -> None:
    # In the browser a box with continuous_update sends every key: "Europe/Lon" would
    # replace the preview by an error until the name is complete.
    composer = BatchComposer(client, people, source="447700900999", message="Hi")
    assert composer.windows.continuous_update is False
    assert composer.timezone.continuous_update is False
    assert composer.template.continuous_update is True  # the message does follow each key
    composer.timezone.value = "Europe/London"  # what Enter or leaving the box sends
    assert "local hours need windows" in composer.preview.value
