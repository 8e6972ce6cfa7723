"""Crosstabs with Pearson's chi-square, Cramér's V and column-proportion letters."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from surveykit.analysis import _inputs as inputs
from surveykit.analysis._inputs import By, FloatArray, Weights
from surveykit.analysis._intervals import two_sided_normal_p

__all__ = ["column_letters", "crosstab"]


def column_letters(count: int) -> list[str]:
    """SPSS-style column keys: A..Z, then AA, AB, ..."""
    letters = [chr(ord("A") + i) for i in range(26)]
    keys = list(letters)
    for first in letters:
        if len(keys) >= count:
            break
        keys.extend(first + second for second in letters)
    return keys[:count]


def crosstab(
    df: pd.DataFrame,
    question: str,
    by: By,
    *,
    test: bool = True,
    weights: Weights = None,
    normalize: bool = True,
    alpha: float = 0.05,
    kind: str | None = None,
) -> pd.DataFrame:
    """Answers to ``question`` (rows) by the groups of ``by`` (columns), with tests.

    The table: with ``normalize`` each column in percent (rounded to 0.1) of that group's
    respondents who answered, else the counts. Rows are the options (numbers by value,
    text alphabetically; a labelled frame's scale in order with every scale point);
    columns the groups of ``by`` (one column or several: a column MultiIndex), as text;
    respondents with a missing ``by`` value are left out. Multi-choice answers
    (``kind="multi"``, or some answer holds ``;``) are split into options, so a column can
    sum to more than 100.

    ``attrs`` hold, besides ``question``, ``question_text``, ``weights`` and ``alpha``:

    - ``"counts"``: the (weighted) counts as a DataFrame shaped like the table.
    - ``"test"`` (``test=True``): Pearson's chi-square test of independence without
      continuity correction (``scipy.stats.chi2_contingency(correction=False)`` over the
      rows and columns that hold answers): ``{"chi2", "dof", "p_value", "cramers_v", "n",
      "n_eff", "weighted", "note"}``, Cramér's ``V = sqrt(chi2 / (N * (min(r, c) - 1)))``.
      Not computed (NaN, with a ``note``) for multi-choice questions, whose options are not
      exclusive, or a table with fewer than two rows or columns.
    - ``"letters"``: a DataFrame shaped like the table. For each row and pair of columns
      (i, j), the two-proportion z-test with the pooled proportion,
      ``z = (p_i - p_j) / sqrt(p (1 - p) (1/N_i + 1/N_j))``, its two-sided p-value times
      the number of column pairs (Bonferroni, capped at 1); where that is below ``alpha``,
      the cell of the larger proportion shows the letter of the other column, as SPSS
      Custom Tables does (``"B"``, ``"BC"``, ``""``). A pair with ``p`` 0 or 1 is not
      tested.
    - ``"column_letters"``: ``{column label: letter}``.

    Weighted, every statistic above uses the weighted counts rescaled to sum to Kish's
    effective size ``n_eff = (sum w)^2 / sum w^2`` of the table's respondents (each count
    times ``n_eff / sum w``), so tests see the information the weighted sample holds, not
    the sum of the weights; the percentages are the weighted ones.

    Args:
        df: results (raw answers or a labelled frame).
        question: the question's column.
        by: one column or several.
        test: compute the chi-square test and the letters.
        weights: a column name or a Series aligned with ``df``.
        normalize: percentages (True) or counts (False).
        alpha: the significance level of the letters.
        kind: ``"multi"`` to split answers into options; another kind to keep them whole;
            None to decide from the answers.

    Returns:
        The wide table described above.
    """
    w, weights_name = inputs.weights_array(df, weights)
    grouped = inputs.groups(df, by, dropna=True)
    multi = None if kind is None else kind == "multi"
    ans = inputs.answers(df, question, multi=multi)
    counts, sum_w, _ = inputs.cell_sums(grouped.ids, ans.codes, grouped.count, len(ans.labels), w)
    base_w = sum_w.sum(axis=1)
    answered = base_w > 0 if w is not None else counts.sum(axis=1) > 0
    if ans.chosen is not None:
        table_w = sum_w @ ans.chosen
        options = ans.options or []
    else:
        table_w = sum_w
        options = ans.labels
    table_w, base_w = table_w[answered], base_w[answered]
    rows = np.ones(len(options), dtype=bool) if ans.ordered else table_w.sum(axis=0) > 0
    table_w = table_w[:, rows].T
    index = pd.Index([o for o, keep in zip(options, rows, strict=True) if keep], name=question)
    columns = _columns(grouped, answered)
    counts_frame = pd.DataFrame(
        table_w if w is not None else table_w.astype(np.int64), index=index, columns=columns
    )
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            shown = pd.DataFrame(np.round(100 * table_w / base_w, 1), index=index, columns=columns)
    else:
        shown = counts_frame.copy()
    keys = column_letters(len(columns))
    shown.attrs = {
        "estimate": "crosstab",
        "question": question,
        "question_text": inputs.question_text(df, question),
        "weights": weights_name,
        "alpha": alpha,
        "counts": counts_frame,
        "column_letters": dict(zip(columns, keys, strict=True)),
        "test": None,
        "letters": None,
    }
    if test:
        total_w = float(base_w.sum())
        keep = (grouped.ids >= 0) & (ans.codes >= 0)
        n = int(keep.sum())
        n_eff = float(n) if w is None else _kish(w[keep])
        scale = n_eff / total_w if total_w > 0 else 0.0
        observed, bases = table_w * scale, base_w * scale
        shown.attrs["test"] = _chi_square(observed, multi=ans.chosen is not None) | {
            "n": n,
            "n_eff": n_eff,
            "weighted": w is not None,
        }
        shown.attrs["letters"] = pd.DataFrame(
            _letters(observed, bases, keys, alpha), index=index, columns=columns
        )
    return shown


def _kish(w: FloatArray) -> float:
    squares = float((w * w).sum())
    return float(w.sum()) ** 2 / squares if squares > 0 else 0.0


def _columns(grouped: inputs.Groups, answered: Any) -> pd.Index:
    frame = grouped.frame[answered].reset_index(drop=True)
    labels = [[inputs.number_label(v) for v in frame[c]] for c in grouped.columns]
    if len(labels) == 1:
        return pd.Index(labels[0], dtype=object, name=grouped.columns[0])
    return pd.MultiIndex.from_arrays(labels, names=grouped.columns)


def _chi_square(observed: FloatArray, *, multi: bool) -> dict[str, Any]:
    nan: dict[str, Any] = {"chi2": np.nan, "dof": np.nan, "p_value": np.nan, "cramers_v": np.nan}
    if multi:
        return nan | {"note": "multi-choice options are not exclusive: no chi-square test"}
    table = observed[observed.sum(axis=1) > 0][:, observed.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return nan | {"note": "fewer than two answers or groups with answers: no test"}
    from scipy.stats import chi2_contingency

    result = chi2_contingency(table, correction=False)
    chi2 = float(result.statistic)
    v = float(np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))
    return {
        "chi2": chi2,
        "dof": int(result.dof),
        "p_value": float(result.pvalue),
        "cramers_v": v,
        "note": "",
    }


def _letters(observed: FloatArray, bases: FloatArray, keys: list[str], alpha: float) -> Any:
    """Per cell the letters of the columns whose proportion is significantly smaller."""
    rows, cols = observed.shape
    smaller_of: list[list[list[int]]] = [[[] for _ in range(cols)] for _ in range(rows)]
    pairs = list(combinations(range(cols), 2))
    if pairs and rows:
        i, j = (np.array(side) for side in zip(*pairs, strict=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            p = observed / bases
            pooled = (observed[:, i] + observed[:, j]) / (bases[i] + bases[j])
            se = np.sqrt(pooled * (1 - pooled) * (1 / bases[i] + 1 / bases[j]))
            z = np.where(se > 0, (p[:, i] - p[:, j]) / np.where(se > 0, se, 1.0), np.nan)
        adjusted = np.minimum(two_sided_normal_p(z) * len(pairs), 1.0)
        for r, k in zip(*np.nonzero(adjusted < alpha), strict=True):  # NaN is never < alpha
            larger, smaller = (i[k], j[k]) if z[r, k] > 0 else (j[k], i[k])
            smaller_of[r][larger].append(int(smaller))
    letters = np.empty((rows, cols), dtype=object)
    for r, c in np.ndindex(rows, cols):  # letters in column order, like SPSS
        letters[r, c] = "".join(keys[k] for k in sorted(smaller_of[r][c]))
    return letters
