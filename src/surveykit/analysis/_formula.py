"""Model formulas and model matrices, as R's ``model.frame`` and ``model.matrix`` build them.

A formula is ``response ~ terms``: column names joined by ``+``; ``a:b`` is an interaction
(the product of the two columns' codings), ``a*b`` is ``a + b + a:b``; ``- 1`` (or ``+ 0``)
drops the intercept. A name that is not a plain word (spaces, operators) is written in
backticks: ``` `monthly spend` ~ age ```. There are no transforms (``I()``, ``log()``):
compute them as columns first.

Columns are coded as R codes them:

- numbers (ints, floats) are used as they are, one column;
- text, categoricals and booleans are factors: text levels sorted, categoricals in category
  order, booleans ``FALSE``/``TRUE``; levels no complete row uses are dropped (R's
  ``drop.unused.levels``). A factor is treatment coded (a 0/1 column per level but the
  first, named ``column + level``, as ``regionNorth``) when the term without it is in the
  model (the intercept standing for the empty term), else it gets a column for every level;
  without an intercept the first factor gets every level, so the model keeps full rank.
- terms are ordered main effects first, then two-way interactions, and so on (the order
  within a degree is the formula's); an interaction's columns vary the first factor fastest.

Blank text is a missing value, as everywhere in ``sk.analysis``; a row missing any model
variable is left out of the fit (R's ``na.action = na.omit``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from surveykit.analysis._inputs import FloatArray, number_label
from surveykit.errors import AnalysisInputError

INTERCEPT = "(Intercept)"

_TOKEN = re.compile(r"\s*(?:(`[^`]*`)|([~+\-*:])|([^\s~+\-*:`]+))")
_NUMERIC = frozenset({"integer", "floating", "mixed-integer-float", "decimal"})

Term = tuple[str, ...]


@dataclass(frozen=True)
class Formula:
    """A parsed formula: the response, the terms (variables per term) and the intercept."""

    text: str
    response: str
    terms: tuple[Term, ...]
    intercept: bool

    @property
    def variables(self) -> list[str]:
        """The response and every predictor, each once, in order of appearance."""
        names = [self.response, *(v for term in self.terms for v in term)]
        return list(dict.fromkeys(names))


def parse(text: str) -> Formula:
    """Parse ``"y ~ a + b + a:b - 1"`` (see the module's docstring for what is accepted)."""
    if not isinstance(text, str):
        raise AnalysisInputError(f"formula must be a string like 'y ~ x1 + x2', not {text!r}")
    tokens = _tokens(text)
    if tokens.count("~") != 1 or tokens[0] == "~" or len(tokens) < 3 or tokens[1] != "~":
        raise AnalysisInputError(
            f"formula {text!r}: write one response, '~', then the predictors ('y ~ x1 + x2')"
        )
    response = tokens[0]
    terms: list[Term] = []
    intercept = True
    sign = "+"
    for chunk in _chunks(tokens[2:], text):
        if chunk[0] in "+-":
            sign, chunk = chunk[0], chunk[1:]
        if chunk in (["1"], ["0"]):
            intercept = (chunk == ["1"]) == (sign == "+")
            continue
        if sign == "-":
            raise AnalysisInputError(
                f"formula {text!r}: only '- 1' can be taken away (drop a term by leaving it out)"
            )
        terms.extend(_expand(chunk, text))
    unique = list(dict.fromkeys(tuple(dict.fromkeys(term)) for term in terms))
    seen: dict[frozenset[str], Term] = {}
    for term in unique:
        seen.setdefault(frozenset(term), term)
    ordered = sorted(seen.values(), key=len)  # stable: the formula's order within a degree
    if not ordered and not intercept:
        raise AnalysisInputError(f"formula {text!r}: no predictor and no intercept to fit")
    if response in {v for term in ordered for v in term}:
        raise AnalysisInputError(f"formula {text!r}: {response!r} is also a predictor")
    return Formula(text, response, tuple(ordered), intercept)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    position = 0
    stripped = text.rstrip()
    while position < len(stripped):
        match = _TOKEN.match(stripped, position)
        if match is None:
            raise AnalysisInputError(f"formula {text!r}: cannot read it at {text[position:]!r}")
        quoted, operator, name = match.groups()
        if name is not None and re.search(r"[()=<>!&|/^%$,]", name):
            raise AnalysisInputError(
                f"formula {text!r}: {name!r} is not a column name; formulas take column "
                "names joined by +, -, *, : (compute I(), log() and the like as a new "
                "column first, or put a name with such characters in backticks)"
            )
        out.append(quoted[1:-1] if quoted is not None else operator or name)
        position = match.end()
    return out


def _chunks(tokens: list[str], text: str) -> list[list[str]]:
    """Split the right-hand side into signed terms: ``["a", ":", "b"]``, ``["-", "1"]``."""
    chunks: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        if token in ("+", "-"):
            if current and current[-1] in ("+", "-", ":", "*"):
                raise AnalysisInputError(f"formula {text!r}: two operators in a row")
            if current:
                chunks.append(current)
            current = [token]
        else:
            current.append(token)
    if current:
        chunks.append(current)
    for chunk in chunks:
        body = chunk[1:] if chunk[0] in "+-" else chunk
        if not body or body[0] in ":*" or body[-1] in ":*" or "~" in body:
            raise AnalysisInputError(f"formula {text!r}: a term is missing around an operator")
    return chunks


def _expand(chunk: list[str], text: str) -> list[Term]:
    """``a:b*c`` -> the terms it stands for (``*`` crosses, ``:`` multiplies)."""
    names = chunk[0::2]
    operators = chunk[1::2]
    if any(op not in (":", "*") for op in operators) or any(n in (":", "*") for n in names):
        raise AnalysisInputError(f"formula {text!r}: cannot read the term {' '.join(chunk)!r}")
    if "1" in names or "0" in names:
        raise AnalysisInputError(f"formula {text!r}: 1 and 0 stand alone ('- 1', '+ 0')")
    # ':' binds tighter than '*': a:b*c is (a:b) * c.
    groups: list[Term] = [(names[0],)]
    for op, name in zip(operators, names[1:], strict=True):
        if op == ":":
            groups[-1] = (*groups[-1], name)
        else:
            groups.append((name,))
    terms: list[Term] = []
    for size in range(1, len(groups) + 1):
        for combo in itertools.combinations(groups, size):
            terms.append(tuple(v for group in combo for v in group))
    return terms


@dataclass(frozen=True)
class Coding:
    """One variable's values for the model: numbers (one column) or factor codes."""

    name: str
    numbers: FloatArray | None  # per row (NaN missing), for a numeric variable
    codes: np.ndarray | None  # per row the level (-1 missing), for a factor
    levels: tuple[str, ...] = ()


def code(data: pd.DataFrame, name: str) -> Coding:
    """The variable ``name`` of ``data``, as a number per row or a factor's level codes."""
    if name not in data.columns:
        raise AnalysisInputError(
            f"formula: no column {name!r} in the data; columns are {[str(c) for c in data.columns]}"
        )
    series = data[name]
    if isinstance(series, pd.DataFrame):
        raise AnalysisInputError(f"formula: {name!r} names more than one column")
    if isinstance(series.dtype, pd.CategoricalDtype):
        levels = [_level(c) for c in series.cat.categories]
        return Coding(name, None, np.asarray(series.cat.codes, dtype=np.int64), tuple(levels))
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind == "boolean":
        values = series.astype(object)
        codes = np.where(series.isna(), -1, np.where(values == True, 1, 0))  # noqa: E712
        return Coding(name, None, codes.astype(np.int64), ("FALSE", "TRUE"))
    if kind in _NUMERIC or (kind == "empty" and pd.api.types.is_numeric_dtype(series.dtype)):
        numbers = np.array(pd.to_numeric(series, errors="coerce"), dtype=np.float64)
        numbers[~np.isfinite(numbers)] = np.nan
        return Coding(name, numbers, None)
    if kind in ("string", "empty"):
        # Factorize first, then strip and sort the distinct values, not every row.
        raw_codes, uniques = pd.factorize(series, use_na_sentinel=True)
        stripped = [str(u).strip() for u in uniques]
        levels = sorted({u for u in stripped if u})
        position = {level: i for i, level in enumerate(levels)}
        remap = np.array([position.get(u, -1) for u in stripped] + [-1], dtype=np.int64)
        return Coding(name, None, remap[np.asarray(raw_codes, dtype=np.int64)], tuple(levels))
    raise AnalysisInputError(
        f"formula: column {name!r} holds {kind} values; a model takes numbers, text, "
        "categoricals or booleans"
    )


def _level(value: object) -> str:
    return number_label(value) if isinstance(value, int | float) else str(value)


def missing(coding: Coding) -> np.ndarray:
    """Per row, whether the variable has no value."""
    if coding.numbers is not None:
        return np.isnan(coding.numbers)
    assert coding.codes is not None
    return coding.codes < 0


def used_levels(coding: Coding, rows: np.ndarray) -> Coding:
    """The factor with only the levels some of ``rows`` use (R's ``drop.unused.levels``)."""
    if coding.codes is None:
        return coding
    used = np.bincount(coding.codes[rows & (coding.codes >= 0)], minlength=len(coding.levels)) > 0
    remap = np.where(used, np.cumsum(used) - 1, -1)
    codes = np.where(coding.codes >= 0, remap[np.maximum(coding.codes, 0)], -1)
    levels = tuple(level for level, u in zip(coding.levels, used, strict=True) if u)
    return Coding(coding.name, None, codes.astype(np.int64), levels)


def model_matrix(
    formula: Formula, codings: dict[str, Coding], rows: np.ndarray
) -> tuple[FloatArray, list[str]]:
    """R's ``model.matrix`` of ``formula`` on ``rows`` (other rows are 0), and column names."""
    n = len(rows)
    columns: list[FloatArray] = []
    names: list[str] = []
    if formula.intercept:
        columns.append(rows.astype(np.float64))
        names.append(INTERCEPT)
    present: set[frozenset[str]] = {frozenset(term) for term in formula.terms} | {frozenset()}
    first_factor_full = not formula.intercept
    for term in formula.terms:
        parts: list[list[tuple[str, FloatArray]]] = []
        for variable in term:
            coding = codings[variable]
            if coding.numbers is not None:
                parts.append([(variable, np.where(rows, coding.numbers, 0.0))])
                continue
            assert coding.codes is not None
            margin = frozenset(term) - {variable}
            full = margin not in present or first_factor_full
            first_factor_full = False
            if len(coding.levels) < 2:
                raise AnalysisInputError(
                    f"formula: {variable!r} has one value among the rows fitted "
                    f"({list(coding.levels)}); a factor in a model needs two or more"
                )
            levels = range(len(coding.levels)) if full else range(1, len(coding.levels))
            parts.append(
                [
                    (variable + coding.levels[i], (rows & (coding.codes == i)).astype(float))
                    for i in levels
                ]
            )
        # R varies the first factor fastest.
        for combo in itertools.product(*reversed(parts)):
            ordered = combo[::-1]
            names.append(":".join(name for name, _ in ordered))
            product = np.ones(n)
            for _, values in ordered:
                product = product * values
            columns.append(product)
    matrix = np.column_stack(columns) if columns else np.zeros((n, 0))
    return np.asarray(matrix, dtype=np.float64), names
