"""Results straight to Parquet, one row group per chunk, for results larger than memory."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from surveykit._util.atomic import atomic_path
from surveykit.results._read import read_results
from surveykit.results._source import Source


def _schema(frame: pd.DataFrame) -> pa.Schema:
    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    fields = []
    for field in schema:
        if pa.types.is_dictionary(field.type):
            # A fixed index type: chunks with more categories must fit the same schema.
            field = field.with_type(pa.dictionary(pa.int32(), pa.large_string()))
        elif pa.types.is_string(field.type):
            field = field.with_type(pa.large_string())
        fields.append(field)
    return pa.schema(fields, metadata=schema.metadata)


def results_to_parquet(
    source: Source,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    chunksize: int = 250_000,
    header: bool = True,
    names: Sequence[str] | None = None,
    dtypes: Mapping[str, Any] | None = None,
    max_bytes: int | None = None,
    compression: str = "zstd",
) -> int:
    """Parse results chunk by chunk into a Parquet file, one row group per chunk.

    ``source`` is anything :func:`read_results` accepts; only one chunk of rows is held
    in memory at a time. Column types are decided on the first chunk (pass ``dtypes`` to
    fix them). Read the file back with ``pandas.read_parquet(path)``.

    The file is written under a temporary name beside ``path`` and moved into place only
    when every row is in: a download or parse that fails part-way raises and leaves an
    existing ``path`` as it was.

    Returns:
        The number of rows written. Empty results write a file with no row groups.
    """
    with atomic_path(path) as temporary:
        return _write(
            source,
            temporary,
            format=format,
            chunksize=chunksize,
            header=header,
            names=names,
            dtypes=dtypes,
            max_bytes=max_bytes,
            compression=compression,
        )


def _write(
    source: Source,
    path: str | os.PathLike[str],
    *,
    format: str | None,
    chunksize: int,
    header: bool,
    names: Sequence[str] | None,
    dtypes: Mapping[str, Any] | None,
    max_bytes: int | None,
    compression: str,
) -> int:
    rows = 0
    writer: pq.ParquetWriter | None = None
    schema: pa.Schema | None = None
    try:
        for frame in read_results(
            source,
            format,
            header=header,
            names=names,
            chunksize=chunksize,
            dtypes=dtypes,
            max_bytes=max_bytes,
        ):
            if schema is None:
                schema = _schema(frame)
                writer = pq.ParquetWriter(os.fspath(path), schema, compression=compression)
            assert writer is not None
            table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
            writer.write_table(table, row_group_size=max(1, len(frame)))
            rows += len(frame)
        if writer is None:
            pq.write_table(pa.table({}), os.fspath(path), compression=compression)
    finally:
        if writer is not None:
            writer.close()
    return rows
