"""Checks of a stage's outputs: each item a pass finished is judged by every check (a judge asked
through its own runner, with its own model and cache), and one a check rejects becomes a failure
of the stage, retried like any other. Also the failure columns every pass writes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Dataset, Value

from lettuce_build.core.memory import pages_released
from lettuce_build.engine.columns import arrow_column
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.progress import StageBar
from lettuce_build.engine.records import FailureRow, Judgement, StageResult, StageStats
from lettuce_build.engine.stage import CheckStage, Stage
from lettuce_build.engine.verdicts import VerdictLog
from lettuce_build.llm.protocol import PROVIDER_FAILURES

#: how much of a response a failure row keeps
RAW_EXCERPT_CHARS = 300

#: verdicts read from a check's results at a time
VERDICT_BATCH = 1000

#: the columns a pass writes beside the stage's outputs
FAILURE_COLUMNS = {
    "_ok": Value("bool"),
    "_failure": Value("string"),  # a FailureRow as JSON, for failed rows
    "_fresh": Value("bool"),  # whether this attempt's answer came from the model, not the cache
    "_asked": Value("bool"),  # whether the stage asked about the item at all (or passed it through)
}


class CheckRunner(Protocol):
    """What a check is asked through: a `Runner` (engine/runner.py) with the judge's model and cache."""

    completions: Completions

    def run(self, dataset: Dataset, stage: Stage) -> StageResult: ...


class Check(NamedTuple):
    """A check of a stage's outputs, asked through its own runner (a judge's model and cache)."""

    stage: CheckStage
    runner: CheckRunner
    #: what its statistics are recorded as (two judges of one stage need two names)
    name: str


def failure_of(stage: str, key: str, *, attempt: int, reason: str, detail: str, raw: str = "") -> FailureRow:
    """A failure row of ``stage`` that no completion of its own explains (a check, a given value)."""
    return FailureRow(
        key=key,
        stage=stage,
        reason=reason,
        detail=detail,
        attempt=attempt,
        raw_excerpt=raw[:RAW_EXCERPT_CHARS],
    )


class Judging:
    """The checks of one stage run, with their statistics per pass."""

    def __init__(self, stage: Stage, checks: Sequence[Check], verdicts: VerdictLog | None = None) -> None:
        self.stage = stage
        self.checks = checks
        #: where each verdict is written as it is given (none: they are not kept)
        self.verdicts = verdicts
        self.check_stats: list[StageStats] = []  # one entry per check and pass

    def judged(self, mapped: Dataset, attempt: int, fingerprint: str, bar: StageBar) -> Dataset:
        """One pass's results after its checks: each item the stage finished is judged by every
        check, and one that any check rejects (or that a judge could not judge) becomes a failure
        of the stage, with the verdict as its detail. Columns are read a batch of rows at a
        time and rewritten by Arrow: a pass of a million items makes no Python list of them."""
        flags = arrow_column(mapped, "_ok").to_numpy(zero_copy_only=False).astype(bool)
        finished = mapped.select(np.flatnonzero(flags), new_fingerprint=f"{fingerprint}-in")
        if len(finished) == 0:
            return mapped
        finished = finished.remove_columns(list(FAILURE_COLUMNS))
        rejected: dict[str, FailureRow] = {}
        for check in self.checks:
            result = check.runner.run(finished, check.stage)
            self.check_stats.append(result.stats.model_copy(update={"name": check.name}))
            for failure in result.failures:  # the judge could not judge, every attempt
                detail = f"{check.name}: {failure}"
                # a provider that failed the judge's request is said as such, as for any request;
                # an answer the judge gave and that could not be read is the judge's failure
                reason = failure.reason if failure.reason in PROVIDER_FAILURES else "judge_failed"
                rejected.setdefault(
                    failure.key,
                    failure_of(self.stage.name, failure.key, attempt=attempt, reason=reason, detail=detail),
                )
            verdicts = result.ok.select_columns(["key", "judgement"]).iter(batch_size=VERDICT_BATCH)
            with pages_released(result.ok):  # read once: a million verdicts' pages need not stay
                for batch in verdicts:
                    for key, raw in zip(batch["key"], batch["judgement"], strict=True):
                        if raw is not None:  # None: the check does not apply to this item
                            self._verdict(check, key, raw=raw, attempt=attempt, rejected=rejected)
        if not rejected:
            return mapped
        bar.rejected(len(rejected))
        return _rejected(mapped, rejected, fingerprint)

    def _verdict(
        self, check: Check, key: str, *, raw: str, attempt: int, rejected: dict[str, FailureRow]
    ) -> None:
        """One verdict of ``check``: kept in the log, and a failure of the stage when it rejects."""
        verdict = json.loads(raw)
        problem = check.stage.rejection(verdict)
        if self.verdicts is not None:
            self.verdicts.add(
                Judgement(
                    key=key,
                    stage=self.stage.name,
                    check=check.name,
                    judge=check.runner.completions.model_id,
                    attempt=attempt,
                    passed=problem is None,
                    verdict=verdict,
                )
            )
        if problem is not None:
            detail = f"{check.name}: {problem.detail}"
            failure = failure_of(
                self.stage.name, key, attempt=attempt, reason=problem.reason, detail=detail, raw=raw
            )
            rejected.setdefault(key, failure)


def _rejected(mapped: Dataset, rejected: dict[str, FailureRow], fingerprint: str) -> Dataset:
    """``mapped`` with the items its checks rejected failed: ``_ok`` false and their failure row
    in ``_failure`` (an item that had failed already keeps its own). An item the stage passed
    through is not retried: no new attempt changes what no model made (seen: one question
    scored and refused six times)."""
    keys = pa.array(list(rejected), pa.string())
    ok = arrow_column(mapped, "_ok")
    where = pc.index_in(arrow_column(mapped, "key"), value_set=keys)  # null: not rejected
    now_rejected = pc.and_(ok, pc.is_valid(where))
    passed = pc.and_(now_rejected, pc.invert(arrow_column(mapped, "_asked")))
    for key in pc.filter(arrow_column(mapped, "key"), passed).to_pylist():
        rejected[key] = rejected[key].model_copy(update={"retryable": False})
    rows = pa.array([failure.model_dump_json() for failure in rejected.values()], pa.string())
    now_ok = pc.and_(ok, pc.invert(now_rejected))
    now_failed = pc.if_else(now_rejected, pc.take(rows, where), arrow_column(mapped, "_failure"))
    mapped = mapped.remove_columns(["_ok", "_failure"])
    mapped = mapped.add_column("_ok", now_ok, new_fingerprint=f"{fingerprint}-ok", feature=Value("bool"))
    return mapped.add_column(
        "_failure", now_failed, new_fingerprint=f"{fingerprint}-failure", feature=Value("string")
    )
