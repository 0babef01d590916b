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

An input of more than `SAMPLE_ITEMS` items is read and counted whole, and its model stages are
rehearsed on a seeded uniform sample of `SAMPLE_ITEMS` of them: the figures are the sample's,
scaled to the whole, with a 95% interval on the requests to send (a million custom rows took
about 50 minutes rehearsed item by item; a build is what pays per item, not its estimate).
``exact`` rehearses every item.
"""

from __future__ import annotations

import math

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


#: inputs of at most this many work items are rehearsed whole; a larger one's model stages on a
#: sample of this many (about 30 s of rule work on 2 cores)
SAMPLE_ITEMS = 3_000
#: a 95% interval's half-width in standard errors
Z_95 = 1.96


class DryRun(BaseModel):
    source: str
    documents: int
    items: int
    #: the items the model stages were rehearsed on, when a sample (None: every item)
    sampled: int | None = None
    #: the 95% interval's half-width on the requests to send (0: counted exactly)
    requests_margin: int = 0
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


def estimate(options: Recipe, backend: Backend | None = None, *, exact: bool = False) -> DryRun:
    """What building ``options`` would ask of its model (or of ``backend``'s; never called)
    given the build's cache: the build's own list of steps, rehearsed up to its last model stage
    in a read-only run context (builds/running/context.py), on a sample of a large input's items
    unless ``exact``."""
    sample = None if exact else SAMPLE_ITEMS
    with prompts_from(options.prompts), rehearse(options.run_spec(), backend=backend) as run:
        source = get_source(options.source)
        stages = build_stages(options, source, options.sampling, run.backend.model_id)
        refreshed(stages, run.manifest.cache_namespaces, None)
        # what the model is asked ends with the stages
        state, steps = run_steps(run, options, source=source, stages=stages, until=Assemble, sample=sample)
    items = state.items().made
    rehearsed = state.rehearsed if state.rehearsed is not None else items
    scale = Scale(population=items, sample=rehearsed)
    return DryRun(
        source=options.source,
        documents=state.items().documents,
        items=items,
        sampled=rehearsed if rehearsed < items else None,
        requests_margin=scale.margin([stats.cache_misses for stats in run.manifest.stages]),
        skipped=dict(state.items().skipped),
        stages=[estimated(stats, scale) for stats in run.manifest.stages],
        pricing=options.pricing(),
        batched=bool(run.backend.info().options.get("batch", False)),
        steps=list(steps.lines),
    )


class Scale(BaseModel):
    """A sample's figures taken to its population's."""

    population: int
    sample: int

    def __call__(self, count: int) -> int:
        if self.sample >= self.population:
            return count
        return round(count * self.population / max(1, self.sample))

    def margin(self, counts: list[int]) -> int:
        """The 95% half-width on the sum of ``counts`` (each stage's requests, at most one an
        item) scaled: each a binomial share of the sample, with the finite population's
        correction; the stages' half-widths added, since they move together (a check asks
        about every item its stage made)."""
        n, big_n = self.sample, self.population
        if n >= big_n or n == 0:
            return 0
        correction = (big_n - n) / (big_n - 1)
        shares = [min(1.0, count / n) for count in counts]
        return round(sum(Z_95 * math.sqrt(p * (1 - p) / n * correction) * big_n for p in shares))


def estimated(stats: StageStats, scale: Scale) -> StageEstimate:
    """What a stage's (or check's) rehearsal came to, taken to the whole input."""
    return StageEstimate(
        name=stats.name,
        items=scale(stats.items_in - stats.passed_through),
        cache_hits=scale(stats.cache_hits),
        cache_misses=scale(stats.cache_misses),
        prompt_tokens=scale(stats.prompt_tokens),
        completion_tokens=scale(stats.completion_tokens),
    )
