from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from surveykit.batch import Segments, count_segments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", Segments("GSM-7", 0, 1), id="empty"),
        pytest.param("a" * 160, Segments("GSM-7", 160, 1), id="gsm-160-one-part"),
        pytest.param("a" * 161, Segments("GSM-7", 161, 2), id="gsm-161-two-parts"),
        pytest.param("a" * 306, Segments("GSM-7", 306, 2), id="gsm-306-two-parts"),
        pytest.param("a" * 307, Segments("GSM-7", 307, 3), id="gsm-307-three-parts"),
        pytest.param("€" * 80, Segments("GSM-7", 160, 1), id="extension-chars-count-two"),
        pytest.param("€" * 81, Segments("GSM-7", 162, 2), id="extension-overflow"),
        pytest.param("Æøå ÄÖÑÜ §¿ £$¥", Segments("GSM-7", 15, 1), id="gsm-accents"),
        pytest.param("ç" * 70, Segments("UCS-2", 70, 1), id="lowercase-c-cedilla-is-ucs2"),
        pytest.param("ł" * 71, Segments("UCS-2", 71, 2), id="ucs2-71-two-parts"),
        pytest.param("ł" * 134, Segments("UCS-2", 134, 2), id="ucs2-134-two-parts"),
        pytest.param("ł" * 135, Segments("UCS-2", 135, 3), id="ucs2-135-three-parts"),
        pytest.param("👍" * 35, Segments("UCS-2", 70, 1), id="emoji-two-units"),
        pytest.param("a" * 159 + "👍", Segments("UCS-2", 161, 3), id="one-emoji-switches"),
    ],
)
def test_segments(text: str, expected: Segments) -> None:
    assert count_segments(text) == expected


@given(st.text(max_size=400))
def test_segments_are_consistent(text: str) -> None:
    result = count_segments(text)
    per_part = (160, 153) if result.encoding == "GSM-7" else (70, 67)
    if result.units <= per_part[0]:
        assert result.count == 1
    else:
        assert (result.count - 1) * per_part[1] < result.units <= result.count * per_part[1]
