"""`build --dry-run`: what a build would ask of its model, without starting an engine.

The source is loaded and every stage walked over the work items in order. A request the build's
cache already answers is a hit, and its parsed answer feeds the next stage exactly as in the
build; a miss is a request the build would send, and the stages after it see stand-in text of
the length the stage may write (so their prompts, and their sizes, are estimates). A cached
answer that fails to parse is followed by the retry the build made, when that is cached too;
otherwise counts are first attempts: retries, balancing's extra waves and judges (``--verify``)
come on top. The scoring requests the build's model answers about its own work (a question's
fit, a span's plausibility) are counted as prefills, first attempts too. Prompt
tokens are the rendered prompts' characters over `CHARS_PER_TOKEN`; completion tokens are
each missed request's ``max_tokens``, an upper bound.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from datasets import Dataset
from pydantic import BaseModel

from lettuce_build.builds.folder import BuildDir
from lettuce_build.builds.options import BuildOptions
from lettuce_build.builds.screening import screened_list
from lettuce_build.builds.shards import take_slice
from lettuce_build.builds.stages_of import build_stages, refreshed
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.responses import check_response
from lettuce_build.engine.runner import seeded_request
from lettuce_build.engine.stage import ParseFailure, Stage
from lettuce_build.llm.cache import RequestCache, schema_json
from lettuce_build.llm.pricing import CHARS_PER_TOKEN, Pricing, estimated_tokens
from lettuce_build.llm.protocol import Backend
from lettuce_build.sources.registry import get_source
from lettuce_build.stages.plausibility import PlausibilityCheck


class StageEstimate(BaseModel):
    name: str
    #: items the stage would serve (for an injecting stage: the requested share of them)
    items: int
    #: requests found in the cache (a cached failure's cached retry counts too)
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


def estimate(options: BuildOptions, backend: Backend, sampling: dict[str, dict[str, Any]]) -> DryRun:
    """What ``options`` would ask of ``backend``'s model (never called) given the build's cache."""
    source = get_source(options.source)
    stages = build_stages(options, source, sampling, backend.model_id)
    previous = BuildDir(options.out).previous_manifest()
    refreshed(stages, previous.cache_namespaces if previous else {}, None)
    load_options = options.load_options(backend.info().context_tokens)
    loaded = screened_list(source.load(options.input, load_options), load_options, source.modality)
    if options.shard is not None and loaded.items:
        loaded = take_slice(loaded, options.shard, source.document_of).loaded
    items = source.prepare(Dataset.from_list(loaded.items)).to_list() if loaded.items else []
    cache_path = BuildDir(options.out).cache_path
    with tempfile.TemporaryDirectory() as empty:
        # a build never run has no cache: look up in an empty one, never create the build's
        cache = RequestCache(cache_path if cache_path.exists() else Path(empty) / "cache.sqlite")
        try:
            walk = _Walk(Completions(backend, cache), options.seed, options.ratio)
            estimates = []
            for stage in stages:
                estimates.append(walk.stage(stage, items))
                if options.plausibility:  # the build's model scores its own work: count it too
                    scoring = [stage.scored_by(), PlausibilityCheck() if stage.hallucinates else None]
                    estimates += [walk.scoring(check, items) for check in scoring if check is not None]
        finally:
            cache.close()
    return DryRun(
        source=options.source,
        documents=loaded.documents,
        items=len(loaded.items),
        skipped=dict(loaded.skipped),
        stages=estimates,
        pricing=options.pricing(),
        batched=bool(backend.info().options.get("batch", False)),
    )


#: set on an item once a stage's outputs stood in for answers the cache lacks
_STOOD_IN = "_stood_in"


class _Walk:
    def __init__(self, completions: Completions, seed: int, ratio: float) -> None:
        self.completions = completions
        self.seed = seed
        self.ratio = ratio

    def stage(self, stage: Stage, items: list[dict[str, Any]]) -> StageEstimate:
        """The stage over ``items``, which take its outputs (or stand-ins)."""
        schema = stage.response_model.model_json_schema() if stage.response_model else None
        schema_text = schema_json(schema)
        standing_in = {name: _stand_in(stage) for name in stage.outputs}
        if stage.hallucinates:  # balancing decides which items: look every one up
            for item in items:
                item["inject"] = True
        served = hits = misses = answered = prompt_chars = 0
        for item in items:
            for name in stage.requires:
                item.setdefault(name, standing_in.get(name, _stand_in(stage)))
            # an item whose input stands in for an unasked answer may apply where its text would
            # (rule-made edits need a real answer to find any): counted as it would be
            if not stage.applies(item) and not item.get(_STOOD_IN):
                continue
            served += 1
            outputs = None
            for attempt in range(stage.max_attempts):  # a cached failure was retried: follow it
                request = seeded_request(stage, item, self.seed, attempt, schema)
                [key] = self.completions.keys(stage.cache_version, [request], schema, schema_text)
                found = self.completions.cache.get_many([key]).get(key)
                if found is None:
                    misses += 1
                    prompt_chars += sum(len(message.content) for message in request.messages)
                    break
                hits += 1
                try:
                    outputs = stage.parse(item, check_response(stage, found))
                    break
                except ParseFailure:
                    continue
            answered += outputs is not None
            item.update(outputs if outputs is not None else {**standing_in, _STOOD_IN: True})
        per_miss = prompt_chars / misses if misses else 0.0
        if stage.hallucinates:  # only the requested share is offered, before the ones cached
            served = round(served * self.ratio)
            misses = max(0, served - answered) if answered < served else 0
        return StageEstimate(
            name=stage.name,
            items=served,
            cache_hits=hits,
            cache_misses=misses,
            prompt_tokens=round(misses * per_miss / CHARS_PER_TOKEN),
            completion_tokens=misses * stage.sampling.max_tokens,
        )

    def scoring(self, check: Stage, items: list[dict[str, Any]]) -> StageEstimate:
        """A scoring check over the items its stage finished (first attempts; for a check of
        injected spans, the requested share of the items): prefills only, no completion."""
        schema = check.response_model.model_json_schema() if check.response_model else None
        schema_text = schema_json(schema)
        keys = hits = misses = prompt = unknown = 0
        for item in items:
            if not check.applies(item) or any(name not in item for name in check.requires):
                continue
            keys += 1
            if item.get(_STOOD_IN):  # what it scores is not known yet: sized like the others
                misses, unknown = misses + 1, unknown + 1
                continue
            request = seeded_request(check, item, self.seed, 0, schema)
            [key] = self.completions.keys(check.cache_version, [request], schema, schema_text)
            if self.completions.cache.get_many([key]).get(key) is not None:
                hits += 1
                continue
            misses += 1
            prompt += estimated_tokens(request)[0]
        if unknown:  # two prefills of about the context each, when nothing known says better
            rendered = misses - unknown
            typical = prompt / rendered if rendered else 2 * _mean_context(items) / CHARS_PER_TOKEN
            prompt += round(typical * unknown)
        if isinstance(check, PlausibilityCheck):  # only the requested share is injected, as above
            share = round(keys * self.ratio)
            per_miss = prompt / misses if misses else 0.0
            misses = max(0, share - hits)
            prompt, keys = round(per_miss * misses), share
        return StageEstimate(
            name=check.name,
            items=keys,
            cache_hits=hits,
            cache_misses=misses,
            prompt_tokens=prompt,
            completion_tokens=0,
        )


def _mean_context(items: list[dict[str, Any]]) -> float:
    return sum(len(str(item.get("context", ""))) for item in items) / len(items) if items else 0.0


def _stand_in(stage: Stage) -> str:
    """Text of about half the stage's ``max_tokens``: what an unanswered request stands for."""
    return "lorem ipsum " * max(1, round(stage.sampling.max_tokens * CHARS_PER_TOKEN / 2 / 12))
