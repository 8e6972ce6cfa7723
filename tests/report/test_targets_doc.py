"""The targets file examples of docs/report.md are read and rake a real survey."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import surveykit as sk
from surveykit.cli._report import read_targets
from surveykit.report import build_report

DOC = Path(__file__).resolve().parents[2] / "docs" / "report.md"


def _example(kind: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### The targets file") :]
    found = re.search(rf"```{kind}\n(.*?)```", section, flags=re.S)
    assert found is not None, f"no {kind} example in docs/report.md"
    return found.group(1)


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_the_documented_targets_rake_a_survey(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"targets.{kind}"
    path.write_text(_example(kind), encoding="utf-8")
    targets = read_targets(path)
    assert targets["sortOrder"]["3"] == 0.2
    with sk.Sandbox(seed=3) as sandbox:
        sandbox.add_generated_survey("TARGETS", 600, questions=4, seed=8, wave=1)
        with sk.Client.sandbox(sandbox) as client:
            frame = client.surveys.results("TARGETS")
            codebook = sandbox.codebook("TARGETS")
    report = build_report(frame, codebook, targets=targets)
    weights = report.weights
    assert weights is not None
    # sortOrder is a number column of the results: its targets "0".."4" match it by value.
    order = frame["sortOrder"].astype(float)
    for level, share in targets["sortOrder"].items():
        got = weights[order == float(level)].sum() / weights.sum()
        assert got == pytest.approx(share, abs=1e-9)
    for level, share in targets["channel"].items():
        assert weights[frame["channel"] == level].sum() / weights.sum() == pytest.approx(
            share, abs=1e-9
        )
    assert np.isfinite(weights).all()
