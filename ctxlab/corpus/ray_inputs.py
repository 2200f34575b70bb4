"""A table of conversations read by Ray Data: Parquet or JSONL, local or in object storage.

With ``--ray``, a table corpus is read with Ray's own readers (``ray.data.read_parquet``,
``ray.data.read_json(lines=True)``), so ``s3://``, ``gs://`` and other filesystems that
pyarrow knows work, and the read runs on the cluster. Rows stream to the driver, which hashes
them and sends each as a task exactly as for a local table
(:func:`~ctxlab.corpus.inputs.row_source`), so a Parquet table gives the same sources, keys and
rows through either reader.

A table is one file, so its Parquet footer is read by one Ray Data footer reader: Ray Data's
Parquet reader otherwise starts ``RAY_DATA_PARQUET_FOOTER_NUM_ACTORS`` (32 by default) actors
for every read, each a worker process of its own, to spread the footers of a many-file dataset
over a cluster; for one footer, 31 of them only start (a Python process importing Ray and
pyarrow, each) and are killed. A value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ctxlab.corpus.inputs import Source, row_source

__all__ = ["RayTable"]

_FOOTER_READERS = "RAY_DATA_PARQUET_FOOTER_NUM_ACTORS"  # read when the read is planned


@contextmanager
def _one_footer_reader() -> Iterator[None]:
    """While a Parquet read is planned: one footer-reading actor, unless the user chose."""
    if _FOOTER_READERS in os.environ:
        yield
        return
    os.environ[_FOOTER_READERS] = "1"
    try:
        yield
    finally:
        os.environ.pop(_FOOTER_READERS, None)


class RayTable:
    """One table, read lazily by Ray Data (Ray must be initialized before use)."""

    def __init__(self, path: str, column: str = "messages") -> None:
        self.path = path
        self.column = column
        self.name = os.path.basename(path.rstrip("/")) or path

    def _dataset(self) -> Any:
        import ray.data

        if self.path.endswith(".parquet"):
            with _one_footer_reader():
                return ray.data.read_parquet(self.path)
        return ray.data.read_json(self.path, lines=True)

    def __len__(self) -> int:
        return int(self._dataset().count())

    def sources(self, *, carry_bytes: bool = True) -> Iterator[Source]:
        """Every row as a source with its conversation inline (``carry_bytes`` is implied)."""
        del carry_bytes
        for number, row in enumerate(self._dataset().iter_rows(), start=1):
            yield row_source(f"{self.name}:{number}", dict(row), number, self.column)
