"""SPSS (``.sav``) and Stata (``.dta``) files of results, with the codebook's labels.

Both take raw results or a frame from :func:`~surveykit.label`. Rating, NPS and choice
questions are written as numbers with value labels: numeric codes as they are, other codes
(choice answers) numbered 1..k in codebook order, their missing codes -1, -2, ... . Missing
codes are SPSS user-missing values, and Stata extended missing values ``.a``, ``.b``, ...
(labelled with their reason). Datetimes are written in UTC.

SPSS files give whole-number variables integer formats (``F8.0``: codes read ``5``, not
``5.00``), and write each multi-choice question as its joined answers (a string) plus one
0/1 variable per option, grouped into a multiple-response set by an SPSS syntax file
(``.sps``) written beside the ``.sav``: pyreadstat cannot store ``MRSETS`` in the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from surveykit._util.atomic import atomic_path
from surveykit.errors import ExportError
from surveykit.report._codebook import Codebook
from surveykit.report._label import _lookup, _raise_unknown
from surveykit.report._question import CODED_KINDS, Question, code_text

Target = Literal["spss", "stata"]

SPSS_RESERVED: Final = frozenset(
    {"ALL", "AND", "BY", "EQ", "GE", "GT", "LE", "LT", "NE", "NOT", "OR", "TO", "WITH"}
)
STATA_RESERVED: Final = frozenset(
    {
        "_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long",
        "_n", "_N", "_pi", "_pred", "_rc", "_skip", "strL", "using", "with",
    }
)  # fmt: skip
SPSS_NAME_BYTES: Final = 64
STATA_NAME_CHARS: Final = 32
STATA_LABEL_CHARS: Final = 80
SPSS_LABEL_BYTES: Final = 256
SPSS_VALUE_LABEL_BYTES: Final = 120
SPSS_INTEGER: Final = "F8.0"
"""The format of whole-number variables (codes, counts): shown without decimals (wider
when a number needs more than 7 digits)."""
SPSS_FLAG: Final = "F1.0"
"""The format of a multiple-response option's 0/1 variable."""
CHOSEN_LABELS: Final = {0.0: "Not chosen", 1.0: "Chosen"}
MEASURES: Final = {
    "rating": "ordinal",
    "nps": "scale",
    "choice": "nominal",
    "multi": "nominal",
    "text": "nominal",
    "number": "scale",
    "date": "scale",
}


@dataclass
class _Prepared:
    frame: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str | None] = field(default_factory=dict)
    value_labels: dict[str, dict[Any, str]] = field(default_factory=dict)
    missing: dict[str, list[Any]] = field(default_factory=dict)
    measure: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    sets: list[MultipleResponseSet] = field(default_factory=list)


@dataclass(frozen=True)
class MultipleResponseSet:
    """A multi-choice question as SPSS's multiple dichotomy set (``MRSETS /MDGROUP``).

    Attributes:
        name: the set's name, ``$`` and the question's variable name.
        label: the question's text (or its key).
        variables: the 0/1 variable of each option, in codebook order.
    """

    name: str
    label: str
    variables: tuple[str, ...]


def to_spss(
    df: pd.DataFrame, path: str | os.PathLike[str], codebook: Codebook | None = None
) -> dict[str, str]:
    """Write ``df`` as an SPSS ``.sav`` file with the codebook's labels and missing codes.

    Variable labels are the question texts, value labels the codebook's labels, missing
    codes are user-missing values (``missing_ranges``: up to three values, or a range
    that holds no valid code), and measurement levels are set: ordinal for ratings, scale
    for NPS, numbers and dates, nominal for the rest. Names are made valid SPSS names.
    Whole-number variables (codes, integer columns) get the format ``F8.0``.

    A multi-choice question is written as its answers (a string, as the results hold it)
    and, after it, one 0/1 variable per option of the codebook (``Q3_1``, ``Q3_2``, ...;
    labelled ``"<question>: <option>"``, values ``0`` "Not chosen" and ``1`` "Chosen";
    missing when the question was not answered; an empty answer is all 0). Their
    multiple-response sets (``MRSETS /MDGROUP``) are written as SPSS syntax beside the
    file (``results.sav`` -> ``results.sps``): open the ``.sav``, run the syntax, save.

    Args:
        df: raw results, or a frame from :func:`surveykit.label`.
        path: the ``.sav`` file to write (atomically: a temporary file, then a rename).
        codebook: the codebook; default: the one in ``df.attrs["codebook"]`` (a labelled
            frame), else none (no labels).

    Returns:
        The columns renamed to be valid names, ``{original: written}`` (empty if none).

    Raises:
        ExportError: for a column or missing codes SPSS cannot take (names the column),
            or a multi-choice answer holding an option the codebook does not list.
        LabelError: for an answer the codebook does not know.
    """
    import pyreadstat

    prepared = _prepare(df, _codebook(df, codebook), "spss")
    frame = pd.DataFrame(prepared.frame, index=range(len(df)))
    target = Path(path)
    with atomic_path(target) as temporary:
        pyreadstat.write_sav(
            frame,
            temporary,
            column_labels=prepared.labels,
            variable_value_labels=prepared.value_labels,
            missing_ranges=prepared.missing,
            variable_measure=prepared.measure,
            variable_format=prepared.formats,
        )
    if prepared.sets:
        syntax = mrsets_syntax(prepared.sets, target.name)
        with atomic_path(syntax_path(target)) as temporary:
            temporary.write_text(syntax, encoding="utf-8")
    return prepared.renames


def syntax_path(sav: str | os.PathLike[str]) -> Path:
    """Where :func:`to_spss` writes the multiple-response sets of ``sav``: ``.sps`` beside it."""
    return Path(sav).with_suffix(".sps")


def _spss_string(text: str) -> str:
    """``text`` as an SPSS string literal (single quotes, doubled inside; one line)."""
    flat = " ".join(text.split())
    return "'" + flat.replace("'", "''") + "'"


def mrsets_syntax(sets: list[MultipleResponseSet], sav_name: str) -> str:
    """SPSS syntax defining ``sets`` as multiple dichotomy sets (counted value 1).

    Example:
        >>> print(mrsets_syntax([MultipleResponseSet("$Q3", "Which?", ("Q3_1", "Q3_2"))],
        ...                     "results.sav"))  # doctest: +NORMALIZE_WHITESPACE
        * Encoding: UTF-8.
        * Multiple-response sets of results.sav, written by surveykit.
        * Open results.sav, run this syntax, then save the file to keep them.
        MRSETS
          /MDGROUP NAME=$Q3 LABEL='Which?' CATEGORYLABELS=VARLABELS
            VARIABLES=Q3_1 Q3_2 VALUE=1
          /DISPLAY NAME=[$Q3].
        <BLANKLINE>
    """
    lines = [
        "* Encoding: UTF-8.",
        f"* Multiple-response sets of {' '.join(sav_name.split())}, written by surveykit.",
        f"* Open {' '.join(sav_name.split())}, run this syntax, then save the file to keep them.",
        "MRSETS",
    ]
    for mrset in sets:
        lines.append(
            f"  /MDGROUP NAME={mrset.name} LABEL={_spss_string(mrset.label)} "
            "CATEGORYLABELS=VARLABELS"
        )
        lines.append(f"    VARIABLES={' '.join(mrset.variables)} VALUE=1")
    names = " ".join(mrset.name for mrset in sets)
    lines.append(f"  /DISPLAY NAME=[{names}].")
    return "\n".join(lines) + "\n"


def to_stata(
    df: pd.DataFrame, path: str | os.PathLike[str], codebook: Codebook | None = None
) -> dict[str, str]:
    """Write ``df`` as a Stata ``.dta`` file (version 15) with the codebook's labels.

    Coded questions are integers with value labels; missing codes are extended missing
    values ``.a``, ``.b``, ... labelled with their reason. Names are made valid Stata
    names (letters, digits and ``_``, at most 32 characters, not a reserved word);
    variable labels are cut to 80 characters.

    Args:
        df: raw results, or a frame from :func:`surveykit.label`.
        path: the ``.dta`` file to write (atomically).
        codebook: the codebook; default: the one in ``df.attrs["codebook"]``, else none.

    Returns:
        The columns renamed to be valid names, ``{original: written}`` (empty if none).

    Raises:
        ExportError: for more than 26 missing codes in a question (names it).
        LabelError: for an answer the codebook does not know.
    """
    import pyreadstat

    prepared = _prepare(df, _codebook(df, codebook), "stata")
    frame = pd.DataFrame(prepared.frame, index=range(len(df)))
    with atomic_path(Path(path)) as temporary:
        pyreadstat.write_dta(
            frame,
            temporary,
            column_labels=prepared.labels,
            variable_value_labels=prepared.value_labels,
            missing_user_values={k: [str(v) for v in vs] for k, vs in prepared.missing.items()},
        )
    return prepared.renames


def _codebook(df: pd.DataFrame, codebook: Codebook | None) -> Codebook:
    if codebook is not None:
        return codebook
    stored = df.attrs.get("codebook")
    return Codebook.from_dict(stored) if stored else Codebook()


# ----------------------------------------------------------------- names


def valid_name(name: str, target: Target) -> str:
    """``name`` made a valid SPSS or Stata variable name (not yet unique)."""
    if target == "stata":
        text = re.sub(r"[^A-Za-z0-9_]", "_", name.encode("ascii", "ignore").decode()) or "v"
        if not re.match(r"[A-Za-z_]", text):
            text = "v" + text
        text = text[:STATA_NAME_CHARS]
        if text in STATA_RESERVED or re.fullmatch(r"str\d+", text):
            text = (text + "_")[:STATA_NAME_CHARS]
        return text
    text = re.sub(r"[^\w.@#$]", "_", name) or "v"
    if not re.match(r"[^\W\d_]|@", text):
        text = "v" + text
    while len(text.encode("utf-8")) > SPSS_NAME_BYTES:
        text = text[:-1]
    text = text.rstrip(".")
    if text.upper() in SPSS_RESERVED:
        text += "_"
    return text


def _unique(name: str, taken: set[str], target: Target) -> str:
    limit = STATA_NAME_CHARS if target == "stata" else SPSS_NAME_BYTES
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        suffix = f"_{n}"
        candidate = name[: limit - len(suffix)] + suffix
    taken.add(candidate.lower())
    return candidate


# ----------------------------------------------------------------- columns


def _prepare(df: pd.DataFrame, codebook: Codebook, target: Target) -> _Prepared:
    out = _Prepared()
    taken: set[str] = set()
    reasons: dict[str, dict[Any, str]] = df.attrs.get("missing_reasons", {})
    multi: list[tuple[str, pd.Series, Question]] = []
    for column in df.columns:
        key = str(column)
        name = _unique(valid_name(key, target), taken, target)
        if name != key:
            out.renames[key] = name
        question = codebook.get(key)
        series = df[column]
        if question is not None and question.kind in CODED_KINDS:
            _coded(out, name, series, question, reasons.get(key, {}), target)
        elif question is not None and question.kind == "number":
            _number(out, name, series, question, reasons.get(key, {}), target)
        else:
            out.frame[name] = _plain(series, question, reasons.get(key, {}))
            if target == "spss" and question is not None and question.kind == "multi":
                multi.append((name, series, question))
        text = question.text if question is not None and question.text else None
        if text:
            text = text[:STATA_LABEL_CHARS] if target == "stata" else _cut(text, SPSS_LABEL_BYTES)
        # SPSS and Stata drop trailing blanks: drop them here so labels read back as written.
        out.labels[name] = text.rstrip() or None if text else None
        if target == "spss":
            out.measure[name] = _measure(out.frame[name], question)
            if (width := _integer_width(out.frame[name])) is not None:
                out.formats[name] = f"F{width}.0"
    # Every column has its name: the options' variables take names no column has.
    flags = {name: _dichotomies(out, name, series, q, taken) for name, series, q in multi}
    if flags:  # each multi question's options follow it, in the file's order
        columns = {name: out.frame[name] for name in list(out.frame) if name not in
                   {f for names in flags.values() for f in names}}
        out.frame = {}
        for name, values in columns.items():
            out.frame[name] = values
            for flag, flag_values in flags.get(name, {}).items():
                out.frame[flag] = flag_values
    return out


def _integer_width(values: Any) -> int | None:
    """The ``Fw.0`` width for a numeric column of whole numbers (None: not one)."""
    array = np.asarray(values)
    if array.dtype.kind not in "fiu":
        return None
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
    if not finite.size or not np.all(finite == np.round(finite)):
        return None
    digits = max(len(f"{int(finite.max()):d}"), len(f"{int(finite.min()):d}"))
    return max(8, digits + 1)


def _dichotomies(
    out: _Prepared, name: str, series: pd.Series, question: Question, taken: set[str]
) -> dict[str, Any]:
    """One 0/1 variable per option of a multi question (``{name: values}``), and its set."""
    options = list(question.value_labels().items())
    if not options:
        return {}
    codes, uniques = pd.factorize(series.astype(object), use_na_sentinel=True)
    known = {code: i for i, (code, _) in enumerate(options)}
    table = np.zeros((len(uniques) + 1, len(options)), dtype=np.float64)
    table[-1, :] = np.nan  # no answer: missing, not "not chosen"
    for u, answer in enumerate(uniques):
        text = str(answer)
        if text in question.missing:
            table[u, :] = np.nan
            continue
        for part in text.split(question.separator):
            option = part.strip()
            if not option:
                continue
            if option not in known:
                row = series.index[int(np.flatnonzero(codes == u)[0])]
                raise ExportError(
                    f"{question.key}: row {row!r} holds the option {option!r}, which the "
                    f"codebook does not list ({[c for c, _ in options]})"
                )
            table[u, known[option]] = 1.0
    flags = table[codes]
    columns: dict[str, Any] = {}
    stem = question.text or question.key
    for i, (_, option_label) in enumerate(options):
        flag = _unique(valid_name(f"{name}_{i + 1}", "spss"), taken, "spss")
        columns[flag] = flags[:, i]
        out.labels[flag] = _cut(f"{stem}: {option_label}", SPSS_LABEL_BYTES).rstrip() or None
        out.value_labels[flag] = dict(CHOSEN_LABELS)
        out.measure[flag] = "nominal"
        out.formats[flag] = SPSS_FLAG
    label = _cut(stem, SPSS_LABEL_BYTES).rstrip()
    out.sets.append(MultipleResponseSet("$" + name[: SPSS_NAME_BYTES - 1], label, tuple(columns)))
    return columns


def _measure(values: Any, question: Question | None) -> str:
    if question is not None:
        return MEASURES[question.kind]
    series = pd.Series(values)
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_datetime64_any_dtype(series):
        return "scale"
    return "nominal"


def _numbers(question: Question) -> dict[str, float]:
    """The number written for each code."""
    valid, missing = list(question.value_labels()), list(question.missing)
    try:
        return {code: float(code) for code in valid + missing}
    except ValueError:
        numbered = {code: float(i) for i, code in enumerate(valid, start=1)}
        return numbered | {code: float(-i) for i, code in enumerate(missing, start=1)}


def _restore(series: pd.Series, reasons: dict[Any, str], question: Question) -> pd.Series:
    """A labelled frame's missing answers back to their missing codes (from the reasons)."""
    if not reasons or not question.missing:
        return series
    by_reason: dict[str, str] = {}
    for code, reason in question.missing.items():
        by_reason.setdefault(reason, code)
    rows = series.index.get_indexer(pd.Index(list(reasons)))
    codes = [by_reason.get(r) for r in reasons.values()]
    values = series.astype(object).to_numpy(copy=True)
    for row, found in zip(rows.tolist(), codes, strict=True):
        if row >= 0 and found is not None:
            values[row] = found
    return pd.Series(values, index=series.index, name=series.name, dtype=object)


def _coded(
    out: _Prepared,
    name: str,
    series: pd.Series,
    question: Question,
    reasons: dict[Any, str],
    target: Target,
) -> None:
    series = _restore(series, reasons, question)
    numbers = _numbers(question)
    lookup = _lookup(series, question)
    unknown = [i for i, bad in enumerate(lookup.unknown) if bad]
    if unknown:
        rows = np.flatnonzero(np.isin(lookup.codes, unknown))
        _raise_unknown(series.to_frame(), str(series.name), lookup, rows)
    valid = list(question.value_labels())
    stata_letters = {code: chr(ord("a") + i) for i, code in enumerate(question.missing)}
    if target == "stata" and len(stata_letters) > 26:
        raise ExportError(f"{question.key}: Stata has 26 extended missing values, not more")
    per_unique: list[Any] = []
    for value, position in zip(lookup.uniques, lookup.target, strict=True):
        text = code_text(value)
        if text in question.missing:
            per_unique.append(stata_letters[text] if target == "stata" else numbers[text])
        elif position >= 0:
            per_unique.append(numbers[valid[position]])
        else:
            per_unique.append(np.nan)
    table = np.asarray([*per_unique, np.nan], dtype=object)
    values = table[lookup.codes]
    if target == "spss" or not question.missing:
        out.frame[name] = values.astype("float64")
    else:
        out.frame[name] = values
    labels: dict[Any, str] = {numbers[c]: t for c, t in question.value_labels().items()}
    if target == "stata":
        labels = {int(k) if float(k).is_integer() else k: v for k, v in labels.items()}
        labels |= {stata_letters[c]: r for c, r in question.missing.items()}
        if any(not isinstance(k, int | str) for k in labels):
            raise ExportError(f"{question.key}: Stata value labels need whole-number codes")
    else:
        labels |= {numbers[c]: r for c, r in question.missing.items()}
        labels = {k: _spss_label(v) for k, v in labels.items()}
    out.value_labels[name] = labels
    if target == "spss" and question.missing:
        out.missing[name] = _spss_missing(question, [numbers[c] for c in question.missing], numbers)
    elif target == "stata" and question.missing:
        out.missing[name] = [stata_letters[c] for c in question.missing]


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def _spss_label(text: str) -> str:
    return _cut(text, SPSS_VALUE_LABEL_BYTES)


def _spss_missing(question: Question, codes: list[float], numbers: dict[str, float]) -> list[Any]:
    if len(codes) <= 3:
        return codes
    low, high = min(codes), max(codes)
    valid = [numbers[c] for c in question.value_labels()]
    if any(low <= v <= high for v in valid):
        raise ExportError(
            f"{question.key}: SPSS takes three missing values or one range, and the range "
            f"{low:g}..{high:g} of the {len(codes)} missing codes holds valid codes"
        )
    return [{"lo": low, "hi": high}]


def _number(
    out: _Prepared,
    name: str,
    series: pd.Series,
    question: Question,
    reasons: dict[Any, str],
    target: Target,
) -> None:
    series = _restore(series, reasons, question)
    values = pd.to_numeric(series.astype(object), errors="coerce").astype("float64")
    bad = values.isna() & series.notna()
    if bad.any():
        row = series.index[np.flatnonzero(bad.to_numpy())[0]]
        raise ExportError(f"{question.key}: row {row!r} holds {series[row]!r}, not a number")
    try:
        numbers = {code: float(code) for code in question.missing}
    except ValueError:
        raise ExportError(
            f"{question.key}: a number question's missing codes must be numbers"
        ) from None
    if target == "stata" and numbers:
        letters = {v: chr(ord("a") + i) for i, v in enumerate(numbers.values())}
        array = values.to_numpy(dtype=object)
        for number, letter in letters.items():
            array[values.to_numpy() == number] = letter
        out.frame[name] = array
        out.missing[name] = list(letters.values())
        out.value_labels[name] = {letters[numbers[c]]: r for c, r in question.missing.items()}
        return
    out.frame[name] = values.to_numpy()
    if numbers:
        out.value_labels[name] = {numbers[c]: _spss_label(r) for c, r in question.missing.items()}
        out.missing[name] = _spss_missing(question, list(numbers.values()), numbers)


def _plain(series: pd.Series, question: Question | None, reasons: dict[Any, str]) -> Any:
    if question is not None:
        series = _restore(series, reasons, question)
    dtype = series.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype):
        if getattr(dtype, "tz", None) is not None:
            series = series.dt.tz_convert("UTC").dt.tz_localize(None)
        return series.to_numpy()
    if pd.api.types.is_bool_dtype(dtype):
        return series.astype("float64").to_numpy()
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        return series.astype("float64").to_numpy()
    values = series.astype(object).to_numpy(copy=True)
    values[pd.isna(values)] = None
    return np.asarray([v if v is None else str(v) for v in values], dtype=object)
