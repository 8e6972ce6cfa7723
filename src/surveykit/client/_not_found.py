"""A 404 for a survey or import reference: name it, and suggest the closest known ones.

The reference (v3.2) has no endpoint that lists surveys, so a live platform's 404 can only
be told which reference was asked for. The sandbox (embedded or served) adds the
references it knows to its ProblemDetails body as the extension member ``references``;
when a 404 carries that list, the closest entries (:func:`difflib.get_close_matches`,
letter case ignored) are offered as "did you mean ...?".
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

SUGGESTIONS = 3
"""At most this many references are suggested."""

CUTOFF = 0.6
"""How alike a known reference must be (difflib's ratio, 0 to 1) to be suggested."""


def suggest(reference: str, known: Sequence[str]) -> list[str]:
    """The known references closest to ``reference``, best first (letter case ignored)."""
    by_folded: dict[str, str] = {}
    for name in known:
        by_folded.setdefault(name.casefold(), name)
    matches = difflib.get_close_matches(
        reference.strip().casefold(), list(by_folded), n=SUGGESTIONS, cutoff=CUTOFF
    )
    return [by_folded[m] for m in matches]


def not_found_note(what: str, reference: str, detail: str, body: Any) -> tuple[str, list[str]]:
    """Text to add to a 404's message, and the suggested references.

    ``what`` names the kind of reference (``survey``, ``import definition``). The text
    names the reference when the platform's detail does not, then any suggestions.
    """
    known = body.get("references") if isinstance(body, dict) else None
    names = [str(n) for n in known] if isinstance(known, list) else []
    suggestions = suggest(reference, names)
    note = "" if reference in detail else f" (no {what} has the reference {reference!r})"
    if suggestions:
        ends_sentence = (detail + note).rstrip().endswith(".")
        note += " Did you mean " if ends_sentence else "; did you mean "
        note += " or ".join(repr(s) for s in suggestions) + "?"
    return note, suggestions
