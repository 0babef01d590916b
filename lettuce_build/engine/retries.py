"""Which of a pass's failed items are retried, and what a retry carries: the details of what its
earlier attempts were refused for (`EARLIER`), so that a stage can ask again without the
candidate a check refused (`Stage.earlier`): a plausibility check that refuses "Zig package"
for "Python package" would otherwise see the same pick from the same menu at every attempt.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from datasets import Dataset, Value

from lettuce_build.core.memory import pages_released
from lettuce_build.core.tables import values_at
from lettuce_build.engine.checks import FAILURE_COLUMNS
from lettuce_build.engine.columns import selected
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.records import FAILURE_BATCH, FailureRow, FailureRows, StageStats
from lettuce_build.engine.stage import EARLIER, Stage


@dataclass(frozen=True)
class RetryRun:
    """The stage run whose failures are weighed: its stage, statistics and completions."""

    stage: Stage
    stats: StageStats
    completions: Completions


def attempt_columns(rows: Dataset) -> list[str]:
    """The columns an attempt adds beside a stage's outputs, to drop once it is done with."""
    return [*FAILURE_COLUMNS, *([EARLIER] if EARLIER in rows.column_names else [])]


def retried(mapped: Dataset, retry: np.ndarray, *, fingerprint: str, stage: Stage) -> Dataset:
    """The rows of ``mapped`` at ``retry`` as their next attempt reads them: the stage's outputs
    and the attempt's columns dropped, the attempt's failure added to the item's `EARLIER`."""
    pending = selected(mapped, retry, fingerprint)
    details = [FailureRow.model_validate_json(raw).detail for raw in pending["_failure"]]
    before = pending[EARLIER] if EARLIER in pending.column_names else [None] * len(details)
    earlier = [json.dumps([*json.loads(was or "[]"), now]) for was, now in zip(before, details, strict=True)]
    pending = pending.remove_columns([*stage.outputs, *attempt_columns(pending)])
    added = f"{fingerprint}-earlier"
    return pending.add_column(EARLIER, earlier, feature=Value("string"), new_fingerprint=added)


def spent_failures(
    mapped: Dataset,
    failed_at: np.ndarray,
    *,
    run: RetryRun,
    last: bool,
    calls_used: Counter[str],
    failures: FailureRows,
) -> np.ndarray:
    """Of a pass's failed rows (``failed_at`` in ``mapped``), the ones spent (``last``: the
    stage's last pass) or not worth retrying join ``failures`` and the stage's reasons; the
    others' positions are returned, to retry. Read a batch at a time: a pass a million items
    failed makes no million rows at once."""
    stage, stats = run.stage, run.stats
    reasons: Counter[str] = Counter(stats.failure_reasons)
    column, at = mapped.data.column("_failure"), failed_at
    fresh = mapped.data.column("_fresh")
    if mapped._indices is not None:  # rows of a selection: where they lie in its table
        at = mapped._indices.column(0).take(pa.array(failed_at)).to_numpy()
    kept = np.zeros(len(at), dtype=bool)  # the rest are retried
    with pages_released(mapped):
        for start in range(0, len(at), FAILURE_BATCH):
            part = at[start : start + FAILURE_BATCH]
            freshly = values_at(fresh, part) if stage.retries_failures_on_rerun else []
            for offset, raw in enumerate(values_at(column, part)):
                row = FailureRow.model_validate_json(raw)
                spent = last
                if stage.retries_failures_on_rerun:  # cached failed attempts do not use up its calls
                    calls_used[row.key] += run.completions.counts_as_call(freshly[offset])
                    spent = spent or calls_used[row.key] >= stage.max_attempts
                if spent or not row.retryable:
                    kept[start + offset] = True
                    reasons[row.reason] += 1
    failures.add(mapped, at[kept])
    stats.failure_reasons = dict(reasons)
    return failed_at[~kept]
