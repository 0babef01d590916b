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
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from lettuce_build.builds.running.stage_loop import VERDICTS_FILE, StageLoop
from lettuce_build.builds.settings.plan import ExecutionPlan
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.settings.run_spec import RunSpec
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.items import WORK_DIR, WorkPasses
from lettuce_build.builds.storage.log import build_log, log
from lettuce_build.core.interrupts import Interrupted
from lettuce_build.engine.completions import Spending
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.verdicts import VerdictLog
from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import Backend
from lettuce_build.stages.plausibility import PlausibilityCheck


@dataclass
class RunContext:
    """An open run: its folder, manifest, cache and plan, the models it asks (the model as the
    plan runs it; the judges of ``verify``), and its stage loop on them."""

    loop: StageLoop
    cache: RequestCache
    plan: ExecutionPlan
    backend: Backend
    judges: list[Backend]

    #: the run's folder and manifest: its loop's
    build: BuildDir = field(init=False)
    manifest: Manifest = field(init=False)

    def __post_init__(self) -> None:
        self.build, self.manifest = self.loop.build, self.loop.manifest

    def close(self) -> None:
        if self.loop.verdicts is not None:
            self.loop.verdicts.close()
        self.cache.close()
        self.plan.close([self.backend, *self.judges])  # the engines a Ray pool held for the run


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
    model, chosen = spec.models.made(backend=backend, judges=judges)
    with build.lock(), build_log(build.path):
        previous = build.previous_manifest()
        manifest = Manifest(
            source=spec.source,
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
            judges=chosen,
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
            manifest.status = "finished"
            build.write_manifest(manifest)  # its cost brought up to date, as every write does
            this, every = manifest.runs[-1], manifest.cost
            log.info(
                "finished: this run %d requests, all %d runs %d requests",
                this.requests,
                len(manifest.runs),
                every.requests,
            )
        finally:
            run.close()


def open_build_run(
    recipe: Recipe,
    *,
    merged_from: Sequence[str] = (),
    backend: Backend | None = None,
    judges: Sequence[Backend] | None = None,
) -> AbstractContextManager[RunContext]:
    """`open_run` of a build, as its recipe says (``merged_from``: a merge's shard folders)."""
    return open_run(recipe.run_spec(merged_from), backend=backend, judges=judges)


@contextmanager
def rehearse(spec: RunSpec, *, backend: Backend | None = None) -> Iterator[RunContext]:
    """A read-only run of ``spec`` (a dry run): its manifest and work items in a scratch folder,
    the build's cache only read (a build never run has none: an empty one stands in), every miss
    counted and never asked. It writes nothing in the build's folder."""
    folder = BuildDir(spec.out)
    model, _ = spec.models.made(backend=backend, judges=[])  # a dry run asks no judge
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
    judges: Sequence[Backend],
    cache: RequestCache,
) -> RunContext:
    """The run's models as its plan runs them: a judge that is the run's own model is asked on
    the same engines; a ``verify`` run with no judge named is judged by its own model."""
    engine = plan.engine(model)
    chosen = [engine if judge is model else judge for judge in judges]
    verify = spec.models.verify and not plan.rehearsal  # a dry run counts no judge (they come on top)
    judged_by = (chosen or [engine]) if verify else []
    verdicts = VerdictLog(build.path / WORK_DIR / VERDICTS_FILE)
    passes = WorkPasses(build.path / WORK_DIR)

    def runner(asked: Backend) -> Runner:
        completions = plan.completions(asked, cache)
        return Runner(
            completions, seed=spec.seed, batch_size=spec.loop.batch_size, passes=passes, verdicts=verdicts
        )

    loop = StageLoop(
        build,
        manifest,
        runner(engine),
        spec.loop.ratio,
        max_waves=plan.max_waves,
        judges=[runner(judge) for judge in judged_by],
        plausibility=PlausibilityCheck() if spec.loop.plausibility else None,
        verdicts=verdicts,
    )
    return RunContext(loop=loop, cache=cache, plan=plan, backend=engine, judges=judged_by)


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
