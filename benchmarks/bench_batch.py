"""Batch send throughput against `surveykit sandbox serve` on loopback with injected latency.

    python benchmarks/bench_batch.py [--messages 10000] [--latency 0.02]
                                     [--concurrency 1,8,32,64] [--client sync|async|both]

For each concurrency: messages per second with the journal off and on, the ratio to the
bound (concurrency / latency), to a plain sequential httpx loop and to a bare aiohttp loop
at the same concurrency (the machine's ceiling: no surveykit, the same server), all
measured in the same run, the batch process's RSS growth, and the CPU time per message of
the batch process and of the sandbox server (on a small machine they share, CPU is the
limit, not latency).
Concurrency 1 and the sequential loop are measured on a sample (``--sample``), since
10,000 messages at 20 ms each would take over three minutes.
Goals: at least 80% of the bound at concurrency 32; journal overhead at most 10%; memory
flat in the number of rows.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pandas as pd

import surveykit as sk


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def serve() -> tuple[subprocess.Popen[str], str, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "surveykit.cli", "sandbox", "serve", "--port", "0",
         "--no-sample-data"],
        stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    lines = dict(process.stdout.readline().strip().split("=", 1) for _ in range(2))
    return process, lines["base_url"], lines["token"]


def frame(n: int, offset: int) -> pd.DataFrame:
    return pd.DataFrame({"mobileNumber": [f"44791{offset + i:07d}" for i in range(n)]})


def sequential_httpx(base_url: str, token: str, n: int) -> float:
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Basic {token}"}) as http:
        started = time.perf_counter()
        for i in range(n):
            response = http.post("/v3.2/Message", json={
                "source": "447700900999", "destination": f"44792{i:07d}",
                "message": "Survey time", "reply": False})
            response.raise_for_status()
        return n / (time.perf_counter() - started)


def bare_aiohttp(base_url: str, token: str, n: int, concurrency: int, offset: int) -> float:
    """The machine's ceiling: the same sends from a bare aiohttp loop, no surveykit at all."""
    import aiohttp

    async def run() -> float:
        rows = iter(range(n))
        headers = {"Authorization": f"Basic {token}"}
        async with aiohttp.ClientSession() as session:
            async def worker() -> None:
                for i in rows:
                    body = {"source": "447700900999", "destination": f"44795{offset + i:07d}",
                            "message": "Survey time", "reply": False}
                    async with session.post(f"{base_url}/v3.2/Message", json=body,
                                            headers=headers) as response:
                        await response.read()
                        response.raise_for_status()

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return n / (time.perf_counter() - started)

    return asyncio.run(run())


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU seconds of this process, or of process ``pid``."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def batch(client: object, n: int, offset: int, concurrency: int, journal: Path | None) -> float:
    df = frame(n, offset)
    gc.collect()
    started = time.perf_counter()
    call = sk.send_batch(client, df, message="Survey time", source="447700900999",  # type: ignore[call-overload]
                         concurrency=concurrency, journal=journal, progress=False)
    result = asyncio.run(call) if asyncio.iscoroutine(call) else call
    seconds = time.perf_counter() - started
    outcomes = result.summary.to_dict()
    if outcomes != {"sent": n}:
        rows = result.frame
        errors = rows.loc[rows["outcome"] != "sent", "error"].astype(str).str[:160]
        print(f"  not all sent: {outcomes}; errors: {errors.value_counts().to_dict()}")
    return n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", default="1,8,32,64")
    parser.add_argument("--client", choices=["sync", "async", "both"], default="both")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    process, base_url, token = serve()
    offset = 0
    try:
        control = httpx.Client(base_url=base_url, headers={"Authorization": f"Basic {token}"})
        control.post("/_sandbox/faults", json={"route": "/v3.2/Message",
                                               "latency": args.latency}).raise_for_status()
        print(f"python {sys.version.split()[0]}, surveykit {sk.__version__}, "
              f"{os.cpu_count()} CPUs; sandbox {base_url}, latency {args.latency * 1000:.0f} ms")
        baseline = sequential_httpx(base_url, token, args.sample)
        print(f"baseline: plain sequential httpx loop: {baseline:,.1f} msg/s "
              f"({args.sample} messages)\n")
        ceilings = {}
        for concurrency in levels:
            n = args.sample if concurrency == 1 else args.messages
            control.post("/_sandbox/reset").raise_for_status()
            control.post("/_sandbox/faults", json={
                "route": "/v3.2/Message", "latency": args.latency}).raise_for_status()
            ceilings[concurrency] = bare_aiohttp(base_url, token, n, concurrency, offset)
            offset += n
            print(f"ceiling: bare aiohttp loop at concurrency {concurrency}: "
                  f"{ceilings[concurrency]:,.1f} msg/s "
                  f"({ceilings[concurrency] / (concurrency / args.latency):.0%} of bound)")
        print()
        header = (f"{'client':6} {'conc':>4} {'msgs':>6} {'journal':>7} {'msg/s':>9} "
                  f"{'of bound':>8} {'x seq':>7} {'x bare':>6} {'rss +MiB':>8} "
                  f"{'cpu ms/msg':>10} {'sandbox ms/msg':>14}")
        print(header)
        print("-" * len(header))
        kinds = ["sync", "async"] if args.client == "both" else [args.client]
        for kind in kinds:
            for concurrency in levels:
                n = args.sample if concurrency == 1 else args.messages
                bound = concurrency / args.latency
                rates = {}
                for journaled in (False, True):
                    control.post("/_sandbox/reset").raise_for_status()
                    control.post("/_sandbox/faults", json={
                        "route": "/v3.2/Message", "latency": args.latency}).raise_for_status()
                    cls = sk.Client if kind == "sync" else sk.AsyncClient
                    client = cls(base_url, token, timeout=30)
                    before = rss_mib()
                    ours, theirs = cpu_seconds(), cpu_seconds(process.pid)
                    with tempfile.TemporaryDirectory() as tmp:
                        journal = Path(tmp) / "j.sqlite" if journaled else None
                        rate = batch(client, n, offset, concurrency, journal)
                    ours = (cpu_seconds() - ours) / n * 1000
                    theirs = (cpu_seconds(process.pid) - theirs) / n * 1000
                    offset += n
                    grown = rss_mib() - before
                    rates[journaled] = rate
                    print(f"{kind:6} {concurrency:>4} {n:>6} {'on' if journaled else 'off':>7} "
                          f"{rate:>9,.1f} {rate / bound:>8.0%} {rate / baseline:>7.1f} "
                          f"{rate / ceilings[concurrency]:>6.2f} {grown:>8.1f} {ours:>10.2f} "
                          f"{theirs:>14.2f}")
                overhead = 1 - rates[True] / rates[False]
                print(f"{'':6} {concurrency:>4} journal overhead {overhead:+.1%}")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\npeak RSS of the benchmark process: {peak:,.0f} MiB")
        print(
            "cpu ms/msg: CPU of this process (surveykit, httpx, the journal) per message; "
            "sandbox ms/msg: CPU of the sandbox server per message. Both share this "
            f"machine's {os.cpu_count()} CPUs, so no rate can pass about "
            f"{os.cpu_count()} s / (cpu + sandbox ms per message)."
        )
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
