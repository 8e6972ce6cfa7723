"""SMS segment counting, re-exported from the platform's rules (:mod:`surveykit._platform`)."""

from __future__ import annotations

from surveykit._platform import Segments, count_segments

__all__ = ["Segments", "count_segments"]
