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
from collections.abc import Iterable
from itertools import islice
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
from lettuce_build.sources.base import LoadResult, Tally
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


#: items prepared for the stages at a time (a source's `prepare` works on a `Dataset`)
CHUNK = 1000


def estimate(options: BuildOptions, backend: Backend, sampling: dict[str, dict[str, Any]]) -> DryRun:
    """What ``options`` would ask of ``backend``'s model (never called) given the build's cache.
    Items stream through every stage one at a time, so memory does not grow with the input
    (except where screening or a shard must see every item first)."""
    source = get_source(options.source)
    stages = build_stages(options, source, sampling, backend.model_id)
    previous = BuildDir(options.out).previous_manifest()
    refreshed(stages, previous.cache_namespaces if previous else {}, None)
    load_options = options.load_options(backend.info().context_tokens)
    tally = Tally()
    items: Iterable[dict[str, Any]] = source.checked_items(options.input, load_options, tally)
    if options.screens or options.shard is not None:  # both choose among all the items
        loaded = LoadResult(items=list(items), documents=tally.documents, skipped=tally.skipped)
        loaded = screened_list(loaded, load_options, source.modality)
        if options.shard is not None and loaded.items:
            loaded = take_slice(loaded, options.shard, source.document_of).loaded
        items, tally = loaded.items, Tally(documents=loaded.documents, skipped=loaded.skipped)
    cache_path = BuildDir(options.out).cache_path
    with tempfile.TemporaryDirectory() as empty:
        # a build never run has no cache: look up in an empty one, never create the build's
        cache = RequestCache(cache_path if cache_path.exists() else Path(empty) / "cache.sqlite")
        try:
            walk = _Walk(Completions(backend, cache), options, stages)
            stream = iter(items)
            while chunk := list(islice(stream, CHUNK)):
                walk.loaded += len(chunk)
                for item in source.prepare(Dataset.from_list(chunk)).to_list():
                    walk.item(item)
        finally:
            cache.close()
    return DryRun(
        source=options.source,
        documents=tally.documents,
        items=walk.loaded,
        skipped=dict(tally.skipped),
        stages=walk.estimates(),
        pricing=options.pricing(),
        batched=bool(backend.info().options.get("batch", False)),
    )


#: set on an item once a stage's outputs stood in for answers the cache lacks
_STOOD_IN = "_stood_in"


class _Count(BaseModel):
    """What one stage (or scoring check) came to over the items seen so far."""

    served: int = 0
    hits: int = 0
    misses: int = 0
    answered: int = 0
    prompt_chars: int = 0
    #: scoring: prompt tokens of the rendered misses, and misses whose text was not known yet
    prompt: int = 0
    unknown: int = 0


class _Walk:
    """Each item through every stage in turn: a cached answer feeds the next stage as in the
    build; a miss is counted, and stand-in text of the stage's length takes its place."""

    def __init__(self, completions: Completions, options: BuildOptions, stages: list[Stage]) -> None:
        self.completions = completions
        self.seed, self.ratio = options.seed, options.ratio
        #: each stage, then the scoring checks the build's model answers about its work
        self.steps: list[tuple[Stage, bool]] = []
        for stage in stages:
            self.steps.append((stage, False))
            if options.plausibility:  # the build's model scores its own work: count it too
                scoring = [stage.scored_by(), PlausibilityCheck() if stage.hallucinates else None]
                self.steps += [(check, True) for check in scoring if check is not None]
        self.counts = [_Count() for _ in self.steps]
        self.schemas = [self._schema(stage) for stage, _ in self.steps]
        #: per step, the text that stands in for an answer the cache lacks (made once, not per item)
        self.stand_ins = [_stand_in(stage) for stage, _ in self.steps]
        self.loaded = self.contexts = self.context_chars = 0

    @staticmethod
    def _schema(stage: Stage) -> tuple[dict[str, Any] | None, str]:
        schema = stage.response_model.model_json_schema() if stage.response_model else None
        return schema, schema_json(schema)

    def item(self, item: dict[str, Any]) -> None:
        self.contexts += 1
        self.context_chars += len(str(item.get("context", "")))
        steps = zip(self.steps, self.counts, self.schemas, self.stand_ins, strict=True)
        for (stage, scoring), count, schema, stand_in in steps:
            if scoring:
                self._score(stage, item, count, schema)
            else:
                self._ask(stage, item, count, schema, stand_in)

    def _ask(
        self,
        stage: Stage,
        item: dict[str, Any],
        count: _Count,
        schema: tuple[dict[str, Any] | None, str],
        stand_in: str,
    ) -> None:
        """The stage over the item, which takes its outputs (or stand-ins)."""
        standing_in = dict.fromkeys(stage.outputs, stand_in)
        if stage.hallucinates:  # balancing decides which items: look every one up
            item["inject"] = True
        for name in stage.requires:
            item.setdefault(name, stand_in)
        # an item whose input stands in for an unasked answer may apply where its text would
        # (rule-made edits need a real answer to find any): counted as it would be
        if not stage.applies(item) and not item.get(_STOOD_IN):
            return
        count.served += 1
        outputs = None
        for attempt in range(stage.max_attempts):  # a cached failure was retried: follow it
            request = seeded_request(stage, item, self.seed, attempt, schema[0])
            [key] = self.completions.keys(stage.cache_version, [request], *schema)
            found = self.completions.cache.get_many([key]).get(key)
            if found is None:
                count.misses += 1
                count.prompt_chars += sum(len(message.content) for message in request.messages)
                break
            count.hits += 1
            try:
                outputs = stage.parse(item, check_response(stage, found))
                break
            except ParseFailure:
                continue
        count.answered += outputs is not None
        item.update(outputs if outputs is not None else {**standing_in, _STOOD_IN: True})

    def _score(
        self, check: Stage, item: dict[str, Any], count: _Count, schema: tuple[dict[str, Any] | None, str]
    ) -> None:
        """A scoring check of what its stage made of the item (first attempts): prefills only."""
        if not check.applies(item) or any(name not in item for name in check.requires):
            return
        count.served += 1
        if item.get(_STOOD_IN):  # what it scores is not known yet: sized like the others
            count.misses, count.unknown = count.misses + 1, count.unknown + 1
            return
        request = seeded_request(check, item, self.seed, 0, schema[0])
        [key] = self.completions.keys(check.cache_version, [request], *schema)
        if self.completions.cache.get_many([key]).get(key) is not None:
            count.hits += 1
            return
        count.misses += 1
        count.prompt += estimated_tokens(request)[0]

    def estimates(self) -> list[StageEstimate]:
        """Per stage and check, what the items seen came to."""
        return [
            self._scored(stage, count) if scoring else self._asked(stage, count)
            for (stage, scoring), count in zip(self.steps, self.counts, strict=True)
        ]

    def _asked(self, stage: Stage, count: _Count) -> StageEstimate:
        served, misses = count.served, count.misses
        per_miss = count.prompt_chars / misses if misses else 0.0
        if stage.hallucinates:  # only the requested share is offered, before the ones cached
            served = round(served * self.ratio)
            misses = max(0, served - count.answered) if count.answered < served else 0
        return StageEstimate(
            name=stage.name,
            items=served,
            cache_hits=count.hits,
            cache_misses=misses,
            prompt_tokens=round(misses * per_miss / CHARS_PER_TOKEN),
            completion_tokens=misses * stage.sampling.max_tokens,
        )

    def _scored(self, check: Stage, count: _Count) -> StageEstimate:
        keys, hits, misses, prompt = count.served, count.hits, count.misses, count.prompt
        if count.unknown:  # two prefills of about the context each, when nothing known says better
            rendered = misses - count.unknown
            mean_context = self.context_chars / self.contexts if self.contexts else 0.0
            typical = prompt / rendered if rendered else 2 * mean_context / CHARS_PER_TOKEN
            prompt += round(typical * count.unknown)
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


def _stand_in(stage: Stage) -> str:
    """Text of about half the stage's ``max_tokens``: what an unanswered request stands for."""
    return "lorem ipsum " * max(1, round(stage.sampling.max_tokens * CHARS_PER_TOKEN / 2 / 12))
