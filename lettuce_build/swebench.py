"""Loading SWE-bench instances from local JSONL/parquet files or a Hugging Face dataset id.

Both the full upstream schema and five-field files (instance_id, repo,
base_commit, problem_statement, patch) load; each consumer names the columns
it needs and gets a clear error listing the ones that are missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq


class InstanceLoadError(ValueError):
    """An instances file or dataset that cannot be used, with where and why."""


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise InstanceLoadError(f"{path}:{number}: not valid UTF-8 ({err.reason})") from err
            except json.JSONDecodeError as err:
                raise InstanceLoadError(
                    f"{path}:{number}: not one JSON object (truncated?): {err.msg} at column {err.colno}"
                ) from err
            if not isinstance(row, dict):
                raise InstanceLoadError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            rows.append(row)
    return rows


def _read_hub(dataset_id: str, split: str) -> list[dict[str, Any]]:
    from datasets import load_dataset

    return load_dataset(dataset_id, split=split).to_list()


def load_instance_rows(
    source: str | Path, required: Sequence[str], split: str = "test"
) -> list[dict[str, Any]]:
    """Rows of a local ``.jsonl``/``.json``/``.parquet`` file, or of a Hub dataset id.

    Every row must have the ``required`` columns; the error lists the missing
    ones and the first row that lacks them. Values are not checked here: a
    consumer counts and reports rows whose values it cannot use.
    """
    path = Path(source)
    if path.exists():
        if path.suffix in {".jsonl", ".json"}:
            rows = _read_jsonl(path)
        elif path.suffix == ".parquet":
            rows = pq.read_table(path).to_pylist()
        else:
            raise InstanceLoadError(f"{path}: expected a .jsonl or .parquet file")
    elif "/" in str(source) and not str(source).startswith((".", "/")):
        rows = _read_hub(str(source), split)
    else:
        raise InstanceLoadError(f"{source}: no such file, and not a Hugging Face dataset id (org/name)")

    for index, row in enumerate(rows):
        missing = [column for column in required if column not in row]
        if missing:
            raise InstanceLoadError(
                f"{source}: row {index} lacks required column(s) {missing}; "
                f"it has {sorted(row)}; required: {list(required)}"
            )
    return rows
