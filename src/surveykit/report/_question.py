"""A codebook's questions: what one results column's answers mean, and its plain JSON form.

The data model below :class:`~surveykit.report._codebook.Codebook`: a :class:`Question`
(text, kind, scale, ordered value labels, missing codes), the codes answers are written
as (:func:`code_text`), the spreadsheet layout's columns, and the codebook's JSON document
(:func:`questions_to_dict`, :func:`questions_from_dict`). The codebook's drafting
(``_infer``) and its files (``_codebook_io``) build and read questions with this module
only; ``Codebook`` composes them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from surveykit.errors import CodebookError

QuestionKind = Literal["nps", "rating", "choice", "multi", "number", "date", "text"]
KINDS: Final[tuple[str, ...]] = get_args(QuestionKind)
CODED_KINDS: Final = frozenset({"nps", "rating", "choice"})
"""Kinds whose answers :func:`~surveykit.label` turns into ordered categoricals."""
FORMAT_VERSION: Final = 1
FRAME_COLUMNS: Final = (
    "key", "text", "kind", "min", "max", "separator", "code", "label", "missing",
)  # fmt: skip
"""The spreadsheet layout's columns, in order."""


def code_text(value: object) -> str:
    """The codebook code of an answer: whole numbers without ``.0``, booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if hasattr(value, "item"):  # numpy scalars
        return code_text(value.item())
    return str(value)


def _mapping(where: str, name: str, value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise CodebookError(f"{where}.{name}: expected a mapping of code to text, got {value!r}")
    out: dict[str, str] = {}
    for code, text in value.items():
        if isinstance(code, int | float) and not isinstance(code, bool):
            code = code_text(code)
        if not isinstance(code, str) or code == "":
            raise CodebookError(f"{where}.{name}: a code must be a non-empty text, got {code!r}")
        if not isinstance(text, str) or text == "":
            raise CodebookError(
                f"{where}.{name}[{code!r}]: expected a non-empty text, got {text!r}"
            )
        out[code] = text
    return out


def _bound(where: str, name: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CodebookError(f"{where}.{name}: expected a finite number or nothing, got {value!r}")
    return float(value)


@dataclass
class Question:
    """One question of a codebook: the results column ``key`` and what its answers mean.

    Args:
        key: the results column.
        text: the question's wording (the variable label in SPSS and Stata).
        kind: ``nps``, ``rating``, ``choice``, ``multi``, ``number``, ``date`` or ``text``.
        labels: ordered code -> label of the valid answers (``{"1": "Very unhappy", ...}``);
            for choice and multi questions the codes are the answers as results hold them.
        missing: code -> reason of answers that are counted but left out of estimates
            (``{"99": "Don't know"}``). A code is either a value label or a missing code.
        min: the lowest point of a rating scale (NPS: always 0).
        max: the highest point of a rating scale (NPS: always 10).
        separator: how a multi question joins its options in one answer.

    Raises:
        CodebookError: naming the question and field of a value that is not valid.
    """

    key: str
    text: str = ""
    kind: QuestionKind = "text"
    labels: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    min: float | None = None
    max: float | None = None
    separator: str = ";"

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise CodebookError(f"key: expected a non-empty text, got {self.key!r}")
        where = self.key
        if not isinstance(self.text, str):
            raise CodebookError(f"{where}.text: expected a text, got {self.text!r}")
        if self.kind not in KINDS:
            raise CodebookError(
                f"{where}.kind: expected one of {', '.join(KINDS)}, got {self.kind!r}"
            )
        self.labels = _mapping(where, "labels", self.labels)
        self.missing = _mapping(where, "missing", self.missing)
        both = [code for code in self.labels if code in self.missing]
        if both:
            raise CodebookError(
                f"{where}: code {both[0]!r} is both a value label and a missing code"
            )
        self.min = _bound(where, "min", self.min)
        self.max = _bound(where, "max", self.max)
        if self.kind == "nps":
            if self.min not in (None, 0.0) or self.max not in (None, 10.0):
                raise CodebookError(f"{where}.min/max: an NPS question is always 0..10")
            self.min, self.max = 0.0, 10.0
        if self.min is not None and self.max is not None and self.min > self.max:
            raise CodebookError(f"{where}.min: {self.min:g} is above max {self.max:g}")
        texts: dict[str, str] = {}
        for code in self.valid_codes():
            text = self.labels.get(code, code)
            if text in texts:
                raise CodebookError(
                    f"{where}.labels: codes {texts[text]!r} and {code!r} have the same "
                    f"label {text!r}"
                )
            texts[text] = code
        if not isinstance(self.separator, str) or not self.separator:
            raise CodebookError(f"{where}.separator: expected a non-empty text")

    def scale_codes(self) -> list[str]:
        """The codes of every whole point of a rating or NPS scale (``"1"``..``"5"``)."""
        if self.kind not in ("rating", "nps") or self.min is None or self.max is None:
            return []
        if not (self.min.is_integer() and self.max.is_integer()):
            return []
        return [str(i) for i in range(int(self.min), int(self.max) + 1)]

    def valid_codes(self) -> list[str]:
        """The codes of valid answers, in order: the labels, then unlabelled scale points.

        When a rating's labels leave scale points out, the whole list is in scale order.
        """
        codes = list(self.labels)
        extra = [c for c in self.scale_codes() if c not in self.labels and c not in self.missing]
        if not extra:
            return codes
        codes += extra
        try:
            return sorted(codes, key=float)
        except ValueError:
            return codes

    def value_labels(self) -> dict[str, str]:
        """Ordered code -> label of every valid answer (an unlabelled code is its own label)."""
        return {code: self.labels.get(code, code) for code in self.valid_codes()}

    def to_dict(self) -> dict[str, Any]:
        """The question as plain JSON values."""
        return {
            "key": self.key,
            "text": self.text,
            "kind": self.kind,
            "labels": dict(self.labels),
            "missing": dict(self.missing),
            "min": self.min,
            "max": self.max,
            "separator": self.separator,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "question") -> Question:
        """Rebuild a question from :meth:`to_dict`; unknown fields are errors."""
        if not isinstance(data, Mapping):
            raise CodebookError(f"{where}: expected an object, got {data!r}")
        known = {"key", "text", "kind", "labels", "missing", "min", "max", "separator"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise CodebookError(f"{where}: unknown fields {unknown} (known: {sorted(known)})")
        if "key" not in data:
            raise CodebookError(f"{where}.key: required")
        try:
            return cls(**{name: data[name] for name in known if name in data})
        except CodebookError as exc:
            raise CodebookError(f"{where}: {exc}") from None


def questions_to_dict(questions: Iterable[Question]) -> dict[str, Any]:
    """A codebook's questions as plain JSON values: ``{"version": 1, "questions": [...]}``."""
    return {"version": FORMAT_VERSION, "questions": [q.to_dict() for q in questions]}


def questions_from_dict(data: Mapping[str, Any]) -> list[Question]:
    """The questions of :func:`questions_to_dict` (errors name ``questions[i]`` and field)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("questions"), list):
        raise CodebookError("expected an object with a 'questions' list")
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise CodebookError(f"version: expected {FORMAT_VERSION}, got {version!r}")
    unknown = sorted(set(data) - {"version", "questions"})
    if unknown:
        raise CodebookError(f"unknown fields {unknown} (known: version, questions)")
    return [
        Question.from_dict(item, where=f"questions[{i}]")
        for i, item in enumerate(data["questions"])
    ]
