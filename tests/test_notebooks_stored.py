"""nbval compares stored outputs, so a notebook saved without them would check nothing."""

from __future__ import annotations

import json
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
    assert names >= {"01", "02", "03", "04", "05", "06", "07", "08"}
