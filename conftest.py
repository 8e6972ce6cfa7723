"""Repository-wide pytest set-up: nbval's sanitize file by absolute path, from any folder."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """Make the nbval sanitize file path absolute."""
    if hasattr(config.option, "nbval_sanitize_with"):
        config.option.nbval_sanitize_with = str(ROOT / "notebooks" / "nbval_sanitize.cfg")
