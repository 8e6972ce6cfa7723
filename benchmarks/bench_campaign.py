"""Benchmark campaign_status and the opt-out check against plain pandas, in one run.

    python benchmarks/bench_campaign.py --respondents 1000000 --events 5000000

campaign_status is timed against a hand-written pandas merge/groupby that computes the
same columns from the same frames (contacts, first/last contact, last outcome and wave,
delivered/clicked/replied/opted_out, started/completed, status, sends, events); the two
results are compared row by row afterwards. The opt-out check (``OptOutList.contains`` on
1,000,000 numbers, reading the list from its SQLite file) is timed against ``Series.isin``
with the same numbers already in a Python set. Methods take turns, --repeat rounds, and
the fastest run of each is compared; ratios only mean something within one run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import surveykit as sk

T0 = pd.Timestamp("2026-03-01T09:00:00Z")


def numbers(ids: np.ndarray) -> pd.Series:
    return ("4477" + pd.Series(ids).astype(str).str.zfill(8)).astype("string")


def make_data(
    n: int, n_events: int, seed: int
) -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame]:
    rng = np.random.default_rng(seed)
    mobile = numbers(np.arange(n))
    started = rng.random(n) < 0.4
    completed = started & (rng.random(n) < 0.5)
    results = pd.DataFrame(
        {
            "respondentId": ("R" + pd.Series(np.arange(n)).astype(str)).astype("string"),
            "mobileNumber": mobile,
            "started": pd.Series(np.where(started, T0 + pd.Timedelta(hours=3), pd.NaT)).astype(
                "datetime64[us, UTC]"
            ),
            "completed": pd.Series(np.where(completed, T0 + pd.Timedelta(hours=4), pd.NaT)).astype(
                "datetime64[us, UTC]"
            ),
        }
    )
    waves, start = [], 0
    outcomes = np.array(["sent", "failed", "invalid", "landline", "blocked", "unknown"])
    for w, share in enumerate((1.0, 0.6, 0.4)):
        size = int(n * share)
        who = rng.choice(n + n // 50, size=size, replace=False)  # 2% not in the results
        outcome = outcomes[rng.choice(6, size=size, p=[0.9, 0.03, 0.02, 0.02, 0.02, 0.01])]
        ids = pd.Series(np.arange(start, start + size)).astype(str)
        start += size
        waves.append(
            pd.DataFrame(
                {
                    "destination": numbers(who),
                    "outcome": outcome,
                    "message_id": ("M" + ids).where(pd.Series(outcome).isin(["sent", "blocked"])),
                    "time": pd.Series(
                        T0
                        + pd.Timedelta(days=2 * w)
                        + pd.to_timedelta(rng.integers(0, 36_000, size), unit="s")
                    ).astype("datetime64[us, UTC]"),
                }
            )
        )
    sends = pd.concat(waves, ignore_index=True)
    sent = sends[sends["message_id"].notna()]
    pick = rng.integers(0, len(sent), n_events)
    kinds = np.array(["Receipt", "Click", "Message", "Stop", "Unstop", "Keyword"])
    kind = kinds[rng.choice(6, size=n_events, p=[0.8, 0.08, 0.06, 0.03, 0.01, 0.02])]
    inbound = np.isin(kind, ["Message", "Stop", "Unstop", "Keyword"])
    who = sent["destination"].to_numpy()[pick]
    message_id = pd.Series(sent["message_id"].to_numpy()[pick], dtype="string")
    unknown = rng.random(n_events) < 0.03
    message_id = message_id.mask(unknown, "Unknown")
    status = np.array(["Sent", "Delivered", "Failed", "Read"])[
        rng.choice(4, size=n_events, p=[0.4, 0.45, 0.1, 0.05])
    ]
    ours = "447700900999"
    events = pd.DataFrame(
        {
            "event_id": np.arange(1, n_events + 1),
            "type": pd.Series(kind, dtype="string"),
            "message_id": message_id,
            "status": pd.Series(np.where(kind == "Receipt", status, "Received"), dtype="string"),
            "source": pd.Series(np.where(inbound, who, ours), dtype="string"),
            "destination": pd.Series(np.where(inbound, ours, who), dtype="string"),
            "inbound": pd.array(inbound, dtype="boolean"),
            "timestamp": pd.Series(
                T0 + pd.to_timedelta(rng.integers(0, 600_000, n_events), unit="s")
            ).astype("datetime64[us, UTC]"),
        }
    )
    return results, waves, events


def baseline(
    results: pd.DataFrame, waves: list[pd.DataFrame], events: pd.DataFrame
) -> pd.DataFrame:
    """The same columns, written as an analyst would with merge and groupby."""
    s = pd.concat([w.assign(wave=f"wave{i}") for i, w in enumerate(waves, 1)], ignore_index=True)
    s["sent"] = s["outcome"] == "sent"
    s["sent_time"] = s["time"].where(s["sent"])
    s["hard"] = s["outcome"].isin(["invalid", "landline"])
    agg = s.groupby("destination").agg(
        contacts=("sent", "sum"),
        first_contact=("sent_time", "min"),
        last_contact=("sent_time", "max"),
        sends=("outcome", "size"),
        hard=("hard", "any"),
    )
    last = (
        s.sort_values("time", kind="stable")
        .drop_duplicates("destination", keep="last")
        .set_index("destination")[["outcome", "wave"]]
        .rename(columns={"outcome": "last_outcome", "wave": "last_wave"})
    )
    ids = s.dropna(subset=["message_id"]).drop_duplicates("message_id", keep="last")
    ev = events.merge(
        ids[["message_id", "destination"]].rename(columns={"destination": "owner"}),
        on="message_id",
        how="left",
    )
    kind = ev["type"].str.lower()
    status = ev["status"].str.lower()
    number = ev["source"].where(ev["inbound"], ev["destination"]).str.lstrip("+")
    ev["key"] = ev["owner"].fillna(number)
    flags = pd.DataFrame(
        {
            "key": ev["key"],
            "receipt_ok": (kind == "receipt") & status.isin(["delivered", "read"]),
            "receipt_failed": (kind == "receipt") & status.isin(["failed", "undeliverable"]),
            "clicked": kind == "click",
            "replied": kind.isin(["message", "keyword"]) & ev["inbound"],
            "stop": kind == "stop",
        }
    )
    per_event = flags.groupby("key").agg(
        receipt_ok=("receipt_ok", "any"),
        receipt_failed=("receipt_failed", "any"),
        clicked=("clicked", "any"),
        replied=("replied", "any"),
        any_stop=("stop", "any"),
        events=("stop", "size"),
    )
    opt = ev[kind.isin(["stop", "unstop"])].sort_values(["timestamp", "event_id"])
    opt = opt.drop_duplicates("key", keep="last").set_index("key")
    per_event["opted_out"] = (opt["type"].str.lower() == "stop").reindex(per_event.index)
    per_address = agg.join(last).join(per_event, how="outer")
    out = results.merge(per_address, left_on="mobileNumber", right_index=True, how="outer")
    out["started"] = out["started"].notna() | out["completed"].notna()
    out["completed"] = out["completed"].notna()
    for column in (
        "receipt_ok",
        "receipt_failed",
        "clicked",
        "replied",
        "any_stop",
        "opted_out",
        "hard",
    ):
        out[column] = out[column].fillna(False).astype(bool)
    for column in ("contacts", "sends", "events"):
        out[column] = out[column].fillna(0).astype("int64")
    out["delivered"] = out["receipt_ok"] | out["clicked"] | out["replied"] | out["any_stop"]
    undeliverable = ~out["delivered"] & (out["receipt_failed"] | out["hard"])
    out["status"] = np.select(
        [
            out["completed"],
            out["opted_out"] | (out["last_outcome"] == "blocked").fillna(False),
            out["started"],
            undeliverable,
            out["contacts"] > 0,
        ],
        ["completed", "opted_out", "started", "undeliverable", "contacted"],
        default="not_contacted",
    )
    out["respondent"] = out["respondentId"].fillna(out["mobileNumber"])
    return out.set_index("respondent")


def best(fn: Callable[[], Any], runs: list[float]) -> Any:
    start = time.perf_counter()
    value = fn()
    runs.append(time.perf_counter() - start)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--respondents", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--checks", type=int, default=1_000_000)
    parser.add_argument("--listed", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    results, waves, events = make_data(args.respondents, args.events, seed=1)
    n_sends = sum(len(w) for w in waves)
    ours_runs: list[float] = []
    base_runs: list[float] = []
    for _ in range(args.repeat):
        got = best(lambda: sk.campaign_status(results, sends=waves, events=events), ours_runs)
        want = best(lambda: baseline(results, waves, events), base_runs)
    # The same answers: every column the baseline computes, row by row.
    want = want.reindex(got.index)
    for column in (
        "contacts",
        "sends",
        "events",
        "delivered",
        "clicked",
        "replied",
        "opted_out",
        "started",
        "completed",
    ):
        assert (got[column].to_numpy() == want[column].to_numpy()).all(), column
    for column in ("first_contact", "last_contact"):
        pd.testing.assert_series_equal(
            got[column], want[column].astype(got[column].dtype), check_names=False
        )
    assert (got["status"].astype(str).to_numpy() == want["status"].to_numpy()).all()
    assert (got["last_outcome"].fillna("") == want["last_outcome"].fillna("")).all()

    rng = np.random.default_rng(2)
    checked = numbers(rng.integers(0, args.checks * 2, args.checks))
    listed = numbers(rng.choice(args.checks * 2, size=args.listed, replace=False))
    as_object = checked.astype(object)
    listed_set = set(listed)
    opt_runs: list[float] = []
    isin_obj: list[float] = []
    isin_str: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        optouts = sk.OptOutList(Path(folder) / "optouts.sqlite")
        optouts.add(listed.tolist())
        for _ in range(args.repeat):
            optouts._cache = None  # read the list from SQLite every time
            hit = best(lambda: optouts.contains(as_object), opt_runs)
            expected = best(lambda: as_object.isin(listed_set), isin_obj)
            best(lambda: checked.isin(listed_set), isin_str)
        assert (hit.to_numpy() == expected.to_numpy()).all()
        optouts.close()

    rows = [
        (
            f"campaign_status: {args.respondents:,} respondents, 3 waves ({n_sends:,} sends), "
            f"{args.events:,} events",
            min(ours_runs),
            "pandas merge/groupby, same columns",
            min(base_runs),
        ),
        (
            f"opt-out check: {args.checks:,} numbers, {args.listed:,} on the list (SQLite)",
            min(opt_runs),
            "Series.isin(set), object dtype",
            min(isin_obj),
        ),
        (
            "opt-out check (same)",
            min(opt_runs),
            "Series.isin(set), string dtype",
            min(isin_str),
        ),
    ]
    print("| What | surveykit | baseline | ratio | goal |")
    print("|---|---|---|---|---|")
    for what, ours, name, base in rows:
        print(f"| {what} | {ours:.2f} s | {name} {base:.2f} s | {ours / base:.2f}x | <= 2x |")
    print(
        f"(fastest of {args.repeat}; statuses: "
        + ", ".join(f"{k} {v:,}" for k, v in got["status"].value_counts().items())
        + ")"
    )


if __name__ == "__main__":
    main()
