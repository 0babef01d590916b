"""The stage runner: `Dataset.map(batched=True)` -> request cache -> backend -> parse.

Inside one batch a stage renders each item's request, takes the answers from its
`Completions` (cache hits served, the misses asked of the backend in one call and committed),
and only then parses. A crash loses at most the batch in flight; a re-run serves everything
finished from the cache. Parse failures become failure rows (key, stage, reason, attempt,
finish_reason, raw excerpt), and a failed item is retried as a new attempt with its own seed,
so it never replays the response that failed.

The SQLite cache is what resuming relies on. On top of it, when the runner has a `PassStore` (a
build's work folder) and the work items are on disk, each finished pass is kept there with its
record, named for everything that decides it: the items, the stage instance, the model, the
seed, the attempt and the package's code. A re-run of the same build loads a kept pass instead
of rendering, looking up and parsing its requests again; a pass that did not finish left no
record and is run again from the request cache. A stage that retries
failures on a re-run (`Stage.retries_failures_on_rerun`) always runs its passes. Maps get
explicit fingerprints: the engine never enters a hashed closure.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Container, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Dataset, Features, concatenate_datasets

from lettuce_build.core.characters import displayable
from lettuce_build.core.memory import give_back, pages_released, release_read
from lettuce_build.core.version import code_fingerprint
from lettuce_build.engine.checks import FAILURE_COLUMNS, RAW_EXCERPT_CHARS, Check, Judging, failure_of
from lettuce_build.engine.columns import (
    arrow_column,
    batch_rows,
    empty_dataset,
    in_row_order,
    selected,
)
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.passes import PassRecord, PassStore, flattened
from lettuce_build.engine.progress import StageBar
from lettuce_build.engine.records import FailureRow, FailureRows, StageResult, StageStats
from lettuce_build.engine.rehearsal import STAND_IN, stand_in_outputs
from lettuce_build.engine.responses import check_response
from lettuce_build.engine.retries import RetryRun, attempt_columns, retried, spent_failures
from lettuce_build.engine.seeded import seeded_request
from lettuce_build.engine.stage import ParseFailure, Stage
from lettuce_build.engine.verdicts import VerdictLog
from lettuce_build.llm.cache import schema_json
from lettuce_build.llm.protocol import ChatRequest

#: items per batch: per model call and per step of `Dataset.map`
DEFAULT_BATCH_SIZE = 64
#: rows per step of `Dataset.map`: `datasets` converts and writes each step's rows at once, so
#: a step holds several model batches (each still committed to the cache as it is answered).
#: Also the rows of every record batch a build writes to its work files (items, passes), so that
#: a pass's columns and its items' line up: each table `datasets` makes of them (a selection, a
#: join) holds a handle per record batch and column, and batches that do not line up are cut
#: where either ends. Measured, a join and a selection of a million rows in 12 columns: 57 MB
#: of such handles with batches of 1,000 and 1,024 rows, 14 MB lined up, 2 MB at 8,192 rows.
MAP_BATCH = 4096
#: however many cached attempts a re-run replays, a stage never makes more passes than this
MAX_ATTEMPT_PASSES = 16


@dataclass
class Runner:
    """Runs stages over datasets, taking their answers from one `Completions`."""

    completions: Completions
    _: KW_ONLY
    seed: int = 0
    batch_size: int = DEFAULT_BATCH_SIZE
    #: where finished passes are kept for a re-run (none: every pass runs, from the request cache)
    passes: PassStore | None = None
    #: where the verdicts of the stages' checks are written (none: not kept)
    verdicts: VerdictLog | None = None

    def run(self, dataset: Dataset, stage: Stage, checks: Sequence[Check] = ()) -> StageResult:
        """Run ``stage`` over ``dataset``, whose items have keys of their own (the stage loop
        checks them once, where they come in: a stage or a wave only ever keeps some of them);
        each of ``checks`` judges every item it finishes, and an item a check rejects fails (and
        is retried) like any other."""
        stats = StageStats.of(stage, len(dataset))
        if len(dataset) == 0:
            # nothing reached this stage (every item failed before it): a normal, empty result
            # with the stage's columns, which `map` would not add over zero rows
            empty = empty_dataset(Features({**dataset.features, **stage.outputs}))
            return StageResult(ok=empty, failures=FailureRows(), stats=stats)
        _check_columns(dataset, stage)
        result = _StageRun(self, stage, stats, checks).over(dataset)
        # what the stage read of its files between passes (keys, flags, failures) goes back too
        release_read(dataset, result.ok)
        return result


def _check_columns(dataset: Dataset, stage: Stage) -> None:
    missing = [c for c in ("key", *stage.requires) if c not in dataset.column_names]
    if missing:
        raise ValueError(
            f"stage {stage.name}: work items lack column(s) {missing}; "
            f"they have {dataset.column_names}; it requires {['key', *stage.requires]}"
        )


class _StageRun:
    """One `Runner.run`: the stage's passes over its items (attempt 0 over every item, each retry
    over what failed the attempt before), with the statistics and the bar they update."""

    def __init__(self, runner: Runner, stage: Stage, stats: StageStats, checks: Sequence[Check]) -> None:
        self.runner = runner
        self.judging = Judging(stage, checks, runner.verdicts)
        self.completions = runner.completions
        self.stage = stage
        self.stats = stats
        self.schema = stage.response_model.model_json_schema() if stage.response_model else None
        self.schema_text = schema_json(self.schema)  # serialised once for every cache key of this run
        self.features = Features({**stage.outputs, **FAILURE_COLUMNS})

    def requests(self, items: Sequence[dict[str, Any]], attempt: int) -> list[ChatRequest]:
        return [
            seeded_request(self.stage, item, build_seed=self.runner.seed, attempt=attempt, schema=self.schema)
            for item in items
        ]

    def keys(self, requests: Sequence[ChatRequest]) -> list[str]:
        return self.completions.keys(self.stage.cache_version, requests, self.schema, self.schema_text)

    def pass_requests(self, items: Dataset, attempt: int) -> Iterator[list[tuple[str, ChatRequest]]]:
        """One pass's requests with their keys, a batch at a time (for completions that want a
        pass at once)."""
        for batch in items.iter(batch_size=self.runner.batch_size):
            requests = self.requests([row for row in batch_rows(batch) if self.stage.applies(row)], attempt)
            yield list(zip(self.keys(requests), requests, strict=True))

    def batch(
        self, batch: dict[str, list[Any]], attempt: int, prefetched: Container[str], bar: StageBar
    ) -> pa.Table:
        """One step of `Dataset.map` (`MAP_BATCH` rows, written at once): its items asked in
        batches of the runner's size, each parsed into outputs or failure rows. Returned as an
        Arrow table of the declared features, which `datasets` writes without converting again."""
        stage = self.stage
        items = batch_rows(batch)
        size = self.runner.batch_size
        done = [
            self.answered(items[at : at + size], attempt, prefetched, bar)
            for at in range(0, len(items), size)
        ]
        rows = [row for part in done for row in part]
        out: dict[str, list[Any]] = {name: [r.get(name) for r, *_ in rows] for name in stage.outputs}
        out["_ok"] = [f is None for _, f, *_ in rows]
        out["_failure"] = [f.model_dump_json() if f else None for _, f, *_ in rows]
        out["_fresh"] = [fresh for _, _, fresh, _ in rows]
        out["_asked"] = [asked for *_, asked in rows]
        return pa.Table.from_pydict(out, schema=self.features.arrow_schema)

    def answered(
        self, items: list[dict[str, Any]], attempt: int, prefetched: Container[str], bar: StageBar
    ) -> list[tuple[dict[str, Any], FailureRow | None, bool, bool]]:
        """One model batch: per item its outputs, its failure (or None), whether its answer was
        fresh and whether it was asked at all (not passed through); answers are committed to the
        cache before anything is parsed."""
        stage, stats = self.stage, self.stats
        results: list[dict[str, Any]] = [{} for _ in items]
        failures: list[FailureRow | None] = [None] * len(items)
        fresh_flags = [False] * len(items)
        pending = []
        for i, item in enumerate(items):
            if stage.applies(item):
                pending.append(i)
                continue
            try:
                results[i] = stage.passed(item)
                stats.passed_through += 1
            except ParseFailure as failure:  # what the item brought fails the stage's checks
                failure_row = failure_of(
                    stage.name, item["key"], attempt=attempt, reason=failure.reason, detail=failure.detail
                )
                failures[i] = failure_row.model_copy(update={"retryable": failure.retry})
        if pending:
            requests = self.requests([items[i] for i in pending], attempt)
            if not stats.sampling:
                stats.sampling = {
                    "temperature": requests[0].temperature,
                    "max_tokens": requests[0].max_tokens,
                    "json_schema": requests[0].json_schema is not None,
                }
            keys, version = self.keys(requests), stage.cache_version
            completions, fresh = self.completions.complete(
                version, keys, requests=requests, stats=stats, prefetched=prefetched
            )
            for i, completion, was_fresh in zip(pending, completions, fresh, strict=True):
                fresh_flags[i] = was_fresh
                if completion.finish_reason == STAND_IN:  # a rehearsal's (dry run): nothing to parse
                    results[i] = stand_in_outputs(stage, items[i])
                    continue
                try:
                    results[i] = stage.parse(items[i], check_response(stage, completion))
                except ParseFailure as failure:
                    failures[i] = FailureRow(
                        key=items[i]["key"],
                        stage=stage.name,
                        reason=failure.reason,
                        detail=displayable(failure.detail),
                        attempt=attempt,
                        finish_reason=completion.finish_reason,
                        raw_excerpt=displayable(completion.text[:RAW_EXCERPT_CHARS]),
                        retryable=failure.retry,
                    )
        failed_now = sum(f is not None for f in failures)
        bar.batch(
            attempt,
            ok=len(items) - failed_now,
            failed=failed_now,
            cached=stats.cache_hits,
            tokens=stats.completion_tokens if self.completions.generates else 0,
        )
        asked = [False] * len(items)
        for i in pending:
            asked[i] = True
        return list(zip(results, failures, fresh_flags, asked, strict=True))

    def one_pass(
        self, pending: Dataset, attempt: int, *, name: str, keep: PassStore | None, bar: StageBar
    ) -> Dataset:
        """One pass over ``pending``: loaded when ``keep`` holds it from an earlier run, else run
        (and kept there, when given)."""
        try:
            return self._one_pass(pending, attempt, name=name, keep=keep, bar=bar)
        finally:
            give_back()  # what the pass's batches freed, before the next pass allocates anew

    def _one_pass(
        self, pending: Dataset, attempt: int, *, name: str, keep: PassStore | None, bar: StageBar
    ) -> Dataset:
        stage, stats = self.stage, self.stats
        files = keep.files(name) if keep else None
        reuse = files is not None and files.record.exists() and files.data.exists()
        if files is not None and pending._indices is not None:
            # a selection (a balancing wave, a retry): its rows copied once, beside the pass, so
            # that the pass's columns join them without `datasets` flattening them row by row
            pending = flattened(pending, files.selection, f"{name}-items", MAP_BATCH)
        before = (stats.passed_through, stats.cache_hits + stats.cache_misses, stats.provider_failures)
        with pages_released(pending):  # the pass reads its items once: their pages go back as it goes
            prefetched: Container[str] = set()
            if not reuse:
                prefetched = self.completions.prefetch(
                    stage.cache_version, functools.partial(self.pass_requests, pending, attempt), stats
                )
            # the pass writes only what it adds; the items' own columns are joined back beside it
            outputs = pending.map(
                functools.partial(self.batch, attempt=attempt, prefetched=prefetched, bar=bar),
                batched=True,
                batch_size=MAP_BATCH * math.ceil(self.runner.batch_size / MAP_BATCH),
                writer_batch_size=MAP_BATCH,
                remove_columns=pending.column_names,
                features=self.features,
                new_fingerprint=name,
                cache_file_name=str(files.data) if files else None,
                load_from_cache_file=reuse,
                desc=f"stage {stage.name}" + (f" (retry {attempt})" if attempt else ""),  # --verbose
            )
        mapped = concatenate_datasets([pending, outputs], axis=1)
        if keep is None or files is None or stats.provider_failures > before[2]:
            # a pass the provider failed part of is not kept: a re-run runs it again from the
            # cache, asking the provider only for what it did not answer
            return mapped
        if reuse:
            record = PassRecord.model_validate_json(files.record.read_text())
            stats.passed_through += record.passed_through
            stats.cache_hits += record.answered
            stats.sampling = stats.sampling or record.sampling
            self.completions.cache.count(record.answered, 0)
            keep.used(files)
            # counted by Arrow: a million items' flags as a Python list were 8 MB a re-run held
            failed = len(mapped) - (pc.sum(arrow_column(mapped, "_ok")).as_py() or 0)
            bar.batch(attempt, ok=len(mapped) - failed, failed=failed, cached=stats.cache_hits, tokens=0)
            return mapped
        record = PassRecord(
            passed_through=stats.passed_through - before[0],
            answered=stats.cache_hits + stats.cache_misses - before[1],
            sampling=stats.sampling,
        )
        staged = files.record.with_suffix(".tmp")
        staged.write_text(record.model_dump_json())
        staged.replace(files.record)  # written last: a pass without its record is run again
        return mapped

    def over(self, dataset: Dataset) -> StageResult:
        stage, stats, runner = self.stage, self.stats, self.runner
        started = time.perf_counter()
        bar = StageBar(stage.name, len(dataset))
        fingerprint = hashlib.sha256(
            json.dumps(
                [
                    dataset._fingerprint,
                    stage.identity(),
                    self.completions.model_id,
                    runner.seed,
                    stage.max_attempts,
                    code_fingerprint(),
                ]
            ).encode()
        ).hexdigest()[:32]
        # a pass is kept only over items on disk: an in-memory dataset's fingerprint is no name
        # a re-run would find again
        kept = dataset.cache_files and not stage.retries_failures_on_rerun
        keep = runner.passes if kept else None
        # Attempt 0 runs over every item; each retry is one pass over everything that failed
        # the attempt before, so retries share large batches instead of trickling in per batch.
        # `rows` holds each pending item's row in the input, to restore the order at the end.
        # Explicit fingerprints throughout: without them `datasets` would pickle closures and
        # index lists to hash them.
        pending, rows = dataset, np.arange(len(dataset), dtype=np.int64)
        done: list[Dataset] = []
        done_rows: list[np.ndarray] = []
        failures = FailureRows()
        passes = MAX_ATTEMPT_PASSES if stage.retries_failures_on_rerun else stage.max_attempts
        calls_used: Counter[str] = Counter()
        try:  # a stop closes the bar too, before the command says what was kept
            for attempt in range(passes):
                mapped = self.one_pass(
                    pending, attempt, name=f"{fingerprint}-attempt{attempt}", keep=keep, bar=bar
                )
                if self.judging.checks:
                    mapped = self.judging.judged(mapped, attempt, f"{fingerprint}-judged{attempt}", bar)
                flags = arrow_column(mapped, "_ok").to_numpy().astype(bool)
                ok_at, failed_at = np.flatnonzero(flags), np.flatnonzero(~flags)
                ok_rows = selected(mapped, ok_at, f"{fingerprint}-ok{attempt}")
                done.append(ok_rows.remove_columns(attempt_columns(ok_rows)))
                done_rows.append(rows if len(ok_at) == len(rows) else rows[ok_at])
                retry = spent_failures(
                    mapped,
                    failed_at,
                    run=RetryRun(stage=stage, stats=self.stats, completions=self.completions),
                    last=attempt == passes - 1,
                    calls_used=calls_used,
                    failures=failures,
                )
                if not len(retry):
                    break
                pending = retried(mapped, retry, fingerprint=f"{fingerprint}-retry{attempt}", stage=stage)
                rows = rows[retry]
        finally:
            bar.close()
        # which items finished is part of the name: a re-run that finishes more of them (a
        # provider that failed some the first time) must not find the next stage's kept passes
        ok, in_order = in_row_order(done, done_rows, f"{fingerprint}-done")
        # passed through counts attempts: an item a check refused passes through again on its
        # retry, so more may have passed than finished (seen: "-6 ok")
        stats.passed_through = min(stats.passed_through, len(ok))
        stats.ok = len(ok) - stats.passed_through
        stats.failed = len(failures)
        stats.seconds = time.perf_counter() - started
        checks = StageStats.per_name(self.judging.check_stats)
        return StageResult(ok=ok, failures=failures, stats=stats, checks=checks, rows=in_order)
