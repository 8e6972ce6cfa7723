"""nbval compares stored outputs, so a notebook saved without them would check nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_code_cell_was_run_and_kept_its_output(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code, "a notebook without code"
    counts = [cell["execution_count"] for cell in code]
    assert all(count is not None for count in counts), "run the notebook before saving"
    assert counts == list(range(1, len(code) + 1)), "run top to bottom in one fresh kernel"
    assert any(cell["outputs"] for cell in code)


def test_the_example_notebooks_exist() -> None:
    names = {path.name[:2] for path in NOTEBOOKS}
    assert names >= {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10"}


SANITIZE = NOTEBOOKS[0].parent / "nbval_sanitize.cfg"

# Fixed text from the stored outputs: sandbox-clock times and figure sizes. A rule that
# changed any of them would hide a wrong result from nbval.
KEPT_AS_STORED = [
    "2026-03-02 09:00:00+00:00",
    "2026-03-09 09:00:00+00:00",
    "Timestamp('2026-03-02 09:00:00+0000', tz='UTC')",
    "2026-02-17T14:06:02Z",
    "2026-02-18T19:44:29.000+01:00",
    "datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.timezone.utc)",
    "<Figure size 700x390 with 1 Axes>",
    "<Figure size 800x400 with 2 Axes>",
    "MS904900000014",
]


def _sanitize(text: str) -> str:
    from nbval.plugin import get_sanitize_patterns

    for regex, replace in get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return text


@pytest.mark.parametrize("text", KEPT_AS_STORED)
def test_sanitizing_keeps_fixed_output(text: str) -> None:
    assert _sanitize(text) == text


def test_every_sanitize_rule_says_why() -> None:
    lines = SANITIZE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if line.startswith("regex: "):
            assert number > 0 and lines[number - 1].startswith("["), line
            assert number > 1 and lines[number - 2].startswith("#"), f"no comment above {line}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_sentence_of_why_before_each_step(path: Path) -> None:
    """Each code cell follows a markdown cell; a chart may follow the table it draws."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    bare = [
        f"cell {n}: {''.join(cell['source']).splitlines()[0]}"
        for n, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        and n > 0
        and cells[n - 1]["cell_type"] != "markdown"
        and not "".join(cell["source"]).startswith("sk.plots.")
    ]
    assert not bare, "no markdown directly above: " + "; ".join(bare)
