"""How long ``import surveykit`` and ``surveykit --help`` take, against ``import pandas``.

    python benchmarks/bench_import_time.py [--repeat 10]

Each command runs in a fresh interpreter (``python -c ...``, or the ``surveykit`` console
script beside this Python), in alternating rounds so that the machine's noise falls on
every command alike; the table gives the median wall time of each and its ratio to the
median of ``python -c "import pandas"`` from the same run. Goals: at most 1.25x for both.
Two more rows say what first use costs: touching ``sk.Client``, and the names a notebook
usually touches first (client, readers, import and batch functions, analysis).
Set ``PYTHONPATH`` to another checkout's ``src`` to measure it with the same interpreter.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

_SCRIPT = os.path.join(os.path.dirname(sys.executable), "surveykit")
HELP = [_SCRIPT, "--help"] if os.path.exists(_SCRIPT) else [
    shutil.which("surveykit") or "surveykit",
    "--help",
]
CORE = "sk.Client; sk.read_results; sk.build_import_list; sk.send_batch; sk.analysis"

COMMANDS: dict[str, list[str]] = {
    "python -c 'import pandas'": [sys.executable, "-c", "import pandas"],
    "python -c 'import surveykit'": [sys.executable, "-c", "import surveykit"],
    "surveykit --help": HELP,
    "python -c 'pass' (interpreter alone)": [sys.executable, "-c", "pass"],
    # What a notebook pays on first use (no goal: pandas, httpx and pydantic are needed).
    "... + sk.Client": [sys.executable, "-c", "import surveykit as sk; sk.Client"],
    "... + the core names": [sys.executable, "-c", f"import surveykit as sk; {CORE}"],
}
GOALS = {"python -c 'import surveykit'": 1.25, "surveykit --help": 1.25}


def _time(command: list[str]) -> float:
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=environment)
    return time.perf_counter() - started


def main() -> None:
    """Run every command ``--repeat`` times in alternating rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command")
    args = parser.parse_args()
    for command in COMMANDS.values():  # warm the file cache and the bytecode caches
        _time(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, command in COMMANDS.items():
            times[name].append(_time(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["python -c 'import pandas'"]
    version = sys.version.split()[0]
    print(f"median of {args.repeat} fresh interpreters each, alternating (Python {version})")
    print(f"| {'command':<38} | median | ratio to pandas | goal |")
    print(f"|{'-' * 40}|--------|-----------------|------|")
    for name, median in medians.items():
        goal = GOALS.get(name)
        goal_text = f"<= {goal:.2f}x" if goal else ""
        print(f"| {name:<38} | {median:5.3f}s | {median / base:14.2f}x | {goal_text} |")


if __name__ == "__main__":
    main()
