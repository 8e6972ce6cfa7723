"""Banner tables: many questions down, several banner variables across, with letters.

``banner(data, questions, banner=[...])`` is what SPSS Custom Tables, Q and quantipy call a
banner (or tab) table: for every question a row per option (a share of the respondents who
answered), per net (a share choosing any of its codes) and, for rating and number
questions, the mean; for every banner variable a column per level, after a Total column.
Each cell carries its base, a flag when the base is small, and significance letters.

The result is tidy (:attr:`Banner.frame`, one row per cell, nothing rounded); the grid a
report shows (:attr:`Banner.table`) and the workbook (:meth:`Banner.to_excel`) are made
from it. Figures come from one ``np.bincount`` per question and banner variable over the
answer codes (:func:`surveykit.analysis._inputs.answers`), so a million respondents take
milliseconds per question; on a design the tests are the design-based domain contrasts of
``crosstab`` and ``compare`` (R's ``svyttest``).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from surveykit._util.atomic import atomic_path
from surveykit._util.sheets import (
    CANNOT_STORE,
    check_frame,
    control_character,
    new_workbook,
    save_workbook,
)
from surveykit.analysis import _between_groups as between
from surveykit.analysis import _domains
from surveykit.analysis import _inputs as inputs
from surveykit.analysis._crosstab import column_letters
from surveykit.analysis._design import Design, design_of
from surveykit.analysis._influence import Basis, Influence
from surveykit.analysis._inputs import FloatArray, IntArray, Weights
from surveykit.analysis._intervals import two_sided_normal_p, two_sided_t_p
from surveykit.errors import AnalysisInputError, CodebookError, ExportError
from surveykit.report._codebook import Codebook
from surveykit.report._excel import wrap_notes
from surveykit.report._question import Question, code_text

Test = Literal["columns", "total"]
Correction = Literal["bonferroni", "holm", "fdr_bh"]
TESTS: Final = ("columns", "total")
CORRECTIONS: Final = ("bonferroni", "holm", "fdr_bh")
COLUMNS: Final = [
    "question",
    "row",
    "banner",
    "column",
    "estimate",
    "base",
    "base_weighted",
    "letters",
    "flag",
]
"""The columns of :attr:`Banner.frame`, in order."""

TOTAL: Final = "Total"
"""The ``banner`` and ``column`` of the total column."""
MISSING: Final = "(missing)"
"""The column of respondents without a value of the banner variable."""
REST: Final = "(rest)"
"""The ``column_b`` of a test against the rest of the sample (``test="total"``)."""
MEAN: Final = "Mean"
"""The ``row`` of a rating or number question's mean."""
NO_ANSWERS: Final = "(no answers)"
"""The one row of a question nobody answered (its cells are suppressed)."""
BASE: Final = "Base"
BASE_WEIGHTED: Final = "Base (weighted)"
LOW_BASE: Final = "low base"
SUPPRESSED: Final = "suppressed"
SUPPRESS_BELOW: Final = 10
"""Cells with fewer respondents than this are suppressed (estimate NaN, no test)."""
LOW_MARK: Final = "*"
SUPPRESSED_MARK: Final = "-"

_CORRECTION_NAMES: Final = {
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "fdr_bh": "Benjamini-Hochberg (FDR)",
    None: "no correction",
}
_SCALED_KINDS: Final = ("rating", "nps")

__all__ = ["COLUMNS", "CORRECTIONS", "TESTS", "Banner", "banner", "write_banner_sheet"]


# -- the result ---------------------------------------------------------------------------


@dataclass
class Banner:
    """A banner table: the tidy cells, their grid for display, and a workbook.

    Attributes:
        frame: one row per cell, ``["question", "row", "banner", "column", "estimate",
            "base", "base_weighted", "letters", "flag"]`` (see :func:`banner`); its
            ``attrs`` say how it was computed (``test``, ``correction``, ``alpha``,
            ``min_base``, ``weights``, ``design``, ``column_letters``, ``letters_test``,
            ``notes``) and, in ``tests``, every test behind the letters (``question, row,
            banner, column_a, column_b, statistic, p_value, p_adjusted``; ``column_b`` is
            ``"(rest)"`` for ``test="total"``, ``statistic`` is positive when ``column_a``
            is the larger).
    """

    frame: pd.DataFrame

    @property
    def table(self) -> pd.DataFrame:
        """The grid a report shows: every question down, the banner's columns across.

        Rows are ``(question, row)`` with a ``"Base"`` row per question (and ``"Base
        (weighted)"`` on a design), columns ``(banner, column)`` with the Total first and,
        with ``test="columns"``, each column's letter in its name (``"North (A)"``).
        Cells are text: shares as percentages with one decimal, means with two, then the
        letters; a low base ends with ``*`` and a suppressed cell is ``-``. The frame
        keeps the exact figures; only this grid is rounded. ``attrs["notes"]`` holds the
        legend.
        """
        return _table(self.frame)

    def to_excel(self, path: str | os.PathLike[str]) -> None:
        """Write the banner to an ``.xlsx`` workbook (one sheet, every text as text).

        Each banner column takes two sheet columns: the figure as a number (shares in
        ``0.0%``, means in ``0.00``, bases as whole numbers) and its letters and marks as
        text; the legend (test, correction, bases, flags) is written under the table.
        """
        _write_excel(self.frame, Path(path))

    def _repr_html_(self) -> str:
        return str(self.table.to_html())

    def __repr__(self) -> str:
        attrs = self.frame.attrs
        questions = self.frame["question"].nunique()
        columns = self.frame[["banner", "column"]].drop_duplicates().shape[0]
        weighted = "weighted" if attrs.get("weights") else "unweighted"
        return (
            f"Banner({questions} questions x {columns} columns, {weighted}, "
            f"test={attrs.get('test')!r}, correction={attrs.get('correction')!r})"
        )


# -- the computation ----------------------------------------------------------------------


@dataclass
class _Question:
    """One question reduced to answer codes and the rows of the banner table."""

    key: str
    text: str
    codes: IntArray  # per respondent its answer code, -1: no answer
    names: list[str]  # the share rows (options, then nets)
    matrix: FloatArray  # answer codes x share rows, 0/1: which rows each answer counts in
    values: FloatArray | None  # per answer code its number (a Mean row), else None


@dataclass
class _Column:
    """The groups of one banner variable (or the total) as ids per respondent."""

    name: str
    labels: list[str]
    ids: IntArray  # per respondent its column, 0..len(labels)-1
    tested: npt.NDArray[np.bool_]  # per column: in the tests (the missing column is not)
    # a design's degrees of freedom per pair of columns, by (tested columns, answered rows):
    # questions answered by the same respondents share them
    dof: dict[tuple[bytes, bytes], FloatArray] = field(default_factory=dict)


def _linearised_only(design: Design | None) -> None:
    """Refuse a replicate design: the banner's design tests are checked against R linearised."""
    if design is not None and type(design).__name__ == "ReplicateDesign":
        raise AnalysisInputError(
            "banner on a replicate design is not offered yet (its letters are checked against "
            "R on linearised designs only): use the Design the replicates came from"
        )


def banner(
    data: pd.DataFrame | Design,
    questions: str | Sequence[str],
    banner: str | Sequence[str],
    *,
    total: bool = True,
    nets: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
    top_box: int | None = None,
    test: Test | None = "columns",
    correction: Correction | None = "bonferroni",
    alpha: float = 0.05,
    min_base: int = 30,
    codebook: Codebook | None = None,
    weights: Weights = None,
) -> Banner:
    """A banner table: ``questions`` down, the levels of each ``banner`` variable across.

    Every question gives rows: a choice question one per option, a multi-choice question
    (codebook kind ``multi``, or answers joined by its separator) one per option as a
    multiple-response set (the share of the respondents who answered that chose it, so a
    column can add up to more than 100%; an empty answer is "answered, no option"), a
    rating or NPS question one per scale point and a ``"Mean"`` row, a number question a
    ``"Mean"`` row; then its nets. Every banner variable gives a column per level (its
    category order, else sorted), after a ``"Total"`` column of every respondent.
    Respondents without a value of a banner variable form a ``"(missing)"`` column of it
    (only when there are some), which is shown but not tested: the Total counts them, so
    each banner variable's columns add up to the Total.

    Each cell is a row of :attr:`Banner.frame`: ``question``, ``row`` (the option, net or
    ``"Mean"``), ``banner`` (the variable, ``"Total"``), ``column`` (its level as text),
    ``estimate`` (a share 0..1, or the mean), ``base`` (respondents who answered the
    question in the column: an integer, unweighted), ``base_weighted`` (their weights'
    sum; the base when unweighted), ``letters`` and ``flag`` (``"low base"`` below
    ``min_base``, ``"suppressed"`` below 10: its estimate is NaN and it is not tested).

    Letters (``test``):

    - ``"columns"``: every pair of tested columns of the same banner variable, per row;
      where the corrected p-value is below ``alpha``, the larger cell gets the letter of
      the smaller one's column (letters A, B, ... within each banner variable, in
      ``attrs["column_letters"]``), as SPSS Custom Tables does.
    - ``"total"``: each column against the rest of the sample (every other respondent who
      answered, the ``"(missing)"`` ones included): ``"+"`` when the column is
      significantly higher, ``"-"`` when lower.
    - ``None``: no tests, no letters.

    The tests: without weights, the pooled two-proportion z-test (statsmodels'
    ``proportions_ztest``) for shares and Welch's t-test for means; on a design (or with
    ``weights=``), the design-based t-test of the two domain estimates, R's
    ``svyttest(y ~ group, design)`` with ``y`` the row's 0/1 indicator or the answer, on
    the degrees of freedom of the two groups' respondents who answered (``crosstab``'s and
    ``compare``'s). The p-values are corrected within each row and banner variable
    (``correction``: ``"bonferroni"``, ``"holm"``, ``"fdr_bh"`` as statsmodels'
    ``multipletests`` and R's ``p.adjust``, or None) over the tests made (a pair without
    variation, or with a suppressed cell, is not a test).

    Args:
        data: results (raw answers or a frame from :func:`surveykit.label`), or a
            :class:`~surveykit.Design`.
        questions: the question columns, in order.
        banner: the banner variables (columns of the frame that are not questions).
        total: whether to show the Total column.
        nets: per question, net name -> the codes it groups, ``{"Q2": {"Top 2": [4, 5]}}``
            (a code as the results or the codebook hold it, or its label); for a
            multi-choice question a net is "chose any of these options".
        top_box: for every rating question, add ``"Top k"`` and ``"Bottom k"`` nets of its
            ``k`` highest and lowest scale points (the codebook's scale, else the labelled
            scale, else the answers given).
        test: ``"columns"``, ``"total"`` or None.
        correction: the multiple-comparison correction, or None.
        alpha: the significance level of the letters.
        min_base: cells with fewer respondents are flagged ``"low base"``.
        codebook: question kinds, scales and missing codes (default: the labelled
            frame's ``attrs["codebook"]``); without one, kinds come from the answers.
        weights: a column or Series of weights (a shortcut for ``Design(df,
            weights=...)``).

    Returns:
        A :class:`Banner` (``.frame``, ``.table``, ``.to_excel(path)``).

    Raises:
        AnalysisInputError: an unknown question or banner column, a banner variable that
            is also a question, a net naming a code the question does not have, a number
            question with a text answer (each naming the question and level).

    Example:
        >>> table = sk.report.banner(df, ["Q1", "Q2"], banner=["channel", "region"],
        ...                          top_box=2, correction="holm")  # doctest: +SKIP
        >>> table.frame.query("row == 'Top 2'")                      # doctest: +SKIP
        >>> table.to_excel("banner.xlsx")                            # doctest: +SKIP
    """
    if test not in (*TESTS, None):
        raise AnalysisInputError(f"test must be 'columns', 'total' or None, not {test!r}")
    if correction not in (*CORRECTIONS, None):
        raise AnalysisInputError(
            f"correction must be one of {list(CORRECTIONS)} or None, not {correction!r}"
        )
    if not 0 < alpha < 1:
        raise AnalysisInputError(f"alpha must be between 0 and 1, not {alpha!r}")
    if top_box is not None and (
        isinstance(top_box, bool) or not isinstance(top_box, int) or top_box < 1
    ):
        raise AnalysisInputError(f"top_box must be a whole number of scale points, not {top_box!r}")
    df, design = design_of(data, weights)
    _linearised_only(design)
    keys = [questions] if isinstance(questions, str) else list(questions)
    variables = [banner] if isinstance(banner, str) else list(banner)
    if not keys:
        raise AnalysisInputError("questions: none given")
    for key in keys:
        inputs.question_series(df, key)
    if len(set(keys)) != len(keys):
        raise AnalysisInputError(f"questions: a question is given twice in {keys}")
    for variable in variables:
        if variable not in df.columns:
            raise AnalysisInputError(
                f"banner: no column {variable!r} in the frame; columns are "
                f"{[str(c) for c in df.columns]}"
            )
        if variable in keys:
            raise AnalysisInputError(
                f"banner: {variable!r} is also a question; crossing a question with itself "
                "tests nothing (leave it out of questions or of banner)"
            )
    if len(set(variables)) != len(variables):
        raise AnalysisInputError(f"banner: a variable is given twice in {variables}")
    if not variables and not total:
        raise AnalysisInputError("banner: no banner variable and total=False leave no column")
    nets = dict(nets or {})
    for key in nets:
        if key not in keys:
            raise AnalysisInputError(f"nets: {key!r} is not one of the questions {keys}")
    w = None if design is None else design.weights_array
    columns = _columns(df, variables, total)
    parts: list[dict[str, Any]] = []
    for key in keys:
        entry = _entry(df, codebook, key)
        question = _question(df, key, entry, nets.get(key) or {}, top_box)
        parts.append(_cells(question, columns, design, w, test, correction, alpha, min_base))
    frame = pd.DataFrame({name: np.concatenate([p[name] for p in parts]) for name in COLUMNS})
    frame["base"] = frame["base"].astype(np.int64)
    frame["estimate"] = frame["estimate"].astype(np.float64)
    frame["base_weighted"] = frame["base_weighted"].astype(np.float64)
    frame.attrs = {
        "estimate": "banner",
        "questions": keys,
        "question_texts": {p["key"]: p["text"] for p in parts},
        "banner": variables,
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "min_base": min_base,
        "suppress_below": SUPPRESS_BELOW,
        "weights": None if design is None else design.weights_name,
        "design": None if design is None else design.describe(),
        "column_letters": {c.name: _letters_of(c) for c in columns if c.name != TOTAL},
        "letters_test": _test_name(test, correction, design is not None),
        "tests": _all_tests([t for p in parts for t in p["tests"]]),
    }
    frame.attrs["notes"] = _notes({str(k): v for k, v in frame.attrs.items()})
    return Banner(frame)


TEST_COLUMNS: Final = [
    "question", "row", "banner", "column_a", "column_b", "statistic", "p_value", "p_adjusted",
]  # fmt: skip
"""The columns of ``Banner.frame.attrs["tests"]``, one row per test behind the letters."""


def _all_tests(parts: list[dict[str, Any]]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame({c: [] for c in TEST_COLUMNS})
    return pd.DataFrame({c: np.concatenate([p[c] for p in parts]) for c in TEST_COLUMNS})


def _test_name(test: Test | None, correction: Correction | None, designed: bool) -> str | None:
    if test is None:
        return None
    if designed:
        how = "design-based t-test of the two domain estimates (R svyttest)"
    else:
        how = "two-proportion z-test (pooled) for shares, Welch t-test for means"
    against = (
        "pairs of columns of each banner variable"
        if test == "columns"
        else ("each column against the rest of the sample")
    )
    return f"{how}; {against}; {_CORRECTION_NAMES[correction]} within each row and banner variable"


def _letters_of(column: _Column) -> dict[str, str]:
    keys = column_letters(int(column.tested.sum()))
    tested = [label for label, t in zip(column.labels, column.tested, strict=True) if t]
    return dict(zip(tested, keys, strict=True))


def _entry(df: pd.DataFrame, codebook: Codebook | None, key: str) -> dict[str, Any] | None:
    """The question's codebook entry: the given codebook's, else the labelled frame's."""
    if codebook is not None:
        return codebook[key].to_dict() if key in codebook else None
    return inputs.codebook_entry(df, key)


def _columns(df: pd.DataFrame, variables: list[str], total: bool) -> list[_Column]:
    out: list[_Column] = []
    if total:
        out.append(
            _Column(TOTAL, [TOTAL], np.zeros(len(df), dtype=np.int64), np.ones(1, dtype=bool))
        )
    for variable in variables:
        grouped = inputs.groups(df, variable)
        values = grouped.frame[variable]
        missing = values.isna().to_numpy()
        labels = [_level(v, bool(m)) for v, m in zip(values, missing, strict=True)]
        out.append(_Column(variable, labels, grouped.ids, ~missing))
    return out


def _level(value: Any, missing: bool) -> str:
    """A banner level as its column's name: ``"(missing)"``, ``"True"``, ``"3"`` for 3.0."""
    if missing:
        return MISSING
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    return inputs.number_label(value)


# -- a question's rows ----------------------------------------------------------------------


def _kind(entry: dict[str, Any] | None, ans: inputs.Answers) -> str:
    """The question's kind: the codebook's, else from the answers."""
    if entry is not None and entry.get("kind") in ("nps", "rating", "choice", "multi", "number"):
        return str(entry["kind"])
    if ans.chosen is not None:
        return "multi"
    values = ans.values
    if len(values) and not np.isnan(values).any():
        whole = bool(np.all(values == np.round(values)))
        if whole and values.min() >= 0 and values.max() <= 10:
            return "rating"
        return "number"
    return "choice"


def _question(
    df: pd.DataFrame,
    key: str,
    entry: dict[str, Any] | None,
    nets: Mapping[str, Sequence[Any]],
    top_box: int | None,
) -> _Question:
    separator = str((entry or {}).get("separator") or ";")
    kind_hint = (entry or {}).get("kind")
    if kind_hint in ("text", "date"):
        raise AnalysisInputError(
            f"questions: {key!r} is a {kind_hint} question in the codebook; a banner table "
            "shows coded answers (choice, multi, rating, nps, number)"
        )
    multi = True if kind_hint == "multi" else None if kind_hint is None else False
    ans = inputs.answers(df, key, multi=multi, separator=separator)
    kind = _kind(entry, ans)
    codes = ans.codes
    value_codes: dict[str, Any] = (df.attrs.get("value_codes") or {}).get(key) or {}
    # per answer code its code as the codebook writes it ("5"), to match missing codes and nets
    answer_codes = [code_text(value_codes.get(label, label)) for label in ans.labels]
    missing = {str(c) for c in ((entry or {}).get("missing") or {})}
    if missing and ans.chosen is None:
        drop = np.array([c in missing for c in answer_codes] + [True])
        if drop[:-1].any():
            codes = np.where(drop[codes], -1, codes).astype(np.int64)
    text = inputs.question_text(df, key) or str((entry or {}).get("text") or "")
    if ans.chosen is not None:
        names = list(ans.options or [])
        matrix = ans.chosen.copy()
        matches = {o: i for i, o in enumerate(names)}
        scale: list[str] = []
    else:
        names, matrix, matches, scale = _single_rows(ans, answer_codes, kind, entry, missing)
    values: FloatArray | None = None
    if kind in ("rating", "nps", "number"):
        series = inputs.question_series(df, key)
        values = ans.values.copy()
        checked = np.bincount(codes + 1, minlength=len(values) + 1)[1:] > 0
        bad = np.flatnonzero(np.isnan(values) & checked)
        if len(bad):
            ans.numbers(series, "a mean")  # raises, naming the row and the answer
        if kind == "number":
            names, matrix, scale = [], np.zeros((len(ans.labels), 0)), []
    net_items = list(nets.items())
    if top_box is not None and kind == "rating" and scale:
        k = min(top_box, len(scale))
        top = f"Top {top_box}"
        bottom = f"Bottom {top_box}"
        given = {name for name, _ in net_items}
        extra = [(top, scale[-k:]), (bottom, scale[:k])]
        net_items += [(name, members) for name, members in extra if name not in given]
    if not names and values is None and not net_items:  # nobody answered: say so
        names, matrix = [NO_ANSWERS], np.zeros((len(ans.labels), 1))
    columns = [matrix]
    for net, members in net_items:
        if not isinstance(members, Sequence) or isinstance(members, str):
            raise AnalysisInputError(
                f"nets[{key!r}][{net!r}]: expected a list of codes, got {members!r}"
            )
        if net in names:
            raise AnalysisInputError(f"nets[{key!r}]: {net!r} is already a row of {key}")
        picked = np.zeros(matrix.shape[1])
        for member in members:
            position = _match(member, matches)
            if position is None:
                known = sorted(matches, key=str)
                raise AnalysisInputError(
                    f"nets[{key!r}][{net!r}]: {member!r} is not a code of {key} "
                    f"(its codes are {known})"
                )
            if position >= 0:
                picked[position] = 1.0
        column = (matrix @ picked > 0).astype(np.float64)
        columns.append(column[:, None])
        names.append(str(net))
    return _Question(key, text, codes, names, np.hstack(columns), values)


def _match(member: Any, matches: Mapping[str, int]) -> int | None:
    """A net member's row (-1: a valid code nobody chose), or None when it is no code."""
    for candidate in (member, code_text(member), str(member)):
        if isinstance(candidate, str) and candidate in matches:
            return matches[candidate]
    return None


def _single_rows(
    ans: inputs.Answers,
    answer_codes: list[str],
    kind: str,
    entry: dict[str, Any] | None,
    missing: set[str],
) -> tuple[list[str], FloatArray, dict[str, int], list[str]]:
    """Rows of a single-answer question: its options (a scale: every point), and lookups.

    Returns the row names, the (answer codes x rows) matrix, a lookup from any name of a
    code (its code, its label) to its row (-1: a codebook code with no row), and the rows
    of the scale in order (for top and bottom boxes).
    """
    book: dict[str, str] = {}
    if entry is not None:
        try:
            book = Question.from_dict(entry).value_labels()
        except CodebookError:  # a hand-made attrs entry: use what it has
            book = {str(c): str(t) for c, t in (entry.get("labels") or {}).items()}
    valid = [i for i, c in enumerate(answer_codes) if c not in missing]
    # a raw answer shows its codebook label ("Very happy" for 5)
    names = [book.get(answer_codes[i], ans.labels[i]) for i in valid]
    codes_of = [answer_codes[i] for i in valid]
    index = {i: r for r, i in enumerate(valid)}
    # a rating's scale points nobody chose are rows too (a labelled frame has them already)
    if kind in _SCALED_KINDS:
        for code, label in book.items():
            if code not in codes_of and label not in names:
                names.append(code if label == code else label)
                codes_of.append(code)
        order = _scale_order(codes_of, names, ans.ordered, book)
        names = [names[i] for i in order]
        codes_of = [codes_of[i] for i in order]
        inverse = {old: new for new, old in enumerate(order)}
        index = {i: inverse[r] for i, r in index.items()}
    matrix = np.zeros((len(ans.labels), len(names)))
    for i, r in index.items():
        matrix[i, r] = 1.0
    matches: dict[str, int] = {}
    for r, (name, code) in enumerate(zip(names, codes_of, strict=True)):
        matches.setdefault(code, r)
        matches.setdefault(name, r)
    for code, label in book.items():  # a codebook code whose row is missing: no row
        matches.setdefault(code, -1)
        matches.setdefault(label, -1)
    scale = list(names) if kind in _SCALED_KINDS else []
    return names, matrix, matches, scale


def _scale_order(
    codes: list[str], names: list[str], ordered: bool, book: Mapping[str, str]
) -> list[int]:
    """The rows of a scale in order: the codebook's order, else by value."""
    if book:
        position = {c: i for i, c in enumerate(book)}
        if all(c in position for c in codes):
            return sorted(range(len(codes)), key=lambda i: position[codes[i]])
    if ordered:
        return list(range(len(codes)))
    try:
        return sorted(range(len(codes)), key=lambda i: float(codes[i]))
    except ValueError:
        return list(range(len(codes)))


# -- the cells of a question ------------------------------------------------------------------


def _cells(
    question: _Question,
    columns: list[_Column],
    design: Design | None,
    w: FloatArray | None,
    test: Test | None,
    correction: Correction | None,
    alpha: float,
    min_base: int,
) -> dict[str, Any]:
    """Every cell of one question: one block per banner variable, rows x columns each."""
    n_codes = question.matrix.shape[0]
    has_mean = question.values is not None
    row_names = [*question.names, *([MEAN] if has_mean else [])]
    answered = question.codes >= 0
    variables = [c for c in columns if c.name != TOTAL]
    per_variable = {c.name: _sums(c.ids, len(c.labels), question, w, n_codes) for c in variables}
    if variables:
        totals = _total_of(per_variable[variables[0].name], question)
    else:
        totals = _sums(np.zeros(len(question.codes), dtype=np.int64), 1, question, w, n_codes)
    blocks: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    for column in columns:
        g = len(column.labels)
        sums = totals if column.name == TOTAL else per_variable[column.name]
        base, base_w = sums["base"], sums["base_w"]
        estimate = _estimates(sums, question.matrix, has_mean)  # groups x rows
        suppressed = base < SUPPRESS_BELOW
        estimate[suppressed, :] = np.nan
        flags = np.where(suppressed, SUPPRESSED, np.where(base < min_base, LOW_BASE, ""))
        letters = np.full((g, len(row_names)), "", dtype=object)
        tested = column.tested & ~suppressed
        if test is not None and column.name != TOTAL and tested.sum() >= 1:
            keep = np.flatnonzero(tested)
            if test == "columns" and len(keep) >= 2:
                p, larger = _pairs(question, column, tested, sums, design, answered)
                letters = _column_letters(p, larger, tested, correction, alpha, g, len(row_names))
                sides = [(keep[a], keep[b]) for a, b in combinations(range(len(keep)), 2)]
                names = [(column.labels[a], column.labels[b]) for a, b in sides]
                tests.append(
                    _tests(question.key, row_names, column.name, names, p, larger, correction)
                )
            elif test == "total":
                p, higher = _against_rest(question, column, tested, sums, totals, design)
                letters = _total_marks(p, higher, correction, alpha)
                names = [(column.labels[c], REST) for c in keep]
                tests.append(
                    _tests(
                        question.key,
                        row_names,
                        column.name,
                        names,
                        p[:, keep],
                        higher[:, keep],
                        correction,
                    )
                )
        blocks.append(
            {
                "question": np.full(g * len(row_names), question.key, dtype=object),
                "row": np.tile(np.asarray(row_names, dtype=object), g),
                "banner": np.full(g * len(row_names), column.name, dtype=object),
                "column": np.repeat(np.asarray(column.labels, dtype=object), len(row_names)),
                "estimate": estimate.ravel(),
                "base": np.repeat(base.astype(np.int64), len(row_names)),
                "base_weighted": np.repeat(base_w, len(row_names)),
                "letters": letters.ravel(),
                "flag": np.repeat(flags.astype(object), len(row_names)),
                "_order": np.tile(np.arange(len(row_names)), g),
            }
        )
    # question by question, row by row, then the columns (Total first) across
    merged = {name: np.concatenate([b[name] for b in blocks]) for name in blocks[0]}
    order = np.argsort(merged.pop("_order"), kind="stable")
    out: dict[str, Any] = {name: values[order] for name, values in merged.items()}
    out["key"] = question.key
    out["text"] = question.text
    out["tests"] = tests
    return out


def _tests(
    question: str,
    rows: list[str],
    name: str,
    sides: list[tuple[str, str]],
    p: FloatArray,
    statistic: FloatArray,
    correction: Correction | None,
) -> dict[str, Any]:
    """The tests behind the letters of one question and banner variable, one per row."""
    k = len(sides)
    size = len(rows) * k
    first = np.asarray([a for a, _ in sides], dtype=object)
    second = np.asarray([b for _, b in sides], dtype=object)
    return {
        "question": np.full(size, question, dtype=object),
        "row": np.repeat(np.asarray(rows, dtype=object), k),
        "banner": np.full(size, name, dtype=object),
        "column_a": np.tile(first, len(rows)),
        "column_b": np.tile(second, len(rows)),
        "statistic": statistic.ravel(),
        "p_value": p.ravel(),
        "p_adjusted": adjust(p, correction).ravel(),
    }


def _sums(
    ids: IntArray, groups: int, question: _Question, w: FloatArray | None, n_codes: int
) -> dict[str, Any]:
    """Per column: counts per answer code (unweighted and weighted), bases, value sums.

    Every row has a column (``ids`` >= 0), so one ``np.bincount`` over ``(code + 1) *
    groups + id`` counts them, no answer in the first ``groups`` bins (dropped): no mask
    or gather of a million rows.
    """
    cells = (question.codes + 1) * groups + ids
    size = groups * (n_codes + 1)
    counts = _bins(cells, None, size, groups)
    if w is None:
        sum_w = counts
    else:
        sum_w = _bins(cells, w, size, groups)
        # respondents of weight 0 (outside a subset) are no base
        if not bool((w > 0).all()):
            counts = _bins(cells, (w > 0).astype(np.float64), size, groups)
    return _from_table(counts, sum_w, question)


def _bins(cells: IntArray, weights: FloatArray | None, size: int, groups: int) -> FloatArray:
    """Groups x codes sums of ``weights`` (counts without) from ``_sums``' cells."""
    table = np.bincount(cells, weights=weights, minlength=size).astype(np.float64, copy=False)
    return np.ascontiguousarray(table.reshape(-1, groups)[1:].T)


def _from_table(counts: FloatArray, sum_w: FloatArray, question: _Question) -> dict[str, Any]:
    out: dict[str, Any] = {
        "counts": counts,
        "sum_w": sum_w,
        "base": counts.sum(axis=1),
        "base_w": sum_w.sum(axis=1),
    }
    if question.values is not None:
        v = np.nan_to_num(question.values)
        out["total_y"] = sum_w @ v
        out["count_y"] = counts @ v
        out["count_y2"] = counts @ (v * v)
    return out


def _total_of(sums: dict[str, Any], question: _Question) -> dict[str, Any]:
    """The Total column from any banner variable's columns (every row is in one)."""
    counts = sums["counts"].sum(axis=0, keepdims=True)
    sum_w = sums["sum_w"].sum(axis=0, keepdims=True)
    return _from_table(counts, sum_w, question)


def _estimates(sums: dict[str, Any], matrix: FloatArray, has_mean: bool) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        base_w = np.where(sums["base_w"] > 0, sums["base_w"], np.nan)
        parts = [sums["sum_w"] @ matrix / base_w[:, None]] if matrix.shape[1] else []
        if has_mean:
            parts.append((sums["total_y"] / base_w)[:, None])
    if not parts:
        return np.zeros((len(base_w), 0))
    return np.asarray(np.hstack(parts), dtype=np.float64)


# -- tests ------------------------------------------------------------------------------------


def _pairs(
    question: _Question,
    column: _Column,
    tested: npt.NDArray[np.bool_],
    sums: dict[str, Any],
    design: Design | None,
    answered: npt.NDArray[np.bool_],
) -> tuple[FloatArray, FloatArray]:
    """p-values (rows x pairs of tested columns) and which side is larger (+: the first)."""
    keep = np.flatnonzero(tested)
    pairs = list(combinations(range(len(keep)), 2))
    i = np.array([keep[a] for a, _ in pairs])
    j = np.array([keep[b] for _, b in pairs])
    if design is None:
        return _textbook_pairs(question, sums, i, j)
    positions = np.full(len(column.labels), -1, dtype=np.int64)
    positions[keep] = np.arange(len(keep))
    ids = np.where(column.ids >= 0, positions[np.maximum(column.ids, 0)], -1).astype(np.int64)
    k = len(keep)
    key = (tested.tobytes(), hashlib.sha1(answered.tobytes()).digest())
    dof_table = column.dof.get(key)
    if dof_table is None:
        dof_table = column.dof[key] = between.pair_degrees_of_freedom(design, ids, k, answered)
    a = np.array([x for x, _ in pairs])
    b = np.array([y for _, y in pairs])
    p_parts, larger_parts = _design_tests(question, design, ids, k, a, b, dof_table[a, b])
    return p_parts, larger_parts


def _design_tests(
    question: _Question,
    design: Design,
    ids: IntArray,
    groups: int,
    a: IntArray,
    b: IntArray,
    dof: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """R's ``svyttest`` of ``b - a`` per row (shares, then the mean): p-values and sign.

    The sign is positive where group ``a``'s estimate is the larger.
    """
    p_rows: list[FloatArray] = []
    sign_rows: list[FloatArray] = []
    n_codes = question.matrix.shape[0]
    if question.matrix.shape[1]:
        figures = _domains.proportions(
            design, question.codes, n_codes, ids, groups, question.matrix
        )
        rows = question.matrix.shape[1]
        flat_a = (a[None, :] * rows + np.arange(rows)[:, None]).ravel()
        flat_b = (b[None, :] * rows + np.arange(rows)[:, None]).ravel()
        result = between.contrasts(
            np.nan_to_num(figures.estimate.ravel()),
            figures.vcov,
            flat_a,
            flat_b,
            np.broadcast_to(dof[None, :], (rows, len(a))).ravel(),
        )
        p_rows.append(result.p_value.reshape(rows, len(a)))
        sign_rows.append(-result.statistic.reshape(rows, len(a)))
    if question.values is not None:
        codes = question.codes
        y = np.where(codes >= 0, question.values[np.maximum(codes, 0)], np.nan)
        figures = _domains.means(design, y, ids, groups)
        result = between.contrasts(np.nan_to_num(figures.estimate.ravel()), figures.vcov, a, b, dof)
        p_rows.append(result.p_value[None, :])
        sign_rows.append(-result.statistic[None, :])
    return np.vstack(p_rows), np.vstack(sign_rows)


def _textbook_pairs(
    question: _Question, sums: dict[str, Any], i: IntArray, j: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Pooled z-tests of shares and Welch t-tests of means for the column pairs (i, j)."""
    counts, base = sums["counts"], sums["base"]
    p_parts: list[FloatArray] = []
    sign_parts: list[FloatArray] = []
    if question.matrix.shape[1]:
        chose = (counts @ question.matrix).T  # rows x groups
        z = _pooled_z(chose[:, i], base[i], chose[:, j], base[j])
        p_parts.append(two_sided_normal_p(z))
        sign_parts.append(z)
    if question.values is not None:
        t, dof = _welch(sums, i, j)
        p_parts.append(two_sided_t_p(t, dof)[None, :])
        sign_parts.append(t[None, :])
    return np.vstack(p_parts), np.vstack(sign_parts)


def _pooled_z(c1: FloatArray, n1: FloatArray, c2: FloatArray, n2: FloatArray) -> FloatArray:
    """``(p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2))``, ``p`` pooled; NaN without variation."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = (c1 + c2) / (n1 + n2)
        se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
        z = (c1 / n1 - c2 / n2) / np.where(se > 0, se, np.nan)
    return np.asarray(z, dtype=np.float64)


def _welch(sums: dict[str, Any], i: Any, j: Any) -> tuple[FloatArray, FloatArray]:
    """Welch's t of ``mean_i - mean_j`` from counts, sums and sums of squares per column."""
    n = sums["base"].astype(np.float64)
    total, squares = sums["count_y"], sums["count_y2"]
    return _welch_from(n[i], total[i], squares[i], n[j], total[j], squares[j])


def _welch_from(
    n1: Any, s1: Any, q1: Any, n2: Any, s2: Any, q2: Any
) -> tuple[FloatArray, FloatArray]:
    with np.errstate(invalid="ignore", divide="ignore"):
        m1, m2 = s1 / n1, s2 / n2
        v1 = np.clip((q1 - n1 * m1 * m1) / (n1 - 1), 0.0, None) / n1
        v2 = np.clip((q2 - n2 * m2 * m2) / (n2 - 1), 0.0, None) / n2
        se2 = v1 + v2
        t = (m1 - m2) / np.where(se2 > 0, np.sqrt(se2), np.nan)
        dof = se2**2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    return np.asarray(t, dtype=np.float64), np.asarray(dof, dtype=np.float64)


def _against_rest(
    question: _Question,
    column: _Column,
    tested: npt.NDArray[np.bool_],
    sums: dict[str, Any],
    totals: dict[str, Any],
    design: Design | None,
) -> tuple[FloatArray, FloatArray]:
    """Each tested column against every other respondent who answered (rows x columns)."""
    g = len(column.labels)
    keep = np.flatnonzero(tested)
    rows = question.matrix.shape[1] + (question.values is not None)
    p = np.full((rows, g), np.nan)
    higher = np.zeros((rows, g))
    if design is None:
        counts, base = sums["counts"], sums["base"]
        if question.matrix.shape[1]:
            chose = (counts @ question.matrix).T
            all_chose = (totals["counts"] @ question.matrix).T  # rows x 1
            rest = all_chose - chose
            z = _pooled_z(chose, base, rest, totals["base"] - base)
            p[: question.matrix.shape[1]] = two_sided_normal_p(z)
            higher[: question.matrix.shape[1]] = z
        if question.values is not None:
            t, dof = _welch_from(
                base,
                sums["count_y"],
                sums["count_y2"],
                totals["base"] - base,
                totals["count_y"] - sums["count_y"],
                totals["count_y2"] - sums["count_y2"],
            )
            p[-1] = two_sided_t_p(t, dof)
            higher[-1] = t
    else:
        answered = question.codes >= 0
        rest_dof = float(design.subset(answered).degrees_of_freedom - 1)
        p[:, keep], higher[:, keep] = _design_against_rest(question, design, column, keep, rest_dof)
    p[:, ~tested] = np.nan
    return p, higher


def _design_against_rest(
    question: _Question, design: Design, column: _Column, keep: IntArray, dof: float
) -> tuple[FloatArray, FloatArray]:
    """R's ``svyttest(y ~ I(by == level), design)`` for every tested column at once.

    The difference ``p_c - p_rest`` of column ``c``'s estimate and that of every other
    respondent who answered has the influence ``w (y - p_c) / W_c`` on ``c``'s rows and
    ``-w (y - p_rest) / W_rest`` on the others': per (column, answer code) a coefficient,
    so one influence term and one variance matrix serve every column and row (what one
    two-group domain estimate per column gave, with a pass over the rows each).
    Returns the p-values and ``(p_c - p_rest) / se`` (rows x kept columns).
    """
    g, n_codes = len(column.labels), question.matrix.shape[0]
    values = (
        [np.nan_to_num(question.values)[:, None]] if question.values is not None else []
    )
    y = np.hstack([question.matrix, *values])  # answer codes x rows: each row's y
    rows = y.shape[1]
    w = design.weights_array
    inside = question.codes >= 0
    cell = np.where(inside, column.ids * n_codes + question.codes, g * n_codes)
    sums = np.bincount(cell, weights=w, minlength=g * n_codes + 1)[:-1].reshape(g, n_codes)
    total_w = sums.sum(axis=1)  # per column W_c
    totals = sums @ y  # per column the sums of y
    k = len(keep)
    with np.errstate(invalid="ignore", divide="ignore"):
        own = totals[keep] / total_w[keep][:, None]  # p_c (k x rows)
        rest_w = total_w.sum() - total_w[keep]
        rest = (totals.sum(axis=0)[None, :] - totals[keep]) / rest_w[:, None]
    # coef[(d, code), (c, r)]: the influence per unit weight of a row of column d and code
    coef = np.zeros((g, n_codes, k, rows))
    for at, c in enumerate(keep):
        scale = np.where(rest_w[at] > 0, 1.0 / np.where(rest_w[at] > 0, rest_w[at], 1.0), 0.0)
        coef[:, :, at, :] = -(y[None, :, :] - rest[at][None, None, :]) * scale
        if total_w[c] > 0:
            coef[c, :, at, :] = (y - own[at][None, :]) / total_w[c]
        else:
            coef[c, :, at, :] = 0.0
    influence = Influence(k * rows)
    influence.add(
        np.where(inside, w, 0.0),
        Basis.one_hot(cell, g * n_codes),
        np.nan_to_num(coef.reshape(g * n_codes, k * rows)),
    )
    variance = np.clip(np.diag(design.vcov(influence)), 0.0, None).reshape(k, rows)
    se = np.sqrt(variance)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(se > 0, (own - rest) / np.where(se > 0, se, 1.0), np.nan)
    p = two_sided_t_p(statistic, np.full(statistic.shape, dof)) if dof >= 1 else np.full(
        statistic.shape, np.nan
    )
    return p.T, statistic.T


def adjust(p: FloatArray, method: Correction | None) -> FloatArray:
    """p-values corrected within each row over its finite entries (NaN: not a test).

    ``"bonferroni"``, ``"holm"`` and ``"fdr_bh"`` are statsmodels' ``multipletests`` (R's
    ``p.adjust`` ``"bonferroni"``, ``"holm"``, ``"BH"``) applied to each row's tests.
    """
    p = np.asarray(p, dtype=np.float64)
    if method is None or p.size == 0:
        return p
    finite = np.isfinite(p)
    m = finite.sum(axis=1, keepdims=True).astype(np.float64)
    if method == "bonferroni":
        return np.where(finite, np.minimum(p * m, 1.0), np.nan)
    order = np.argsort(np.where(finite, p, np.inf), axis=1, kind="stable")
    ranked = np.take_along_axis(np.where(finite, p, np.inf), order, axis=1)
    rank = np.arange(1, p.shape[1] + 1, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        if method == "holm":
            factor = np.maximum(m - rank + 1, 1.0)
            values = np.maximum.accumulate(np.minimum(factor * ranked, 1.0), axis=1)
        else:  # fdr_bh: the step-up minimum from the largest p-value down
            values = np.minimum(m / rank * ranked, 1.0)
            values = np.minimum.accumulate(values[:, ::-1], axis=1)[:, ::-1]
    out = np.empty_like(p)
    np.put_along_axis(out, order, values, axis=1)
    return np.where(finite, out, np.nan)


def _column_letters(
    p: FloatArray,
    larger_first: FloatArray,
    tested: npt.NDArray[np.bool_],
    correction: Correction | None,
    alpha: float,
    groups: int,
    rows: int,
) -> Any:
    """Per cell (groups x rows) the letters of the columns it is significantly above."""
    keep = np.flatnonzero(tested)
    keys = column_letters(len(keep))
    pairs = list(combinations(range(len(keep)), 2))
    adjusted = adjust(p, correction)
    smaller_of: list[list[list[int]]] = [[[] for _ in range(rows)] for _ in range(groups)]
    for r, k in zip(*np.nonzero(adjusted < alpha), strict=True):  # NaN is never < alpha
        a, b = pairs[k]
        larger, smaller = (a, b) if larger_first[r, k] > 0 else (b, a)
        smaller_of[keep[larger]][r].append(smaller)
    letters = np.full((groups, rows), "", dtype=object)
    for g, r in np.ndindex(groups, rows):
        if smaller_of[g][r]:
            letters[g, r] = "".join(keys[s] for s in sorted(smaller_of[g][r]))
    return letters


def _total_marks(
    p: FloatArray, higher: FloatArray, correction: Correction | None, alpha: float
) -> Any:
    """``"+"`` / ``"-"`` per cell (groups x rows) significantly above / below the rest."""
    adjusted = adjust(p, correction)
    significant = adjusted < alpha
    marks = np.where(significant & (higher > 0), "+", np.where(significant, "-", ""))
    return marks.T.astype(object)


# -- display ------------------------------------------------------------------------------------


def _notes(attrs: Mapping[str, Any]) -> list[str]:
    """The legend of the table and the sheet."""
    notes = []
    if attrs.get("design"):
        notes.append(f"Weighted figures ({attrs['design']}); bases are unweighted counts.")
    else:
        notes.append("Unweighted figures; bases are counts of respondents.")
    notes.append(
        "Shares are of the column's respondents who answered the question; a multi-choice "
        "question's options can add up to more than 100%."
    )
    test = attrs.get("test")
    if test == "columns":
        notes.append(
            f"Letters: the cell is significantly larger than the cell of the column of that "
            f"letter in the same banner variable ({attrs['letters_test']}; alpha = "
            f"{attrs['alpha']:g})."
        )
    elif test == "total":
        notes.append(
            f"+ / -: the column is significantly higher / lower than the rest of the sample "
            f"({attrs['letters_test']}; alpha = {attrs['alpha']:g})."
        )
    else:
        notes.append("No significance tests.")
    notes.append(
        f"{LOW_MARK} low base: fewer than {attrs['min_base']} respondents; "
        f"{SUPPRESSED_MARK} suppressed: fewer than {attrs['suppress_below']} (not tested)."
    )
    notes.append(f"{MISSING}: respondents without a value of the banner variable (not tested).")
    return notes


def _show(value: float, row: str, letters: str, flag: str) -> str:
    if flag == SUPPRESSED or not math.isfinite(value):
        return SUPPRESSED_MARK
    text = f"{value:.2f}" if row == MEAN else f"{100 * value:.1f}%"
    if letters:
        text += " " + letters
    if flag == LOW_BASE:
        text += " " + LOW_MARK
    return text


def _column_label(frame: pd.DataFrame, name: str, level: str) -> str:
    letters = frame.attrs.get("column_letters", {}).get(name, {})
    if frame.attrs.get("test") == "columns" and level in letters:
        return f"{level} ({letters[level]})"
    return level



_CELL_FIELDS: Final = (
    "row", "banner", "column", "estimate", "base", "base_weighted", "letters", "flag",
)  # fmt: skip


def _cell_rows(part: pd.DataFrame) -> Any:
    """The frame's cells of one question, as tuples of :data:`_CELL_FIELDS`."""
    return zip(*(part[name] for name in _CELL_FIELDS), strict=True)

def _table(frame: pd.DataFrame) -> pd.DataFrame:
    weighted = bool(frame.attrs.get("weights"))
    columns = list(dict.fromkeys(zip(frame["banner"], frame["column"], strict=True)))
    labels = pd.MultiIndex.from_tuples(
        [(b, _column_label(frame, b, c)) for b, c in columns], names=["banner", "column"]
    )
    position = {key: i for i, key in enumerate(columns)}
    rows: list[tuple[str, str]] = []
    cells: list[list[str]] = []
    for question, part in frame.groupby("question", sort=False):
        names = list(dict.fromkeys(part["row"]))
        grid = {name: [""] * len(columns) for name in names}
        base = [""] * len(columns)
        base_w = [""] * len(columns)
        for row, b, c, est, n, nw, letters, flag in _cell_rows(part):
            at = position[(b, c)]
            grid[row][at] = _show(float(est), str(row), str(letters), str(flag))
            base[at] = f"{int(n):,}"
            base_w[at] = f"{float(nw):,.0f}"
        for name in names:
            rows.append((str(question), str(name)))
            cells.append(grid[name])
        rows.append((str(question), BASE))
        cells.append(base)
        if weighted:
            rows.append((str(question), BASE_WEIGHTED))
            cells.append(base_w)
    index = pd.MultiIndex.from_tuples(rows, names=["question", "row"])
    table = pd.DataFrame(cells, index=index, columns=labels)
    table.attrs = {"notes": list(frame.attrs.get("notes", []))}
    return table


def _write_excel(frame: pd.DataFrame, path: Path) -> None:
    book = new_workbook()
    write_banner_sheet(book.create_sheet("Banner"), frame)
    with atomic_path(path) as temporary:
        save_workbook(book, temporary)


def check_banner(frame: pd.DataFrame) -> None:
    """Refuse (naming it) a text of the banner an .xlsx file cannot store.

    Raises:
        ExportError: a question, row, column or question text with a control character.
    """
    check_frame(frame[["question", "row", "banner", "column"]])
    texts: Mapping[str, str] = frame.attrs.get("question_texts") or {}
    for key, text in texts.items():
        if character := control_character(str(text)):
            raise ExportError(f"question text of {key!r}: {CANNOT_STORE.format(character)}")


def write_banner_sheet(sheet: Any, frame: pd.DataFrame) -> None:
    """Write a banner (:attr:`Banner.frame`) on an openpyxl ``sheet``: the grid and legend.

    Each banner column takes two sheet columns (the figure as a number, its letters and
    marks as text); every text is a text cell. Used by :meth:`Banner.to_excel` and by the
    report workbook's banner sheet.

    Raises:
        ExportError: a text an .xlsx file cannot store (nothing is written on the sheet).
    """
    from openpyxl.styles import Alignment, Font

    attrs = frame.attrs
    weighted = bool(attrs.get("weights"))
    texts: Mapping[str, str] = attrs.get("question_texts") or {}
    # a text an .xlsx file cannot store is refused, naming it, before anything is written
    check_banner(frame)
    columns = list(dict.fromkeys(zip(frame["banner"], frame["column"], strict=True)))
    position = {key: i for i, key in enumerate(columns)}
    bold = Font(bold=True)
    sheet.cell(1, 1, "Banner table").font = Font(bold=True, size=12)
    sheet.cell(2, 1, attrs["notes"][0])
    # two header rows: the banner variable over its columns, then each column (letter)
    head = 4
    previous = None
    for (name, level), at in position.items():
        col = 2 + 2 * at
        if name != previous:
            sheet.cell(head, col, name).font = bold
            previous = name
        cell = sheet.cell(head + 1, col, _column_label(frame, name, level))
        cell.font = bold
        cell.alignment = Alignment(wrap_text=True)
    sheet.freeze_panes = sheet.cell(head + 2, 2)
    r = head + 2
    for question, part in frame.groupby("question", sort=False):
        title = texts.get(str(question)) or ""
        sheet.cell(r, 1, f"{question}: {title}" if title else str(question)).font = bold
        r += 1
        names = list(dict.fromkeys(part["row"]))
        row_of = {name: r + i for i, name in enumerate(names)}
        for name in names:
            sheet.cell(row_of[name], 1, str(name))
        base_row = r + len(names)
        for row, b, c, est, n, nw, letters, flag in _cell_rows(part):
            col = 2 + 2 * position[(b, c)]
            value = float(est)
            mark = str(letters)
            if flag == SUPPRESSED or not math.isfinite(value):
                sheet.cell(row_of[row], col + 1, SUPPRESSED_MARK)
            else:
                cell = sheet.cell(row_of[row], col, value)
                cell.number_format = "0.00" if row == MEAN else "0.0%"
                if flag == LOW_BASE:
                    mark = f"{mark} {LOW_MARK}".strip()
                if mark:
                    sheet.cell(row_of[row], col + 1, mark)
            base_cell = sheet.cell(base_row, col, int(n))
            base_cell.number_format = "#,##0"
            if weighted:
                weighted_cell = sheet.cell(base_row + 1, col, float(nw))
                weighted_cell.number_format = "#,##0"
        sheet.cell(base_row, 1, BASE).font = bold
        if weighted:
            sheet.cell(base_row + 1, 1, BASE_WEIGHTED).font = bold
        r = base_row + (2 if weighted else 1) + 1
    for line in attrs["notes"]:
        sheet.cell(r, 1, line)
        r += 1
    sheet.column_dimensions["A"].width = 28
    # the legend wraps across the table, so a sheet printed one page wide is not shrunk
    wrap_notes(sheet)
    sheet.page_setup.orientation = "landscape"
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.print_title_rows = f"{head}:{head + 1}"
