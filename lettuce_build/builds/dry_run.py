"""`build --dry-run`: what a build would ask of its model, without starting an engine.

A dry run is the build rehearsed: its work items loaded into a scratch folder, and its stage
loop run on the real runner over a `Rehearsal` (engine/rehearsal.py; the plan's
``rehearsal``), which serves what the build's cache holds and counts the rest. So a cached
answer feeds the next stage exactly as in the build, and a missed one is a request the build
would send, with stand-in outputs for the stages after it (their prompts, and their sizes, are
estimates). Balancing offers its first wave, as the build does; the checks the build's model
answers about its own work (a question's fit, a span's plausibility) are counted as prefills.
Retries of answers that fail, later waves and judges (``--verify``) come on top. Prompt tokens
are the rendered prompts' characters over `CHARS_PER_TOKEN`; completion tokens are each missed
request's ``max_tokens``, an upper bound. The build's folder is only read.
"""

from __future__ import annotations

import tempfile

from pydantic import BaseModel

from lettuce_build.builds.folder import BuildDir, Manifest
from lettuce_build.builds.plan import ExecutionPlan
from lettuce_build.builds.recipe import Recipe
from lettuce_build.builds.stage_loop import open_recipe_loop
from lettuce_build.builds.stages_of import build_stages, refreshed
from lettuce_build.builds.work import work_items
from lettuce_build.core.interrupts import Interrupted
from lettuce_build.engine.records import StageStats
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.pricing import Pricing
from lettuce_build.llm.protocol import Backend
from lettuce_build.prompts import prompts_from
from lettuce_build.sources.registry import get_source


class StageEstimate(BaseModel):
    name: str
    #: items the stage would take up (an injecting stage: balancing's first wave), asked about or
    #: failed on what they bring
    items: int
    #: requests found in the cache (a cached failure's cached retry too)
    cache_hits: int
    #: requests the build would send (first attempts)
    cache_misses: int
    #: estimated, for the misses only
    prompt_tokens: int
    #: at most, for the misses only
    completion_tokens: int


class DryRun(BaseModel):
    source: str
    documents: int
    items: int
    skipped: dict[str, int]
    stages: list[StageEstimate]
    #: the build's price (``--price-per-mtok``), and whether it would send through a Batch API
    pricing: Pricing | None = None
    batched: bool = False

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.stages)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.stages)

    @property
    def dollars(self) -> float | None:
        """The misses' price at the build's price, as a build would pay it (None: no price)."""
        if self.pricing is None:
            return None
        return self.pricing.dollars(self.prompt_tokens, self.completion_tokens, batched=self.batched)


def estimate(options: Recipe, backend: Backend | None = None) -> DryRun:
    """What building ``options`` would ask of its model (or of ``backend``'s; never called)
    given the build's cache: the build itself, rehearsed in a scratch folder by the build's own
    stage loop and runner."""
    backend = backend or options.make_backend()
    try:
        with prompts_from(options.prompts):
            return _rehearsed(options, backend)
    except Interrupted as stop:  # the build's folder was only read: nothing to keep or continue
        raise Interrupted(stop.signum, "interrupted: the dry run stopped; it wrote nothing") from None


def _rehearsed(options: Recipe, backend: Backend) -> DryRun:
    source = get_source(options.source)
    stages = build_stages(options, source, options.sampling, backend.model_id)
    folder = BuildDir(options.out)
    previous = folder.previous_manifest()
    refreshed(stages, previous.cache_namespaces if previous else {}, None)
    with tempfile.TemporaryDirectory(prefix="lettuce-build-dry-run-") as scratch:
        rehearsal = BuildDir(scratch)
        manifest = Manifest(source=options.source, backend=backend.info(), seed=options.seed, options=options)
        loaded = work_items(options, source, rehearsal, manifest, backend.info().context_tokens, None)
        # the build's cache is only read; a build never run has none: an empty one stands in
        exists = folder.cache_path.exists()
        cache = RequestCache(folder.cache_path if exists else rehearsal.cache_path, read_only=exists)
        with open_recipe_loop(
            options, rehearsal, manifest, backend, ExecutionPlan(rehearsal=True), cache=cache
        ) as loop:
            loop.run(stages, source.prepare(loaded.items))
        items = len(loaded.items)
    return DryRun(
        source=options.source,
        documents=loaded.documents,
        items=items,
        skipped=dict(loaded.skipped),
        stages=[_estimated(stats) for stats in manifest.stages],
        pricing=options.pricing(),
        batched=bool(backend.info().options.get("batch", False)),
    )


def _estimated(stats: StageStats) -> StageEstimate:
    """What a stage's (or check's) rehearsal came to."""
    return StageEstimate(
        name=stats.name,
        items=stats.items_in - stats.passed_through,
        cache_hits=stats.cache_hits,
        cache_misses=stats.cache_misses,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
    )
