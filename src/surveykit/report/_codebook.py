"""The codebook: per question its text, kind, scale, ordered value labels and missing codes.

A codebook is what SPSS calls the variable and value views. It is kept as plain JSON
(:meth:`Codebook.to_dict`) or as a spreadsheet of one row per value label (CSV or XLSX,
:meth:`Codebook.to_frame`); both read back to an equal codebook, label order included.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from surveykit.errors import CodebookError

if TYPE_CHECKING:
    import os

    import pandas as pd

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


class Codebook(Mapping[str, Question]):
    """An ordered mapping of results column -> :class:`Question`.

    Example:
        >>> cb = Codebook([Question("Q1", "How satisfied?", "rating",
        ...                         labels={"1": "Very unhappy", "5": "Very happy"},
        ...                         missing={"99": "Don't know"}, min=1, max=5)])
        >>> cb["Q1"].value_labels()["3"]
        '3'
        >>> cb.write("codebook.xlsx")                       # doctest: +SKIP
        >>> Codebook.read("codebook.xlsx") == cb             # doctest: +SKIP
        True
    """

    def __init__(self, questions: Iterable[Question] | Mapping[str, Question] = ()) -> None:
        items = questions.values() if isinstance(questions, Mapping) else questions
        self.questions: dict[str, Question] = {}
        for question in items:
            if not isinstance(question, Question):
                raise CodebookError(f"expected Question objects, got {question!r}")
            if question.key in self.questions:
                raise CodebookError(f"{question.key}: the key appears twice")
            self.questions[question.key] = question

    def __getitem__(self, key: str) -> Question:
        return self.questions[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.questions)

    def __len__(self) -> int:
        return len(self.questions)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{q.key}: {q.kind}" for q in self.questions.values())
        return f"Codebook({kinds})"

    def __eq__(self, other: object) -> bool:
        # Order matters: labels and questions are ordered.
        if not isinstance(other, Codebook):
            return NotImplemented
        return bool(_ordered(self.to_dict()) == _ordered(other.to_dict()))

    __hash__ = None  # type: ignore[assignment]

    # ----------------------------------------------------------------- building

    @classmethod
    def infer(cls, df: pd.DataFrame, *, respondent_columns: Iterable[str] = ()) -> Codebook:
        """Draft a codebook of the question columns of ``df``, for the analyst to edit.

        Respondent fields (and ``respondent_columns``) are left out. Whole numbers within
        1..5 or 1..7 are a ``rating`` on that scale, within 0..10 with an answer above 7 an
        ``nps``; a usual missing code beside a scale (97, 98, 99, 999, -1, -9, -99) is a
        missing code; other numbers are ``number``; datetimes ``date``; short ``;``-joined
        options that recur ``multi``; at most 20 distinct short answers ``choice`` ("Prefer
        not to say", "Don't know" as missing codes); the rest ``text``. Texts are empty.
        """
        from surveykit.report._infer import infer_codebook

        return infer_codebook(df, respondent_columns=respondent_columns)

    def to_dict(self) -> dict[str, Any]:
        """The codebook as plain JSON values: ``{"version": 1, "questions": [...]}``."""
        return {
            "version": FORMAT_VERSION,
            "questions": [q.to_dict() for q in self.questions.values()],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Codebook:
        """Rebuild a codebook from :meth:`to_dict` (errors name ``questions[i]`` and field)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("questions"), list):
            raise CodebookError("expected an object with a 'questions' list")
        version = data.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise CodebookError(f"version: expected {FORMAT_VERSION}, got {version!r}")
        unknown = sorted(set(data) - {"version", "questions"})
        if unknown:
            raise CodebookError(f"unknown fields {unknown} (known: version, questions)")
        questions = [
            Question.from_dict(item, where=f"questions[{i}]")
            for i, item in enumerate(data["questions"])
        ]
        return cls(questions)

    def to_frame(self) -> pd.DataFrame:
        """One row per value label and missing code (a question without any: one row).

        Columns: ``key, text, kind, min, max, separator, code, label, missing`` where
        ``missing`` is True on the rows of missing codes (their ``label`` is the reason).
        """
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for q in self.questions.values():
            head = {
                "key": q.key,
                "text": q.text,
                "kind": q.kind,
                "min": q.min,
                "max": q.max,
                "separator": q.separator,
            }
            values = [(c, t, False) for c, t in q.labels.items()]
            values += [(c, t, True) for c, t in q.missing.items()]
            if not values:
                rows.append({**head, "code": None, "label": None, "missing": False})
            for code, text, missing in values:
                rows.append({**head, "code": code, "label": text, "missing": missing})
        frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
        for name in ("min", "max"):
            frame[name] = frame[name].astype("float64")
        frame["missing"] = frame["missing"].astype(bool)
        return frame

    # ----------------------------------------------------------------- files

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Codebook:
        """Read a codebook from ``.json``, ``.csv`` or ``.xlsx`` (by the file's suffix).

        Raises:
            CodebookError: naming the row (spreadsheet) or field (JSON) that is not valid.
        """
        from surveykit.report._codebook_io import read_codebook

        return read_codebook(Path(path))

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the codebook as ``.json``, ``.csv`` or ``.xlsx``, atomically."""
        from surveykit.report._codebook_io import write_codebook

        write_codebook(self, Path(path))


def _ordered(value: Any) -> Any:
    """Dicts as lists of items, so that comparing values compares order too."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value
