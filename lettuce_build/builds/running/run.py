"""A whole build: `run_build` is the path of every dataset build. It opens the build's run
context (builds/running/context.py: lock, log, manifest, cache, plan, models) and runs the
build's list of steps (builds/running/steps.py: read, the source's model stages, assemble,
write) in order. Stages never see the loop, and sources only produce items (see
sources/base.py). What the build is (local or Ray, a shard, a merge's replay) is decided once,
in the run's `ExecutionPlan`, before the first step.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from datasets import DatasetDict
from pydantic import Field

from lettuce_build.builds.running.context import RunContext, open_build_run
from lettuce_build.builds.running.stages_of import build_stages, refreshed
from lettuce_build.builds.running.steps import run_steps
from lettuce_build.builds.settings.options import BuildCounts
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.settings.shards import Shard
from lettuce_build.builds.storage.folder import RunCost
from lettuce_build.builds.storage.log import log
from lettuce_build.builds.storage.work import Replay
from lettuce_build.core.memory import system_arrow_memory
from lettuce_build.core.schema import HallucinationSample
from lettuce_build.core.shortcuts import ShortcutReport, SpellingBaseline
from lettuce_build.llm.protocol import Backend
from lettuce_build.prompts import prompts_from
from lettuce_build.sources.registry import get_source
from lettuce_build.stages.judge import judge_report
from lettuce_build.stages.plausibility import plausibility_report
from lettuce_build.stages.question_fit import question_fit_report


class BuildSummary(BuildCounts):
    """A finished build: what it made (the manifest's counts), where, and how long it took."""

    source: str
    dataset: str
    out: Path
    failures: dict[str, dict[str, int]]
    seconds: float
    backend_seconds: float
    example: HallucinationSample | None = None
    #: set on a shard's summary: its slice, to be joined by `lettuce-build merge`
    shard: Shard | None = None
    #: with ``--error-types``: the spans made of each type asked for
    error_types: dict[str, int] = Field(default_factory=dict)
    #: the stages the build ran, in order
    stages: list[str] = Field(default_factory=list)
    #: what this run asked of the model, and every run into this folder so far
    cost: RunCost = Field(default_factory=RunCost)
    total_cost: RunCost = Field(default_factory=RunCost)
    runs: int = 1

    def counts(self) -> BuildCounts:
        return BuildCounts.model_validate(self.model_dump(include=set(BuildCounts.model_fields)))


def run_build(
    recipe: Recipe,
    backend: Backend | None = None,
    *,
    replay: Replay | None = None,
    judges: Sequence[Backend] | None = None,
    refresh: str | None = None,
) -> BuildSummary:
    """Build ``recipe`` into its ``out`` folder and return the summary: the dataset is in
    ``out/dataset`` and ``out/hub``, and the recipe as it ran (its stages, what the engine chose)
    in ``out/recipe.yaml``, which replays it. ``backend`` and ``judges`` replace the ones the
    recipe names; ``replay``: the work items to build instead of loading them (a merge: see
    `Replay`); ``refresh``: a stage to ask anew, with every stage after it, ignoring their cached
    answers.

    Re-running the same build resumes from the request cache; the manifest ends ``finished``,
    ``interrupted`` or ``failed`` with the error, never ``running`` (the run context's).
    """
    merged_from = replay.sources if replay else ()
    with prompts_from(recipe.prompts), system_arrow_memory():
        with open_build_run(recipe, merged_from=merged_from, backend=backend, judges=judges) as run:
            summary = _build(run, recipe, replay=replay, refresh=refresh)
        # what this run and every run into the folder asked, as the finished manifest counts it
        summary.cost, summary.total_cost = run.manifest.runs[-1], run.manifest.cost
        summary.runs = len(run.manifest.runs)
    recipe.write_as_ran(run.backend.info(), summary.stages)
    return summary


def _build(run: RunContext, recipe: Recipe, *, replay: Replay | None, refresh: str | None) -> BuildSummary:
    """The build's list of steps, run in order; its summary, recorded in the manifest."""
    started = time.perf_counter()
    backend, manifest = run.backend, run.manifest
    log.info(
        "build %s into %s on %s (%s), seed %d, limit %s",
        recipe.source,
        recipe.out,
        backend.model_id,
        backend.info().backend,
        recipe.seed,
        recipe.limit,
    )
    source = get_source(recipe.source)
    # checked before any input is read
    stages = build_stages(recipe, source, recipe.sampling, backend.model_id)
    manifest.cache_namespaces = refreshed(stages, manifest.cache_namespaces, refresh)
    if refresh:
        log.info("refreshing %s and the stages after it: %s", refresh, manifest.cache_namespaces)
    state, _ = run_steps(run, recipe, source=source, stages=stages, replay=replay)
    made, result, items = state.made, state.result, state.loaded
    assert made is not None and result is not None and items is not None
    samples = made.samples
    verdicts = result.verdicts or ()
    judges = run.judges
    summary = BuildSummary(
        source=recipe.source,
        dataset=source.dataset_name,
        out=recipe.out,
        documents=items.documents,
        items=len(items.items),
        skipped=items.skipped,
        by_split={split: len(rows) for split, rows in made.splits.items()},
        by_category=made.by_category,
        hallucinated=made.hallucinated,
        clean=samples - made.hallucinated,
        requested_ratio=recipe.ratio,
        achieved_ratio=made.hallucinated / samples if samples else 0.0,
        ratio=result.ratio,
        failures=run.build.failure_summary(),
        seconds=time.perf_counter() - started,
        backend_seconds=result.backend_seconds,
        judge=judge_report([j.model_id for j in judges], verdicts) if judges else None,
        plausibility=plausibility_report(verdicts),
        question_fit=question_fit_report(verdicts),
        example=made.example,
        shard=recipe.shard,
        error_types=_spans_by_type(made.splits, recipe.error_types),
        shortcuts=_shortcuts(made.splits),
        stages=[stage.name for stage in stages],
    )
    # set by name: a type checker knows the field only by its alias, ``yield``
    summary.yield_ = samples / len(items.items) if len(items.items) else 0.0
    manifest.counts = summary.counts()
    _log_made(summary)
    return summary


def _log_made(summary: BuildSummary) -> None:
    if summary.ratio is not None and (shortfall := summary.ratio.shortfall()):
        log.warning(shortfall)
    log.info(
        "made %d samples of %d work items (%s), %d hallucinated, in %.1f s",
        summary.hallucinated + summary.clean,
        summary.items,
        summary.by_split,
        summary.hallucinated,
        summary.seconds,
    )


def _shortcuts(splits: DatasetDict) -> ShortcutReport:
    """The spelling baseline over the samples (core/shortcuts.py), read a batch at a time."""
    baseline = SpellingBaseline()
    for split in splits.values():
        for batch in split.select_columns(["answer", "context", "labels"]).iter(batch_size=1000):
            for answer, context, labels in zip(
                batch["answer"], batch["context"], batch["labels"], strict=True
            ):
                spans = [(s["start"], s["end"], s["subcategory"] or s["category"]) for s in labels]
                baseline.add(answer, context, spans)
    return baseline.report()


def _spans_by_type(splits: DatasetDict, asked: Sequence[str]) -> dict[str, int]:
    """How many spans were made of each error type asked for (none asked: nothing to report)."""
    made = dict.fromkeys(asked, 0)
    for split in splits.values() if asked else []:
        for labels in split["labels"][:]:
            for span in labels:
                kind = f"{span['category']}/{span['subcategory']}"
                kind = kind if kind in made else span["category"]
                made[kind] = made.get(kind, 0) + 1
    return made
