"""The whole build as one list of steps, run in order over one `BuildState`.

`build_list` composes, from the stages a source declares, the list a build runs from end to
end, as datatrove's executor runs a visible list of pipeline steps: ``read`` (the input read,
chunked and screened in one streaming pass; a shard keeps its slice, a merge replays the
shards' items instead), one step per model stage (all run by one stage loop, which balances an
injecting stage), ``assemble`` (samples checked and split) and ``write`` (the dataset and Hub
folders). A dry run rehearses the same list up to its last model stage; `build --dry-run`
prints it. The steps (`BuildStep`) see the run context and the state, never the loop that calls them.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from lettuce_build.builds.running.context import RunContext
from lettuce_build.builds.running.stage_loop import LoopResult
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.items import WORK_DIR, StoredItems, prune
from lettuce_build.builds.storage.log import log
from lettuce_build.builds.storage.output import write_output
from lettuce_build.builds.storage.samples import ASSEMBLE_STAGE, Assembled, assemble
from lettuce_build.builds.storage.work import Replay, work_items
from lettuce_build.core.errors import SourceError
from lettuce_build.core.memory import give_back, release_read
from lettuce_build.engine.columns import selected
from lettuce_build.engine.records import StageStats
from lettuce_build.engine.stage import Stage
from lettuce_build.sources.base import Source, checks


@dataclass
class BuildState:
    """What the steps of one build hand on: set up before the first, filled in by each."""

    run: RunContext
    recipe: Recipe
    source: Source
    stages: list[Stage]
    replay: Replay | None = None
    #: when the run began: what the work folder holds from before it is pruned at the end
    started_at: float = field(default_factory=time.time)
    loaded: StoredItems | None = None
    result: LoopResult | None = None
    made: Assembled | None = None
    #: a dry run's: the model stages rehearse a seeded uniform sample of at most this many items
    #: (None: every item), and how many they did
    sample: int | None = None
    rehearsed: int | None = None

    def items(self) -> StoredItems:
        assert self.loaded is not None, "the read step runs first"
        return self.loaded


@dataclass
class Read:
    name: str = "read"

    def describe_for(self, recipe: Recipe, replay: Replay | None) -> str:
        if replay is not None:
            return f"replay the joined work items of {len(replay.sources)} shard(s)"
        what = f"{recipe.source} items from {recipe.input or 'its default input'}, screened"
        return f"{what}; shard {recipe.shard} keeps its slice" if recipe.shard else what

    def __call__(self, state: BuildState) -> None:
        run, recipe = state.run, state.recipe
        state.loaded = work_items(
            recipe,
            state.source,
            build=run.build,
            manifest=run.manifest,
            context_tokens=run.backend.info().context_tokens,
            replay=state.replay,
            sample=state.sample,
        )
        give_back()  # what reading the input freed
        loaded = state.items()
        if recipe.strict_input and loaded.skipped:
            raise SourceError(
                f"--strict-input: {sum(loaded.skipped.values())} row(s) of {recipe.input} cannot be "
                f"used ({dict(loaded.skipped)}); the first are named above and all in build.log; no "
                "model was asked anything"
            )
        log.info(
            "loaded %d documents into %d work items%s",
            loaded.documents,
            loaded.made,
            f"; skipped {loaded.skipped}" if loaded.skipped else "",
        )
        run.build.write_manifest(run.manifest)


@dataclass
class ModelStages:
    """Every model stage, in order, on one stage loop (one list entry per stage)."""

    name: str = "stages"

    def __call__(self, state: BuildState) -> None:
        items = state.items().items
        if state.sample is not None and len(items) > state.sample:  # a dry run's estimate
            picked = np.random.default_rng(state.recipe.seed).choice(len(items), state.sample, replace=False)
            items = selected(items, np.sort(picked), f"{items._fingerprint}-sample{state.sample}")
        state.rehearsed = len(items)
        state.result = LoopResult(done=items)
        if len(items) == 0:  # a shard may hold no item of a small build
            return
        judged = checks(state.stages) if state.run.judges else None
        state.result = state.run.loop.run(state.stages, state.source.prepare(items), judged)


@dataclass
class Assemble:
    name: str = ASSEMBLE_STAGE

    def __call__(self, state: BuildState) -> None:
        items, result, build = state.items().items, state.result, state.run.build
        assert result is not None
        done = state.source.finish(items, result.done) if len(items) else items
        made = assemble(state.source, done, build.path / WORK_DIR)
        build.record_stage(
            state.run.manifest,
            StageStats(
                name=ASSEMBLE_STAGE,
                prompt_version="-",
                items_in=made.samples + len(made.invalid),
                ok=made.samples,
                failed=len(made.invalid),
                failure_reasons=dict(Counter(f.reason for f in made.invalid)),
            ),
            made.invalid,
        )
        release_read(items, result.done)  # the pages of their files that balancing read
        # the finished rows are the splits' now: their index mappings and blank columns (a million
        # items: about 20 MB) need not stay through the outputs' write
        result.done = items
        give_back()  # what the stages freed, before the outputs are written
        state.made = made


@dataclass
class Write:
    name: str = "write"

    def __call__(self, state: BuildState) -> None:
        assert state.made is not None
        # always written: a build with no samples removes the outputs of the build before it.
        # The config is named for the source, as `push` publishes it
        write_output(state.made.splits, state.recipe.out, state.source.name)
        prune(state.run.build.path / WORK_DIR, state.started_at)  # what earlier runs left


#: the steps a build list holds
BuildStep = Read | ModelStages | Assemble | Write


@dataclass(frozen=True)
class BuildList:
    """A build's steps in the order they run, and the line each prints in a dry run."""

    steps: tuple[BuildStep, ...]
    lines: tuple[str, ...]

    def run(self, state: BuildState, *, until: type[BuildStep] | None = None) -> None:
        """Each step in order over ``state`` (``until``: stop before the first of that kind)."""
        for step in self.steps:
            if until is not None and isinstance(step, until):
                return
            step(state)


def run_steps(
    run: RunContext,
    recipe: Recipe,
    *,
    source: Source,
    stages: list[Stage],
    replay: Replay | None = None,
    until: type[BuildStep] | None = None,
    sample: int | None = None,
) -> tuple[BuildState, BuildList]:
    """The build's list, composed from ``recipe``'s source and stages, run in order in ``run``
    (``until``: stop before the first step of that kind, as a dry run stops at assembling;
    ``sample``: a dry run's, see `BuildState.sample`); the state the steps left, and the list."""
    state = BuildState(
        run=run,
        recipe=recipe,
        source=source,
        stages=stages,
        replay=replay,
        started_at=run.manifest.started,
        sample=sample,
    )
    steps = build_list(recipe, source, stages, replay)
    steps.run(state, until=until)
    return state, steps


def build_list(
    recipe: Recipe, source: Source, stages: list[Stage], replay: Replay | None = None
) -> BuildList:
    """The list ``recipe``'s build runs: read, its source's model stages, assemble, write."""
    read = Read()
    lines = [f"read: {read.describe_for(recipe, replay)}"]
    for stage in stages:
        how = "injects, balanced to the ratio" if stage.hallucinates else "asks the model"
        wave = " (a shard: its first wave only)" if stage.hallucinates and recipe.shard else ""
        lines.append(f"{stage.name}: {how}{wave}")
    lines += [
        f"{ASSEMBLE_STAGE}: samples checked against the schema and gates, split by document",
        f"write: the dataset and Hub folders in {recipe.out}",
    ]
    return BuildList(steps=(read, ModelStages(), Assemble(), Write()), lines=tuple(lines))
