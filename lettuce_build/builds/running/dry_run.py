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

from pydantic import BaseModel, Field

from lettuce_build.builds.running.context import rehearse
from lettuce_build.builds.running.stages_of import build_stages, refreshed
from lettuce_build.builds.running.steps import Assemble, run_steps
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.engine.records import StageStats
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
    #: the list of steps the build runs, a line each (see builds/running/steps.py)
    steps: list[str] = Field(default_factory=list)

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
    given the build's cache: the build's own list of steps, rehearsed up to its last model stage
    in a read-only run context (builds/running/context.py)."""
    with prompts_from(options.prompts), rehearse(options.run_spec(), backend=backend) as run:
        source = get_source(options.source)
        stages = build_stages(options, source, options.sampling, run.backend.model_id)
        refreshed(stages, run.manifest.cache_namespaces, None)
        # what the model is asked ends with the stages
        state, steps = run_steps(run, options, source=source, stages=stages, until=Assemble)
    return DryRun(
        source=options.source,
        documents=state.items().documents,
        items=len(state.items().items),
        skipped=dict(state.items().skipped),
        stages=[estimated(stats) for stats in run.manifest.stages],
        pricing=options.pricing(),
        batched=bool(run.backend.info().options.get("batch", False)),
        steps=list(steps.lines),
    )


def estimated(stats: StageStats) -> StageEstimate:
    """What a stage's (or check's) rehearsal came to."""
    return StageEstimate(
        name=stats.name,
        items=stats.items_in - stats.passed_through,
        cache_hits=stats.cache_hits,
        cache_misses=stats.cache_misses,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
    )
