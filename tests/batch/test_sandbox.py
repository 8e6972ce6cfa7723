"""Batch reliability against the sandbox: faults, stop list, crash and resume. Never twice."""

from __future__ import annotations

import inspect
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit.sandbox import Sandbox
from tests.helpers.sandbox_server import ServedSandbox

SOURCE = "447700900999"


def recipients(n: int, start: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "firstName": [f"P{i}" for i in range(start, start + n)],
            "mobileNumber": [f"4479111{i:05d}" for i in range(start, start + n)],
        },
        index=pd.Index([f"row-{i}" for i in range(start, start + n)], name="row"),
    )


async def run(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def accepted(sandbox: Sandbox) -> Counter[str]:
    return Counter(m.destination for m in sandbox.messages())


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_faults_every_row_one_outcome_never_twice(kind: str, tmp_path: Path) -> None:
    sandbox = Sandbox(seed=3, sample_data=False)
    sandbox.inject_fault("/v3.2/Message", status=503, rate=0.15)
    sandbox.inject_fault("/v3.2/Message", status=500, rate=0.05)
    sandbox.inject_fault("/v3.2/Message", drop="after", rate=0.1)
    sandbox.inject_fault("/v3.2/Message", drop="before", rate=0.1)
    sandbox.inject_fault("/v3.2/Message", latency=0.002, rate=0.5)
    cls = sk.Client if kind == "sync" else sk.AsyncClient
    client = cls.sandbox(sandbox, retry=sk.RetryPolicy(max_retries=2, backoff_base=0.0))
    df = recipients(150)
    journal = tmp_path / "j.sqlite"
    result = await run(
        sk.send_batch(
            client,
            df,
            message="Hi {firstName}",
            source=SOURCE,
            journal=journal,
            concurrency=8,
            progress=False,
        )
    )
    frame = result.frame
    outcomes = Counter(frame["outcome"].astype(str))
    assert sum(outcomes.values()) == 150 and frame["outcome"].notna().all()
    assert outcomes["failed"] > 0 and outcomes["unknown"] > 0 and outcomes["sent"] > 0
    got = accepted(sandbox)
    assert max(got.values()) == 1, "no destination received a message twice"
    by_outcome = {o: set(frame.loc[frame["outcome"] == o, "destination"]) for o in outcomes}
    assert by_outcome["sent"] <= set(got)
    assert not by_outcome["failed"] & set(got), "a definite failure was not sent"
    sent_ids = set(frame.loc[frame["outcome"] == "sent", "message_id"])
    assert sent_ids <= {m.message_id for m in sandbox.messages()}

    sandbox.clear_faults()
    retried = await run(
        sk.send_batch(
            client,
            df,
            message="Hi {firstName}",
            source=SOURCE,
            journal=journal,
            only="failed",
            progress=False,
        )
    )
    assert set(retried.frame.loc[frame["outcome"] == "failed", "outcome"].astype(str)) == {"sent"}
    assert (retried.frame.loc[frame["outcome"] == "unknown", "outcome"] == "unknown").all()
    assert max(accepted(sandbox).values()) == 1


def test_sandbox_rules_become_row_outcomes() -> None:
    sandbox = Sandbox(seed=4, sample_data=False)
    sandbox.add_to_stop_list("447911100002")
    client = sk.Client.sandbox(sandbox)
    df = pd.DataFrame(
        {
            "mobileNumber": [
                "447911100001",
                "447911100002",
                "447700900903",
                "447700900904",
                SOURCE,
                "0791",
            ],
            "name": ["A", "B", "C", "D", "E", "F"],
        }
    )
    result = sk.send_batch(client, df, message="Hi {name}", source=SOURCE, progress=False)
    assert result.frame["outcome"].astype(str).tolist() == [
        "sent",
        "blocked",
        "blocked",
        "failed",
        "rejected",
        "invalid",
    ]
    assert "same" in result.frame.loc[4, "error"].lower()
    assert [m.destination for m in sandbox.messages()] == ["447911100001"]


# Crash and resume: a batch in a subprocess, killed with SIGKILL, resumed with its journal.

BATCH_SCRIPT = textwrap.dedent(
    """
    import sys
    import pandas as pd
    import surveykit as sk

    base_url, token, journal, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    df = pd.DataFrame({"mobileNumber": [f"4479112{i:05d}" for i in range(n)]})
    client = sk.Client(base_url, token)
    result = sk.send_batch(client, df, message="Survey time", source="447700900999",
                           journal=journal, concurrency=8, progress=False)
    print(result.summary.to_dict(), flush=True)
    """
)


def sent_messages(base_url: str, token: str) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{base_url}/_sandbox/journal",
        params={"kind": "message"},
        headers={"Authorization": f"Basic {token}"},
    ).json()
    entries: list[dict[str, Any]] = answer["entries"] if isinstance(answer, dict) else answer
    return entries


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume(served: ServedSandbox, tmp_path: Path) -> None:
    base_url, token = served.base_url, served.token
    n = 300
    control = sk.Client(base_url, token)
    control._http.post("/_sandbox/faults", json={"route": "/v3.2/Message", "latency": 0.03})
    script = tmp_path / "batch.py"
    script.write_text(BATCH_SCRIPT)
    journal = tmp_path / "campaign.sqlite"
    rng = random.Random(7)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    counts = []
    for _ in range(4):
        before = len(sent_messages(base_url, token))
        process = subprocess.Popen(
            [sys.executable, str(script), base_url, token, str(journal), str(n)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # Kill at a random point after this run's first message lands, whatever the
        # machine's speed (start-up takes a second or more before anything is sent).
        deadline = time.monotonic() + 60
        while (
            process.poll() is None
            and len(sent_messages(base_url, token)) == before
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.4))
        process.send_signal(signal.SIGKILL)
        process.wait()
        counts.append(len(sent_messages(base_url, token)))
    assert any(0 < count < n for count in counts), f"no kill landed mid-batch: {counts}"
    finished = subprocess.run(
        [sys.executable, str(script), base_url, token, str(journal), str(n)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    destinations = Counter(entry["destination"] for entry in sent_messages(base_url, token))
    assert destinations, "the batch sent messages"
    assert max(destinations.values()) == 1, "a destination received a message twice"
    # Every row is accounted for: sent, or unknown because it was in flight at a kill.
    result = sk.send_batch(
        sk.Client(base_url, token),
        pd.DataFrame({"mobileNumber": [f"4479112{i:05d}" for i in range(n)]}),
        message="Survey time",
        source="447700900999",
        journal=journal,
        progress=False,
    )
    outcomes = Counter(result.frame["outcome"].astype(str))
    assert set(outcomes) <= {"sent", "unknown"}
    assert sum(outcomes.values()) == n
    sent = set(result.frame.loc[result.frame["outcome"] == "sent", "destination"])
    assert sent <= set(destinations)
    assert len(destinations) >= outcomes["sent"]
