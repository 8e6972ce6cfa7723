"""SMS segment counting, re-exported from the platform's rules (:mod:`surveykit.rules.delivery`)."""

from __future__ import annotations

from surveykit.rules.delivery import Segments, count_segments

__all__ = ["Segments", "count_segments"]
