from __future__ import annotations

from datetime import UTC, datetime, time

import pytest

from surveykit.batch import next_allowed, parse_window
from surveykit.models import Window
from surveykit.rules.windows import windows_from


@pytest.mark.parametrize(
    ("text", "days", "start", "end"),
    [
        ("Mon-Fri 09:00-18:00", [1, 2, 3, 4, 5], time(9), time(18)),
        ("mon-fri 9:00 - 18:30", [1, 2, 3, 4, 5], time(9), time(18, 30)),
        ("Sat,Sun 10:00-14:00", [6, 7], time(10), time(14)),
        ("Friday-Monday 08:00-20:00", [1, 5, 6, 7], time(8), time(20)),
        ("weekdays 08:00-20:00", [1, 2, 3, 4, 5], time(8), time(20)),
        ("weekends 10:00-12:00", [6, 7], time(10), time(12)),
        ("daily 07:30-21:00", [1, 2, 3, 4, 5, 6, 7], time(7, 30), time(21)),
        ("09:00-17:00", [1, 2, 3, 4, 5, 6, 7], time(9), time(17)),
        ("Tue 12:00-13:00", [2], time(12), time(13)),
    ],
)
def test_shorthand(text: str, days: list[int], start: time, end: time) -> None:
    window = parse_window(text)
    assert (window.days, window.from_, window.to) == (days, start, end)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Mon-Fri", "expected something like"),
        ("Mon-Fri 18:00-09:00", "must be before to"),
        ("Moonday 09:00-10:00", "is not a day"),
        ("Mon-Fri 25:00-26:00", "HH:MM"),
    ],
)
def test_bad_shorthand_is_explained(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        parse_window(text)
    assert repr(text) in str(caught.value)


def test_windows_from_mixed_inputs() -> None:
    windows = windows_from(
        [
            "Mon 09:00-10:00",
            {"from": "11:00", "to": "12:00", "days": "2"},
            Window(from_="13:00", to="14:00", days=[3]),
        ]
    )
    assert windows is not None
    assert [w.to_wire() for w in windows] == [
        {"from": "09:00", "to": "10:00", "days": "1"},
        {"from": "11:00", "to": "12:00", "days": "2"},
        {"from": "13:00", "to": "14:00", "days": "3"},
    ]
    assert windows_from("Sat 09:00-10:00") == [parse_window("Sat 09:00-10:00")]
    assert windows_from(None) is None


MONDAY_0800 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # 2026-03-02 is a Monday


@pytest.mark.parametrize(
    ("windows", "moment", "expected"),
    [
        pytest.param(None, MONDAY_0800, MONDAY_0800, id="no-windows-now"),
        pytest.param(
            ["Mon-Fri 09:00-18:00"],
            MONDAY_0800,
            datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
            id="before-opening",
        ),
        pytest.param(["Mon-Fri 07:00-18:00"], MONDAY_0800, MONDAY_0800, id="inside"),
        pytest.param(
            ["Mon-Fri 09:00-18:00"],
            datetime(2026, 3, 6, 18, 0, tzinfo=UTC),
            datetime(2026, 3, 9, 9, 0, tzinfo=UTC),
            id="friday-close-to-monday",
        ),
        pytest.param(
            ["Sun 10:00-11:00"],
            MONDAY_0800,
            datetime(2026, 3, 8, 10, 0, tzinfo=UTC),
            id="next-sunday",
        ),
        pytest.param(
            ["Mon 06:00-07:00"],
            MONDAY_0800,
            datetime(2026, 3, 9, 6, 0, tzinfo=UTC),
            id="a-week-later",
        ),
        pytest.param(
            ["Tue 09:00-10:00", "Mon 12:00-13:00"],
            MONDAY_0800,
            datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
            id="earliest-of-several",
        ),
        pytest.param([], MONDAY_0800, None, id="never-opens"),
    ],
)
def test_next_allowed(
    windows: list[str] | None, moment: datetime, expected: datetime | None
) -> None:
    assert next_allowed(windows_from(windows) if windows is not None else None, moment) == expected


@pytest.mark.parametrize("value", ["us-tcpa", "US-TCPA", "legal", ["legal"]])
def test_presets_are_8_to_21_every_day(value: object) -> None:
    windows = windows_from(value)
    assert windows is not None and len(windows) == 1
    window = windows[0]
    assert (window.days, window.from_, window.to) == ([1, 2, 3, 4, 5, 6, 7], time(8), time(21))
