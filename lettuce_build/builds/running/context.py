"""The run context: what every command that runs stages opens once, and nothing else makes.

A build, its dry run and merge, a translation and squeez's teacher phase each describe their
run in a `RunSpec` and open it with `open_run` (or `rehearse`, for a dry run). The context owns
the folder's lock and build log, the manifest's life (written ``running`` when the run starts;
``finished``, ``interrupted`` or ``failed`` with its reason when the block ends, never left
``running`` by an exception), the request cache, the execution plan, and the model and judges,
made once from the command's settings. No other module sets a run's status or makes a backend.

A rehearsal is read-only: its manifest and work items live in a scratch folder, the build's
cache (when it has one) is only read, and the plan serves what the cache holds and counts the
rest (engine/rehearsal.py).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.builds.running.plan import ExecutionPlan
from lettuce_build.builds.running.stage_loop import VERDICTS_FILE, StageLoop
from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.items import WORK_DIR, WorkPasses
from lettuce_build.builds.storage.log import build_log, log
from lettuce_build.core.interrupts import Interrupted
from lettuce_build.engine.completions import Spending
from lettuce_build.engine.runner import DEFAULT_BATCH_SIZE, Runner
from lettuce_build.engine.verdicts import VerdictLog
from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.factory import ModelChoice
from lettuce_build.llm.pricing import Pricing
from lettuce_build.llm.protocol import Backend
from lettuce_build.stages.plausibility import PlausibilityCheck


class RunSpec(BaseModel):
    """What a run is, as its command's settings say: where it writes, what its manifest records,
    how it runs and on which models."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    out: Path
    #: the manifest's ``source``: a build's source, ``translate`` or ``squeez``
    source: str
    seed: int = 0
    limit: int | None = None
    #: a build's options, recorded in its manifest
    options: BuildOptions | None = None
    pricing: Pricing | None = None
    max_cost: float | None = None
    #: the shard folders a merge joins
    merged_from: list[str] = Field(default_factory=list)
    #: where and how the model runs: shard, replay, Ray pool, provider-failure share
    plan: ExecutionPlan = Field(default_factory=ExecutionPlan)
    models: ModelChoice = Field(default_factory=ModelChoice)

    @classmethod
    def of(cls, recipe: Recipe, merged_from: Sequence[str] = ()) -> RunSpec:
        """A build's run, as its recipe says (``merged_from``: a merge's shard folders)."""
        plan = ExecutionPlan(
            shard=recipe.shard,
            replay=bool(merged_from),
            max_provider_failures=recipe.max_provider_failures,
            ray=recipe.ray_pool(),
        )
        return cls(
            out=recipe.out,
            source=recipe.source,
            seed=recipe.seed,
            limit=recipe.limit,
            options=recipe,
            pricing=recipe.pricing(),
            max_cost=recipe.max_cost,
            merged_from=list(merged_from),
            plan=plan,
            models=recipe.models(),
        )


class LoopSettings(BaseModel):
    """How a run's stage loop asks: its seed, the hallucinated share it balances to (stages that
    inject need one), items per model call, and whether the model scores its own work."""

    model_config = ConfigDict(frozen=True)

    seed: int = 0
    ratio: float | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    plausibility: bool = False

    @classmethod
    def of(cls, recipe: Recipe) -> LoopSettings:
        return cls(
            seed=recipe.seed,
            ratio=recipe.ratio,
            batch_size=recipe.batch_size,
            plausibility=recipe.plausibility,
        )


@dataclass
class RunContext:
    """An open run: its folder, manifest, cache and plan, and the models it asks (the model as
    the plan runs it; the judges of ``verify``)."""

    spec: RunSpec
    build: BuildDir
    manifest: Manifest
    cache: RequestCache
    plan: ExecutionPlan
    backend: Backend
    judges: list[Backend]

    def finish(self) -> None:
        """Record the run ``finished`` now (its block ends so otherwise): what comes after in the
        block (a summary of its cost, the last log line) then sees the finished manifest."""
        self.manifest.status = "finished"
        self.build.write_manifest(self.manifest)  # its cost brought up to date, as every write does

    @contextmanager
    def stage_loop(self, settings: LoopSettings) -> Iterator[StageLoop]:
        """A stage loop on this run's cache and plan: one runner for the model, one per judge."""
        verdicts = VerdictLog(self.build.path / WORK_DIR / VERDICTS_FILE)
        try:
            passes = WorkPasses(self.build.path / WORK_DIR)

            def runner(model: Backend) -> Runner:
                completions = self.plan.completions(model, self.cache)
                return Runner(
                    completions,
                    seed=settings.seed,
                    batch_size=settings.batch_size,
                    passes=passes,
                    verdicts=verdicts,
                )

            yield StageLoop(
                self.build,
                self.manifest,
                runner(self.backend),
                settings.ratio,
                max_waves=self.plan.max_waves,
                judges=[runner(judge) for judge in self.judges],
                plausibility=PlausibilityCheck() if settings.plausibility else None,
                verdicts=verdicts,
            )
        finally:
            verdicts.close()


@contextmanager
def open_run(
    spec: RunSpec, *, backend: Backend | None = None, judges: Sequence[Backend] | None = None
) -> Iterator[RunContext]:
    """Run ``spec`` under its folder's lock and log. ``backend`` and ``judges`` replace the ones
    its models name (a test's scripted backend, an API caller's own). The manifest is written
    ``running`` now and its end when the block ends: ``finished`` when it ends normally,
    ``interrupted`` on Ctrl-C or SIGTERM (re-raised with what was kept, in one line), ``failed``
    with the error on anything else."""
    build = BuildDir(spec.out)
    model = backend or spec.models.backend()
    with build.lock(), build_log(build.path):
        previous = build.previous_manifest()
        manifest = Manifest(
            source=spec.source,
            backend=model.info(),
            seed=spec.seed,
            limit=spec.limit,
            options=spec.options,
            pricing=spec.pricing,
            merged_from=spec.merged_from,
        ).after(previous)
        spending = Spending(
            pricing=spec.pricing,
            max_cost=spec.max_cost,
            spent_before=previous.spent(spec.pricing) if previous else 0.0,
        )
        plan = spec.plan.model_copy(update={"spending": spending})
        run = _context(
            spec,
            build=build,
            manifest=manifest,
            plan=plan,
            model=model,
            judges=judges,
            cache=build.open_cache(),
        )
        manifest.backend = run.backend.info()  # as the plan runs it (on a Ray pool: its own)
        manifest.judges = [judge.info() for judge in run.judges]
        try:
            build.write_manifest(manifest)
            yield run
        except Interrupted as stop:  # Ctrl-C or SIGTERM: what was answered is kept, and said
            manifest.status = "interrupted"
            build.write_manifest(manifest)
            raise Interrupted(stop.signum, interrupted_line(build, manifest)) from None
        except BaseException as err:
            # whatever stopped the run (an error), the manifest never claims it is running
            manifest.status = "failed"
            manifest.error = f"{type(err).__name__}: {err}"[:500]
            build.write_manifest(manifest)
            log.error("build failed: %s", manifest.error)
            raise
        else:
            if manifest.status == "running":
                run.finish()
        finally:
            run.cache.close()
            plan.close([run.backend, *run.judges])


@contextmanager
def rehearse(spec: RunSpec, *, backend: Backend | None = None) -> Iterator[RunContext]:
    """A read-only run of ``spec`` (a dry run): its manifest and work items in a scratch folder,
    the build's cache only read (a build never run has none: an empty one stands in), every miss
    counted and never asked. It writes nothing in the build's folder."""
    folder = BuildDir(spec.out)
    model = backend or spec.models.backend()
    previous = folder.previous_manifest()
    with tempfile.TemporaryDirectory(prefix="lettuce-build-dry-run-") as scratch:
        rehearsal = BuildDir(scratch)
        manifest = Manifest(source=spec.source, backend=model.info(), seed=spec.seed, options=spec.options)
        manifest.cache_namespaces = dict(previous.cache_namespaces) if previous else {}
        exists = folder.cache_path.exists()
        cache = RequestCache(folder.cache_path if exists else rehearsal.cache_path, read_only=exists)
        plan = ExecutionPlan(rehearsal=True)
        try:
            yield _context(
                spec, build=rehearsal, manifest=manifest, plan=plan, model=model, judges=[], cache=cache
            )
        except Interrupted as stop:  # the build's folder was only read: nothing to keep or continue
            raise Interrupted(stop.signum, "interrupted: the dry run stopped; it wrote nothing") from None
        finally:
            cache.close()


def _context(
    spec: RunSpec,
    *,
    build: BuildDir,
    manifest: Manifest,
    plan: ExecutionPlan,
    model: Backend,
    judges: Sequence[Backend] | None,
    cache: RequestCache,
) -> RunContext:
    """The run's models as its plan runs them: a judge that is the run's own model is asked on
    the same engines; a ``verify`` run with no judge named is judged by its own model."""
    engine = plan.engine(model)
    chosen = spec.models.judges(model) if judges is None else list(judges)
    chosen = [engine if judge is model else judge for judge in chosen]
    verify = spec.models.verify and not plan.rehearsal  # a dry run counts no judge (they come on top)
    return RunContext(
        spec=spec,
        build=build,
        manifest=manifest,
        cache=cache,
        plan=plan,
        backend=engine,
        judges=(chosen or [engine]) if verify else [],
    )


def interrupted_line(build: BuildDir, manifest: Manifest) -> str:
    """What an interrupted run kept, in one line: the answers in its cache, the items its last
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
