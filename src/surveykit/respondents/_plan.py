"""build_import_list: a DataFrame to Data/Import records, and why rows were left out."""

from __future__ import annotations

import html
import warnings
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, overload

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from surveykit.errors import ColumnMappingError
from surveykit.models.imports import RESPONDENT_FIELDS
from surveykit.respondents._join import label_series
from surveykit.respondents._mapping import resolve_mapping
from surveykit.respondents._numbers import _normalize_column, _Phones
from surveykit.respondents._values import (
    EMAIL_REASON,
    Column,
    clean_dates,
    clean_dynamic,
    clean_text,
    email_problems,
    is_given,
)
from surveykit.rules.numbers import UNVERIFIED, check_region

__all__ = ["ImportPlan", "ImportSummary", "RecordSequence", "build_import_list"]

ObjArray = npt.NDArray[np.object_]

NO_CONTACT: Final = "no contact: neither a valid mobileNumber nor an emailAddress"
DUPLICATE: Final = "duplicate"
_TEXT_FIELDS: Final = ("title", "firstName", "lastName", "website")


class RecordSequence(Sequence[dict[str, Any]]):
    """The records of an :class:`ImportPlan`: a read-only list of dicts built on demand.

    Values are held column by column in compact arrays; dicts are built when read (by
    index, slice, iteration or :meth:`chunks`), so a million-row plan does not hold a
    million dicts. ``list(plan.records)`` materialises them all. Missing values are left
    out of each dict, never sent as null.
    """

    def __init__(self, columns: list[Column], length: int) -> None:
        self._columns = columns
        self._len = length

    @property
    def columns(self) -> list[str]:
        """The property names, in DataFrame column order."""
        return [c.name for c in self._columns]

    def __len__(self) -> int:
        return self._len

    def _build(self, start: int, stop: int) -> list[dict[str, Any]]:
        names = [c.name for c in self._columns]
        lists = [c.to_pylist(start, stop) for c in self._columns]
        return (
            [
                {k: v for k, v in zip(names, row, strict=True) if v is not None}
                for row in zip(*lists, strict=True)
            ]
            if lists
            else [{} for _ in range(stop - start)]
        )

    @overload
    def __getitem__(self, key: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, key: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, key: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._len)
            if step == 1:
                return self._build(start, max(start, stop))
            return [self[i] for i in range(start, stop, step)]
        i = key.__index__()
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("record index out of range")
        return self._build(i, i + 1)[0]

    def chunks(self, size: int = 1000) -> Iterator[list[dict[str, Any]]]:
        """The records as consecutive lists of at most ``size`` dicts (one import request each)."""
        if size < 1:
            raise ValueError("size must be at least 1")
        for start in range(0, self._len, size):
            yield self._build(start, min(start + size, self._len))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for chunk in self.chunks(10_000):
            yield from chunk

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = self[:2]
        more = ", ..." if self._len > 2 else ""
        return f"RecordSequence({self._len} records: [{', '.join(map(repr, head))}{more}])"


@dataclass(frozen=True)
class ImportSummary:
    """Counts of an :class:`ImportPlan`.

    Attributes:
        rows: rows in the DataFrame.
        records: rows that became records.
        rejected: rows left out (``rows == records + rejected`` always).
        rejected_by_reason: rejected rows per reason, most frequent first.
        warnings: values sent but flagged (``email_policy="warn"``).
        inferred: column -> property for the mappings guessed from column names.
        unverified: records whose number phonenumbers finds possible but not valid (kept;
            ``number_check`` says which; ``strict=True`` refuses them).
    """

    rows: int
    records: int
    rejected: int
    rejected_by_reason: dict[str, int]
    warnings: int
    inferred: dict[Hashable, str]
    unverified: int = 0

    def __str__(self) -> str:
        lines = [f"{self.rows} rows -> {self.records} records, {self.rejected} rejected"]
        lines += [f"  rejected {n}: {reason}" for reason, n in self.rejected_by_reason.items()]
        if self.unverified:
            lines.append(f"  {_unverified_line(self.unverified)}")
        if self.warnings:
            lines.append(f"  {self.warnings} values sent with a warning")
        if self.inferred:
            lines.append(
                "  inferred: " + ", ".join(f"{c!r} -> {f}" for c, f in self.inferred.items())
            )
        return "\n".join(lines)


@dataclass(frozen=True, repr=False, eq=False)
class ImportPlan:
    """What :func:`build_import_list` makes of a DataFrame.

    Attributes:
        records: the records for POST /v3.2/Data/Import, in DataFrame order.
        index: the DataFrame index label of each record (same order as ``records``).
        positions: the 0-based row position of each record in the DataFrame.
        rejected: one row per left-out DataFrame row, indexed by its label; columns
            ``column`` (the DataFrame column at fault, or None), ``value`` (as given),
            ``reason``, and ``duplicate_of`` (label of the first row with that number).
        warnings: values sent but flagged, same columns as ``rejected`` but duplicate_of.
        mapping: every DataFrame column -> property name it is sent as (None: left out).
        inferred: the columns whose property was guessed from their name.
        summary: counts, see :class:`ImportSummary`.
        source_index: the DataFrame's index, for joining per-record results back.
        number_check: per DataFrame row (indexed like it), how its mobile number was
            checked: ``"valid"``, ``"unverified"`` (possible but not valid for
            phonenumbers: a range newer than its metadata or a fictional one; kept unless
            ``strict=True``), or None (no number, or a refused one).
    """

    records: RecordSequence
    index: pd.Index
    positions: npt.NDArray[np.intp]
    rejected: pd.DataFrame
    warnings: pd.DataFrame
    mapping: dict[Hashable, str | None]
    inferred: tuple[Hashable, ...]
    summary: ImportSummary
    source_index: pd.Index
    rejected_positions: npt.NDArray[np.intp] = field(default_factory=lambda: np.array([], np.intp))
    number_check: pd.Series = field(default_factory=lambda: pd.Series(dtype=object))

    def _mapping_lines(self) -> list[tuple[str, str, str]]:
        rows = []
        for col, target in self.mapping.items():
            how = (
                "inferred"
                if col in self.inferred
                else "left out"
                if target is None
                else "passed through"
                if target == str(col) and target not in _RESPONDENT
                else "mapped"
            )
            rows.append((repr(col), target or "-", how))
        return rows

    def __repr__(self) -> str:
        s = self.summary
        lines = [f"ImportPlan: {s.rows} rows -> {s.records} records, {s.rejected} rejected"]
        lines += [f"  rejected {n}: {reason}" for reason, n in s.rejected_by_reason.items()]
        if s.unverified:
            lines.append(f"  {_unverified_line(s.unverified)} (see .number_check)")
        if s.warnings:
            lines.append(f"  {s.warnings} values sent with a warning (see .warnings)")
        lines.append("  mapping:")
        lines += [f"    {c} -> {t} ({how})" for c, t, how in self._mapping_lines()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        s = self.summary
        parts = [
            f"<p><b>ImportPlan</b>: {s.rows} rows &rarr; {s.records} records, "
            f"{s.rejected} rejected, {s.warnings} warnings</p>",
            (f"<p>{html.escape(_unverified_line(s.unverified))}</p>" if s.unverified else ""),
            "<table><tr><th>column</th><th>property</th><th>how</th></tr>",
        ]
        parts += [
            f"<tr><td>{html.escape(c)}</td><td>{html.escape(t)}</td><td>{html.escape(how)}</td></tr>"
            for c, t, how in self._mapping_lines()
        ]
        parts.append("</table>")
        if s.rejected_by_reason:
            parts.append("<table><tr><th>rejected</th><th>reason</th></tr>")
            parts += [
                f"<tr><td>{n}</td><td>{html.escape(r)}</td></tr>"
                for r, n in s.rejected_by_reason.items()
            ]
            parts.append("</table>")
            parts.append(self.rejected.head(10).to_html())
        return "\n".join(parts)


_RESPONDENT: Final = frozenset(RESPONDENT_FIELDS)


def _unverified_line(n: int) -> str:
    return (
        f"{n} {'number' if n == 1 else 'numbers'} kept unverified (possible, but not valid "
        f"for phonenumbers; strict=True refuses {'it' if n == 1 else 'them'})"
    )


class _Rejections:
    """The first reason found per row (checks run in a fixed order)."""

    def __init__(self, n: int) -> None:
        self.reason: ObjArray = np.full(n, None, dtype=object)
        self.column_id = np.full(n, -1, dtype=np.int32)
        self.columns: list[Hashable] = []
        self.done = np.zeros(n, dtype=bool)

    def open(self) -> npt.NDArray[np.bool_]:
        return ~self.done

    def add(self, bad: npt.NDArray[np.bool_], column: Hashable, reason: ObjArray | str) -> None:
        sel = bad & ~self.done
        if not sel.any():
            return
        self.reason[sel] = reason[sel] if isinstance(reason, np.ndarray) else reason
        if column is not None:
            self.column_id[sel] = len(self.columns)
            self.columns.append(column)
        self.done |= sel

    def column_at(self, positions: npt.NDArray[np.intp]) -> ObjArray:
        labels: ObjArray = np.empty(len(self.columns) + 1, dtype=object)
        for k, col in enumerate(self.columns):
            labels[k] = col
        labels[-1] = None
        out: ObjArray = labels[self.column_id[positions]]
        return out

    def values_at(self, df: pd.DataFrame, positions: npt.NDArray[np.intp]) -> ObjArray:
        """The values as given in the DataFrame, from each row's faulty column."""
        out: ObjArray = np.full(len(positions), None, dtype=object)
        ids = self.column_id[positions]
        for k, col in enumerate(self.columns):
            sel = np.flatnonzero(ids == k)
            if len(sel):
                out[sel] = df[col].iloc[positions[sel]].to_numpy(dtype=object)
        return out


def build_import_list(
    df: pd.DataFrame,
    mapping: Mapping[Hashable, str | None] | None = None,
    *,
    default_region: str | None = None,
    dedupe: bool = True,
    email_policy: Literal["reject", "warn"] = "reject",
    dayfirst: bool | None = None,
    infer: bool = True,
    strict: bool = False,
) -> ImportPlan:
    """Turn a DataFrame of respondents into records for POST /v3.2/Data/Import.

    Every row becomes either a record or a row of ``plan.rejected`` with its reason; nothing
    is dropped silently. Checks run in this order and the first failure is the reason:
    phone number, email address (``email_policy="reject"``), date of birth, other values
    (non-finite numbers), contact, duplicate.

    Args:
        df: one respondent per row.
        mapping: ``{column: property}``; explicit entries win over inference, ``None`` leaves
            a column out. Columns neither mapped nor recognised pass through under their own
            name (as text) as dynamic properties of the import definition.
        default_region: ISO 3166 alpha-2 region (``"GB"``) for national numbers such as
            ``07911 123456``; without it, only international numbers are accepted. How
            numbers are read: :func:`surveykit.respondents.normalize_phone_number`.
        dedupe: reject a row whose normalised mobile number an earlier record already has,
            with ``duplicate_of`` pointing at that record's index label.
        email_policy: ``"reject"`` leaves out rows whose address breaks the rule in
            :data:`surveykit.respondents.EMAIL_PATTERN`; ``"warn"`` sends them as given, lists them
            in ``plan.warnings`` and warns once.
        dayfirst: order of ``NN/NN/YYYY`` dates; None reads it from the column's unambiguous
            dates and rejects the ambiguous ones when the column does not tell.
        infer: guess properties from column names (``First Name`` -> ``firstName``).
        strict: refuse numbers that phonenumbers finds possible but not valid. By default
            they are kept and marked ``"unverified"`` in ``plan.number_check``: a range
            newer than phonenumbers' metadata, or a fictional one such as the sandbox's
            07700 900xxx.

    A row is a record only with a usable contact: a kept mobile number or an email address
    (under ``"warn"`` a flagged address counts). A number that is given but refused rejects
    the row even when it has an email address, so that no number is lost unnoticed.

    Raises:
        ColumnMappingError: two columns map to one property, a mapped column is missing, or
            no column maps to mobileNumber or emailAddress.
        ValueError: an unknown ``default_region`` or ``email_policy``.

    Example:
        >>> plan = build_import_list(df, default_region="GB")  # doctest: +SKIP
        >>> plan.records[0]  # doctest: +SKIP
        {'firstName': 'Ann', 'mobileNumber': '447911123456'}
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, not {type(df).__name__}")
    if email_policy not in ("reject", "warn"):
        raise ValueError(f"email_policy must be 'reject' or 'warn', not {email_policy!r}")
    region = check_region(default_region)
    full, inferred = resolve_mapping(list(df.columns), mapping, infer=infer)
    by_target = {t: c for c, t in full.items() if t is not None}
    if "mobileNumber" not in by_target and "emailAddress" not in by_target:
        raise ColumnMappingError(
            "no column maps to mobileNumber or emailAddress, so no row has a contact; "
            f"columns are {list(df.columns)!r}; pass mapping={{'<column>': 'mobileNumber'}}"
        )
    rows = _read_rows(
        df,
        full,
        by_target,
        region=region,
        strict=strict,
        email_policy=email_policy,
        dayfirst=dayfirst,
        dedupe=dedupe,
    )
    plan = _assemble(df, full, inferred, rows)
    if plan.summary.warnings:
        warnings.warn(
            f"{plan.summary.warnings} email addresses look invalid and will be sent as given "
            "(see plan.warnings)",
            UserWarning,
            stacklevel=2,
        )
    return plan


@dataclass
class _Contacts:
    """The contact columns read and checked: the number, the address, the date of birth."""

    phones: _Phones | None
    emails: pa.Array | pa.ChunkedArray | None
    dob: pa.Array | None
    email_column: Hashable | None
    has_contact: npt.NDArray[np.bool_]
    """Per row: a kept mobile number or email address (under "warn" a flagged one counts)."""
    flagged: npt.NDArray[np.bool_]
    """Per row: an address that breaks the rule, sent as given (``email_policy="warn"``)."""


@dataclass
class _Rows:
    """Every row read: the columns to send, and why each left-out row is left out."""

    columns: list[Column]
    rejections: _Rejections
    duplicate_of: ObjArray
    contacts: _Contacts


def _read_rows(
    df: pd.DataFrame,
    full: Mapping[Hashable, str | None],
    by_target: Mapping[str, Hashable],
    *,
    region: str | None,
    strict: bool,
    email_policy: Literal["reject", "warn"],
    dayfirst: bool | None,
    dedupe: bool,
) -> _Rows:
    """Read and check every mapped column; the first failing check is a row's reason.

    The order is fixed (number, address, date of birth, other values, contact, duplicate),
    so the reason a row shows does not depend on the order of the columns.
    """
    rej = _Rejections(len(df))
    contacts = _read_contacts(
        df,
        by_target,
        rej,
        region=region,
        strict=strict,
        email_policy=email_policy,
        dayfirst=dayfirst,
    )
    columns = _columns(df, full, contacts, rej)
    rej.add(~contacts.has_contact, None, NO_CONTACT)
    duplicate_of: ObjArray = np.full(len(df), None, dtype=object)
    if dedupe and contacts.phones is not None:
        duplicate_of = _duplicates(df, contacts.phones, rej, by_target["mobileNumber"])
    return _Rows(columns, rej, duplicate_of, contacts)


def _read_contacts(
    df: pd.DataFrame,
    by_target: Mapping[str, Hashable],
    rej: _Rejections,
    *,
    region: str | None,
    strict: bool,
    email_policy: Literal["reject", "warn"],
    dayfirst: bool | None,
) -> _Contacts:
    """Check the number, then the address, then the date of birth (the fixed order)."""
    n = len(df)
    flagged = np.zeros(n, dtype=bool)
    has_contact = np.zeros(n, dtype=bool)
    phones: _Phones | None = None
    phone_col = by_target.get("mobileNumber")
    if phone_col is not None:
        phones = _normalize_column(df[phone_col], region, strict=strict)
        rej.add(is_given(phones.reason), phone_col, phones.reason)
        has_contact |= np.asarray(phones.digits.is_valid().to_numpy(zero_copy_only=False))
    email_col = by_target.get("emailAddress")
    emails: pa.Array | pa.ChunkedArray | None = None
    if email_col is not None:
        emails = clean_text(df[email_col])
        bad = email_problems(emails)
        present = np.asarray(emails.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        if email_policy == "reject":
            rej.add(bad, email_col, EMAIL_REASON)
            has_contact |= present & ~bad
        else:
            flagged = bad
            has_contact |= present
    dob_col = by_target.get("dateOfBirth")
    dob: pa.Array | None = None
    if dob_col is not None:
        dob, dob_reasons = clean_dates(df[dob_col], dayfirst)
        rej.add(is_given(dob_reasons), dob_col, dob_reasons)
    return _Contacts(phones, emails, dob, email_col, has_contact, flagged)


def _columns(
    df: pd.DataFrame, full: Mapping[Hashable, str | None], contacts: _Contacts, rej: _Rejections
) -> list[Column]:
    """The columns to send, in DataFrame order; other values' failures are rejections."""
    columns: list[Column] = []
    for col, target in full.items():
        if target is None:
            continue
        if target == "mobileNumber":
            assert contacts.phones is not None
            columns.append(Column(target, contacts.phones.digits))
        elif target == "emailAddress":
            assert contacts.emails is not None
            columns.append(Column(target, contacts.emails))
        elif target == "dateOfBirth":
            assert contacts.dob is not None
            columns.append(Column(target, contacts.dob))
        elif target in _TEXT_FIELDS:
            columns.append(Column(target, clean_text(df[col])))
        else:
            column, reasons = clean_dynamic(df[col], target)
            if reasons is not None:
                rej.add(is_given(reasons), col, reasons)
            columns.append(column)
    return columns


def _duplicates(
    df: pd.DataFrame, phones: _Phones, rej: _Rejections, phone_col: Hashable
) -> ObjArray:
    """Reject each open row whose number an earlier open row has; the label of that row."""
    n = len(df)
    duplicate_of: ObjArray = np.full(n, None, dtype=object)
    cand = np.flatnonzero(rej.open() & (phones.number_id >= 0))
    ids = phones.number_id[cand]
    _, first = np.unique(ids, return_index=True)
    # the first open row with the same number, for every open row with a number
    first_of_id = np.full(phones.distinct_numbers, -1, dtype=np.intp)
    first_of_id[ids[first]] = cand[first]
    first_pos = first_of_id[ids]
    is_dup = first_pos != cand
    mask = np.zeros(n, dtype=bool)
    mask[cand[is_dup]] = True
    rej.add(mask, phone_col, DUPLICATE)
    duplicate_of[cand[is_dup]] = df.index[first_pos[is_dup]].to_numpy(dtype=object)
    return duplicate_of


def _assemble(
    df: pd.DataFrame,
    full: dict[Hashable, str | None],
    inferred: tuple[Hashable, ...],
    rows: _Rows,
) -> ImportPlan:
    """The plan: records of the rows left open, the rejected and flagged rows, the counts."""
    rej, contacts = rows.rejections, rows.contacts
    n = len(df)
    ok = rej.open()
    positions = np.flatnonzero(ok)
    rej_pos = np.flatnonzero(~ok)
    records = RecordSequence([c.take(positions) for c in rows.columns], len(positions))

    rejected = pd.DataFrame(
        {
            "column": pd.Series(rej.column_at(rej_pos), dtype=object),
            "value": pd.Series(rej.values_at(df, rej_pos), dtype=object),
            "reason": pd.Series(rej.reason[rej_pos], dtype="str"),
            "duplicate_of": label_series(rows.duplicate_of[rej_pos], df.index),
        }
    ).set_axis(df.index[rej_pos])

    email_col = contacts.email_column
    warn_pos = np.flatnonzero(contacts.flagged & ok)
    warned = pd.DataFrame(
        {
            "column": pd.Series([email_col] * len(warn_pos), dtype=object),
            "value": pd.Series(
                df[email_col].iloc[warn_pos].to_numpy(dtype=object)
                if email_col is not None
                else [],
                dtype=object,
            ),
            "reason": pd.Series([EMAIL_REASON] * len(warn_pos), dtype="str"),
        }
    ).set_axis(df.index[warn_pos])

    counts = Counter(rej.reason[rej_pos].tolist())
    phones = contacts.phones
    check: ObjArray = phones.check if phones is not None else np.full(n, None, dtype=object)
    summary = ImportSummary(
        rows=n,
        records=len(positions),
        rejected=len(rej_pos),
        rejected_by_reason=dict(counts.most_common()),
        warnings=len(warn_pos),
        inferred={c: str(full[c]) for c in inferred},
        unverified=int(np.count_nonzero(check[positions] == UNVERIFIED)),
    )
    return ImportPlan(
        records=records,
        index=df.index[positions],
        positions=positions,
        rejected=rejected,
        warnings=warned,
        mapping=full,
        inferred=inferred,
        summary=summary,
        source_index=df.index,
        rejected_positions=rej_pos,
        number_check=pd.Series(check, index=df.index, dtype=object),
    )
