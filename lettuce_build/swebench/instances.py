"""Loading SWE-bench instances from local JSONL/parquet files or a Hugging Face dataset id.

Both the full upstream schema and five-field files (instance_id, repo,
base_commit, problem_statement, patch) load; each consumer names the columns
it needs and gets a clear error listing the ones that are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lettuce_build.core.errors import InstanceLoadError
from lettuce_build.core.tables import read_input


def load_instance_rows(
    source: str | Path, required: Sequence[str], splits: Sequence[str] = ("test",)
) -> list[dict[str, Any]]:
    """Rows of a local ``.jsonl``/``.json``/``.parquet`` file, or of a Hub dataset id (its ``splits``).

    Every row must have the ``required`` columns; the error lists the missing
    ones and the first row that lacks them. Values are not checked here: a
    consumer counts and reports rows whose values it cannot use.
    """
    rows = list(read_input(str(source), hub_splits=splits))
    for index, row in enumerate(rows):
        missing = [column for column in required if column not in row]
        if missing:
            raise InstanceLoadError(
                f"{source}: row {index} lacks required column(s) {missing}; "
                f"it has {sorted(row)}; required: {list(required)}"
            )
    return rows
