"""The sandbox's state as one object: the union of the endpoint groups' mixins."""

from __future__ import annotations

from surveykit.sandbox.state._keywords import Keywords
from surveykit.sandbox.state._links import Links
from surveykit.sandbox.state._respondents import Respondents


class SandboxState(Respondents, Keywords, Links):
    """Everything the simulated platform knows, and the operations of its routes."""


__all__ = ["SandboxState"]
