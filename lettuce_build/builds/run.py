"""A whole build: `run_build` is the path of every dataset build: lock the build folder, load
the source's work items, run its stages through the stage loop (builds/stage_loop.py), assemble
and check samples, write the outputs and the manifest. Stages never see the loop, and sources
only produce items (see sources/base.py). What the build is (local or Ray, a shard, a merge's
replay) is decided once, in an `ExecutionPlan`, before the loop starts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from datasets import DatasetDict
from pydantic import Field

from lettuce_build.builds.folder import BuildDir, Manifest, RunCost
from lettuce_build.builds.items import WORK_DIR, prune
from lettuce_build.builds.log import build_log, log
from lettuce_build.builds.options import BuildCounts
from lettuce_build.builds.output import write_output
from lettuce_build.builds.plan import ExecutionPlan
from lettuce_build.builds.recipe import Recipe
from lettuce_build.builds.samples import ASSEMBLE_STAGE, assemble
from lettuce_build.builds.shards import Shard
from lettuce_build.builds.stage_loop import LoopResult, open_recipe_loop
from lettuce_build.builds.stages_of import build_stages, refreshed
from lettuce_build.builds.work import Replay, work_items
from lettuce_build.core.errors import SourceError
from lettuce_build.core.interrupts import Interrupted
from lettuce_build.core.memory import give_back, release_read, system_arrow_memory
from lettuce_build.core.schema import HallucinationSample
from lettuce_build.engine.completions import Spending
from lettuce_build.engine.records import StageStats
from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger
from lettuce_build.llm.protocol import Backend
from lettuce_build.prompts import prompts_from
from lettuce_build.sources.base import checks
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
    ``interrupted`` or ``failed`` with the error, never ``running``.
    """
    backend = backend or recipe.make_backend()
    if judges is None:
        judges = recipe.make_judges(backend) if recipe.verify else []
    with prompts_from(recipe.prompts):
        summary = _build(recipe, backend, replay, judges, refresh)
    recipe.write_as_ran(backend.info(), summary.stages)
    return summary


def _build(
    recipe: Recipe, model: Backend, replay: Replay | None, judges: Sequence[Backend], refresh: str | None
) -> BuildSummary:
    """The build under its lock and log, its manifest kept true whatever stops it."""
    build = BuildDir(recipe.out)
    plan = ExecutionPlan(
        shard=recipe.shard,
        replay=replay is not None,
        max_provider_failures=recipe.max_provider_failures,
        ray=recipe.ray_pool(),
    )
    backend = plan.engine(model)
    # a judge that is the build's own model is asked on the same engines
    judges = [backend if judge is model else judge for judge in judges]
    with build.lock(), build_log(build.path), system_arrow_memory():
        log.info(
            "build %s into %s on %s (%s), seed %d, limit %s",
            recipe.source,
            recipe.out,
            backend.model_id,
            backend.info().backend,
            recipe.seed,
            recipe.limit,
        )
        previous = build.previous_manifest()
        pricing = recipe.pricing()
        manifest = Manifest(
            source=recipe.source,
            backend=backend.info(),
            seed=recipe.seed,
            limit=recipe.limit,
            options=recipe,
            pricing=pricing,
            merged_from=replay.sources if replay else [],
        ).after(previous)
        spending = Spending(
            pricing=pricing,
            max_cost=recipe.max_cost,
            spent_before=previous.spent(pricing) if previous else 0.0,
        )
        plan = plan.model_copy(update={"spending": spending})
        judges = (list(judges) or [backend]) if recipe.verify else []
        manifest.judges = [judge.info() for judge in judges]
        try:
            return _run(recipe, plan, backend, build, manifest, replay, judges, refresh)
        except Interrupted as stop:  # Ctrl-C or SIGTERM: what was answered is kept, and said
            manifest.status = "interrupted"
            build.write_manifest(manifest)
            raise Interrupted(stop.signum, interrupted_line(build, manifest)) from None
        except BaseException as err:
            # whatever stopped the build (an error), the manifest never claims it is running
            manifest.status = "failed"
            manifest.error = f"{type(err).__name__}: {err}"[:500]
            build.write_manifest(manifest)
            log.error("build failed: %s", manifest.error)
            raise


def interrupted_line(build: BuildDir, manifest: Manifest) -> str:
    """What an interrupted build kept, in one line: the answers in its cache, the items its last
    finished stage finished, and the batches left running at a provider (``--batch``)."""
    cache = build.open_cache()
    try:
        answers = cache.stats().rows
    finally:
        cache.close()
    last = manifest.stages[-1] if manifest.stages else None
    finished = (
        f"{last.ok + last.passed_through} items finished stage {last.name}" if last else "no stage finished"
    )
    running = (
        len(BatchLedger(build.path / BATCHES_FILE).open()) if (build.path / BATCHES_FILE).exists() else 0
    )
    at_provider = (
        f"; {running} batch(es) left running at the provider, collected by the next run" if running else ""
    )
    log.warning("build interrupted: %d answers kept, %s%s", answers, finished, at_provider)
    return f"interrupted: {answers} answers kept, {finished}{at_provider}; run the same command to continue"


def _run(
    recipe: Recipe,
    plan: ExecutionPlan,
    backend: Backend,
    build: BuildDir,
    manifest: Manifest,
    replay: Replay | None,
    judges: Sequence[Backend],
    refresh: str | None,
) -> BuildSummary:
    started, started_at = time.perf_counter(), time.time()
    source = get_source(recipe.source)
    # checked before any input is read
    stages = build_stages(recipe, source, recipe.sampling, backend.model_id)
    manifest.cache_namespaces = refreshed(stages, manifest.cache_namespaces, refresh)
    if refresh:
        log.info("refreshing %s and the stages after it: %s", refresh, manifest.cache_namespaces)
    context_tokens = backend.info().context_tokens
    loaded = work_items(recipe, source, build, manifest, context_tokens, replay)
    give_back()  # what reading the input freed
    if recipe.strict_input and loaded.skipped:
        raise SourceError(
            f"--strict-input: {sum(loaded.skipped.values())} row(s) of {recipe.input} cannot be used "
            f"({dict(loaded.skipped)}); the first are named above and all in build.log; no model was "
            "asked anything"
        )
    items = loaded.items
    log.info(
        "loaded %d documents into %d work items%s",
        loaded.documents,
        len(items),
        f"; skipped {loaded.skipped}" if loaded.skipped else "",
    )
    build.write_manifest(manifest)
    result = LoopResult(done=items)
    if len(items):  # a shard may hold no item of a small build
        with open_recipe_loop(recipe, build, manifest, backend, plan, judges) as loop:
            result = loop.run(stages, source.prepare(items), checks(stages) if judges else None)
    made = assemble(source, source.finish(items, result.done) if len(items) else items, build.path / WORK_DIR)
    build.record_stage(
        manifest,
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
    # always written: a build with no samples removes the outputs of the build before it. The
    # config is named for the source, as `push` publishes it
    write_output(made.splits, recipe.out, source.name)
    prune(build.path / WORK_DIR, started_at)  # what earlier runs with other settings left
    samples = made.samples
    verdicts = result.verdicts or ()
    summary = BuildSummary(
        source=recipe.source,
        dataset=source.dataset_name,
        out=recipe.out,
        documents=loaded.documents,
        items=len(items),
        skipped=loaded.skipped,
        by_split={split: len(rows) for split, rows in made.splits.items()},
        by_category=made.by_category,
        hallucinated=made.hallucinated,
        clean=samples - made.hallucinated,
        requested_ratio=recipe.ratio,
        achieved_ratio=made.hallucinated / samples if samples else 0.0,
        ratio=result.ratio,
        yield_=samples / len(items) if len(items) else 0.0,
        failures=build.failure_summary(),
        seconds=time.perf_counter() - started,
        backend_seconds=result.backend_seconds,
        judge=judge_report([j.model_id for j in judges], verdicts) if judges else None,
        plausibility=plausibility_report(verdicts),
        question_fit=question_fit_report(verdicts),
        example=made.example,
        shard=recipe.shard,
        error_types=_spans_by_type(made.splits, recipe.error_types),
        stages=[stage.name for stage in stages],
    )
    manifest.status = "finished"
    manifest.counts = summary.counts()
    build.write_manifest(manifest)
    summary.cost, summary.total_cost, summary.runs = manifest.runs[-1], manifest.cost, len(manifest.runs)
    if summary.ratio is not None and (shortfall := summary.ratio.shortfall()):
        log.warning(shortfall)
    log.info(
        "finished: %d samples of %d work items (%s), %d hallucinated; %.1f s, this run %d requests, "
        "all %d runs %d requests",
        samples,
        summary.items,
        summary.by_split,
        summary.hallucinated,
        summary.seconds,
        summary.cost.requests,
        summary.runs,
        summary.total_cost.requests,
    )
    return summary


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
