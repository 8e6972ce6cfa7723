"""Hadamard matrices for balanced repeated replication, as R's ``survey::hadamard``.

BRR's replicates are the columns of a Hadamard matrix (entries 0/1 here, as R writes
them), one row per stratum after the first. Which matrix R picks for ``n`` strata decides
the replicates themselves, and so a ratio's or a mean's BRR variance (only a linear
statistic's is the same for every balanced choice), so this follows R's ``hadamard(n)``
step by step: one of its four stored matrices (orders 4, 16, 28, 36; copied from
``survey:::hadamard.list``, survey 4.1-1) when it fits, else a Paley matrix from a prime
``p = 3 (mod 4)``, or a stored matrix doubled (``rbind(cbind(H, H), cbind(H, 1 - H))``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

IntMatrix = npt.NDArray[np.int64]

_STORED: tuple[tuple[str, ...], ...] = (
    (
        "1111",
        "1010",
        "1100",
        "1001",
    ),
    (
        "1111111111111111",
        "1010101010101010",
        "1100110011001100",
        "1001100110011001",
        "1111000011110000",
        "1010010110100101",
        "1100001111000011",
        "1001011010010110",
        "1111111100000000",
        "1010101001010101",
        "1100110000110011",
        "1001100101100110",
        "1111000000001111",
        "1010010101011010",
        "1100001100111100",
        "1001011001101001",
    ),
    (
        "1111111111111111111111111111",
        "1001110001110001110001111000",
        "1000001111001101001101111000",
        "1000001110110010111001100110",
        "1001101000001111100011010110",
        "1001010100101100010110101110",
        "1000110011010010001110011110",
        "0101100010101010011111110000",
        "0100010110110101100111010100",
        "0100011011001011110010101100",
        "0101011000010111011101001010",
        "0100101101100100111010011010",
        "0101100101011001101100100110",
        "0010110100011110101011101000",
        "0011011001100110101100110100",
        "0010101100111011010100011100",
        "0011000111010111010010110010",
        "0011001011111000100111001010",
        "0010110011101101011001000110",
        "1110101001010100010111100100",
        "1111000101100011001011001100",
        "1111000010011100111000011100",
        "1110010101001010110101010010",
        "1110011000111001001010110010",
        "1110100010100111100100101010",
        "1101111111111110000000000000",
        "1011111110000001111110000000",
        "0111111110000000000001111110",
    ),
    (
        "111111111111111111111111111111111111",
        "010111000111110111001000010101100100",
        "101110001111101110010000101011001000",
        "011100011111011100100001010110010010",
        "111000111110111001000010101100100100",
        "110001111101110010000101011001001010",
        "100011111011100100001010110010010110",
        "000111110111001000010101100100101110",
        "001111101110010000101011001001011100",
        "011111011100100001010110010010111000",
        "111110111001000010101100100101110000",
        "111101110010000101011001001011100010",
        "111011100100001010110010010111000110",
        "110111001000010101100100101110001110",
        "101110010000101011001001011100011110",
        "011100100001010110010010111000111110",
        "111001000010101100100101110001111100",
        "110010000101011001001011100011111010",
        "100100001010110010010111000111110110",
        "001000010101100100101110001111101110",
        "010000101011001001011100011111011100",
        "100001010110010010111000111110111000",
        "000010101100100101110001111101110010",
        "000101011001001011100011111011100100",
        "001010110010010111000111110111001000",
        "010101100100101110001111101110010000",
        "101011001001011100011111011100100000",
        "010110010010111000111110111001000010",
        "101100100101110001111101110010000100",
        "011001001011100011111011100100001010",
        "110010010111000111110111001000010100",
        "100100101110001111101110010000101010",
        "001001011100011111011100100001010110",
        "010010111000111110111001000010101100",
        "100101110001111101110010000101011000",
        "001011100011111011100100001010110010",
    ),
)
_SIZES = (4, 16, 28, 36)
_LARGEST_PRIME = 7919  # R's paley() knows the primes p = 3 (mod 4) up to this one


def _stored(index: int) -> IntMatrix:
    return np.array([[int(c) for c in row] for row in _STORED[index]], dtype=np.int64)


def _doubled(h: IntMatrix) -> IntMatrix:
    return np.block([[h, h], [h, 1 - h]])


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


def _primes() -> list[int]:
    """R's ``small.primes`` of ``paley()``: every prime ``p = 3 (mod 4)`` to 7919."""
    return [p for p in range(3, _LARGEST_PRIME + 1, 4) if _is_prime(p)]


def _paley_of_prime(p: int) -> IntMatrix:
    """R's ``paley(prime=p)``: order ``p + 1``, 1 on the quadratic residues' cells."""
    cells = np.add.outer(np.arange(p), np.arange(p)) % p
    residues = {0, 1} | {(i * i) % p for i in range(2, (p - 1) // 2 + 1)}
    inner = np.where(np.isin(cells, sorted(residues)), 0, 1)
    out = np.ones((p + 1, p + 1), dtype=np.int64)
    out[1:, 1:] = inner
    return out


def _paley(n: int, largest: int | None = None) -> IntMatrix | None:
    """R's ``paley(n, nmax)``: a Paley matrix of order at least ``n + 1`` (None: none)."""
    nmax = 2 * n if largest is None else largest
    primes = _primes()
    nceil = nn = n + 4 - n % 4
    if n % 4 + 4 == n % 8:
        while nn % 8 == 0:
            nn //= 2
        if nn - 1 in primes:
            m = _paley_of_prime(nn - 1)
            while nn < nceil:
                m = _doubled(m)
                nn *= 2
            return m
    if n > primes[-1]:
        return None
    p = min(q for q in primes if q >= n)
    if p + 1 > nceil + 4 and nceil + 4 < nmax:
        return _paley(nceil + 3)
    if p > nmax:
        return None
    return _paley_of_prime(p)


def hadamard(n: int) -> IntMatrix:
    """R's ``hadamard(n)``: a 0/1 Hadamard matrix with more than ``n`` rows."""
    m = n - n % 4
    fits = [i for i, size in enumerate(_SIZES) if m < size <= m + 4]
    if fits:
        return _stored(min(fits))
    if all(m < size for size in _SIZES):
        return _stored(0)
    doublings = [max(0, math.ceil(math.log2((n + 1) / size))) for size in _SIZES]
    sizes = [size * 2**d for size, d in zip(_SIZES, doublings, strict=True)]
    best = min(range(len(sizes)), key=lambda i: sizes[i] - n)  # R's which.min: the first
    found = _paley(n, sizes[best]) if sizes[best] - n > 4 else None
    if found is not None:
        return found
    h = _stored(best)
    for _ in range(doublings[best]):
        h = _doubled(h)
    return h


__all__ = ["hadamard"]
