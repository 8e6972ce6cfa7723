"""ProblemDetails: the error body of RFC 9457 that the platform returns (404 on Data/Import)."""

from __future__ import annotations

from surveykit.models._base import ResponseModel, WireInt


class ProblemDetails(ResponseModel):
    """An error body: every field may be missing; unknown fields are kept."""

    type: str | None = None
    title: str | None = None
    status: WireInt | None = None
    detail: str | None = None
    instance: str | None = None

    def summary(self) -> str:
        """A one-line description: title and detail, whichever are present."""
        parts = [part for part in (self.title, self.detail) if part]
        return ": ".join(parts) if parts else "problem details without title or detail"
