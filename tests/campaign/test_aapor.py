"""AAPOR dispositions and outcome rates, checked against the Standard Definitions' formulas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import surveykit as sk

# One code per group letter, with several variants of the same group.
CODES = {
    "I": ["1.1"],
    "P": ["1.2"],
    "R": ["2.11", "2.12", "2.111"],
    "NC": ["2.20", "2.21"],
    "O": ["2.30", "2.33"],
    "UH": ["3.11", "3.19"],
    "UO": ["3.21", "3.30", "3.90"],
    "NE": ["4.10", "4.70"],
}


def frame_of(counts: dict[str, int]) -> pd.DataFrame:
    codes = []
    for letter, n in counts.items():
        variants = CODES[letter]
        codes += [variants[i % len(variants)] for i in range(n)]
    return pd.DataFrame({"disposition": codes})


def by_hand(c: dict[str, int], e: float) -> dict[str, float]:
    """The Standard Definitions' formulas, written out one by one."""
    i, p, r, nc, o, uh, uo = (c[k] for k in ("I", "P", "R", "NC", "O", "UH", "UO"))

    def div(a: float, b: float) -> float:
        return a / b if b else float("nan")

    return {
        "RR1": div(i, (i + p) + (r + nc + o) + (uh + uo)),
        "RR2": div(i + p, (i + p) + (r + nc + o) + (uh + uo)),
        "RR3": div(i, (i + p) + (r + nc + o) + e * (uh + uo)),
        "RR4": div(i + p, (i + p) + (r + nc + o) + e * (uh + uo)),
        "RR5": div(i, (i + p) + (r + nc + o)),
        "RR6": div(i + p, (i + p) + (r + nc + o)),
        "COOP1": div(i, (i + p) + r + o),
        "COOP2": div(i + p, (i + p) + r + o),
        "COOP3": div(i, (i + p) + r),
        "COOP4": div(i + p, (i + p) + r),
        "REF1": div(r, (i + p) + (r + nc + o) + (uh + uo)),
        "REF2": div(r, (i + p) + (r + nc + o) + e * (uh + uo)),
        "REF3": div(r, (i + p) + (r + nc + o)),
        "CON1": div((i + p) + r + o, (i + p) + (r + nc + o) + (uh + uo)),
        "CON2": div((i + p) + r + o, (i + p) + (r + nc + o) + e * (uh + uo)),
        "CON3": div((i + p) + r + o, (i + p) + (r + nc + o)),
    }


def test_every_rate_equals_the_standard_definitions() -> None:
    counts = {"I": 120, "P": 15, "R": 40, "NC": 60, "O": 7, "UH": 90, "UO": 30, "NE": 25}
    out = sk.outcome_rates(frame_of(counts))
    e = (120 + 15 + 40 + 60 + 7) / (120 + 15 + 40 + 60 + 7 + 25)
    expected = by_hand(counts, e)
    assert out["rate"].tolist() == list(expected)
    for row in out.itertuples():
        assert row.value == pytest.approx(expected[row.rate], rel=1e-12), row.rate
        assert row.value == pytest.approx(row.numerator / row.denominator, rel=1e-12)
    assert out.attrs["e"] == pytest.approx(e)
    assert out.set_index("rate")["e"].dropna().index.tolist() == ["RR3", "RR4", "REF2", "CON2"]
    assert out.attrs["counts"] == counts


@settings(max_examples=60, deadline=None)
@given(
    counts=st.fixed_dictionaries({k: st.integers(0, 30) for k in CODES}),
    e=st.one_of(st.just("proportional"), st.floats(0, 1)),
)
def test_rates_for_any_counts_and_e(counts: dict[str, int], e: float | str) -> None:
    frame = frame_of(counts)
    if frame.empty:
        return
    out = sk.outcome_rates(frame, e=e)  # type: ignore[arg-type]
    share = out.attrs["e"]
    expected = by_hand(counts, share)
    for row in out.itertuples():
        want = expected[row.rate]
        if np.isnan(want):
            assert np.isnan(row.value)
        else:
            assert row.value == pytest.approx(want, rel=1e-12, abs=1e-15)
            assert 0 <= row.value <= 1


def test_rates_per_group_each_with_its_own_e() -> None:
    a = frame_of({"I": 10, "P": 0, "R": 5, "NC": 5, "O": 0, "UH": 10, "UO": 0, "NE": 10}).assign(
        wave="1"
    )
    b = frame_of({"I": 30, "P": 2, "R": 1, "NC": 3, "O": 1, "UH": 2, "UO": 2, "NE": 0}).assign(
        wave="2"
    )
    out = sk.outcome_rates(pd.concat([a, b], ignore_index=True), by="wave")
    assert out.columns.tolist() == ["wave", "rate", "value", "numerator", "denominator", "e"]
    rr3 = out[out["rate"] == "RR3"].set_index("wave")["value"]
    assert rr3["1"] == pytest.approx(10 / (10 + 10 + (20 / 30) * 10))
    assert rr3["2"] == pytest.approx(30 / (32 + 5 + 1.0 * 4))


def test_rates_per_group_where_waves_repeat_a_respondents_label() -> None:
    # Two waves of one panel: the same respondent ids in each, stacked without a new index.
    a = frame_of({"I": 10, "P": 0, "R": 5, "NC": 5, "O": 0, "UH": 10, "UO": 0, "NE": 0})
    b = frame_of({"I": 20, "P": 0, "R": 0, "NC": 5, "O": 0, "UH": 5, "UO": 0, "NE": 0})
    a.index = b.index = [f"r{i}" for i in range(len(a))]
    out = sk.outcome_rates(pd.concat([a.assign(wave="1"), b.assign(wave="2")]), by="wave")
    rr1 = out[out["rate"] == "RR1"].set_index("wave")
    assert rr1.loc["1", "value"] == pytest.approx(10 / 30)
    assert rr1.loc["2", "value"] == pytest.approx(20 / 30)
    assert rr1["denominator"].tolist() == [30.0, 30.0]


@pytest.mark.parametrize(
    ("codes", "words"),
    [
        (["1.1", "5.1"], "'5.1' is not an AAPOR disposition code"),
        (["1.1", "1.3"], "interviews are 1.1"),
        (["2.41"], "eligible non-interviews are 2.1x, 2.2x or 2.3x"),
        (["1.1", None], "row 1 has no code"),
    ],
)
def test_bad_codes_are_named_with_their_row(codes: list, words: str) -> None:
    with pytest.raises(sk.DispositionError, match=words):
        sk.outcome_rates(pd.Series(codes))


def test_bad_arguments_are_named() -> None:
    with pytest.raises(sk.DispositionError, match="e must be 'proportional' or a share"):
        sk.outcome_rates(pd.Series(["1.1"]), e=1.5)
    with pytest.raises(sk.DispositionError, match="needs a 'disposition' column"):
        sk.outcome_rates(pd.DataFrame({"code": ["1.1"]}))


def status_frame() -> pd.DataFrame:
    rows = [
        # status, delivered, clicked, replied, contacts
        ("completed", True, True, True, 1),
        ("started", True, False, True, 1),
        ("opted_out", True, False, False, 1),
        ("undeliverable", False, False, False, 1),
        ("contacted", True, True, False, 2),  # clicked, never started
        ("contacted", True, False, False, 1),  # delivered, silent
        ("contacted", False, False, False, 1),  # accepted, no receipt
        ("not_contacted", False, False, False, 0),
    ]
    frame = pd.DataFrame(rows, columns=["status", "delivered", "clicked", "replied", "contacts"])
    frame["status"] = pd.Categorical(frame["status"], categories=list(sk.campaign.STATUSES))
    return frame


def test_dispositions_follow_the_documented_rules_and_overrides() -> None:
    out = sk.dispositions(status_frame())
    assert out["disposition"].tolist() == [
        "1.1",
        "1.2",
        "2.11",
        "3.30",
        "2.30",
        "3.19",
        "3.19",
        "3.11",
    ]
    assert out["disposition_group"].tolist() == ["I", "P", "R", "UO", "O", "UH", "UH", "UH"]
    strict = sk.dispositions(status_frame(), partial="break-off", eligibility="eligible")
    assert strict["disposition"].tolist()[1] == "2.12"
    assert strict["disposition"].tolist()[5] == "2.20"
    custom = sk.dispositions(status_frame(), codes={"undeliverable": "4.30"})
    assert custom["disposition"].tolist()[3] == "4.30"
    with pytest.raises(sk.DispositionError, match="no rule 'bounced'"):
        sk.dispositions(status_frame(), codes={"bounced": "3.30"})
    with pytest.raises(sk.DispositionError, match="missing"):
        sk.dispositions(pd.DataFrame({"status": ["completed"]}))


def test_dispositions_of_a_real_campaign_feed_the_rates() -> None:
    results = pd.DataFrame(
        {
            "respondentId": ["a", "b", "c"],
            "mobileNumber": ["447700900001", "447700900002", "447700900003"],
            "completed": ["2026-01-05T10:00:00Z", None, None],
        }
    )
    sends = pd.DataFrame(
        {
            "destination": ["447700900001", "447700900002", "447700900003"],
            "outcome": ["sent", "sent", "invalid"],
            "message_id": ["m1", "m2", None],
            "time": pd.to_datetime(["2026-01-05T09:00:00Z"] * 3),
        }
    )
    status = sk.campaign_status(results, sends=sends)
    rates = sk.outcome_rates(sk.dispositions(status)).set_index("rate")["value"]
    # a completed (I), b contacted without receipt (UH), c invalid number (UO).
    assert rates["RR1"] == pytest.approx(1 / 3)
    assert rates["RR5"] == pytest.approx(1.0)
