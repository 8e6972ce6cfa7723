"""The platform's rules, written once (``surveykit.rules``) and used by both sides."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import surveykit as sk
from surveykit.batch import _runner, count_segments, next_allowed
from surveykit.models import Window, messages
from surveykit.respondents import _import
from surveykit.rules import delivery, outcomes, sms, windows
from surveykit.sandbox.state import _rules

SRC = Path(sms.__file__).parents[1]

# GSM 03.38 as the standard lays it out: the default alphabet by code (0x1B is the escape
# to the extension table), and the extension table's characters. Written out independently
# of the frozensets in surveykit.rules.sms.
GSM_CODE_TABLE = (
    "@£$¥èéùìòÇ\nØø\rÅå"
    "Δ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ"
    " !\"#¤%&'()*+,-./"
    "0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNO"
    "PQRSTUVWXYZÄÖÑÜ§"
    "¿abcdefghijklmno"
    "pqrstuvwxyzäöñüà"
)
GSM_EXTENSION = {0x0A: "\f", 0x14: "^", 0x28: "{", 0x29: "}", 0x2F: "\\", 0x3C: "[",
                 0x3D: "~", 0x3E: "]", 0x40: "|", 0x65: "€"}  # fmt: skip


def test_the_gsm_tables_follow_the_standard() -> None:
    assert len(GSM_CODE_TABLE) == 128
    assert frozenset(GSM_CODE_TABLE) - {"\x1b"} == sms.GSM7
    assert frozenset(GSM_EXTENSION.values()) == sms.GSM7_EXTENDED


def test_the_gsm_table_is_written_once() -> None:
    # A run of the basic table that any copy of it would contain.
    holders = [
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if "ΦΓΛΩΠΨΣΘΞ" in path.read_text(encoding="utf-8")
    ]
    assert holders == ["rules/sms.py"]


def test_both_sides_use_the_same_rules() -> None:
    # The sandbox's own rules do not define (or re-export) the platform's.
    assert count_segments is sms.count_segments
    assert next_allowed is windows.next_allowed
    platform_names = {"count_segments", "segments", "next_allowed", "is_branded", "delivered"}
    assert not platform_names & set(vars(_rules))


def _septets(text: str) -> int | None:
    """GSM-7 length by the code tables above; None when a character is not in them."""
    total = 0
    for char in text:
        if char in GSM_EXTENSION.values():
            total += 2
        elif char in GSM_CODE_TABLE and char != "\x1b":
            total += 1
        else:
            return None
    return total


def _parts(units: int, single: int, multi: int) -> int:
    return 1 if units <= single else (units + multi - 1) // multi


GSM_TEXT = st.text(alphabet=st.sampled_from(GSM_CODE_TABLE.replace("\x1b", "") + "^{}€|"))


@given(st.one_of(GSM_TEXT, st.text(max_size=400), GSM_TEXT.map(lambda t: t + "é✓" * 3)))
def test_both_sides_count_segments_alike(text: str) -> None:
    client_side = count_segments(text)
    sandbox_side = sms.segments(text)
    assert sandbox_side == client_side.count
    septets = _septets(text)
    if septets is not None:
        assert (client_side.encoding, client_side.units) == ("GSM-7", septets)
        assert client_side.count == _parts(septets, 160, 153)
    else:
        units = len(text.encode("utf-16-le")) // 2
        assert (client_side.encoding, client_side.units) == ("UCS-2", units)
        assert client_side.count == _parts(units, 70, 67)


def test_a_lone_surrogate_counts_one_unit() -> None:
    # JSON can carry "\ud800"; counting must not fail where encoding would.
    assert count_segments("a\ud800") == sms.Segments("UCS-2", 2, 1)


# --------------------------------------------------------------------------- next_allowed

MONDAY_0800 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # 2026-03-02 is a Monday


def test_none_means_no_windows_and_an_empty_list_means_never() -> None:
    assert next_allowed(None, MONDAY_0800) == MONDAY_0800
    assert next_allowed([], MONDAY_0800) is None


def test_windows_come_first_then_the_moment() -> None:
    window = Window(from_="09:00", to="10:00", days=[1])
    assert next_allowed([window], MONDAY_0800) == MONDAY_0800.replace(hour=9)
    with pytest.raises((TypeError, AttributeError)):
        next_allowed(MONDAY_0800, [window])  # type: ignore[arg-type]


def _inside(moment: datetime, windows: list[Window]) -> bool:
    return any(moment.isoweekday() in w.days and w.from_ <= moment.time() < w.to for w in windows)


def _earliest_by_scan(windows: list[Window], moment: datetime) -> datetime:
    """The oracle: the moment itself if inside, else the earliest opening after it."""
    if _inside(moment, windows):
        return moment
    openings = [
        datetime.combine((moment + timedelta(days=d)).date(), w.from_, tzinfo=UTC)
        for d in range(9)
        for w in windows
    ]
    return min(o for o in openings if o > moment and _inside(o, windows))


@st.composite
def windows_strategy(draw: st.DrawFn) -> list[Window]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, 23 * 60 - 1))
        end = draw(st.integers(start + 1, 24 * 60 - 1))
        days = draw(st.sets(st.integers(1, 7), min_size=1))
        out.append(
            Window(
                from_=time(start // 60, start % 60),
                to=time(end // 60, end % 60),
                days=sorted(days),
            )
        )
    return out


@given(
    windows_strategy(),
    st.datetimes(
        min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 31), timezones=st.just(UTC)
    ),
)
def test_next_allowed_matches_a_scan(windows: list[Window], moment: datetime) -> None:
    assert next_allowed(windows, moment) == _earliest_by_scan(windows, moment)


# --------------------------------------------------------------------------- destinations


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"stopped": True}, "Blocked", id="stop-list"),
        pytest.param({"blocked": True, "lookup": True}, "Blocked", id="blocked-first"),
        pytest.param({"lookup": True, "lookup_failed": True}, "Failed", id="lookup-failed"),
        pytest.param({"lookup_failed": True}, None, id="no-lookup-no-failure"),
        pytest.param({"lookup": True, "number_type": "Landline"}, "Reachable", id="landline"),
        pytest.param({"number_type": "Landline"}, None, id="landline-without-lookup"),
        pytest.param({"lookup": True, "number_type": "Mobile"}, None, id="mobile"),
    ],
)
def test_destination_refusal(fields: dict[str, object], expected: str | None) -> None:
    base: dict[str, object] = {
        "stopped": False,
        "blocked": False,
        "lookup": False,
        "lookup_failed": False,
        "number_type": "Mobile",
    }
    assert delivery.destination_refusal(**(base | fields)) == expected  # type: ignore[arg-type]


def test_delivered() -> None:
    assert delivery.delivered("Email", reachable=False, number_type="Unknown")
    assert delivery.delivered("SMS", reachable=True, number_type="Mobile")
    assert not delivery.delivered("SMS", reachable=True, number_type="Landline")
    assert not delivery.delivered("WhatsApp", reachable=False, number_type="Mobile")


@pytest.mark.parametrize(
    ("source", "branded"),
    [("447700900100", False), ("+447700900100", False), ("60123", False),
     ("Brightwater", True), ("٤٤٧٧", True), ("44 77", True)],
)  # fmt: skip
def test_branded_sources(source: str, branded: bool) -> None:
    assert messages.is_branded(source) is branded


# --------------------------------------------------------------------------- outcomes


def _status_error(cls: type[sk.APIStatusError], status: int) -> sk.APIStatusError:
    request = httpx.Request("POST", "https://platform.example/v3.2/Message")
    return cls("boom", response=httpx.Response(status, request=request))


@pytest.mark.parametrize(
    ("error", "unknown"),
    [
        pytest.param(sk.OutcomeUnknownError("reset", cause=None), True, id="ambiguous"),
        pytest.param(_status_error(sk.ServerOutcomeUnknownError, 502), True, id="502-to-a-write"),
        pytest.param(_status_error(sk.ServerError, 501), True, id="501"),
        pytest.param(_status_error(sk.ServerError, 503), False, id="503-not-taken"),
        pytest.param(_status_error(sk.BadRequestError, 400), False, id="400"),
        pytest.param(_status_error(sk.RateLimitError, 429), False, id="429"),
        pytest.param(sk.APIConnectionError("refused"), False, id="never-connected"),
        pytest.param(RuntimeError("odd"), True, id="not-surveykit"),
    ],
)
def test_outcome_unknown_is_decided_once(error: BaseException, unknown: bool) -> None:
    assert outcomes.outcome_unknown(error) is unknown
    batch_outcome, _ = _runner.classify(error, test=False)
    if isinstance(error, sk.BadRequestError):
        assert batch_outcome == "rejected"
    else:
        assert batch_outcome == ("unknown" if unknown else "failed")
    if isinstance(error, sk.SurveykitError):
        import_outcome, _ = _import._chunk_outcome(error)
        expected = "unknown" if unknown else "failed"
        if isinstance(error, sk.APIConnectionError):
            expected = "not sent"
        assert import_outcome == expected


@pytest.mark.parametrize("module", sorted(p.name for p in (SRC / "rules").glob("*.py")))
def test_the_rules_import_no_server_library(module: str) -> None:
    # Reads each rules module's own imports: the standard library, phonenumbers (for
    # numbers), errors and models only; no pandas, no server, no client.
    import ast

    tree = ast.parse((SRC / "rules" / module).read_text(encoding="utf-8"))
    imported = {
        node.module.split(".")[0] if node.level == 0 and node.module else ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    surveykit_parts = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("surveykit")
    }
    assert imported <= {
        "__future__",
        "collections",
        "dataclasses",
        "datetime",
        "functools",
        "hmac",
        "phonenumbers",
        "re",
        "typing",
        "unicodedata",
        "zoneinfo",
        "surveykit",
    }
    assert surveykit_parts <= {"surveykit.errors", "surveykit.models.messages"}
