"""Generated waves: ratings that differ by channel and by wave, drawn as documented."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import surveykit as sk
from surveykit.sandbox import generator
from surveykit.sandbox.generator import generate_results_frame


def _ratings(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(score=pd.to_numeric(frame["Q1"])).dropna(subset=["score"])


def _expected(channel: str, wave: int) -> np.ndarray:
    """The documented curve, computed here from the formula rather than the module's code."""
    tilt = {"SMS": 0.0, "WhatsApp": 0.5, "Email": -0.4, "Facebook": 0.1}[channel]
    tilt += 0.35 * (wave - 1)
    base = np.array([3, 2, 2, 3, 4, 8, 8, 15, 18, 17, 20], dtype=float)
    weights = base * np.exp(tilt * (np.arange(11) - 5) / 5)
    return weights / weights.sum()


@pytest.mark.parametrize("wave", [1, 3])
def test_wave_ratings_follow_the_documented_curve_per_channel(wave: int) -> None:
    frame = _ratings(generate_results_frame(40_000, seed=5, nasty=False, wave=wave))
    for channel, part in frame.groupby("channel", observed=True):
        observed = np.bincount(part["score"].astype(int), minlength=11)
        expected = _expected(str(channel), wave) * observed.sum()
        assert stats.chisquare(observed, expected).pvalue > 1e-3, channel


def test_channels_and_waves_differ_significantly() -> None:
    one = _ratings(generate_results_frame(20_000, seed=1, nasty=False, wave=1))
    two = _ratings(generate_results_frame(20_000, seed=2, nasty=False, wave=2))
    means = one.groupby("channel", observed=True)["score"].mean()
    assert means["WhatsApp"] > means["SMS"] > means["Email"]
    test = stats.ttest_ind(two["score"], one["score"], equal_var=False)
    assert test.statistic > 0 and test.pvalue < 1e-6


def test_wave_zero_is_the_uniform_legacy_draw() -> None:
    frame = _ratings(generate_results_frame(30_000, seed=3, nasty=False))
    observed = np.bincount(frame["score"].astype(int), minlength=11)
    assert stats.chisquare(observed).pvalue > 1e-3


def test_wave_is_refused_when_negative() -> None:
    with pytest.raises(ValueError, match="wave"):
        list(generator.generate_results(10, wave=-1))
    with sk.Sandbox() as sandbox, pytest.raises(ValueError, match="wave: expected a number >= 0"):
        sandbox.add_generated_survey("W", 10, wave=-1)


def test_sandbox_serves_a_generated_wave() -> None:
    client = sk.Client.sandbox()
    with client:
        survey = client.embedded.add_generated_survey("TRACK-W2", 500, seed=9, wave=2)
        assert survey.generated_wave == 2
        served = client.surveys.results("TRACK-W2")
    direct = generate_results_frame(500, seed=9, nasty=False, wave=2)
    assert served["Q1"].astype("string").tolist() == direct["Q1"].astype("string").tolist()


def test_wave_choices_lean_like_the_ratings() -> None:
    frame = generate_results_frame(40_000, seed=4, nasty=False, wave=1)
    base = np.array([45, 25, 18, 12], dtype=float)
    tilts = {"SMS": 0.0, "WhatsApp": 0.5, "Email": -0.4, "Facebook": 0.1}
    for channel, part in frame.dropna(subset=["Q2"]).groupby("channel", observed=True):
        weights = base.copy()
        weights[0] *= np.exp(tilts[str(channel)])
        counts = part["Q2"].value_counts().reindex(list(generator.CHOICES), fill_value=0)
        expected = weights / weights.sum() * counts.sum()
        assert stats.chisquare(counts.to_numpy(), expected).pvalue > 1e-3, channel
