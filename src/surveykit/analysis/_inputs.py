"""Questions, groups and weights as integer codes and arrays, shared by the estimators.

Every estimator reduces its input to three arrays the length of the frame: a group id per
row (from ``by``), an answer code per row (``-1`` for no answer) and, when weighted, a
weight per row. Per-group sums are then ``np.bincount`` over ``group * n_codes + code``:
one pass over the rows whatever the number of groups, so a million rows take milliseconds.
Answers are factorized once and only their distinct values are parsed (split into options,
turned into numbers), so text answers cost a hash per row, not a parse per row.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit.errors import AnalysisInputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
By = str | Sequence[str] | None
Weights = str | pd.Series | None

# Above this many (group x code) cells the per-cell tables give way to per-row passes.
_MAX_CELLS = 4_000_000


def by_columns(df: pd.DataFrame, by: By) -> list[str]:
    """``by`` as a list of column names, each checked to be in ``df``."""
    columns = [] if by is None else [by] if isinstance(by, str) else list(by)
    for column in columns:
        if column not in df.columns:
            raise AnalysisInputError(
                f"by: no column {column!r} in the frame; columns are {_names(df)}"
            )
    if len(set(columns)) != len(columns):
        raise AnalysisInputError(f"by: a column is given twice in {columns}")
    return columns


def not_crossed_with_itself(question: str, by: By) -> None:
    """Refuse a question grouped by itself (``crosstab(df, "Q1", "Q1")``): no finding."""
    columns = [] if by is None else [by] if isinstance(by, str) else list(by)
    if question in columns:
        raise AnalysisInputError(
            f"by: {question!r} is the question itself; crossing a question with itself "
            "tests nothing (choose another by= column)"
        )


def _names(df: pd.DataFrame) -> list[str]:
    return [str(c) for c in df.columns]


def question_series(df: pd.DataFrame, question: str) -> pd.Series:
    """The column of ``question``, or an error naming it and the columns there are."""
    if question not in df.columns:
        raise AnalysisInputError(f"no question column {question!r}; columns are {_names(df)}")
    series = df[question]
    if isinstance(series, pd.DataFrame):
        raise AnalysisInputError(f"{question!r} names more than one column")
    return series


@dataclass
class Groups:
    """Rows grouped by the ``by`` columns (all rows in one group when there are none).

    Attributes:
        columns: the ``by`` column names.
        ids: the group of each row, 0..count-1; -1 for a row left out (missing ``by`` value
            when missing values are dropped).
        count: the number of groups.
        frame: one row per group with the ``by`` values (their dtypes kept), sorted by them;
            a missing value is a group of its own, last.
        complete: known to have no row left out (no id -1), so no pass need look.
    """

    columns: list[str]
    ids: IntArray
    count: int
    frame: pd.DataFrame
    complete: bool = False


def groups(df: pd.DataFrame, by: By, *, dropna: bool = False) -> Groups:
    """Group ``df``'s rows by ``by``, like ``df.groupby(by, sort=True, observed=True)``."""
    columns = by_columns(df, by)
    n = len(df)
    if not columns:
        frame = pd.DataFrame(index=pd.RangeIndex(1))
        return Groups([], np.zeros(n, dtype=np.int64), 1, frame, complete=True)
    factors = [_factorize_sorted(df[column]) for column in columns]
    if len(factors) == 1 and not (dropna and factors[0].has_na):
        return _one_column(df, columns[0], factors[0])
    codes_list = [f.codes for f in factors]
    sizes = [f.size for f in factors]
    total = int(np.prod(sizes, dtype=np.float64))
    raw = np.ravel_multi_index(codes_list, sizes) if n else np.zeros(0, dtype=np.int64)
    missing = [f.codes == f.size - 1 for f in factors if f.has_na]
    if dropna and missing:
        raw = np.where(np.logical_or.reduce(missing), -1, raw)
    kept = raw >= 0
    everything = bool(kept.all())
    if total <= max(_MAX_CELLS, 2 * n):
        seen = np.bincount(raw if everything else raw[kept], minlength=total) > 0
        observed = np.flatnonzero(seen)
        lookup = np.cumsum(seen, dtype=np.int64) - 1
        ids = lookup[raw] if everything else np.where(kept, lookup[np.where(kept, raw, 0)], -1)
    else:
        observed, inverse = np.unique(raw[kept], return_inverse=True)
        ids = np.full(n, -1, dtype=np.int64)
        ids[kept] = inverse
    combos = np.unravel_index(observed, sizes)
    frame = pd.DataFrame(
        {
            column: _values_at(df[column], factor, combos[i])
            for i, (column, factor) in enumerate(zip(columns, factors, strict=True))
        }
    )
    return Groups(columns, ids.astype(np.int64, copy=False), len(observed), frame, everything)


def _one_column(df: pd.DataFrame, column: str, factor: _Factor) -> Groups:
    """Groups of one column: its sorted codes are the ids once unused codes are closed up."""
    if factor.all_used:
        seen = np.ones(factor.size, dtype=bool)
    else:
        seen = np.bincount(factor.codes, minlength=factor.size) > 0
    observed = np.flatnonzero(seen)
    if len(observed) == factor.size:  # every code used: the codes are the ids
        ids = factor.codes
    else:
        ids = (np.cumsum(seen, dtype=np.int64) - 1)[factor.codes]
    frame = pd.DataFrame({column: _values_at(df[column], factor, observed)})
    return Groups([column], ids, len(observed), frame, complete=True)


def _values_at(series: pd.Series, factor: _Factor, codes: IntArray) -> pd.Series:
    """The values of ``codes`` in the column's dtype (from any row of each code if need be)."""
    if factor.levels is not None:
        return factor.levels.iloc[codes].reset_index(drop=True)
    # Any row of each code stands for its value (the last one wins the assignment).
    rep = np.zeros(factor.size, dtype=np.int64)
    rep[factor.codes] = np.arange(len(series), dtype=np.int64)
    return series.iloc[rep[codes]].reset_index(drop=True)


@dataclass(frozen=True)
class _Factor:
    """A column as sorted codes: ``size`` of them, the last one missing values if ``has_na``.

    ``levels`` holds each code's value in the column's dtype when known without a row pass
    (categories, a range of integers); None otherwise. ``all_used``: every code has a row.
    """

    codes: IntArray
    size: int
    has_na: bool
    levels: pd.Series | None = None
    all_used: bool = False


def _factorize_sorted(series: pd.Series) -> _Factor:
    """Codes in sorted order of the values (category order for categoricals), NaN last.

    Categories nobody chose get a code too; the caller keeps only the codes it sees.
    """
    if isinstance(series.dtype, pd.CategoricalDtype):
        cat_codes = np.asarray(series.cat.codes, dtype=np.int64)
        size = len(series.cat.categories)
        has_na = bool((cat_codes < 0).any())
        level_codes = np.arange(size + has_na, dtype=np.int64)
        if has_na:
            level_codes[-1] = -1
        levels = pd.Series(pd.Categorical.from_codes(level_codes, dtype=series.dtype))
        if has_na or size == 0:
            return _Factor(np.where(cat_codes < 0, size, cat_codes), size + 1, has_na, levels)
        return _Factor(cat_codes, size, has_na, levels)
    small = _small_integers(series)
    if small is not None:
        return small
    try:
        codes, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
    except TypeError:  # values of mixed types do not sort; first appearance then
        codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    size = len(uniques)
    has_na = bool((codes < 0).any())
    if has_na or size == 0:
        codes = np.where(codes < 0, size, codes)
        size += 1
    return _Factor(codes, size, has_na)


def _small_integers(series: pd.Series) -> _Factor | None:
    """Sorted codes of a plain integer column by counting, not hashing (None if not one).

    Group columns such as a region or panel code are often small integers: a presence
    table over their range gives the sorted distinct values in two passes.
    """
    if not (pd.api.types.is_integer_dtype(series.dtype) and isinstance(series.dtype, np.dtype)):
        return None
    values = series.to_numpy()
    if len(values) == 0:
        return None
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if span > max(4 * len(values), 1024) or span > 10_000_000 or high >= 2**63:
        return None
    wide = values.astype(np.int64, copy=False)  # int8 - low would wrap round
    shifted = wide - low if low else wide
    present = np.bincount(shifted, minlength=span) > 0
    distinct = (np.flatnonzero(present) + low).astype(series.dtype)
    if len(distinct) < span:  # gaps in the range: close them up
        shifted = (np.cumsum(present, dtype=np.int64) - 1)[shifted]
    elif shifted is values:  # the frame's own memory: a read-only view, never written
        shifted = shifted.view()
        shifted.flags.writeable = False
    levels = pd.Series(distinct, dtype=series.dtype)
    return _Factor(shifted, len(distinct), False, levels, all_used=True)


@dataclass
class Answers:
    """One question's answers as codes.

    Attributes:
        question: the column name.
        codes: per row, the index of its distinct answer; -1 for no answer.
        labels: per code, the answer as text (numbers written without a trailing ``.0``).
        values: per code, the answer as a number (NaN where it is not a number).
        options: for multi-choice questions, the option labels; else None.
        chosen: for multi-choice questions, a (codes x options) 0/1 matrix of which options
            each distinct answer holds; else None.
        ordered: whether the codes follow a scale (an ordered categorical).
    """

    question: str
    codes: IntArray
    labels: list[str]
    values: FloatArray
    options: list[str] | None = None
    chosen: FloatArray | None = None
    ordered: bool = False

    def numbers(self, series: pd.Series, what: str) -> FloatArray:
        """Per code its number, or an error naming the first row whose answer is not one."""
        used = np.bincount(self.codes[self.codes >= 0], minlength=len(self.values)) > 0
        bad = np.flatnonzero(np.isnan(self.values) & used)
        if len(bad):
            code = int(bad[0])
            row = series.index[int(np.flatnonzero(self.codes == code)[0])]
            raise AnalysisInputError(
                f"{self.question}: row {row!r} has the answer {self.labels[code]!r}, not a "
                f"number ({what} needs numeric answers; a labelled frame needs "
                f'attrs["value_codes"][{self.question!r}])'
            )
        return self.values


def answers(
    df: pd.DataFrame,
    question: str,
    *,
    multi: bool | None = False,
    separator: str = ";",
) -> Answers:
    """Factorize ``question``'s answers into codes.

    With ``multi`` (None: when some text answer holds ``separator``) text answers are split
    into options.
    """
    series = question_series(df, question)
    value_codes = (df.attrs.get("value_codes") or {}).get(question)
    entry = codebook_entry(df, question)
    if entry is not None and entry.get("kind") == "multi" and multi is not False:
        multi = True
        separator = entry.get("separator") or separator
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = [str(c) for c in series.cat.categories]
        if multi is None:
            multi = any(separator in c for c in categories)
        if multi:
            codes = np.asarray(series.cat.codes, dtype=np.int64)
            return _multi(question, codes, categories, separator)
        return _categorical(series, question, value_codes)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    texty = not pd.api.types.is_numeric_dtype(series.dtype)
    raw = [u if not isinstance(u, str) else u.strip() for u in np.asarray(uniques, dtype=object)]
    if texty and multi is None:
        multi = any(isinstance(u, str) and separator in u for u in raw)
    if texty and multi:
        return _multi(question, codes, raw, separator)
    numbers = np.asarray(pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce"), float)
    blank = np.array([isinstance(u, str) and u == "" for u in raw], dtype=bool)
    numeric = bool(len(raw)) and bool(np.all(~np.isnan(numbers) | blank))
    if numeric:
        keys: list[Any] = [float(v) for v in numbers]
    else:
        keys = [str(u) for u in raw]
    # Merge answers that are the same ("7" and 7.0), order them (numbers by value, text
    # alphabetically) and let blank text answers count as no answer.
    distinct = sorted({k for k, b in zip(keys, blank, strict=True) if not b})
    position = {k: i for i, k in enumerate(distinct)}
    remap = np.array([-1 if b else position[k] for k, b in zip(keys, blank, strict=True)] + [-1])
    codes = remap[codes].astype(np.int64)
    if numeric:
        values = np.array(distinct, dtype=np.float64)
        labels = [number_label(v) for v in values]
    else:
        labels = list(distinct)
        converted = pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce")
        values = np.asarray(converted, dtype=np.float64)
    return Answers(question, codes, labels, values)


def codebook_entry(df: pd.DataFrame, question: str) -> dict[str, Any] | None:
    """The question's codebook entry (kind, scale, separator), or None.

    It comes from a labelled frame's ``attrs["codebook"]`` (set by ``sk.label``).
    """
    codebook = df.attrs.get("codebook")
    if not isinstance(codebook, dict):
        return None
    for entry in codebook.get("questions") or []:
        if isinstance(entry, dict) and entry.get("key") == question:
            return entry
    return None


def _categorical(series: pd.Series, question: str, value_codes: dict[str, Any] | None) -> Answers:
    categories = list(series.cat.categories)
    labels = [number_label(c) if isinstance(c, int | float) else str(c) for c in categories]
    codes = np.asarray(series.cat.codes, dtype=np.int64)
    if value_codes:
        mapped = [value_codes.get(label, value_codes.get(str(label))) for label in labels]
        values = np.asarray(pd.to_numeric(pd.Series(mapped, dtype=object), errors="coerce"), float)
    else:
        values = np.asarray(pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce"), float)
    return Answers(question, codes, labels, values, ordered=bool(series.cat.ordered))


def _multi(question: str, codes: IntArray, raw: list[Any], separator: str) -> Answers:
    split = [[part.strip() for part in str(u).split(separator) if part.strip()] for u in raw]
    distinct = {part for parts in split for part in parts}
    numbers = pd.to_numeric(pd.Series(sorted(distinct), dtype=object), errors="coerce")
    if len(numbers) and numbers.notna().all():
        options = sorted(distinct, key=float)
    else:
        options = sorted(distinct)
    index = {option: i for i, option in enumerate(options)}
    chosen = np.zeros((len(raw), len(options)), dtype=np.float64)
    for row, parts in enumerate(split):
        chosen[row, [index[p] for p in parts]] = 1.0
    labels = [str(u) for u in raw]
    values = np.full(len(raw), np.nan)
    return Answers(question, codes, labels, values, options=options, chosen=chosen)


def number_label(value: Any) -> str:
    """A number as an answer label: ``7.0`` -> ``"7"``, ``2.5`` -> ``"2.5"``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if np.isfinite(number) and number == int(number):
        return str(int(number))
    return str(value)


def weights_array(df: pd.DataFrame, weights: Weights) -> tuple[FloatArray | None, str | None]:
    """The weights as floats aligned with ``df``, and their name (None when unweighted).

    Raises:
        AnalysisInputError: a weight that is missing, not a number, negative or infinite
            (naming the row and the value), weights not aligned with ``df``, or weights
            that sum to zero.
    """
    if weights is None:
        return None, None
    if isinstance(weights, str):
        if weights not in df.columns:
            raise AnalysisInputError(
                f"weights: no column {weights!r} in the frame; columns are {_names(df)}"
            )
        series = df[weights]
        name = weights
    elif isinstance(weights, pd.Series):
        series = _aligned(df, weights)
        name = str(weights.name) if weights.name is not None else "weights"
    else:
        raise AnalysisInputError(
            f"weights must be a column name or a pandas Series, not {type(weights).__name__}"
        )
    values = np.asarray(pd.to_numeric(series, errors="coerce"), dtype=np.float64)
    problems = ~np.isfinite(values) | (values < 0)
    if problems.any():
        at = int(np.flatnonzero(problems)[0])
        value = series.iloc[at]
        value = value.item() if isinstance(value, np.generic) else value
        what = "no weight" if pd.isna(value) else f"{value!r}, not a finite number >= 0"
        raise AnalysisInputError(
            f"weights {name!r}: row {series.index[at]!r} has {what}; "
            f"{int(problems.sum())} row(s) like it"
        )
    if len(values) and not values.sum() > 0:
        raise AnalysisInputError(f"weights {name!r} sum to zero")
    return values, name


def _aligned(df: pd.DataFrame, weights: pd.Series) -> pd.Series:
    if weights.index.equals(df.index):
        return weights
    if not df.index.is_unique or not weights.index.is_unique:
        raise AnalysisInputError("weights: a Series needs the frame's index (unique labels)")
    absent = df.index.difference(weights.index)
    if len(absent):
        raise AnalysisInputError(f"weights: no weight for row {absent[0]!r} of the frame")
    return weights.reindex(df.index)


def check_ci(ci: float) -> float:
    """``ci`` checked to be a confidence level strictly between 0 and 1."""
    if not 0 < ci < 1:
        raise AnalysisInputError(f"ci must be between 0 and 1 (0.95 for 95%), not {ci!r}")
    return float(ci)


def cell_sums(
    ids: IntArray, codes: IntArray, n_groups: int, n_codes: int, weights: FloatArray | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per (group, code): the number of rows, the sum of weights and of squared weights.

    Rows with code -1 (no answer) or group -1 (left out) are not counted. Unweighted, the
    three tables are the same counts (as floats, so weighted and unweighted share one path).
    """
    keep = (codes >= 0) & (ids >= 0)
    cells = ids[keep] * n_codes + codes[keep]
    size = n_groups * n_codes
    counts = np.bincount(cells, minlength=size).astype(np.float64).reshape(n_groups, n_codes)
    if weights is None:
        return counts, counts, counts
    w = weights[keep]
    sum_w = weighted_bincount(cells, w, size).reshape(n_groups, n_codes)
    sum_w2 = weighted_bincount(cells, w * w, size).reshape(n_groups, n_codes)
    return counts, sum_w, sum_w2


def weighted_bincount(ids: IntArray, weights: FloatArray, size: int) -> FloatArray:
    """``np.bincount(ids, weights, minlength=size)`` as float64."""
    return np.asarray(np.bincount(ids, weights=weights, minlength=size), dtype=np.float64)


def group_frame(groups: Groups, repeat: int) -> dict[Hashable, Any]:
    """The ``by`` columns of a tidy frame with ``repeat`` rows per group."""
    take = np.repeat(np.arange(groups.count), repeat)
    return {c: groups.frame[c].iloc[take].reset_index(drop=True) for c in groups.columns}


def question_text(df: pd.DataFrame, question: str) -> str | None:
    """The question's wording from ``attrs["questions"]`` (set by ``sk.label``), if any."""
    texts = df.attrs.get("questions") or {}
    text = texts.get(question)
    return str(text) if text else None
