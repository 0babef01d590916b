"""Reading input tables (JSONL, parquet) with errors that name the file, the line and the column."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lettuce_build.errors import LettuceError


class TableError(LettuceError, ValueError):
    """An input file that cannot be read as the table it should be, with where and why."""


def read_jsonl(path: Path, required: Sequence[str] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) per non-empty line; a malformed line or a missing column stops with its place."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise TableError(
                    f"{path}:{number}: not valid UTF-8 ({err.reason} at byte {err.start})"
                ) from err
            except json.JSONDecodeError as err:
                raise TableError(
                    f"{path}:{number}: not one JSON object per line (truncated?): {err.msg} "
                    f"at column {err.colno}"
                ) from err
            if not isinstance(row, dict):
                raise TableError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            missing = [c for c in required if c not in row]
            if missing:
                raise TableError(
                    f"{path}:{number}: missing column(s) {missing}; it has {sorted(row)}; "
                    f"required: {list(required)}"
                )
            yield number, row


def read_table(path: Path, required: Sequence[str] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a .jsonl/.json or .parquet file, checked for the required columns."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        missing = [c for c in required if c not in table.column_names]
        if missing:
            raise TableError(f"{path}: missing column(s) {missing}; it has {table.column_names}")
        yield from enumerate(table.to_pylist())
    elif path.suffix in {".jsonl", ".json"}:
        yield from read_jsonl(path, required)
    else:
        raise TableError(f"{path}: expected a .jsonl or .parquet file")
