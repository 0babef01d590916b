"""A build folder: request cache, manifest, failure rows and outputs, in one place.

OUT/
  cache.sqlite          raw responses (the resume mechanism)
  manifest.json         stages, counts, model, sampling, prompt versions, cache hits, timings
  failures/<stage>.jsonl  one FailureRow per line, rewritten each time the stage runs
  items.jsonl           a shard's work items with their place in the whole build (for `merge`)
  work/                 the build as it streams: work items, stage passes, samples (items.py)
  .lock                 held (flock) by the build writing into the folder
  dataset/  hub/        the outputs (see output.py)
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from lettuce_build.builds.settings.options import BuildCounts, BuildOptions
from lettuce_build.builds.settings.shards import ShardRecord
from lettuce_build.builds.storage.log import log
from lettuce_build.core.errors import BuildLocked, ManifestError
from lettuce_build.core.tables import read_jsonl, write_atomic, write_jsonl
from lettuce_build.engine.records import FailureRow, StageStats
from lettuce_build.llm.cache import CACHE_FILE, RequestCache, answered_totals
from lettuce_build.llm.pricing import Pricing
from lettuce_build.llm.protocol import BackendInfo

MANIFEST_FILE = "manifest.json"
FAILURES_DIR = "failures"
ITEMS_FILE = "items.jsonl"
LOCK_FILE = ".lock"
#: the folders this process holds the lock of: taking one again inside its block is a no-op
_HELD: set[Path] = set()


class RunCost(BaseModel):
    """What one run of a build (or all of them) asked of the model: a fully cached rerun costs
    nothing, and the first run's cost stays on record after it."""

    started: float = 0.0
    status: str = "running"
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    backend_calls: int = 0
    backend_seconds: float = 0.0
    #: of the tokens, those answered through a provider's Batch API (at its discount)
    batched_prompt_tokens: int = 0
    batched_completion_tokens: int = 0
    #: what the tokens cost at the build's price (None: no price was given)
    dollars: float | None = None

    @classmethod
    def of(cls, started: float, status: str, stages: list[StageStats], pricing: Pricing | None) -> RunCost:
        batched = (
            sum(s.batched_prompt_tokens for s in stages),
            sum(s.batched_completion_tokens for s in stages),
        )
        prompt, completion = sum(s.prompt_tokens for s in stages), sum(s.completion_tokens for s in stages)
        return cls(
            started=started,
            status=status,
            requests=sum(s.cache_misses for s in stages),
            prompt_tokens=prompt,
            completion_tokens=completion,
            backend_calls=sum(s.backend_calls for s in stages),
            backend_seconds=sum(s.backend_seconds for s in stages),
            batched_prompt_tokens=batched[0],
            batched_completion_tokens=batched[1],
            dollars=None
            if pricing is None
            else pricing.dollars(prompt - batched[0], completion - batched[1])
            + pricing.dollars(*batched, batched=True),
        )

    @classmethod
    def total(cls, runs: list[RunCost]) -> RunCost:
        return cls(
            started=min((r.started for r in runs), default=0.0),
            status=runs[-1].status if runs else "running",
            requests=sum(r.requests for r in runs),
            prompt_tokens=sum(r.prompt_tokens for r in runs),
            completion_tokens=sum(r.completion_tokens for r in runs),
            backend_calls=sum(r.backend_calls for r in runs),
            backend_seconds=sum(r.backend_seconds for r in runs),
            batched_prompt_tokens=sum(r.batched_prompt_tokens for r in runs),
            batched_completion_tokens=sum(r.batched_completion_tokens for r in runs),
            dollars=None if all(r.dollars is None for r in runs) else sum(r.dollars or 0.0 for r in runs),
        )


class Manifest(BaseModel):
    """A build folder's record: what was asked, how far it got, what it made."""

    status: Literal["running", "finished", "failed", "interrupted"] = "running"
    source: str | None = None
    backend: BackendInfo | None = None
    #: the models that judged (``--verify``)
    judges: list[BackendInfo] = Field(default_factory=list)
    seed: int = 0
    limit: int | None = None
    #: the build's options (none for squeez's teacher phase, which has its own)
    options: BuildOptions | None = None
    #: what the tokens cost (``--price-per-mtok``; none: no price given)
    pricing: Pricing | None = None
    started: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    stages: list[StageStats] = Field(default_factory=list)
    #: what a finished build made
    counts: BuildCounts | None = None
    #: what stopped a failed build
    error: str | None = None
    #: a shard's slice of the build (`build --shard`)
    shard: ShardRecord | None = None
    #: the shard folders a merged build was joined from (`lettuce-build merge`)
    merged_from: list[str] = Field(default_factory=list)
    #: what each run of the build into this folder cost, this one last (``stages`` is this run's)
    runs: list[RunCost] = Field(default_factory=list)
    #: the sum of ``runs``: what the build has cost so far
    cost: RunCost = Field(default_factory=RunCost)
    #: per stage, how many times `build --refresh` asked it anew (its cache namespace)
    cache_namespaces: dict[str, int] = Field(default_factory=dict)
    _earlier: list[RunCost] = PrivateAttr(default_factory=list)

    def after(self, previous: Manifest | None) -> Manifest:
        """This run's manifest, carrying what the runs before it into this folder left: their
        cost and the stages' cache namespaces."""
        self._earlier = list(previous.runs) if previous else []
        self.cache_namespaces = dict(previous.cache_namespaces) if previous else {}
        return self

    def tally(self, answered: tuple[int, int, int] = (0, 0, 0)) -> None:
        """Bring ``runs`` and ``cost`` up to date with this run's stages. ``answered``: the
        answers, prompt and completion tokens the build's cache holds; a run that was killed
        recorded none of its stages, yet every answer it cached was paid for, so the cost counts
        at least those."""
        pricing = self.pricing
        self.runs = [*self._earlier, RunCost.of(self.started, self.status, self.stages, pricing)]
        total = RunCost.total(self.runs)
        requests, prompt_tokens, completion_tokens = answered
        self.cost = total.model_copy(
            update={
                "requests": max(total.requests, requests),
                "prompt_tokens": max(total.prompt_tokens, prompt_tokens),
                "completion_tokens": max(total.completion_tokens, completion_tokens),
            }
        )
        if pricing is not None:  # what a killed run cached and never recorded, at the full price
            unrecorded = (
                self.cost.prompt_tokens - total.prompt_tokens,
                self.cost.completion_tokens - total.completion_tokens,
            )
            self.cost.dollars = (total.dollars or 0.0) + pricing.dollars(*unrecorded)

    def spent(self, pricing: Pricing | None) -> float:
        """Dollars the build has cost so far: as recorded, or at ``pricing`` when no run was priced."""
        if self.cost.dollars is not None:
            return self.cost.dollars
        return pricing.dollars(self.cost.prompt_tokens, self.cost.completion_tokens) if pricing else 0.0

    def unfinished(self) -> str | None:
        """What to say first of a folder whose last run did not finish: its outputs, if any,
        are those of the run before it."""
        if self.status == "finished":
            return None
        why = f": {self.error}" if self.error else " (killed, or still running)"
        return (
            f"note: the last run of this build did not finish ({self.status}{why}); outputs shown are older"
        )


class BuildDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def cache_path(self) -> Path:
        return self.path / CACHE_FILE

    def open_cache(self) -> RequestCache:
        return RequestCache(self.cache_path)

    def read_manifest(self) -> Manifest:
        file = self.path / MANIFEST_FILE
        if not file.exists():
            raise ManifestError(f"{self.path}: no {MANIFEST_FILE}; is this a lettuce-build output folder?")
        try:
            return Manifest.model_validate_json(file.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            first = str(err).splitlines()[0]
            raise ManifestError(
                f"{file} is not a build manifest ({first}); re-run the build to rewrite it"
            ) from err

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the folder for one build: a second build into it fails at once, naming the first.

        An advisory `flock` on ``OUT/.lock``: released by the kernel when the process dies, so a
        killed build never leaves a stale lock behind.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        held = self.path.resolve()
        if held in _HELD:  # this process holds it already (squeez's phases, then phase 6's run)
            yield
            return
        handle = open(self.path / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held for the block
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise BuildLocked(
                    f"{self.path} is in use by {holder}; wait for it to finish or choose another folder"
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"process {os.getpid()} (lettuce-build, started {time.strftime('%H:%M:%S')})")
            handle.flush()
            _HELD.add(held)
            try:
                yield
            finally:
                _HELD.discard(held)
        finally:
            handle.close()

    def unfinished_note(self) -> str | None:
        """`Manifest.unfinished` of this folder, when it is a build folder with a manifest."""
        if not (self.path / MANIFEST_FILE).is_file():
            return None
        manifest = self.previous_manifest()
        return manifest.unfinished() if manifest else f"note: {self.path / MANIFEST_FILE} cannot be read"

    def require_build(self) -> None:
        """Refuse a folder that no build wrote (no manifest): `failures` and `show` read builds."""
        if not (self.path / MANIFEST_FILE).is_file():
            raise ManifestError(
                f"{self.path} is not a build folder (no {MANIFEST_FILE}): give the folder "
                "`lettuce-build build --out` wrote"
            )

    def previous_manifest(self) -> Manifest | None:
        """The manifest an earlier run left, if it can be read (a new folder has none)."""
        try:
            return self.read_manifest()
        except ManifestError:
            return None

    def write_manifest(self, manifest: Manifest) -> None:
        manifest.updated = time.time()
        manifest.tally(answered_totals(self.cache_path))
        write_atomic(self.path / MANIFEST_FILE, manifest.model_dump_json(indent=2))

    def record_stage(self, manifest: Manifest, stats: StageStats, failures: Iterable[FailureRow]) -> None:
        """Replace the stage's entry and failure file with this run's, then save the manifest."""
        manifest.stages = [s for s in manifest.stages if s.name != stats.name] + [stats]
        log.info(
            "stage %s done: %d in, %d ok, %d failed, %d cache hits, %d misses, %d prompt and %d "
            "completion tokens, %.1f s (%.1f s in the backend)%s",
            stats.name,
            stats.items_in,
            stats.ok,
            stats.failed,
            stats.cache_hits,
            stats.cache_misses,
            stats.prompt_tokens,
            stats.completion_tokens,
            stats.seconds,
            stats.backend_seconds,
            f"; failures {stats.failure_reasons}" if stats.failure_reasons else "",
        )
        write_jsonl(self.path / FAILURES_DIR / f"{stats.name}.jsonl", failures)
        self.write_manifest(manifest)

    def write_items(self, items: Iterable[tuple[int, dict[str, Any]]]) -> int:
        """A shard's work items, each with its position in the whole build, as they come;
        returns how many."""
        return write_jsonl(self.path / ITEMS_FILE, ({"position": p, "item": item} for p, item in items))

    def iter_items(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """A shard's work items with their positions, as its ``items.jsonl`` is read."""
        file = self.path / ITEMS_FILE
        if not file.exists():
            raise ManifestError(f"{self.path}: no {ITEMS_FILE}; was it built with --shard?")
        for number, row in read_jsonl(file):
            if not isinstance(row.get("position"), int) or not isinstance(row.get("item"), dict):
                raise ManifestError(f"{file}:{number}: expected {{position: int, item: object}}")
            yield row["position"], row["item"]

    def failures(self, stage: str | None = None, reason: str | None = None) -> list[FailureRow]:
        return list(self.iter_failures(stage, reason))

    def iter_failures(self, stage: str | None = None, reason: str | None = None) -> Iterator[FailureRow]:
        """The failure rows (of a stage, of a reason), read a row at a time."""
        for row in self._failure_rows():
            if (stage is None or row.stage == stage) and (reason is None or row.reason == reason):
                yield row

    def _failure_rows(self) -> Iterator[FailureRow]:
        folder = self.path / FAILURES_DIR
        for file in sorted(folder.glob("*.jsonl")) if folder.exists() else []:
            for number, row in read_jsonl(file):
                try:
                    yield FailureRow.model_validate(row)
                except ValidationError as err:
                    raise ManifestError(f"{file}:{number}: not a failure row: {err}") from err

    def failure_summary(self) -> dict[str, dict[str, int]]:
        """Per stage, its failures by reason (read a row at a time: a million of them are counted
        in no more memory than ten)."""
        summary: dict[str, dict[str, int]] = {}
        for row in self._failure_rows():
            per_stage = summary.setdefault(row.stage, {})
            per_stage[row.reason] = per_stage.get(row.reason, 0) + 1
        return summary
