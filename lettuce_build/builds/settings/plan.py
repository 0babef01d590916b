"""What a build is, decided once before it runs, so that the engine needs to know none of it:
where the model runs and how answers are obtained (in this process, or streamed to a Ray actor
pool, or sent through a provider's Batch API), what requests cost and may cost, whether the
build replays runs that already happened (a merge of shards), which slice of the work items it
holds (a shard) and how many balancing waves it may run."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.builds.settings.shards import Shard
from lettuce_build.engine.completions import (
    DEFAULT_MAX_PROVIDER_FAILURES,
    Completions,
    Limits,
    Spending,
    StreamingCompletions,
)
from lettuce_build.engine.rehearsal import Rehearsal
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import Backend, StreamingBackend
from lettuce_build.llm.ray_pool import RayBackend, RayOptions


class ExecutionPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    #: this process builds one slice of the work items; `merge` joins the slices
    shard: Shard | None = None
    #: made again from runs that already happened (`merge`): cached answers count as the
    #: model calls they were when they were made
    replay: bool = False
    #: the share of this run's requests the provider may fail before the build stops
    max_provider_failures: float = DEFAULT_MAX_PROVIDER_FAILURES
    #: the Ray actor pool the build's model runs on, one engine per actor (none: this process)
    ray: RayOptions | None = None
    #: what requests cost, and the cap on what the build may spend (one per run: the build's
    #: model and its judges spend from the same)
    spending: Spending = Field(default_factory=Spending)
    #: a dry run: what the cache holds is served, the rest counted and stood in for, never asked
    #: (engine/rehearsal.py)
    rehearsal: bool = False

    def engine(self, backend: Backend) -> Backend:
        """The build's model as this plan runs it: on a Ray pool, or as it is."""
        return RayBackend(backend, self.ray) if self.ray is not None else backend

    @property
    def max_waves(self) -> int | None:
        """A shard runs only the first wave of balancing (decided item by item, so it is exactly
        its part of the whole build's); the merge balances over every item."""
        return 1 if self.shard is not None else None

    def completions(self, backend: Backend, cache: RequestCache) -> Completions:
        """An endpoint asked to batch (``--batch``) gets each pass's misses as batches; a backend
        that takes whole passes (a Ray pool, an endpoint) is handed each pass as one stream, its
        answers committed as they arrive."""
        given: Limits = {
            "replay": self.replay,
            "max_provider_failures": self.max_provider_failures,
            "spending": self.spending,
        }
        if self.rehearsal:
            return Rehearsal(backend, cache, **given)
        if backend.info().options.get("batch"):
            from lettuce_build.engine.batches import BatchCompletions
            from lettuce_build.llm.batch_api import BatchAPI
            from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger
            from lettuce_build.llm.openai_backend import OpenAIBackend

            assert isinstance(backend, OpenAIBackend)  # only an endpoint's settings have ``batch``
            ledger = BatchLedger(cache.path.parent / BATCHES_FILE)
            return BatchCompletions(backend, cache, api=BatchAPI(backend), ledger=ledger, **given)
        if isinstance(backend, StreamingBackend):
            return StreamingCompletions(backend, cache, **given)
        return Completions(backend, cache, **given)

    @staticmethod
    def close(models: Sequence[Backend]) -> None:
        """Release the engines a pool held for the whole build."""
        for model in models:
            if isinstance(model, StreamingBackend):
                model.close()
