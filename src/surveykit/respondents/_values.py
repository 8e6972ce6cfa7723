"""Cleaning of non-phone columns: text, email addresses, dates, dynamic values."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "EMAIL_PATTERN",
    "Column",
    "clean_dates",
    "clean_dynamic",
    "clean_text",
    "email_problems",
]

ObjArray = npt.NDArray[np.object_]
T = TypeVar("T")

_NON_ASCII = "\u0080-\U0010ffff"
_ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-" + _NON_ASCII
_LABEL = f"[A-Za-z0-9{_NON_ASCII}](?:[A-Za-z0-9{_NON_ASCII}-]{{0,61}}[A-Za-z0-9{_NON_ASCII}])?"
_TLD = f"(?:[A-Za-z{_NON_ASCII}]{{2,63}}|xn--[A-Za-z0-9-]{{1,59}})"

#: The address rule (a practical subset of RFC 5321/5322, with internationalised addresses):
#: a dot-atom local part (letters, digits, ``!#$%&'*+/=?^_`{|}~-`` and non-ASCII, dots only
#: between characters), one ``@``, then at least two dot-separated domain labels of letters,
#: digits and inner hyphens (at most 63 each), the last being alphabetic (2+ characters) or
#: an ``xn--`` label. The local part is at most 64 characters and the whole at most 254.
#: Quoted local parts, comments and IP-literal domains are refused; they are legal but in
#: practice mistakes in respondent lists.
EMAIL_PATTERN: Final = f"^[{_ATEXT}]+(?:\\.[{_ATEXT}]+)*@(?:{_LABEL}\\.)+{_TLD}$"
EMAIL_REASON: Final = "not a valid email address"


@dataclass(frozen=True)
class Column:
    """A cleaned column kept compact until records are built.

    ``values`` is a pyarrow array (nulls are omitted from records) or an object ndarray of
    JSON-ready Python values (``None`` omitted). ``integral_floats`` marks a float array whose
    whole numbers are sent as ints.
    """

    name: str
    values: pa.Array | pa.ChunkedArray | ObjArray
    integral_floats: bool = False

    def take(self, positions: npt.NDArray[np.intp]) -> Column:
        """The column restricted to ``positions``."""
        if isinstance(self.values, np.ndarray):
            return Column(self.name, self.values[positions], self.integral_floats)
        return Column(self.name, self.values.take(pa.array(positions)), self.integral_floats)

    def to_pylist(self, start: int, stop: int) -> list[Any]:
        """Python values for rows ``start:stop``, None where a value is omitted."""
        if isinstance(self.values, np.ndarray):
            return list(self.values[start:stop])
        out: list[Any] = self.values.slice(start, stop - start).to_pylist()
        if self.integral_floats:
            return [int(v) if v is not None and v.is_integer() else v for v in out]
        return out


def _factorize(values: pd.Series[Any]) -> tuple[npt.NDArray[np.intp], ObjArray]:
    """Codes per row (-1 for missing) and the distinct non-missing values."""
    try:
        codes, uniques = pd.factorize(values)
        return codes, uniques.to_numpy(dtype=object)
    except TypeError:  # unhashable cells (lists, dicts): every row is its own value
        raw = values.to_numpy(dtype=object)
        missing = np.fromiter((_is_missing(v) for v in raw), dtype=bool, count=len(raw))
        return np.where(missing, -1, np.arange(len(raw))), raw


def map_distinct(values: pd.Series[Any], func: Callable[[Any], Any]) -> ObjArray:
    """``func`` applied once per distinct non-missing value, spread back to every row.

    Missing rows get None.
    """
    codes, uniques = _factorize(values)
    mapped: ObjArray = np.empty(len(uniques) + 1, dtype=object)
    for i, u in enumerate(uniques):
        mapped[i] = func(u)
    mapped[-1] = None  # code -1 (missing) picks the last slot
    out: ObjArray = mapped[codes]
    return out


def map_distinct_pairs(
    values: pd.Series[Any], func: Callable[[Any], tuple[Any, Any]]
) -> tuple[ObjArray, ObjArray]:
    """Like :func:`map_distinct` for a function returning (value, reason)."""
    codes, uniques = _factorize(values)
    first: ObjArray = np.full(len(uniques) + 1, None, dtype=object)
    second: ObjArray = np.full(len(uniques) + 1, None, dtype=object)
    for i, u in enumerate(uniques):
        first[i], second[i] = func(u)
    return first[codes], second[codes]


_NONE: Final = np.full(1, None, dtype=object)


def is_given(values: ObjArray) -> npt.NDArray[np.bool_]:
    """True where an object array holds something (not None)."""
    given: npt.NDArray[np.bool_] = np.not_equal(values, _NONE)
    return given


def _is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float | np.floating) and math.isnan(v)


def _arrow(values: pd.Series[Any]) -> pa.Array | pa.ChunkedArray:
    return (
        pa.array(values.array)
        if hasattr(values.array, "__arrow_array__")
        else pa.array(values.to_numpy(dtype=object), from_pandas=True)
    )


def _scalar_text(v: Any) -> str | None:
    if isinstance(v, str):
        return v.strip() or None
    if isinstance(v, float | np.floating):
        return str(int(v)) if v.is_integer() else repr(float(v))
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, dt.datetime | dt.date):
        return v.isoformat()
    return str(v).strip() or None


def clean_text(values: pd.Series[Any]) -> pa.Array | pa.ChunkedArray:
    """Text with surrounding whitespace removed; blanks become missing. Numbers as text."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(values.dtype.categories.dtype)
    if pd.api.types.is_string_dtype(values.dtype) and not pd.api.types.is_object_dtype(
        values.dtype
    ):
        arr = pc.utf8_trim_whitespace(_arrow(values))
        return pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.string()), arr)
    return pa.array(map_distinct(values, _scalar_text), type=pa.string(), from_pandas=True)


def email_problems(emails: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.bool_]:
    """True where a non-missing address breaks :data:`EMAIL_PATTERN` or its length limits."""
    ok = pc.match_substring_regex(emails, EMAIL_PATTERN)
    ok = pc.and_(ok, pc.less_equal(pc.utf8_length(emails), 254))
    ok = pc.and_(ok, pc.less_equal(pc.find_substring(emails, "@"), 64))
    bad = pc.invert(pc.fill_null(ok, True))
    return np.asarray(bad.to_numpy(zero_copy_only=False), dtype=bool)


# --- dates ---------------------------------------------------------------------------

_ISO_LIKE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_COMPACT = re.compile(r"(\d{4})(\d{2})(\d{2})")
_NUMERIC = re.compile(r"(\d{1,2})[-/.](\d{1,2})[-/.](\d{2}|\d{4})")
_ORDINAL = re.compile(r"(?<=\d)(st|nd|rd|th)\b", re.IGNORECASE)
_NAMED_FORMATS = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")
AMBIGUOUS_REASON: Final = "ambiguous date: day/month order unknown (pass dayfirst=True or False)"


class _DateError(ValueError):
    pass


def _numeric_order(texts: list[str]) -> bool | None:
    """Day-first (True) or month-first (False) as the unambiguous values of a column show."""
    day_first = month_first = False
    for t in texts:
        m = _NUMERIC.fullmatch(t)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            day_first |= a > 12 >= b
            month_first |= b > 12 >= a
    if day_first != month_first:
        return day_first
    return None


def _make_date(y: int, m: int, d: int) -> str:
    try:
        return dt.date(y, m, d).isoformat()
    except ValueError:
        raise _DateError(f"impossible date ({y:04d}-{m:02d}-{d:02d})") from None


def parse_date(value: Any, dayfirst: bool | None) -> str:
    """One value to ``YYYY-MM-DD``; raises ValueError with a reason when it is not a date."""
    if isinstance(value, dt.datetime | dt.date):  # includes pandas.Timestamp
        return (value.date() if isinstance(value, dt.datetime) else value).isoformat()
    if isinstance(value, np.datetime64):
        return str(pd.Timestamp(value).date())
    if not isinstance(value, str):
        raise _DateError(f"not a date ({type(value).__name__} {value!r})")
    text = value.strip()
    m = _ISO_LIKE.fullmatch(text) or _COMPACT.fullmatch(text)
    if m:
        return _make_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if re.match(r"\d{4}-\d{2}-\d{2}[T ]", text):
        try:
            return dt.datetime.fromisoformat(text).date().isoformat()
        except ValueError:
            raise _DateError("not a date") from None
    m = _NUMERIC.fullmatch(text)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), m.group(3)
        if len(y) == 2:
            raise _DateError("two-digit year")
        if a > 12 >= b:
            return _make_date(int(y), b, a)
        if b > 12 >= a:
            return _make_date(int(y), a, b)
        if a == b:
            return _make_date(int(y), a, b)
        if dayfirst is None:
            raise _DateError(AMBIGUOUS_REASON)
        return _make_date(int(y), b, a) if dayfirst else _make_date(int(y), a, b)
    named = " ".join(_ORDINAL.sub("", text).replace(",", " ").replace("-", " ").split())
    for fmt in _NAMED_FORMATS:
        try:
            return dt.datetime.strptime(named, fmt).date().isoformat()
        except ValueError:
            continue
    raise _DateError("not a date")


def _number_not_date(v: Any) -> tuple[str | None, str | None]:
    return None, f"not a date (number {_scalar_text(v)})"


def clean_dates(values: pd.Series[Any], dayfirst: bool | None) -> tuple[pa.Array, ObjArray]:
    """A column of dates to ``YYYY-MM-DD`` text, with a reason per unparseable row.

    datetime64 columns, Python dates and datetimes (their date part) and common strings
    (ISO, ``YYYYMMDD``, ``17/05/1980``, ``05/17/1980``, ``17 May 1980``, ``May 17th, 1980``)
    are read. For ``NN/NN/YYYY`` with both parts at most 12, the order comes from
    ``dayfirst``, or when it is None from the column's unambiguous values; failing both, the
    value is refused as ambiguous. Two-digit years are refused.
    """
    n = len(values)
    no_reasons: ObjArray = np.full(n, None, dtype=object)
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        text = values.dt.strftime("%Y-%m-%d")
        return pa.array(text.to_numpy(dtype=object), type=pa.string(), from_pandas=True), no_reasons
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(values.dtype.categories.dtype)
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        dates, reasons = map_distinct_pairs(values, _number_not_date)
    else:
        if pd.api.types.is_string_dtype(values.dtype) and not pd.api.types.is_object_dtype(
            values.dtype
        ):
            values = values.str.strip()
            values = values.mask(values == "")
        if dayfirst is None:
            distinct = pd.unique(values.dropna())
            dayfirst = _numeric_order([v.strip() for v in distinct if isinstance(v, str)])

        def one(v: Any) -> tuple[str | None, str | None]:
            if isinstance(v, str) and not v.strip():
                return None, None
            try:
                return parse_date(v, dayfirst), None
            except _DateError as exc:
                return None, str(exc)

        dates, reasons = map_distinct_pairs(values, one)
    return pa.array(dates, type=pa.string(), from_pandas=True), reasons


# --- dynamic properties ---------------------------------------------------------------


def _json_scalar(v: Any) -> tuple[Any, str | None]:
    """A cell of an object column as a JSON-ready value (None to omit), or a reason."""
    if isinstance(v, str):
        return (v.strip() or None), None
    if isinstance(v, bool | np.bool_):
        return bool(v), None
    if isinstance(v, int | np.integer):
        return int(v), None
    if isinstance(v, float | np.floating):
        f = float(v)
        if not math.isfinite(f):
            return None, f"not a finite number ({f})"
        return (int(f) if f.is_integer() and abs(f) < 2**53 else f), None
    if isinstance(v, pd.Timestamp | dt.datetime):
        if v.tzinfo is None and v.time() == dt.time():
            return v.date().isoformat(), None
        return v.isoformat(), None
    if isinstance(v, dt.date):
        return v.isoformat(), None
    if isinstance(v, np.datetime64):
        return _json_scalar(pd.Timestamp(v))
    if isinstance(v, list | dict | tuple):  # JSON containers go as they are
        return v, None
    return str(v), None  # Decimal, timedelta, UUID...: their text


def clean_dynamic(values: pd.Series[Any], name: str) -> tuple[Column, ObjArray | None]:
    """A pass-through column made JSON-ready, with reasons for cells that cannot be sent.

    Strings are trimmed (blank means missing); whole-number floats go as ints; datetimes at
    midnight without a zone go as ``YYYY-MM-DD``, others as ISO 8601 with their offset.
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return clean_dynamic(values.astype(dtype.categories.dtype), name)
    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        return Column(name, clean_text(values)), None
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        return Column(name, _arrow(values)), None
    if pd.api.types.is_float_dtype(dtype):
        arr = values.to_numpy(dtype=np.float64, na_value=np.nan)
        finite = np.isfinite(arr)
        reasons: ObjArray | None = None
        if (np.isinf(arr)).any():
            reasons = np.full(len(arr), None, dtype=object)
            reasons[np.isinf(arr)] = "not a finite number"
        kept = np.where(finite, arr, np.nan)
        whole = finite & (np.floor(kept) == kept)
        if whole.sum() == finite.sum() and (np.abs(kept[finite]) < 2**53).all():
            ints = pa.array(np.where(finite, kept, 0).astype(np.int64), mask=~finite)
            return Column(name, ints), reasons
        return Column(name, pa.array(kept, from_pandas=True), integral_floats=True), reasons
    if pd.api.types.is_datetime64_any_dtype(dtype):
        series = values
        naive_midnight = getattr(dtype, "tz", None) is None and bool(
            (series.dropna() == series.dropna().dt.normalize()).all()
        )
        if naive_midnight:
            text = series.dt.strftime("%Y-%m-%d")
        else:
            text = pd.Series(map_distinct(series, lambda t: t.isoformat()), dtype=object)
        return Column(
            name, pa.array(text.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
        ), None
    objs, bad = map_distinct_pairs(values, _json_scalar)
    return Column(name, objs), (bad if is_given(bad).any() else None)
