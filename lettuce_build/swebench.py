"""Loading SWE-bench instances from local JSONL/parquet files or a Hugging Face dataset id.

Both the full upstream schema and five-field files (instance_id, repo,
base_commit, problem_statement, patch) load; each consumer names the columns
it needs and gets a clear error listing the ones that are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lettuce_build.tables import TableError, read_table


class InstanceLoadError(TableError):
    """An instances file or dataset that cannot be used, with where and why."""


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
        rows = [row for _, row in read_table(path)]
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
