"""Checks of a stage's outputs: each item a pass finished is judged by every check (a judge asked
through its own runner, with its own model and cache), and one a check rejects becomes a failure
of the stage, retried like any other. Also the failure columns every pass writes."""

from __future__ import annotations

import json
from typing import NamedTuple, Protocol

from datasets import Dataset, Value

from lettuce_build.engine.completions import Completions
from lettuce_build.engine.progress import StageBar
from lettuce_build.engine.records import FailureRow, Judgement, StageResult, StageStats
from lettuce_build.engine.stage import CheckStage, Stage
from lettuce_build.llm.protocol import PROVIDER_FAILURES

#: how much of a response a failure row keeps
RAW_EXCERPT_CHARS = 300

#: the columns a pass writes beside the stage's outputs
FAILURE_COLUMNS = {
    "_ok": Value("bool"),
    "_failure": Value("string"),  # a FailureRow as JSON, for failed rows
    "_fresh": Value("bool"),  # whether this attempt's answer came from the model, not the cache
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


def failure_of(stage: str, key: str, attempt: int, reason: str, detail: str, raw: str = "") -> FailureRow:
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
    """The checks of one stage run, with every verdict they gave and their statistics per pass."""

    def __init__(self, stage: Stage, checks: tuple[Check, ...] | list[Check]) -> None:
        self.stage = stage
        self.checks = checks
        self.judgements: list[Judgement] = []
        self.check_stats: list[StageStats] = []  # one entry per check and pass

    def judged(self, mapped: Dataset, attempt: int, fingerprint: str, bar: StageBar) -> Dataset:
        """One pass's results after its checks: each item the stage finished is judged by every
        check, and one that any check rejects (or that a judge could not judge) becomes a failure
        of the stage, with the verdict as its detail."""
        flags = mapped["_ok"][:]
        finished = mapped.select([i for i, ok in enumerate(flags) if ok], new_fingerprint=f"{fingerprint}-in")
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
                    failure.key, failure_of(self.stage.name, failure.key, attempt, reason, detail)
                )
            for key, raw in zip(result.ok["key"][:], result.ok["judgement"][:], strict=True):
                if raw is None:  # the check does not apply to this item
                    continue
                verdict = json.loads(raw)
                problem = check.stage.rejection(verdict)
                self.judgements.append(
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
                    failure = failure_of(self.stage.name, key, attempt, problem.reason, detail, raw)
                    rejected.setdefault(key, failure)
        if not rejected:
            return mapped
        bar.rejected(len(rejected))
        keys = mapped["key"][:]
        was = mapped["_failure"][:]
        now_ok = [ok and key not in rejected for ok, key in zip(flags, keys, strict=True)]
        now_failed = [
            rejected[key].model_dump_json() if ok and key in rejected else row
            for ok, key, row in zip(flags, keys, was, strict=True)
        ]
        mapped = mapped.remove_columns(["_ok", "_failure"])
        mapped = mapped.add_column("_ok", now_ok, new_fingerprint=f"{fingerprint}-ok", feature=Value("bool"))
        return mapped.add_column(
            "_failure", now_failed, new_fingerprint=f"{fingerprint}-failure", feature=Value("string")
        )
