"""``--batch``: each pass's cache misses sent through a provider's Batch API, waited for, and read
back into the request cache under the keys a live call would use; the pass then finds them
there, as it does after a Ray pool's stream (engine/completions.py).

A pass's misses become as few batches as the provider's limits allow (requests and bytes per
file). Each is written down in the build folder's ledger (llm/batch_ledger.py) when its file is
uploaded and again when the batch is made, before anything waits on it; every pass starts by
collecting the batches the ledger lists as open, so a killed build re-attaches to them and
reads back what they answered, and never sends a request that is already in a batch.

What a batch did not answer is a failure row of its item, as a live call's would be: an error
line with the provider's reason; a request the batch never reached (expired, cancelled, failed
as a whole) with why. None is cached, so the next run asks them again. Scoring requests (the
plausibility check: several prefill calls each, one token long) are not batched: they are
asked live as the pass meets them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Unpack

from tqdm.auto import tqdm

from lettuce_build.core import interrupts
from lettuce_build.core.errors import BatchAPIError
from lettuce_build.engine.completions import Completions, Limits, PassRequests
from lettuce_build.engine.records import StageStats
from lettuce_build.llm.batch_ledger import BatchLedger, BatchRecord
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import PROVIDER_ERROR, Backend, ChatRequest, Completion

log = logging.getLogger("lettuce_build")

if TYPE_CHECKING:  # the Batch API is the openai SDK's: imported only by a build that batches
    from lettuce_build.llm.batch_api import BatchAPI, BatchState


class BatchCompletions(Completions):
    """A backend's Batch API (``api``) behind a request cache, its batches in ``ledger``."""

    batched = True

    def __init__(
        self,
        backend: Backend,
        cache: RequestCache,
        *,
        api: BatchAPI,
        ledger: BatchLedger,
        **limits: Unpack[Limits],
    ) -> None:
        super().__init__(backend, cache, **limits)
        self.api = api
        self.ledger = ledger
        self.settings = api.options

    def prefetch(self, prompt_version: str, pass_requests: PassRequests, stats: StageStats) -> set[str]:
        """The pass's misses, asked through batches and read back into the cache; returns the
        keys asked (an earlier run's batches are collected first)."""
        self.unanswered.clear()
        earlier = [r for r in self.ledger.open() if r.model == self.model_id]
        if earlier:
            self._wait(earlier, {}, stats, f"batches of an earlier run ({stats.name})")
        misses = [(key, r) for key, r in self.misses(pass_requests) if not r.continuations]
        if not misses:
            return set()
        self.check_cost(stats.name, [request for _, request in misses])
        started = time.perf_counter()
        sent: dict[str, list[str]] = {}  # file id -> the keys it holds
        records = []
        for chunk in self._chunks(misses):
            record = self._submit(prompt_version, chunk, stats)
            if record is not None:
                records.append(record)
                sent[record.file_id] = [key for key, _ in chunk]
        self._wait(records, sent, stats, f"stage {stats.name}")
        stats.backend_seconds += time.perf_counter() - started
        stats.backend_calls += len(records)
        return {key for key, _ in misses}

    def _chunks(self, misses: Sequence[tuple[str, ChatRequest]]) -> list[list[tuple[str, bytes]]]:
        """The misses as batch files' lines, each file within the provider's limits."""
        chunks: list[list[tuple[str, bytes]]] = [[]]
        size = 0
        for key, request in misses:
            line = self.api.line(key, request)
            full = len(chunks[-1]) >= self.settings.batch_max_requests
            if chunks[-1] and (full or size + len(line) > self.settings.batch_max_bytes):
                chunks.append([])
                size = 0
            chunks[-1].append((key, line))
            size += len(line)
        return chunks

    def _submit(
        self, prompt_version: str, chunk: list[tuple[str, bytes]], stats: StageStats
    ) -> BatchRecord | None:
        """Upload one file and make its batch, each step written down before the next; a
        refused upload or batch fails the chunk's requests with the provider's reason."""
        file_id = None
        try:
            file_id = self.api.upload(
                b"".join(line for _, line in chunk), f"lettuce-build-{stats.name}.jsonl"
            )
            record = BatchRecord(
                file_id=file_id, model=self.model_id, prompt_version=prompt_version, requests=len(chunk)
            )
            self.ledger.add(record)
            state = self.api.create(file_id)
        except BatchAPIError as err:
            if file_id is not None:
                self.ledger.update(file_id, status="not made", collected=True)
            self._fail([key for key, _ in chunk], f"{err}", prompt_version, stats)
            return None
        self.ledger.update(file_id, batch_id=state.id, status=state.status)
        return record.model_copy(update={"batch_id": state.id, "status": state.status})

    def _wait(
        self, records: list[BatchRecord], sent: dict[str, list[str]], stats: StageStats, what: str
    ) -> None:
        """Poll ``records`` until each is final, reading each back as it ends; ``sent``: the
        keys of the batches this pass sent (what they did not answer fails its item)."""
        waiting = {r.file_id: r for r in self._found(records)}
        bar = tqdm(total=sum(r.requests for r in waiting.values()), desc=f"batches of {what}", unit="request")
        errors = looks = 0
        try:
            while waiting:
                for file_id, record in list(waiting.items()):
                    assert record.batch_id is not None  # `_found` gave every one its id
                    try:
                        state = self.api.state(record.batch_id)
                    except BatchAPIError:
                        errors += 1
                        if errors > self.settings.max_retries:
                            raise
                        continue
                    errors = 0
                    self.ledger.update(
                        file_id, status=state.status, completed=state.completed, failed=state.failed
                    )
                    waiting[file_id] = record.model_copy(
                        update={"status": state.status, "completed": state.completed, "failed": state.failed}
                    )
                    if state.final:
                        self._read(waiting.pop(file_id), state, sent.get(file_id), stats)
                done = sum(r.requests for r in records if r.file_id not in waiting)
                done += sum(r.completed + r.failed for r in waiting.values())
                bar.update(done - bar.n)
                bar.set_postfix(
                    {r.batch_id: r.status for r in waiting.values()}
                    if len(waiting) <= 3
                    else {"open": len(waiting)}
                )
                if waiting:  # a small batch is often done in seconds: look soon, then less often
                    interrupts.check()
                    time.sleep(min(self.settings.batch_poll_seconds, 1.5**looks))
                    looks += 1
        finally:
            bar.close()

    def _found(self, records: list[BatchRecord]) -> list[BatchRecord]:
        """``records`` with every batch id known: one a killed build never wrote down is looked
        for among the provider's batches; a file no batch was made of is dropped (its requests
        are misses again)."""
        found = []
        for record in records:
            if record.batch_id is None:
                try:
                    state = self.api.find(record.file_id)
                except BatchAPIError as err:  # a provider without a list of batches: ask again
                    log.warning(
                        "cannot look for the batch of %s (%s): its requests are asked again",
                        record.file_id,
                        err,
                    )
                    state = None
                if state is None:
                    self.ledger.update(record.file_id, status="never made", collected=True)
                    continue
                self.ledger.update(record.file_id, batch_id=state.id, status=state.status)
                record = record.model_copy(update={"batch_id": state.id, "status": state.status})
            found.append(record)
        return found

    def _read(
        self, record: BatchRecord, state: BatchState, keys: list[str] | None, stats: StageStats
    ) -> None:
        """A final batch's answers into the cache; its failures (and, for this pass's batches,
        the requests it never reached) handed to the pass as failure rows."""
        answers = self.api.answers(state)
        if keys is None:  # an earlier run's: keep what it answered, the rest are misses again
            kept = [(key, c) for key, c in answers.items() if c.answered]
            self.commit(record.prompt_version, kept, stats, batched=True)
        else:
            self.commit(record.prompt_version, list(answers.items()), stats, batched=True)
            self.unanswered.update((key, c) for key, c in answers.items() if not c.answered)
            why = f" ({'; '.join(state.errors)})" if state.errors else ""
            never = [key for key in keys if key not in answers]
            reason = f"batch {state.id} ended {state.status}{why} before answering this request"
            self._fail(never, reason + "; the next run asks it again", record.prompt_version, stats)
        self.ledger.update(record.file_id, collected=True)

    def _fail(self, keys: list[str], why: str, prompt_version: str, stats: StageStats) -> None:
        failed = [(key, Completion(text=why, finish_reason=PROVIDER_ERROR)) for key in keys]
        self.unanswered.update(failed)
        self.commit(prompt_version, failed, stats, batched=True)
