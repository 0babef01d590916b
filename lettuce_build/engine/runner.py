"""The stage engine: `Dataset.map(batched=True)` -> request cache -> backend -> parse.

Inside one batch a stage renders each item's request, serves cache hits,
sends only the misses to the backend in one call, writes and commits the raw
responses, and only then parses. A crash loses at most the batch in flight; a
re-run serves everything finished from the cache. Parse failures become
failure rows (key, stage, reason, attempt, finish_reason, raw excerpt), and a
failed item is retried as a new attempt with its own seed, so it never replays
the response that failed.

A streaming backend (engines in a Ray actor pool, see llm/ray_pool.py) is handed each pass's
misses all at once before the pass, and every chunk it answers is committed as it arrives; the
pass then finds them in the cache. Keys, seeds and parsing are the same either way.

The SQLite cache, not `datasets`' map cache, is what resuming relies on: maps
get explicit fingerprints (the engine never enters a hashed closure) and do
not reload earlier map results, because a re-run must retry earlier failures.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

from datasets import Dataset, Features, Value, concatenate_datasets
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lettuce_build.core.seeding import number
from lettuce_build.engine.progress import StageBar
from lettuce_build.llm.cache import RequestCache, request_key, schema_json
from lettuce_build.llm.protocol import PROMPT_TOO_LONG, Backend, ChatRequest, Completion, StreamingBackend

RAW_EXCERPT_CHARS = 300


class CutText(str):
    """What `Stage.salvage` kept of a response cut at max_tokens: `parse` can tell it was cut."""


class ParseFailure(Exception):
    """A response a stage cannot use; ``reason`` is a stable code, ``detail`` says why.

    ``retry=False`` marks an honest answer that a new seed would not change (a model saying
    "nothing fits"): it is recorded as a failure and not retried.
    """

    def __init__(self, reason: str, detail: str = "", *, retry: bool = True) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.retry = retry


class Sampling(BaseModel):
    """How a stage samples: part of every request (and of its cache key)."""

    model_config = ConfigDict(frozen=True)

    temperature: float = Field(default=0.7, ge=0.0)
    max_tokens: int = Field(default=400, ge=1)


class Stage(ABC):
    """One model step over work items that carry a unique ``key`` column.

    A stage with a ``response_model`` gets structured output: its requests carry
    the model's JSON schema and responses are validated into it before `parse`.
    """

    name: ClassVar[str]
    prompt_version: ClassVar[str]
    #: the columns the stage adds (datasets feature types)
    outputs: ClassVar[dict[str, Any]]
    #: the stage's default sampling; an instance may carry its own (``stage.sampling = ...``)
    sampling: Sampling = Sampling()
    response_model: ClassVar[type[BaseModel] | None] = None
    max_attempts: ClassVar[int] = 2
    #: False (default): a re-run replays every cached attempt and stops where the last run stopped.
    #: True: cached failed attempts do not use up an item's budget of ``max_attempts`` model calls,
    #: so an item that failed is tried afresh on the next run (PsiloQA's "retried next run").
    retries_failures_on_rerun: ClassVar[bool] = False
    #: An injecting stage: the build's stage loop offers it items in seeded waves until each
    #: split's requested share of hallucinated samples is met, and an item it fails on stays a
    #: clean sample (its failure row is recorded). Other stages: a failed item goes no further.
    injects: ClassVar[bool] = False
    #: the work-item columns the stage reads (besides ``key``); the runner checks them
    requires: tuple[str, ...] = ()

    def applies(self, item: dict[str, Any]) -> bool:
        """False lets an item pass through with empty outputs and no model call."""
        return True

    def salvage(self, text: str) -> str | None:
        """What a plain-text stage keeps of a response cut at max_tokens (its complete lines or
        sentences, say), or None: the default, a "truncated" failure. Cut JSON is never kept."""
        return None

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        """A JSON schema of this item's own (e.g. edits constrained to its answer's anchors), or
        None for the stage's `response_model` schema."""
        return None

    def request(self, system: str | None, user: str) -> ChatRequest:
        """A request with the stage's sampling; `render` returns one."""
        return ChatRequest.of(
            system, user, temperature=self.sampling.temperature, max_tokens=self.sampling.max_tokens
        )

    @abstractmethod
    def render(self, item: dict[str, Any]) -> ChatRequest:
        """The request for an item; the runner sets its seed (and schema, with a response_model)."""

    @abstractmethod
    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        """The output columns from a response (a validated response_model, else the raw text).

        Raise `ParseFailure` for a response that cannot be used.
        """


class FailureRow(BaseModel):
    key: str
    stage: str
    reason: str
    detail: str = ""
    attempt: int
    finish_reason: str | None = None
    raw_excerpt: str = ""
    retryable: bool = True


class StageStats(BaseModel):
    name: str
    prompt_version: str
    sampling: dict[str, Any] = Field(default_factory=dict)
    items_in: int = 0
    passed_through: int = 0
    ok: int = 0
    failed: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    backend_calls: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    backend_seconds: float = 0.0
    failure_reasons: dict[str, int] = Field(default_factory=dict)


class StageResult(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    ok: Dataset
    failures: list[FailureRow]
    stats: StageStats


def request_seed(build_seed: int, key: str, attempt: int) -> int:
    return number(build_seed, key, attempt, size=4) & 0x7FFFFFFF


_ROW = "_lettuce_row"
#: items per batch: per model call and per step of `Dataset.map`
DEFAULT_BATCH_SIZE = 64
#: however many cached attempts a re-run replays, a stage never makes more passes than this
MAX_ATTEMPT_PASSES = 16

_FAILURE_COLUMNS = {
    "_ok": Value("bool"),
    "_failure": Value("string"),  # a FailureRow as JSON, for failed rows
    "_fresh": Value("bool"),  # whether this attempt's answer came from the model, not the cache
}


def check_response(stage: Stage, completion: Completion) -> Any:
    """Turn a raw completion into what `stage.parse` takes, or raise `ParseFailure`."""
    text = completion.text
    if completion.finish_reason == PROMPT_TOO_LONG:
        detail = f"{completion.prompt_tokens} prompt tokens do not fit the model's context"
        raise ParseFailure("prompt_too_long", detail, retry=False)
    if completion.finish_reason == "length":
        kept = stage.salvage(text) if stage.response_model is None else None
        if not kept or not kept.strip():
            raise ParseFailure("truncated", "the response hit max_tokens (finish_reason == 'length')")
        text = CutText(kept)
    if not text.strip():
        raise ParseFailure("empty_output", "the model returned no text")
    if stage.response_model is None:
        return text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseFailure("malformed_json", f"{err.msg} at position {err.pos}") from err
    try:
        return stage.response_model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise ParseFailure("schema_mismatch", f"{where}: {first['msg']}") from err


class Runner:
    """Runs stages over datasets against one backend and one request cache."""

    def __init__(
        self,
        backend: Backend,
        cache: RequestCache,
        *,
        seed: int = 0,
        batch_size: int = DEFAULT_BATCH_SIZE,
        replay: bool = False,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.seed = seed
        self.batch_size = batch_size
        #: replaying runs that already happened (a merge of shards): a cached attempt counts
        #: against an item's budget as it did when it was made, so a stage that retries failures
        #: on a re-run stops where those runs stopped instead of asking the model again
        self.replay = replay

    def _requests(
        self, stage: Stage, items: Sequence[dict[str, Any]], attempt: int, schema: dict[str, Any] | None
    ) -> list[ChatRequest]:
        return [seeded_request(stage, item, self.seed, attempt, schema) for item in items]

    def _keys(
        self, stage: Stage, requests: Sequence[ChatRequest], schema: dict[str, Any] | None, schema_text: str
    ) -> list[str]:
        model = self.backend.model_id
        return [
            # the stage-wide schema's text is computed once; an item's own schema per request
            request_key(model, r, stage.prompt_version, schema_text if r.json_schema is schema else None)
            for r in requests
        ]

    def _prefill(
        self,
        stage: Stage,
        items: Dataset,
        attempt: int,
        stats: StageStats,
        schema: dict[str, Any] | None,
        schema_text: str,
    ) -> set[str]:
        """For a streaming backend (engines on a Ray cluster): every request of the pass that the
        cache lacks, sent as one stream, each answered chunk committed as it arrives; the pass
        then reads them from the cache. Returns the keys it asked for."""
        wanted: dict[str, ChatRequest] = {}
        for batch in items.iter(batch_size=self.batch_size):
            rows = [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]
            requests = self._requests(stage, [row for row in rows if stage.applies(row)], attempt, schema)
            wanted.update(zip(self._keys(stage, requests, schema, schema_text), requests, strict=True))
        found = self.cache.get_many(list(wanted))
        missing = [key for key in wanted if key not in found]
        if not missing:
            return set()
        assert isinstance(self.backend, StreamingBackend)
        started = time.perf_counter()
        for chunk in self.backend.stream([wanted[key] for key in missing]):
            answered = [(missing[index], completion) for index, completion in chunk]
            self.cache.put_many(self.backend.model_id, stage.prompt_version, answered)
            stats.completion_tokens += sum(c.completion_tokens for _, c in answered)
        stats.backend_seconds += time.perf_counter() - started
        stats.backend_calls += 1
        return set(missing)

    def _complete(
        self,
        stage: Stage,
        requests: Sequence[ChatRequest],
        stats: StageStats,
        schema: dict[str, Any] | None,
        schema_text: str,
        prefilled: set[str],
    ) -> tuple[list[Completion], list[bool]]:
        """Cache hits plus one backend call for the misses (committed before returning); which were
        fresh (asked of the model in this run: now, or by the pass's prefill)."""
        model = self.backend.model_id
        keys = self._keys(stage, requests, schema, schema_text)
        found = self.cache.get_many(keys)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            by_key = dict(zip(keys, requests, strict=True))
            started = time.perf_counter()
            fresh = self.backend.generate([by_key[k] for k in missing])
            stats.backend_seconds += time.perf_counter() - started
            stats.backend_calls += 1
            if len(fresh) != len(missing):
                raise RuntimeError(f"backend answered {len(fresh)} of {len(missing)} requests")
            self.cache.put_many(model, stage.prompt_version, list(zip(missing, fresh, strict=True)))
            found.update(zip(missing, fresh, strict=True))
            stats.completion_tokens += sum(c.completion_tokens for c in fresh)
        fresh_keys = set(missing) | prefilled.intersection(keys)
        hits = len(keys) - len(fresh_keys)
        self.cache.count(hits, len(fresh_keys))
        stats.cache_hits += hits
        stats.cache_misses += len(fresh_keys)
        return [found[k] for k in keys], [k in fresh_keys for k in keys]

    def run(self, dataset: Dataset, stage: Stage) -> StageResult:
        stats = StageStats(name=stage.name, prompt_version=stage.prompt_version, items_in=len(dataset))
        outputs = dict(stage.outputs)
        if len(dataset) == 0:
            # nothing reached this stage (every item failed before it): a normal, empty result
            # with the stage's columns, which `map` would not add over zero rows
            empty = Dataset.from_dict(
                {name: [] for name in [*dataset.column_names, *outputs]},
                features=Features({**dataset.features, **outputs}),
            )
            return StageResult(ok=empty, failures=[], stats=stats)
        missing = [c for c in ("key", *stage.requires) if c not in dataset.column_names]
        if missing:
            raise ValueError(
                f"stage {stage.name}: work items lack column(s) {missing}; "
                f"they have {dataset.column_names}; it requires {['key', *stage.requires]}"
            )
        keys = dataset["key"][:]  # a slice is one Arrow conversion; iterating a Column formats row by row
        duplicates = [k for k, n in Counter(keys).items() if n > 1]
        if duplicates:
            raise ValueError(f"stage {stage.name}: duplicate work item keys, e.g. {duplicates[:3]}")
        started = time.perf_counter()
        schema = stage.response_model.model_json_schema() if stage.response_model else None
        schema_text = schema_json(schema)  # serialised once for every cache key of this run
        bar = StageBar(stage.name, len(dataset))

        def process(batch: dict[str, list[Any]], attempt: int, prefilled: set[str]) -> dict[str, list[Any]]:
            columns = list(batch)
            items = [dict(zip(columns, values, strict=True)) for values in zip(*batch.values(), strict=True)]
            results: list[dict[str, Any]] = [{} for _ in items]
            failures: list[FailureRow | None] = [None] * len(items)
            fresh_flags = [False] * len(items)
            pending = [i for i, item in enumerate(items) if stage.applies(item)]
            stats.passed_through += len(items) - len(pending)
            if pending:
                requests = self._requests(stage, [items[i] for i in pending], attempt, schema)
                if not stats.sampling:
                    stats.sampling = {
                        "temperature": requests[0].temperature,
                        "max_tokens": requests[0].max_tokens,
                        "json_schema": requests[0].json_schema is not None,
                    }
                completions, fresh = self._complete(stage, requests, stats, schema, schema_text, prefilled)
                for i, was_fresh in zip(pending, fresh, strict=True):
                    fresh_flags[i] = was_fresh
                for i, completion in zip(pending, completions, strict=True):
                    try:
                        results[i] = stage.parse(items[i], check_response(stage, completion))
                    except ParseFailure as failure:
                        failures[i] = FailureRow(
                            key=items[i]["key"],
                            stage=stage.name,
                            reason=failure.reason,
                            detail=failure.detail,
                            attempt=attempt,
                            finish_reason=completion.finish_reason,
                            raw_excerpt=completion.text[:RAW_EXCERPT_CHARS],
                            retryable=failure.retry,
                        )
            out: dict[str, list[Any]] = {name: [r.get(name) for r in results] for name in outputs}
            out["_ok"] = [f is None for f in failures]
            out["_failure"] = [f.model_dump_json() if f else None for f in failures]
            out["_fresh"] = fresh_flags
            failed_now = sum(f is not None for f in failures)
            bar.batch(attempt, ok=len(items) - failed_now, failed=failed_now)
            return out

        fingerprint = hashlib.sha256(
            json.dumps(
                [
                    dataset._fingerprint,
                    stage.name,
                    stage.prompt_version,
                    self.backend.model_id,
                    self.seed,
                    stage.max_attempts,
                ]
            ).encode()
        ).hexdigest()[:32]
        # Attempt 0 runs over every item; each retry is one pass over everything that failed
        # the attempt before, so retries share large batches instead of trickling in per batch.
        # `_row` restores the input order at the end. Explicit fingerprints throughout: without
        # them `datasets` would pickle closures and index lists to hash them.
        pending = dataset.add_column(_ROW, list(range(len(dataset))), new_fingerprint=f"{fingerprint}-rows")
        done: list[Dataset] = []
        failure_rows: list[FailureRow] = []
        passes = MAX_ATTEMPT_PASSES if stage.retries_failures_on_rerun else stage.max_attempts
        fresh_used: Counter[str] = Counter()
        streaming = isinstance(self.backend, StreamingBackend)
        for attempt in range(passes):
            prefilled = (
                self._prefill(stage, pending, attempt, stats, schema, schema_text) if streaming else set()
            )
            mapped = pending.map(
                functools.partial(process, attempt=attempt, prefilled=prefilled),
                batched=True,
                batch_size=self.batch_size,
                features=Features({**pending.features, **outputs, **_FAILURE_COLUMNS}),
                new_fingerprint=f"{fingerprint}-attempt{attempt}",
                load_from_cache_file=False,
                desc=f"stage {stage.name}" + (f" (retry {attempt})" if attempt else ""),  # --verbose
            )
            flags = mapped["_ok"][:]  # a slice is one Arrow conversion; iterating a Column is row by row
            ok_rows = mapped.select(
                [i for i, ok in enumerate(flags) if ok], new_fingerprint=f"{fingerprint}-ok{attempt}"
            )
            done.append(ok_rows.remove_columns(list(_FAILURE_COLUMNS)))
            failed = mapped.select(
                [i for i, ok in enumerate(flags) if not ok], new_fingerprint=f"{fingerprint}-failed{attempt}"
            )
            failed_rows = [FailureRow.model_validate_json(raw) for raw in failed["_failure"][:]]
            for row, was_fresh in zip(failed_rows, failed["_fresh"][:], strict=True):
                fresh_used[row.key] += was_fresh or self.replay
            last = attempt == passes - 1
            exhausted = [
                last or (stage.retries_failures_on_rerun and fresh_used[f.key] >= stage.max_attempts)
                for f in failed_rows
            ]
            failure_rows.extend(
                f for f, done in zip(failed_rows, exhausted, strict=True) if done or not f.retryable
            )
            retry = [
                i
                for i, (f, done) in enumerate(zip(failed_rows, exhausted, strict=True))
                if f.retryable and not done
            ]
            if not retry:
                break
            pending = failed.select(retry, new_fingerprint=f"{fingerprint}-retry{attempt}")
            pending = pending.remove_columns([*outputs, *_FAILURE_COLUMNS])
        bar.close()
        ok = concatenate_datasets(done)
        rows = ok[_ROW][:]
        order = sorted(range(len(rows)), key=rows.__getitem__)
        ok = ok.select(order, new_fingerprint=f"{fingerprint}-ordered")
        ok = ok.remove_columns(_ROW, new_fingerprint=f"{fingerprint}-done")
        stats.ok = len(ok) - stats.passed_through
        stats.failed = len(failure_rows)
        stats.failure_reasons = dict(Counter(f.reason for f in failure_rows))
        stats.seconds = time.perf_counter() - started
        return StageResult(ok=ok, failures=failure_rows, stats=stats)


def seeded_request(
    stage: Stage, item: dict[str, Any], build_seed: int, attempt: int, schema: dict[str, Any] | None
) -> ChatRequest:
    """The stage's request for an item, with the attempt's own seed and the stage's JSON schema."""
    request = stage.render(item).with_params(seed=request_seed(build_seed, item["key"], attempt))
    schema = stage.item_schema(item) or schema
    return request if schema is None else request.with_params(json_schema=schema)


def call_stage(
    stage: Stage, item: dict[str, Any], backend: Backend, *, seed: int = 0, attempt: int = 0
) -> dict[str, Any]:
    """Run one stage on one item, uncached: the single-item call notebooks use.

    Returns the stage's output columns; raises `ParseFailure` as the batched run would record it.
    """
    schema = stage.response_model.model_json_schema() if stage.response_model else None
    [completion] = backend.generate([seeded_request(stage, item, seed, attempt, schema)])
    return stage.parse(item, check_response(stage, completion))
