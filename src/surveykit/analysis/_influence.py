"""Linearised (influence) values of several estimates at once, kept in factored form.

Design-based standard errors come from the influence values ``x`` (one row per respondent,
one column per estimate): the estimate's error is, to first order, the total of ``x``
(R's ``survey`` calls them estimating functions and passes them to ``svyrecvar``). A mean
by 90 domains has 90 columns, almost all zero in any row, and a proportion of ``L`` options
has ``L`` columns that are an indicator minus a constant. Written out, ``x`` would be a
rows x columns matrix (720 MB for a million rows and 90 domains); here it stays a sum of
terms

    x = sum over terms t of  r_t[:, None] * (A_t @ M_t)

where ``r_t`` is a value per row, ``A_t`` a basis (an integer code per row, meaning the
one-hot matrix of those codes, or a small dense matrix such as a regression's model matrix)
and ``M_t`` a small coefficient matrix (``None`` for the identity). Everything the variance
needs is linear in ``x``: totals per PSU, and the sums per calibration level that
calibration subtracts. Each is a ``np.bincount`` over rows per term, then small matrix
products; no rows x estimates matrix is ever made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Basis:
    """The ``A`` of a term: one-hot ``codes`` or a dense ``matrix``.

    Codes are ``0..size-1``, and ``size`` itself for a row with no level (a bin that is
    counted and dropped, so no row is ever masked out of a pass).
    """

    size: int
    codes: IntArray | None = None
    matrix: FloatArray | None = None

    @staticmethod
    def one_hot(codes: IntArray, size: int) -> Basis:
        """The one-hot basis of ``codes`` (each in ``0..size-1``, or ``size`` for none)."""
        return Basis(size, codes=np.asarray(codes, dtype=np.int64))

    @staticmethod
    def dense(matrix: FloatArray) -> Basis:
        """A dense basis (rows x columns)."""
        matrix = np.asarray(matrix, dtype=np.float64)
        return Basis(matrix.shape[1], matrix=matrix)

    @staticmethod
    def constant() -> Basis:
        """One level that every row is at (a term whose row values are 0 where it is none)."""
        return Basis(1)

    @property
    def is_constant(self) -> bool:
        """Whether every row is at the one level (:meth:`constant`)."""
        return self.codes is None and self.matrix is None


@dataclass(frozen=True)
class Term:
    """One term ``r[:, None] * (A @ M)`` of the influence values."""

    row: FloatArray
    basis: Basis
    coef: FloatArray | None = None  # None: the identity (basis size == number of estimates)

    def width(self) -> int:
        """The number of estimates (columns) the term has."""
        return self.basis.size if self.coef is None else int(self.coef.shape[1])


@dataclass
class Influence:
    """The influence values of ``k`` estimates, as a sum of terms."""

    k: int
    terms: list[Term] = field(default_factory=list)

    def add(self, row: FloatArray, basis: Basis, coef: FloatArray | None = None) -> None:
        """Append the term ``row * (basis @ coef)``."""
        term = Term(np.asarray(row, dtype=np.float64), basis, coef)
        if term.width() != self.k:
            raise ValueError(f"a term with {term.width()} columns in an influence of {self.k}")
        self.terms.append(term)

    def sums(self, groups: Basis, weight: FloatArray | None = None) -> FloatArray:
        """``groups.T @ (weight * x)``: per level of ``groups``, the weighted sums (levels x k)."""
        out = np.zeros((groups.size, self.k))
        for term in self.terms:
            row = term.row if weight is None else term.row * weight
            cross = cross_sums(groups, term.basis, row)
            out += cross if term.coef is None else cross @ term.coef
        return out

    def block(self, start: int, stop: int) -> FloatArray:
        """Rows ``start:stop`` of the rows x k matrix (a slice of :meth:`dense`)."""
        out = np.zeros((stop - start, self.k))
        for term in self.terms:
            basis = term.basis
            part = Basis(
                basis.size,
                codes=None if basis.codes is None else basis.codes[start:stop],
                matrix=None if basis.matrix is None else basis.matrix[start:stop],
            )
            out += term.row[start:stop, None] * expand(part, term.coef, stop - start)
        return out

    def dense(self) -> FloatArray:
        """The rows x k matrix itself (for small data and tests)."""
        n = len(self.terms[0].row) if self.terms else 0
        out = np.zeros((n, self.k))
        for term in self.terms:
            out += term.row[:, None] * expand(term.basis, term.coef, n)
        return out


def expand(basis: Basis, coef: FloatArray | None, n: int) -> FloatArray:
    """``A @ M`` as a rows x columns matrix."""
    if basis.matrix is not None:
        return basis.matrix if coef is None else basis.matrix @ coef
    if basis.is_constant:
        one = np.ones((1, 1)) if coef is None else coef
        return np.asarray(np.broadcast_to(one, (n, one.shape[1])).copy(), dtype=np.float64)
    assert basis.codes is not None
    width = basis.size if coef is None else coef.shape[1]
    if coef is None:
        padded = np.vstack([np.eye(basis.size), np.zeros((1, basis.size))])
    else:
        padded = np.vstack([coef, np.zeros((1, width))])
    return np.asarray(padded[basis.codes], dtype=np.float64)


def cross_sums(left: Basis, right: Basis, row: FloatArray) -> FloatArray:
    """``left.T @ diag(row) @ right``: a (left levels x right levels) table of sums."""
    if right.is_constant or left.is_constant:
        other, flip = (left, False) if right.is_constant else (right, True)
        if other.is_constant:
            table = np.array([[float(row.sum())]])
        elif other.codes is not None:
            sums = np.bincount(other.codes, weights=row, minlength=other.size + 1)
            table = np.asarray(sums[: other.size], dtype=np.float64)[:, None]
        else:
            assert other.matrix is not None
            table = np.asarray(other.matrix.T @ row, dtype=np.float64)[:, None]
        return table.T if flip else table
    if left.codes is not None and right.codes is not None:
        width = right.size + 1
        cells = left.codes * width + right.codes
        table = np.bincount(cells, weights=row, minlength=(left.size + 1) * width)
        return np.asarray(table, dtype=np.float64).reshape(left.size + 1, width)[
            : left.size, : right.size
        ]
    if left.codes is not None:
        assert right.matrix is not None
        return _by_codes(left.codes, left.size, right.matrix * row[:, None])
    if right.codes is not None:
        assert left.matrix is not None
        return _by_codes(right.codes, right.size, left.matrix * row[:, None]).T
    assert left.matrix is not None and right.matrix is not None
    return np.asarray((left.matrix * row[:, None]).T @ right.matrix, dtype=np.float64)


def _by_codes(codes: IntArray, size: int, values: FloatArray) -> FloatArray:
    """Per code the column sums of ``values`` (size x columns); code ``size`` is dropped."""
    out = np.zeros((size, values.shape[1]))
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(codes, weights=values[:, j], minlength=size + 1)[:size]
    return out
