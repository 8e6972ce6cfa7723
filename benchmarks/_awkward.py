"""The ``--data awkward`` table of bench_results.py: columns that break type prediction.

- ``score``: integers for its first 300,000 rows (3/4 of them below 400,000 rows), then
  text: a reader that predicts types from the first rows must notice late;
- ``contact``: E.164-like digits in a column not named like a phone, with a leading-zero
  national number now and then after the first rows (so it stays text);
- ``comment``: long free text with commas, pipes, tabs, quotes and line breaks;
- ``city``: thousands of distinct values (never a category);
- ``flag1``..``flag5``: sparse columns (about 1% filled).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

STRING = pd.StringDtype("pyarrow")
WORDS = ["yes", "no", "maybe", 'he said "ok"', "a,b", "x|y", "tab\there", "line\nbreak", "é😀"]


def awkward_chunks(rows: int, seed: int = 0, chunk_rows: int = 100_000) -> Iterator[pd.DataFrame]:
    """The awkward table in chunks of text columns (``None`` = missing)."""
    rng = np.random.default_rng(seed)
    switch = min(300_000, rows * 3 // 4)
    for start in range(0, rows, chunk_rows):
        n = min(chunk_rows, rows - start)
        index = np.arange(start, start + n)
        score = rng.integers(0, 1_000_000, n).astype(str).astype(object)
        late = index >= switch
        score[late] = [f"n/a {i}" for i in index[late]]
        contact = (447_700_000_000 + rng.integers(0, 999_999, n)).astype(str).astype(object)
        national = (index > switch // 2) & (rng.random(n) < 0.01)
        contact[national] = ["07700" + c[-6:] for c in contact[national]]
        lengths = rng.integers(20, 600, n)
        comment = [
            " ".join(WORDS[(i + k) % len(WORDS)] for k in range(length // 8))
            for i, length in zip(index, lengths, strict=True)
        ]
        city = [f"City {c}" for c in rng.integers(0, 5_000, n)]
        frame = {
            "respondentId": [f"R{i:09d}" for i in index],
            "score": score,
            "contact": contact,
            "comment": comment,
            "city": city,
        }
        for k in range(1, 6):
            filled = rng.random(n) < 0.01
            frame[f"flag{k}"] = [str(k) if f else None for f in filled]
        yield pd.DataFrame({name: pd.array(v, dtype=STRING) for name, v in frame.items()})
