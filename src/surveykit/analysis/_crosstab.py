"""Crosstabs with a test of independence, Cramér's V and column-proportion letters.

On a :class:`~surveykit.Design` (or ``weights=``) the test is R's ``svychisq`` (Rao-Scott)
and the letters are design-based t tests of the column proportions (R's ``svyttest``); a
frame alone keeps Pearson's test and two-proportion z-tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from surveykit.analysis import _between_groups as between
from surveykit.analysis import _domains
from surveykit.analysis import _inputs as inputs
from surveykit.analysis import _reliability as reliability
from surveykit.analysis._design import Design, design_of
from surveykit.analysis._inputs import By, FloatArray, IntArray, Weights
from surveykit.analysis._intervals import two_sided_normal_p
from surveykit.errors import AnalysisInputError

PEARSON = "Pearson chi-square (scipy chi2_contingency, no continuity correction)"
Z_LETTERS = "two-proportion z-test (pooled), Bonferroni over column pairs"
T_LETTERS = (
    "design-based t-test of the column proportions (R svyttest), Bonferroni over column pairs"
)
MIN_BASE = 30
"""A column with fewer respondents than this is a low base (flagged, as in banner tables)."""
MIN_EXPECTED = 5
"""Cochran's rule: at most 20% of expected counts below 5, and none below 1."""
MAX_SPARSE_SHARE = 0.2
FEW_DESIGN_DF = 8
"""NCHS: a design with fewer degrees of freedom than this gives an unstable variance."""
PAIR_COLUMNS = [
    "option",
    "column_a",
    "column_b",
    "estimate_a",
    "estimate_b",
    "difference",
    "se",
    "statistic",
    "df",
    "p_value",
    "p_adjusted",
]

__all__ = ["column_letters", "crosstab"]


def column_letters(count: int) -> list[str]:
    """SPSS-style column keys: A..Z, then AA, AB, ..., ZZ, then AAA, ... (any number)."""
    keys: list[str] = []
    width = 1
    while len(keys) < count:
        for i in range(26**width):
            if len(keys) == count:
                break
            key, rest = "", i
            for _ in range(width):
                key = chr(ord("A") + rest % 26) + key
                rest //= 26
            keys.append(key)
        width += 1
    return keys


def crosstab(
    data: pd.DataFrame | Design,
    question: str,
    by: By,
    *,
    test: bool = True,
    weights: Weights = None,
    normalize: bool = True,
    alpha: float = 0.05,
    kind: str | None = None,
    statistic: between.ChisqStatistic = "F",
    min_base: int = MIN_BASE,
) -> pd.DataFrame:
    """Answers to ``question`` (rows) by the groups of ``by`` (columns), with tests.

    The table: with ``normalize`` each column in percent of that group's respondents who
    answered (exact: rounded only when shown), else the counts. Rows are the options
    (numbers by value, text alphabetically; a labelled frame's scale in order with every
    scale point); columns the groups of ``by`` (one column or several: a column
    MultiIndex), as text; respondents with a missing ``by`` value are left out.
    Multi-choice answers (``kind="multi"``, or some answer holds ``;``) are split into
    options, so a column can sum to more than 100.

    ``attrs`` hold, besides ``question``, ``question_text``, ``weights`` and ``alpha``:

    - ``"counts"``: the respondents in each cell (integers; of non-zero weight on a design),
      and ``"counts_weighted"`` the sums of their weights, DataFrames shaped like the
      table (equal without a design); ``"normalize"`` says which the table shows.
    - ``"test"`` (``test=True``): the test of independence over the rows and columns that
      hold answers, ``{"test", "statistic", "ndf", "ddf", "p_value", "chi2", "dof",
      "cramers_v", "n", "n_eff", "weighted", "note"}`` (``test`` names it). Not computed
      (NaN, with a ``note``) for multi-choice questions, whose options are not exclusive,
      or a table with fewer than two rows or columns.

      * A frame alone: Pearson's chi-square without continuity correction
        (``scipy.stats.chi2_contingency(correction=False)``), ``statistic = chi2`` on
        ``ndf = dof`` degrees of freedom; Cramér's ``V = sqrt(chi2 / (N (min(r, c) -
        1)))``.
      * A design (or ``weights=``): R's ``svychisq(~question + by, design,
        statistic=statistic)``. ``"F"`` (the default, R's): the Rao-Scott second-order
        correction, ``statistic = chi2 / tr(Delta)`` on ``ndf = tr(Delta)^2 /
        tr(Delta^2)`` and ``ddf = ndf * nu`` degrees of freedom, ``Delta`` the design
        effect matrix of the table's interaction contrasts and ``nu`` the design's degrees
        of freedom (PSUs minus strata of the rows of non-zero weight; of every row of a
        calibrated design, as R keeps a calibrated subset's other rows); ``"Chisq"``:
        the first-order correction, the p-value of ``chi2 / mean(diag(Delta))`` on
        ``dof`` degrees of freedom, R's ``statistic`` (``chi2``) unchanged. ``chi2`` is
        Pearson's X^2 of the weighted table scaled to the design's rows (R's
        ``svytable(..., Ntotal=N)``), ``design_effect`` (an extra key) the mean of
        ``Delta``'s eigenvalues, ``n_eff = n / design_effect``, Cramér's V that of the
        weighted table, ``design`` (an extra key) the design in words. Respondents with a
        missing answer or ``by`` value are left out as a domain (R's default
        ``na.rm=TRUE``: they stay in the design for the variance). An option nobody in
        the table chose is left out of the test: R gives NaN for an unused factor level
        (a labelled scale point), and keeps an answer given only by respondents without a
        ``by`` value in ``Delta``, which changes its F and degrees of freedom.
    - ``"letters"``: a DataFrame shaped like the table. For each row and pair of columns
      (i, j) a test of the two column proportions, its two-sided p-value times the number
      of column pairs (Bonferroni, capped at 1); where that is below ``alpha``, the cell of
      the larger proportion shows the letter of the other column, as SPSS Custom Tables
      does (``"B"``, ``"BC"``, ``""``). A pair whose difference has no variance is not
      tested. ``"letters_test"`` names the test:

      * a frame alone: the two-proportion z-test with the pooled proportion,
        ``z = (p_i - p_j) / sqrt(p (1 - p) (1/N_i + 1/N_j))``;
      * a design: the difference of the two domain proportions with the se from their
        covariance, a t test on ``degf - 1`` degrees of freedom, ``degf`` the PSUs minus
        strata of the two columns' respondents who answered: R's
        ``svyttest(I(question == option) ~ by, subset(design, by %in% c(i, j)))``.
    - ``"letters_pairs"``: the pairwise tests as a tidy frame, ``["option", "column_a",
      "column_b", "estimate_a", "estimate_b", "difference" (b - a), "se", "statistic",
      "df", "p_value", "p_adjusted"]``.
    - ``"column_letters"``: ``{column label: letter}``.
    - ``"bases"``: each column's respondents who answered (an integer Series; of non-zero
      weight on a design), ``"low_base"`` whether it is below ``min_base`` (a bool
      Series) and ``"min_base"``. A low base is flagged, not suppressed: its percentages
      stay in the table, and the workbook marks the column.
    - ``"flags"`` and ``"flag_reasons"``: DataFrames shaped like the table, NCHS's
      reliability flag of each cell's proportion (``""``, ``"review"``, ``"unreliable"``;
      :mod:`surveykit.analysis._reliability`, as ``proportions`` flags them: textbook
      variance and ``n - 1`` degrees of freedom, or the design's domain variance and
      degrees of freedom).
    - ``test["warning"]``: ``""``, or why the test's p-value may not be trusted: for
      Pearson's test, Cochran's rule (more than 20% of the expected counts below 5, or
      one below 1; the expected counts are ``scipy.stats.contingency.expected_freq`` of
      the tested table); for the Rao-Scott test, a design with fewer than 8 degrees of
      freedom (NCHS) or a column with fewer than ``min_base`` respondents.

    The percentages are the weighted ones on a design; a multi-choice question's letters
    test each option's indicator among the column's respondents who answered.

    Args:
        data: results (raw answers or a labelled frame), or a :class:`~surveykit.Design`.
        question: the question's column.
        by: one column or several.
        test: compute the chi-square test and the letters.
        weights: a column name or a Series aligned with ``df`` (makes it design-based,
            ``Design(df, weights=...)``).
        normalize: percentages (True) or counts (False).
        alpha: the significance level of the letters.
        kind: ``"multi"`` to split answers into options; another kind to keep them whole;
            None to decide from the answers.
        statistic: on a design, R's ``svychisq`` ``statistic``: ``"F"`` or ``"Chisq"``.
        min_base: columns with fewer respondents who answered are flagged as low bases.

    Returns:
        The wide table described above.
    """
    if statistic not in between.STATISTICS:
        raise AnalysisInputError(
            f"statistic must be one of {list(between.STATISTICS)} (R's svychisq), not {statistic!r}"
        )
    inputs.not_crossed_with_itself(question, by)
    df, design = design_of(data, weights)
    cells = _cells(df, design, question, by, kind)
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            shown = pd.DataFrame(
                100 * cells.table_w / cells.base_w, index=cells.index, columns=cells.columns
            )
    else:
        shown = cells.counts.copy()
    keys = column_letters(len(cells.columns))
    shown.attrs = {
        "estimate": "crosstab",
        "question": question,
        "question_text": inputs.question_text(df, question),
        "weights": None if design is None else design.weights_name,
        "alpha": alpha,
        "counts": cells.respondents,
        "counts_weighted": cells.counts.astype(np.float64),
        "normalize": normalize,
        "column_letters": dict(zip(cells.columns, keys, strict=True)),
        "test": None,
        "letters": None,
        "letters_test": None,
        "letters_pairs": None,
        "bases": cells.bases,
        "min_base": min_base,
        "low_base": cells.bases < min_base,
    }
    figures = None
    if design is None:
        flags = _textbook_flags(cells.table_w, cells.bases.to_numpy(dtype=np.float64))
    else:
        figures = _domains.proportions(
            design, cells.ans.codes, len(cells.ans.labels), cells.column_ids,
            len(cells.columns), cells.ans.chosen,
        )  # fmt: skip
        flags = _design_flags(design, figures, cells.ans, cells.rows, cells.column_ids)
    shown.attrs["flags"] = pd.DataFrame(flags[0], index=cells.index, columns=cells.columns)
    shown.attrs["flag_reasons"] = pd.DataFrame(flags[1], index=cells.index, columns=cells.columns)
    if test:
        _add_tests(shown, cells, design, figures, keys, alpha, statistic, min_base)
    return shown


@dataclass(frozen=True)
class _Cells:
    """A crosstab's cells: the groups and answers, and the table before it is shown."""

    grouped: inputs.Groups
    ans: inputs.Answers
    w: FloatArray | None
    answered: Any  # per group: has answers (a column of the table)
    rows: Any  # per option: a row of the table
    table_w: FloatArray  # columns x rows: weighted counts (counts without a design)
    base_w: FloatArray  # per column: its weighted base
    index: pd.Index
    columns: Any
    counts: pd.DataFrame  # the table of weighted counts (integers without a design)
    respondents: pd.DataFrame  # the respondents (of non-zero weight) in each cell
    bases: pd.Series  # per column: its respondents who answered
    column_ids: IntArray  # per row: its column's position (-1 for none)


def _cells(
    df: pd.DataFrame, design: Design | None, question: str, by: By, kind: str | None
) -> _Cells:
    """Count the answers of ``question`` per group of ``by``, weighted and not."""
    w = None if design is None else design.weights_array
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
    if w is not None:  # the respondents (of non-zero weight) behind each weighted cell
        counted = np.where(w != 0, ans.codes, -1)
        people, _, _ = inputs.cell_sums(grouped.ids, counted, grouped.count, len(ans.labels), None)
        people = people @ ans.chosen if ans.chosen is not None else people
        respondents = pd.DataFrame(
            people[answered][:, rows].T.astype(np.int64), index=index, columns=columns
        )
    else:
        respondents = counts_frame
    counted = (grouped.ids >= 0) & (ans.codes >= 0) & (True if w is None else w != 0)
    bases = pd.Series(
        np.bincount(grouped.ids[counted], minlength=grouped.count)[answered].astype(np.int64),
        index=columns,
        name="base",
    )
    column_ids = _positions(grouped.ids, answered) if design is not None else grouped.ids
    return _Cells(
        grouped, ans, w, answered, rows, table_w, base_w, index, columns, counts_frame,
        respondents, bases, column_ids,
    )  # fmt: skip


def _add_tests(
    shown: pd.DataFrame,
    cells: _Cells,
    design: Design | None,
    figures: Any,
    keys: list[str],
    alpha: float,
    statistic: between.ChisqStatistic,
    min_base: int,
) -> None:
    """The test of independence and the column letters, into ``shown.attrs``."""
    keep = (cells.grouped.ids >= 0) & (cells.ans.codes >= 0)
    if design is None:
        n = int(keep.sum())
        shown.attrs["test"] = _chi_square(cells.table_w, multi=cells.ans.chosen is not None) | {
            "n": n,
            "n_eff": float(n),
            "weighted": False,
        }
        letters, pairs = _letters(cells.table_w, cells.base_w, keys, alpha)
        shown.attrs["letters_test"] = Z_LETTERS
    else:
        assert figures is not None
        w = cells.w
        n = int((keep & (w != 0)).sum()) if w is not None else int(keep.sum())
        shown.attrs["test"] = _design_chi_square(
            design, cells.ans, cells.rows, cells.column_ids, cells.table_w, statistic
        ) | {"n": n, "weighted": True, "design": design.describe()}
        shown.attrs["test"]["n_eff"] = n / shown.attrs["test"].get("design_effect", np.nan)
        shown.attrs["test"]["warning"] = _design_warning(
            design, shown.attrs["test"], cells.bases, min_base
        )
        letters, pairs = _design_letters(
            design, figures, cells.ans, cells.rows, cells.column_ids, len(cells.columns), keys,
            alpha,
        )  # fmt: skip
        shown.attrs["letters_test"] = T_LETTERS
    shown.attrs["letters"] = pd.DataFrame(letters, index=cells.index, columns=cells.columns)
    shown.attrs["letters_pairs"] = _pairs_frame(pairs, cells.index, cells.columns)


def _positions(ids: IntArray, kept: Any) -> IntArray:
    """Each row's position among the kept groups (-1 when its group is not kept)."""
    kept = np.asarray(kept, dtype=bool)
    lookup = np.cumsum(kept, dtype=np.int64) - 1
    safe = np.maximum(ids, 0)
    return np.where((ids >= 0) & kept[safe], lookup[safe], -1).astype(np.int64)


def _design_chi_square(
    design: Design,
    ans: inputs.Answers,
    rows: Any,
    column_ids: IntArray,
    table: FloatArray,
    statistic: between.ChisqStatistic,
) -> dict[str, Any]:
    name = between.RAO_SCOTT_F if statistic == "F" else between.RAO_SCOTT_CHISQ
    nan: dict[str, Any] = {
        "test": name,
        "statistic": np.nan,
        "ndf": np.nan,
        "ddf": np.nan,
        "chi2": np.nan,
        "dof": np.nan,
        "p_value": np.nan,
        "cramers_v": np.nan,
    }
    if ans.chosen is not None:
        return nan | {"note": "multi-choice options are not exclusive: no chi-square test"}
    tested_rows = table.sum(axis=1) > 0
    if tested_rows.sum() < 2 or table.shape[1] < 2:
        return nan | {"note": "fewer than two answers or groups with answers: no test"}
    shown_rows = np.flatnonzero(rows)  # answer code of each table row
    in_test = np.zeros(len(ans.labels), dtype=bool)
    in_test[shown_rows[tested_rows]] = True
    row_ids = _positions(ans.codes, in_test)
    return between.rao_scott(
        design, row_ids, int(in_test.sum()), column_ids, table.shape[1], statistic
    )


def _textbook_flags(table: FloatArray, bases: FloatArray) -> tuple[Any, Any]:
    """NCHS flags of each cell's proportion, textbook: ``p (1 - p) / n`` on ``n - 1`` df."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = table / bases[None, :]
        variance = p * (1 - p) / bases[None, :]
    n = np.broadcast_to(bases[None, :], p.shape)
    return reliability.proportion_flags(p, variance, n, n - 1)


def _design_flags(
    design: Design,
    figures: _domains.DomainFigures,
    ans: inputs.Answers,
    rows: Any,
    column_ids: IntArray,
) -> tuple[Any, Any]:
    """NCHS flags of each cell's proportion: the domain's variance and degrees of freedom."""
    n_columns = figures.estimate.shape[0]
    shown = np.flatnonzero(rows)
    answered = np.where(ans.codes >= 0, column_ids, -1)
    dof = reliability.domain_degrees_of_freedom(design, answered, n_columns)
    p = figures.estimate[:, shown].T
    variance = figures.variance[:, shown].T
    n = np.broadcast_to(figures.n[None, :], p.shape)
    return reliability.proportion_flags(p, variance, n, np.broadcast_to(dof[None, :], p.shape))


def _design_warning(
    design: Design, test: dict[str, Any], bases: pd.Series, min_base: int
) -> str:
    """Why a Rao-Scott test may not be trusted: few design df, or small columns."""
    if test.get("statistic") != test.get("statistic"):  # no test (NaN)
        return ""
    parts = []
    nu, _ = between._table_degrees_of_freedom(design)
    if nu < FEW_DESIGN_DF:
        parts.append(
            f"the design has {nu} degrees of freedom (fewer than {FEW_DESIGN_DF}, NCHS): "
            "its variances, and so this test, are unstable"
        )
    small = [str(c) for c, low in zip(bases.index, bases < min_base, strict=True) if low]
    if small:
        parts.append(
            f"{len(small)} column(s) with fewer than {min_base} respondents "
            f"({', '.join(small[:5])}{', ...' if len(small) > 5 else ''})"
        )
    return "; ".join(parts)


def _design_letters(
    design: Design,
    figures: _domains.DomainFigures,
    ans: inputs.Answers,
    rows: Any,
    column_ids: IntArray,
    n_columns: int,
    keys: list[str],
    alpha: float,
) -> tuple[Any, dict[str, Any]]:
    """Letters from design-based t tests of each pair of column proportions."""
    n_options = figures.estimate.shape[1]
    shown = np.flatnonzero(rows)
    pairs = list(combinations(range(n_columns), 2))
    if not pairs or not len(shown):
        return _letters_from(
            np.zeros((len(shown), 0)), np.zeros((len(shown), 0)), pairs, keys, alpha, n_columns
        ), _no_pairs()
    i, j = (np.array(side) for side in zip(*pairs, strict=True))
    dof_table = between.pair_degrees_of_freedom(design, column_ids, n_columns, ans.codes >= 0)
    a = (i[None, :] * n_options + shown[:, None]).ravel()
    b = (j[None, :] * n_options + shown[:, None]).ravel()
    dof = np.broadcast_to(dof_table[i, j][None, :], (len(shown), len(pairs))).ravel()
    result = between.contrasts(np.nan_to_num(figures.estimate.ravel()), figures.vcov, a, b, dof)
    shape = (len(shown), len(pairs))
    p_adjusted = np.minimum(result.p_value * len(pairs), 1.0).reshape(shape)
    # positive when column i's proportion is the larger, like the z-test's sign
    larger_i = -result.statistic.reshape(shape)
    letters = _letters_from(larger_i, p_adjusted, pairs, keys, alpha, n_columns)
    parts = {
        "i": np.tile(i, len(shown)),
        "j": np.tile(j, len(shown)),
        "row": np.repeat(np.arange(len(shown)), len(pairs)),
        "estimate_a": result.estimate_a,
        "estimate_b": result.estimate_b,
        "difference": result.difference,
        "se": result.se,
        "statistic": result.statistic,
        "df": result.dof,
        "p_value": result.p_value,
        "p_adjusted": p_adjusted.ravel(),
    }
    return letters, parts


def _columns(grouped: inputs.Groups, answered: Any) -> pd.Index:
    frame = grouped.frame[answered].reset_index(drop=True)
    labels = [[inputs.number_label(v) for v in frame[c]] for c in grouped.columns]
    if len(labels) == 1:
        return pd.Index(labels[0], dtype=object, name=grouped.columns[0])
    return pd.MultiIndex.from_arrays(labels, names=grouped.columns)


def _chi_square(observed: FloatArray, *, multi: bool) -> dict[str, Any]:
    nan: dict[str, Any] = {
        "test": PEARSON,
        "statistic": np.nan,
        "ndf": np.nan,
        "ddf": np.nan,
        "chi2": np.nan,
        "dof": np.nan,
        "p_value": np.nan,
        "cramers_v": np.nan,
        "warning": "",
    }
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
        "test": PEARSON,
        "statistic": chi2,
        "ndf": int(result.dof),
        "ddf": np.nan,
        "chi2": chi2,
        "dof": int(result.dof),
        "p_value": float(result.pvalue),
        "cramers_v": v,
        "note": "",
        "warning": cochran_warning(result.expected_freq),
    }


def cochran_warning(expected: FloatArray) -> str:
    """Cochran's rule on a table's expected counts: ``""``, or why chi-square is unsafe.

    The chi-square approximation is poor when more than 20% of the expected counts are
    below 5 or any is below 1 (Cochran 1954).
    """
    expected = np.asarray(expected, dtype=np.float64)
    below = int((expected < MIN_EXPECTED).sum())
    smallest = float(expected.min()) if expected.size else np.nan
    if below <= MAX_SPARSE_SHARE * expected.size and not smallest < 1:
        return ""
    text = (
        f"{below} of {expected.size} expected counts ({below / expected.size:.0%}) are below "
        f"{MIN_EXPECTED}"
    )
    if smallest < 1:
        text += f", the smallest {smallest:.2f} (below 1)"
    return text + ": the chi-square p-value is unreliable (Cochran's rule)"


def _no_pairs() -> dict[str, Any]:
    empty = np.zeros(0)
    names = ["estimate_a", "estimate_b", "difference", "se", "statistic", "df", "p_value"]
    return {
        "i": empty.astype(np.int64),
        "j": empty.astype(np.int64),
        "row": empty.astype(np.int64),
        "p_adjusted": empty,
    } | {k: empty for k in names}


def _letters(
    observed: FloatArray, bases: FloatArray, keys: list[str], alpha: float
) -> tuple[Any, dict[str, Any]]:
    """Letters from pooled two-proportion z-tests (unweighted counts)."""
    rows, cols = observed.shape
    pairs = list(combinations(range(cols), 2))
    if not pairs or not rows:
        return _letters_from(
            np.zeros((rows, 0)), np.zeros((rows, 0)), pairs, keys, alpha, cols
        ), _no_pairs()
    i, j = (np.array(side) for side in zip(*pairs, strict=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = observed / bases
        pooled = (observed[:, i] + observed[:, j]) / (bases[i] + bases[j])
        se = np.sqrt(pooled * (1 - pooled) * (1 / bases[i] + 1 / bases[j]))
        z = np.where(se > 0, (p[:, i] - p[:, j]) / np.where(se > 0, se, 1.0), np.nan)
    p_value = two_sided_normal_p(z)
    adjusted = np.minimum(p_value * len(pairs), 1.0)
    letters = _letters_from(z, adjusted, pairs, keys, alpha, cols)
    parts = {
        "i": np.tile(i, rows),
        "j": np.tile(j, rows),
        "row": np.repeat(np.arange(rows), len(pairs)),
        "estimate_a": p[:, i].ravel(),
        "estimate_b": p[:, j].ravel(),
        "difference": (p[:, j] - p[:, i]).ravel(),
        "se": se.ravel(),
        "statistic": -z.ravel(),
        "df": np.full(z.size, np.nan),
        "p_value": p_value.ravel(),
        "p_adjusted": adjusted.ravel(),
    }
    return letters, parts


def _letters_from(
    larger_i: FloatArray,
    adjusted: FloatArray,
    pairs: list[tuple[int, int]],
    keys: list[str],
    alpha: float,
    cols: int,
) -> Any:
    """Per cell the letters of the columns whose proportion is significantly smaller.

    ``larger_i`` (rows x pairs) is positive where column ``i`` of the pair ``(i, j)`` has
    the larger proportion; ``adjusted`` the Bonferroni p-values (NaN: not tested).
    """
    rows = larger_i.shape[0]
    smaller_of: list[list[list[int]]] = [[[] for _ in range(cols)] for _ in range(rows)]
    for r, k in zip(*np.nonzero(adjusted < alpha), strict=True):  # NaN is never < alpha
        i, j = pairs[k]
        larger, smaller = (i, j) if larger_i[r, k] > 0 else (j, i)
        smaller_of[r][larger].append(int(smaller))
    letters = np.empty((rows, cols), dtype=object)
    for r, c in np.ndindex(rows, cols):  # letters in column order, like SPSS
        letters[r, c] = "".join(keys[k] for k in sorted(smaller_of[r][c]))
    return letters


def _pairs_frame(parts: dict[str, Any], index: pd.Index, columns: pd.Index) -> pd.DataFrame:
    labels = columns.to_flat_index()
    frame = pd.DataFrame(
        {
            "option": list(index.take(parts["row"])),
            "column_a": list(labels.take(parts["i"])),
            "column_b": list(labels.take(parts["j"])),
            **{k: parts[k] for k in PAIR_COLUMNS[3:]},
        }
    )
    return frame[PAIR_COLUMNS]
