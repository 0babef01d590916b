"""The one place stages are run: the stage loop.

The loop owns the order of stages and records each in the build folder; an injecting stage
(`Stage.hallucinates`) is balanced, so an item it fails on stays a clean sample; each stage's
checks (the judges of ``--verify``, the build's own model scoring its work) are asked inside
its success test. Stages never see the loop. Every run opens its loop from its run context
(`RunContext.stage_loop`, builds/running/context.py): a build and its dry run, a translation
and squeez's teacher phase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass

from datasets import Dataset
from pydantic import BaseModel, ConfigDict

from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.log import log
from lettuce_build.core import interrupts
from lettuce_build.core.errors import SourceError
from lettuce_build.core.memory import give_back
from lettuce_build.engine.balance import RatioReport, balance
from lettuce_build.engine.checks import Check
from lettuce_build.engine.columns import duplicate_keys
from lettuce_build.engine.records import StageResult
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.stage import CheckStage, Stage
from lettuce_build.engine.verdicts import VerdictLog
from lettuce_build.stages.plausibility import PlausibilityCheck

#: the checks' verdicts of the last run, in the work folder (see engine/verdicts.py)
VERDICTS_FILE = "verdicts.jsonl"


class LoopResult(BaseModel):
    """What the stages made of the items: the finished rows, how the hallucination ratio came out
    (when a stage injected), and the time spent in the model backend."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    done: Dataset
    ratio: RatioReport | None = None
    backend_seconds: float = 0.0
    #: where the checks' verdicts were written (``--verify``, plausibility); none: nothing ran
    verdicts: VerdictLog | None = None


@dataclass
class StageLoop:
    """Runs stages in order over work items on one runner, recording each stage in the build folder.

    An injecting stage (`Stage.hallucinates`) is run by `balance` instead: every item stays a sample
    and exactly the requested share of each split comes out hallucinated, when enough
    injections succeed (within ``max_waves`` of balancing, when set: see balance.py).
    """

    build: BuildDir
    manifest: Manifest
    runner: Runner
    ratio: float | None = None
    _: KW_ONLY
    max_waves: int | None = None
    #: one runner per judge; each asks a stage's check (`run`'s ``checks``) about the items that
    #: stage finishes
    judges: Sequence[Runner] = ()
    #: asked of the build's own model about every hallucinating stage's spans
    plausibility: PlausibilityCheck | None = None
    verdicts: VerdictLog | None = None

    def run(
        self, stages: Sequence[Stage], items: Dataset, checks: Mapping[str, CheckStage] | None = None
    ) -> LoopResult:
        """Run ``stages`` in order; ``checks``: per stage name, the check each judge asks."""
        # the cache and the kept passes know an item by its key. Checked here, once: a stage's
        # items are some of the ones before it (read at every stage and wave, a million items'
        # keys were a build's peak of memory)
        if shared := duplicate_keys(items):
            raise SourceError(f"work items share keys, e.g. {shared[:3]}: each item needs a key of its own")
        result = LoopResult(done=items, verdicts=self.verdicts)
        for stage in stages:
            log.info("stage %s starts: %d items", stage.name, len(result.done))
            judged = self._checks((checks or {}).get(stage.name))
            if stage.hallucinates and self.plausibility is not None:
                judged.append(Check(self.plausibility, self.runner, self.plausibility.name))
            if self.plausibility is not None and (own := stage.scored_by()) is not None:
                judged.append(Check(own, self.runner, own.name))  # the same switch: the model scores its work
            outcome: StageResult
            if stage.hallucinates:
                if self.ratio is None:
                    raise ValueError(f"stage {stage.name} injects: the loop needs the ratio to balance")
                outcome = balance(
                    self.runner, stage, result.done, self.ratio, max_waves=self.max_waves, checks=judged
                )
                result.ratio = outcome.report
            else:
                outcome = self.runner.run(result.done, stage, judged)
            self.build.record_stage(self.manifest, outcome.stats, outcome.failures)
            for stats in outcome.checks:  # a judge's own failures are its stage's (judge_failed)
                self.build.record_stage(self.manifest, stats, [])
            interrupts.check()  # a stop whose signal came while Python dropped its exception
            give_back()  # what the stage freed: the next one starts from less (a million items: tens of MB)
            result.backend_seconds += outcome.stats.backend_seconds
            result.backend_seconds += sum(stats.backend_seconds for stats in outcome.checks)
            result.done = outcome.ok
            del outcome  # its positions of every row finished (8 MB a million) through the next stage
        return result

    def _checks(self, check: CheckStage | None) -> list[Check]:
        """``check`` asked by every judge: the first's statistics under its name, the others' numbered."""
        if check is None:
            return []
        names = [check.name, *(f"{check.name}_{n}" for n in range(2, len(self.judges) + 1))]
        return [Check(check, runner, name) for runner, name in zip(self.judges, names, strict=True)]
