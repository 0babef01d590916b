"""Where a stage's answers come from: the build's request cache first, then the backend.

The runner asks a `Completions` for the answers to a batch's requests: cache hits are served,
the misses go to the backend in one call and are committed before they are returned, so a
crash loses at most the batch in flight. Two variants change how, never what:

- `StreamingCompletions`, for a backend that takes a whole pass at once (engines in a Ray
  actor pool, llm/ray_pool.py): before each pass it hands the pass's misses to the backend as
  one stream, rendered as the backend takes them, and commits each answered chunk as it
  arrives; the pass then finds them in the cache;
- ``replay=True``, for a build made again from runs that already happened (a merge of shards):
  a cached answer counts against an item's budget of model calls as it did when it was made.

- `BatchCompletions` (engine/batches.py), for ``--batch``: each pass's misses go to the
  provider's Batch API, and the pass finds them in the cache.
- `Rehearsal` (engine/rehearsal.py), for ``--dry-run``: the misses are counted and stood in
  for, never asked.

Which one a build uses is decided once, by the build (builds/plan.py).

What a run spends is priced as it is committed (`Spending`); with a cap
(``--max-cost``) each pass is estimated before it is sent, and a pass that would take the build
past the cap is not sent: `CostCapError`, every answer so far committed.

What the provider did not answer (`Completion.answered` is false: refused, failed after every
retry, malformed) is handed to the stage, which makes it a failure row of its item, and is never
cached, so a re-run asks for it again. When such failures pass a share of what this run asked
(``max_provider_failures``), the build stops after committing what was answered: a dead key or
a provider that is down should not burn through a dataset one failure row at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from typing import Any, TypedDict

from pydantic import BaseModel, Field

from lettuce_build.core import interrupts
from lettuce_build.core.errors import CostCapError, ProviderFailuresError
from lettuce_build.core.seen_keys import SeenKeys
from lettuce_build.engine.records import StageStats
from lettuce_build.llm.cache import RequestCache, request_key
from lettuce_build.llm.pricing import Pricing, estimated_tokens
from lettuce_build.llm.protocol import Backend, ChatRequest, Completion, StreamingBackend

#: a pass's requests, gone through a batch of (key, request) pairs at a time
PassRequests = Callable[[], Iterable[list[tuple[str, ChatRequest]]]]

#: the share of a run's requests the provider may fail before the build stops: past half, the
#: provider is down or the key dead (every request fails); below it, a content filter that
#: refuses many items still leaves a build worth finishing, each refusal a failure row
DEFAULT_MAX_PROVIDER_FAILURES = 0.5
#: a build stops for the share only past this many failures: one refusal among a build's first
#: few requests is an item's problem, not the provider's
MIN_FAILURES_TO_STOP = 10


class Spending(BaseModel):
    """What a build's requests cost and may cost: none of it without a price. One per run,
    shared by the build's model and its judges, so that the cap holds for all they ask."""

    pricing: Pricing | None = None
    #: dollars the build may spend over all its runs (``--max-cost``; needs a price)
    max_cost: float | None = Field(default=None, ge=0.0)
    #: dollars the runs before this one spent
    spent_before: float = 0.0
    #: dollars this run has spent so far
    spent: float = 0.0


class Limits(TypedDict, total=False):
    """What a build's plan sets of every `Completions` (see its parameters): one dictionary the
    kinds of completions take alike."""

    replay: bool
    max_provider_failures: float
    spending: Spending | None


class Completions:
    """A backend behind a request cache."""

    #: whether answers come through a provider's Batch API (priced at its discount)
    batched = False
    #: whether a model writes the answers (a rehearsal's stand-ins are written by none: no
    #: tokens a second to show)
    generates = True

    def __init__(
        self,
        backend: Backend,
        cache: RequestCache,
        *,
        replay: bool = False,
        max_provider_failures: float = DEFAULT_MAX_PROVIDER_FAILURES,
        spending: Spending | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.replay = replay
        self.max_provider_failures = max_provider_failures
        self.spending = spending or Spending()
        #: requests this run asked the backend, and how many of them the provider did not answer
        self.asked = 0
        self.failed = 0
        self.first_failure: str | None = None
        #: what the provider failed in a pass's prefetch, handed to the pass's batches (a
        #: failure is not cached, so they would not find it there)
        self.unanswered: dict[str, Completion] = {}

    def commit(
        self,
        prompt_version: str,
        answered: Sequence[tuple[str, Completion]],
        stats: StageStats,
        batched: bool = False,
    ) -> None:
        """Keep what the provider answered (the rest is never cached: a re-run asks again),
        count what it did not, and stop the build once that passes its share. ``batched``:
        answered through a Batch API (priced at its discount)."""
        kept = [(key, c) for key, c in answered if c.answered]
        self.cache.put_many(self.backend.model_id, prompt_version, kept)
        prompt_tokens = sum(c.prompt_tokens for _, c in answered)
        completion_tokens = sum(c.completion_tokens for _, c in answered)
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens
        if batched:
            stats.batched_prompt_tokens += prompt_tokens
            stats.batched_completion_tokens += completion_tokens
        if (pricing := self.spending.pricing) is not None:
            self.spending.spent += pricing.dollars(prompt_tokens, completion_tokens, batched=batched)
        self.asked += len(answered)
        interrupts.check()  # a stop asked for while Python dropped its exception
        failed = [c for _, c in answered if not c.answered]
        if not failed:
            return
        self.failed += len(failed)
        stats.provider_failures += len(failed)
        self.first_failure = self.first_failure or f"{failed[0].finish_reason}: {failed[0].text[:200]}"
        if self.failed >= MIN_FAILURES_TO_STOP and self.failed > self.max_provider_failures * self.asked:
            raise ProviderFailuresError(
                f"the provider failed {self.failed} of {self.asked} requests this run (more than "
                f"--max-provider-failures {self.max_provider_failures:g}), the first with "
                f"{self.first_failure}; every answer so far is cached: fix the cause and run the same "
                "command again to continue (or raise --max-provider-failures)"
            )

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    def keys(
        self,
        prompt_version: str,
        requests: Sequence[ChatRequest],
        schema: dict[str, Any] | None,
        schema_text: str,
    ) -> list[str]:
        """Each request's cache key; ``schema_text`` is the stage-wide ``schema`` serialised once
        (a request with a schema of its own has it serialised per request)."""
        model = self.backend.model_id
        return [
            request_key(model, r, prompt_version, schema_text if r.json_schema is schema else None)
            for r in requests
        ]

    def prefetch(self, prompt_version: str, pass_requests: PassRequests, stats: StageStats) -> Container[str]:
        """Called before each pass with a way to go through the pass's requests, a batch of
        (key, request) pairs at a time; returns the keys it asked the backend for. Here nothing
        (each batch asks for its own misses) beyond checking the pass against the cap."""
        if self.spending.max_cost is not None:
            self.check_cost(stats.name, [request for _, request in self.misses(pass_requests)])
        return set()

    def misses(self, pass_requests: PassRequests) -> list[tuple[str, ChatRequest]]:
        """The pass's requests the cache lacks, each once."""
        found: dict[str, ChatRequest] = {}
        for batch in pass_requests():
            held = self.cache.present([key for key, _ in batch])
            found.update((key, request) for key, request in batch if key not in held)
        return list(found.items())

    def check_cost(self, stage: str, requests: Sequence[ChatRequest]) -> None:
        """Refuse to send ``requests`` (a pass of ``stage``) when, at their estimated most,
        they would take the build past its cap."""
        pricing, cap = self.spending.pricing, self.spending.max_cost
        if pricing is None or cap is None or not requests:
            return
        estimate = sum(pricing.dollars(*estimated_tokens(r), batched=self.batched) for r in requests)
        spent = self.spending.spent_before + self.spending.spent
        if spent + estimate > cap:
            raise CostCapError(
                f"--max-cost ${cap:.2f}: the build has spent ${spent:.2f} and its next pass "
                f"({len(requests)} requests of stage {stage}) would cost up to ${estimate:.2f}; "
                f"nothing of it was sent and every answer so far is kept: run the same command with "
                f"--max-cost {spent + estimate:.2f} or more to go on"
            )

    def complete(
        self,
        prompt_version: str,
        keys: Sequence[str],
        *,
        requests: Sequence[ChatRequest],
        stats: StageStats,
        prefetched: Container[str],
    ) -> tuple[list[Completion], list[bool]]:
        """The answers in request order, and which of them are fresh (asked of the model in this
        run: now, or by the pass's prefetch); misses are committed before this returns."""
        found = self.cache.get_many(list(keys))
        found.update((key, self.unanswered[key]) for key in keys if key in self.unanswered)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            by_key = dict(zip(keys, requests, strict=True))
            answers = self.ask(prompt_version, missing, [by_key[k] for k in missing], stats)
            found.update(zip(missing, answers, strict=True))
        fresh_keys = set(missing) | {key for key in keys if key in prefetched}
        hits = len(keys) - len(fresh_keys)
        self.cache.count(hits, len(fresh_keys))
        stats.cache_hits += hits
        stats.cache_misses += len(fresh_keys)
        return [found[k] for k in keys], [k in fresh_keys for k in keys]

    def ask(
        self, prompt_version: str, keys: Sequence[str], requests: Sequence[ChatRequest], stats: StageStats
    ) -> list[Completion]:
        """The backend's answers to requests the cache lacks (``keys`` are theirs), committed
        before they are returned."""
        started = time.perf_counter()
        fresh = self.backend.generate(list(requests))
        stats.backend_seconds += time.perf_counter() - started
        stats.backend_calls += 1
        if len(fresh) != len(requests):
            raise RuntimeError(f"backend answered {len(fresh)} of {len(requests)} requests")
        self.commit(prompt_version, list(zip(keys, fresh, strict=True)), stats)
        return fresh

    def counts_as_call(self, fresh: bool) -> bool:
        """Whether an answer uses up one of an item's model calls (see `Stage.max_attempts`)."""
        return fresh or self.replay


class StreamingCompletions(Completions):
    """For a backend that takes a whole pass as one stream (engines on a Ray cluster)."""

    backend: StreamingBackend  # made so by `ExecutionPlan.completions`

    def prefetch(self, prompt_version: str, pass_requests: PassRequests, stats: StageStats) -> Container[str]:
        """Every request of the pass that the cache lacks, sent as one stream that is rendered
        only as the backend takes it, each answered chunk committed as it arrives: the driver
        holds a batch of the pass's requests at a time, never the pass."""
        super().prefetch(prompt_version, pass_requests, stats)  # the cap, when there is one
        asked = SeenKeys()  # the n-th key asked is the stream's position n (16 bytes a key, not 150)
        unanswered: dict[int, str] = {}  # positions taken by the backend, not yet answered

        def misses() -> Iterator[ChatRequest]:
            for batch in pass_requests():
                held = self.cache.present([key for key, _ in batch])
                for key, request in batch:
                    position = len(asked)
                    if key not in held and asked.add(key):
                        unanswered[position] = key
                        yield request

        started = time.perf_counter()
        self.unanswered.clear()
        for chunk in self.backend.stream(misses()):
            answered = [(unanswered.pop(index), completion) for index, completion in chunk]
            self.unanswered.update((key, c) for key, c in answered if not c.answered)
            self.commit(prompt_version, answered, stats)
        if not len(asked):
            return set()
        # the time of the pass's rendering and cache look-ups is in it too: they are done as
        # the engines take requests, behind the engines' own work
        stats.backend_seconds += time.perf_counter() - started
        stats.backend_calls += 1
        return asked
