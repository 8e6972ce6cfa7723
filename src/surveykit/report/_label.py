"""``label(df, codebook)``: value labels, missing codes and question texts on a results frame.

Vectorised: each column is factorised once (a categorical's own codes are used as they
are), the few distinct answers are looked up in the codebook, and every row then takes its
new code from an array: no Python work per row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from surveykit.errors import LabelError
from surveykit.report._codebook import Codebook
from surveykit.report._frozen import CoercedAnswers, RowReasons
from surveykit.report._question import CODED_KINDS, Question, code_text

Errors = Literal["raise", "coerce"]


@dataclass
class _Lookup:
    """Per distinct answer: its new code (-1: missing), missing reason, and if unknown."""

    codes: np.ndarray[Any, Any]
    uniques: list[object]
    target: list[int] = field(default_factory=list)
    reason: list[str | None] = field(default_factory=list)
    unknown: list[bool] = field(default_factory=list)

    def take(self, values: list[int]) -> np.ndarray[Any, Any]:
        # codes of -1 (a missing answer) pick the appended last slot: -1, stays missing.
        table = np.asarray([*values, -1], dtype=np.int64)
        taken: np.ndarray[Any, Any] = table[self.codes]
        return taken


def _factorize(series: pd.Series) -> tuple[np.ndarray[Any, Any], list[object]]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = np.asarray(series.cat.codes.to_numpy(), dtype=np.int64)
        return codes, list(series.cat.categories)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), list(uniques)


def label(df: pd.DataFrame, codebook: Codebook, errors: Errors = "raise") -> pd.DataFrame:
    """A copy of ``df`` with value labels, missing codes as missing, and question texts.

    - rating, nps and choice questions become ordered categoricals whose categories are
      the label texts in codebook order (a scale point without a label is its own label);
      an answer may be a code or a label text;
    - multi questions keep their ``;``-joined codes (each option is checked);
    - number and date questions are parsed when held as text;
    - in every question, a missing code becomes missing.

    Questions of the codebook that ``df`` does not have are skipped; columns the codebook
    does not describe are kept as they are.

    ``attrs`` of the result (beside those of ``df``): ``questions`` ``{key: text}``,
    ``codebook`` (:meth:`Codebook.to_dict`), ``missing_reasons`` ``{key: {row: reason}}``
    for rows whose answer was a missing code, ``value_codes`` ``{key: {label: code}}``
    (codes as text, as in the codebook) and, with ``errors="coerce"``, ``coerced``: a
    list of ``{"column", "row", "value"}``. The per-row ones are read-only views
    (:class:`~surveykit.report.RowReasons`, :class:`~surveykit.report.CoercedAnswers`)
    that act as a dict and a list: pandas deep-copies ``attrs`` on nearly every
    operation, and these copy as themselves (a plain dict of every row would make each
    operation on a large frame slow).

    Args:
        df: results (as :func:`surveykit.read_results` gives them).
        codebook: the codebook of the questions.
        errors: ``"raise"`` (an answer the codebook does not know is an error) or
            ``"coerce"`` (it becomes missing and is listed in ``attrs["coerced"]``).

    Raises:
        LabelError: naming the column, the row and the value of an unknown answer.
    """
    if errors not in ("raise", "coerce"):
        raise ValueError(f"errors: expected 'raise' or 'coerce', got {errors!r}")
    if not isinstance(codebook, Codebook):
        raise TypeError(f"codebook: expected a Codebook, got {type(codebook).__name__}")
    out = df.copy(deep=False)
    questions: dict[str, str] = {}
    value_codes: dict[str, dict[str, str]] = {}
    reasons: dict[str, RowReasons] = {}
    coerced: list[tuple[str, Any, Any]] = []
    for key, question in codebook.items():
        if key not in df.columns:
            continue
        questions[key] = question.text
        series = df[key]
        lookup = _lookup(series, question)
        unknown = [i for i, bad in enumerate(lookup.unknown) if bad]
        if unknown:
            rows = np.flatnonzero(np.isin(lookup.codes, unknown))
            if errors == "raise":
                _raise_unknown(df, key, lookup, rows)
            values = [lookup.uniques[c] for c in lookup.codes[rows].tolist()]
            coerced += [
                (key, row, value)
                for row, value in zip(df.index[rows].tolist(), values, strict=True)
            ]
        out[key] = _result(series, question, lookup)
        if question.kind in CODED_KINDS or question.kind == "multi":
            value_codes[key] = {text: code for code, text in question.value_labels().items()}
        reason_codes = [i for i, r in enumerate(lookup.reason) if r is not None]
        if reason_codes:
            rows = np.flatnonzero(np.isin(lookup.codes, reason_codes))
            texts = np.asarray(lookup.reason, dtype=object)[lookup.codes[rows]]
            reasons[key] = RowReasons(df.index[rows], texts)
    out.attrs = {
        **df.attrs,
        "questions": questions,
        "codebook": codebook.to_dict(),
        "missing_reasons": reasons,
        "value_codes": value_codes,
    }
    if errors == "coerce":
        out.attrs["coerced"] = CoercedAnswers(coerced)
    return out


def _raise_unknown(df: pd.DataFrame, key: str, lookup: _Lookup, rows: np.ndarray[Any, Any]) -> None:
    first = int(rows[0])
    value = lookup.uniques[int(lookup.codes[first])]
    distinct = sorted({code_text(lookup.uniques[c]) for c in np.unique(lookup.codes[rows])})
    shown = ", ".join(repr(v) for v in distinct[:5]) + (", ..." if len(distinct) > 5 else "")
    raise LabelError(
        f"{key}: row {df.index[first]!r} has {code_text(value)!r}, an answer the codebook "
        f"does not know ({len(rows)} rows, unknown answers: {shown}); add it to the "
        "codebook or use errors='coerce'",
        column=key,
        row=df.index[first],
        value=value,
    )


def _lookup(series: pd.Series, question: Question) -> _Lookup:
    codes, uniques = _factorize(series)
    lookup = _Lookup(codes, uniques)
    valid = question.value_labels()
    position = {code: i for i, code in enumerate(valid)}
    by_text = {text: i for i, text in enumerate(valid.values())}
    for value in uniques:
        text = code_text(value)
        reason = question.missing.get(text)
        target, bad = -1, False
        if reason is None:
            if question.kind in CODED_KINDS:
                found = position.get(text, by_text.get(text))
                target, bad = (-1, True) if found is None else (found, False)
            elif question.kind == "multi":
                options = [o for o in text.split(question.separator) if o]
                bad = any(o not in valid and o not in question.missing for o in options)
            elif question.kind == "number":
                bad = not isinstance(value, int | float | np.number) and _number(text) is None
            elif question.kind == "date":
                bad = not isinstance(value, pd.Timestamp) and _date(text) is None
        lookup.target.append(target)
        lookup.reason.append(reason)
        lookup.unknown.append(bad)
    return lookup


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _date(text: str) -> pd.Timestamp | None:
    try:
        value = pd.Timestamp(text)
    except (ValueError, TypeError):
        return None
    return None if pd.isna(value) else value


def _result(series: pd.Series, question: Question, lookup: _Lookup) -> pd.Series:
    keep = [r is None and not bad for r, bad in zip(lookup.reason, lookup.unknown, strict=True)]
    if question.kind in CODED_KINDS:
        categories = pd.Index(list(question.value_labels().values()), dtype=object)
        codes = lookup.take(lookup.target)
        values = pd.Categorical.from_codes(codes, categories=categories, ordered=True)
        return pd.Series(values, index=series.index, name=series.name)
    if all(keep):
        if question.kind in ("number", "date") and not (
            pd.api.types.is_numeric_dtype(series.dtype)
            or pd.api.types.is_datetime64_any_dtype(series.dtype)
        ):
            return _parsed(series, question, lookup, keep)
        return series
    if question.kind in ("number", "date"):
        return _parsed(series, question, lookup, keep)
    dropped = lookup.take([i if k else -1 for i, k in enumerate(keep)]) < 0
    return series.mask(dropped & series.notna().to_numpy())


def _parsed(series: pd.Series, question: Question, lookup: _Lookup, keep: list[bool]) -> pd.Series:
    """A number or date question from its distinct answers (missing codes dropped)."""
    index = lookup.take(list(range(len(lookup.uniques))))
    if question.kind == "number":
        numbers = [
            (float(v) if isinstance(v, int | float | np.number) else _number(code_text(v)))
            if k
            else None
            for v, k in zip(lookup.uniques, keep, strict=True)
        ]
        table = pd.array([*numbers, None], dtype="Float64")
        result = pd.Series(table[index], index=series.index, name=series.name)
        if (result.dropna() % 1 == 0).all():
            return result.astype("Int64")
        return result
    stamps = [
        (v if isinstance(v, pd.Timestamp) else _date(code_text(v))) if k else None
        for v, k in zip(lookup.uniques, keep, strict=True)
    ]
    # Mixed offsets and naive stamps: everything in UTC, as the results readers do.
    parsed = pd.to_datetime(pd.Series([*stamps, None], dtype=object), utc=True)
    return pd.Series(parsed.to_numpy()[index], index=series.index, name=series.name).astype(
        parsed.dtype
    )
