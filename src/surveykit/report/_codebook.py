"""The codebook: per question its text, kind, scale, ordered value labels and missing codes.

A codebook is what SPSS calls the variable and value views. It is kept as plain JSON
(:meth:`Codebook.to_dict`) or as a spreadsheet of one row per value label (CSV or XLSX,
:meth:`Codebook.to_frame`); both read back to an equal codebook, label order included.

Its questions and their JSON form are ``_question``; the draft from the answers is
``_infer`` and the files are ``_codebook_io``, both of which read and give questions,
never a codebook: the :class:`Codebook` here composes them (nothing imports upward).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from surveykit.errors import CodebookError
from surveykit.report._codebook_io import read_codebook, write_codebook
from surveykit.report._question import (
    FRAME_COLUMNS,
    Question,
    questions_from_dict,
    questions_to_dict,
)

if TYPE_CHECKING:
    import os

    import pandas as pd


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
        from surveykit.report._infer import infer_questions  # pandas

        return cls(infer_questions(df, respondent_columns=respondent_columns))

    def to_dict(self) -> dict[str, Any]:
        """The codebook as plain JSON values: ``{"version": 1, "questions": [...]}``."""
        return questions_to_dict(self.questions.values())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Codebook:
        """Rebuild a codebook from :meth:`to_dict` (errors name ``questions[i]`` and field)."""
        return cls(questions_from_dict(data))

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
        path = Path(path)
        questions = read_codebook(path)
        try:
            return cls(questions)
        except CodebookError as exc:  # a key twice in a JSON file
            raise CodebookError(f"{path.name}: {exc}") from None

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the codebook as ``.json``, ``.csv`` or ``.xlsx``, atomically."""
        write_codebook(self.questions.values(), Path(path))


def _ordered(value: Any) -> Any:
    """Dicts as lists of items, so that comparing values compares order too."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value
