"""What running a stage leaves behind: a failure row per failed item, the stage's statistics,
and the result the runner returns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from datasets import Dataset
from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.core.memory import pages_released
from lettuce_build.core.tables import values_at
from lettuce_build.engine.stage import Stage


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
    #: the prompt template the stage rendered (prompts/<name>.yaml), when it is one
    prompt: str | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)
    items_in: int = 0
    passed_through: int = 0
    ok: int = 0
    failed: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    backend_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: of those, the tokens answered through a provider's Batch API (priced at its discount)
    batched_prompt_tokens: int = 0
    batched_completion_tokens: int = 0
    #: requests the provider refused or failed (never cached: a re-run asks them again)
    provider_failures: int = 0
    seconds: float = 0.0
    backend_seconds: float = 0.0
    failure_reasons: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, stage: Stage, items: int) -> StageStats:
        """The empty entry of one run of ``stage`` over ``items`` items."""
        return cls(name=stage.name, prompt_version=stage.prompt_version, prompt=stage.prompt, items_in=items)

    @classmethod
    def combined(cls, stage: Stage, items: int, parts: list[StageStats]) -> StageStats:
        """One entry for a stage run in several parts (balancing's waves) over ``items`` items."""
        total = cls.of(stage, items)
        total._add(parts)
        total.passed_through = items - total.ok - total.failed
        return total

    @classmethod
    def per_name(cls, parts: Iterable[StageStats]) -> list[StageStats]:
        """One entry per stage name for runs over different items (a check's, one per pass)."""
        by_name: dict[str, StageStats] = {}
        for part in parts:
            if (total := by_name.get(part.name)) is None:
                by_name[part.name] = part.model_copy(deep=True)
                continue
            total._add([part])
            total.items_in += part.items_in
            total.passed_through += part.passed_through
        return list(by_name.values())

    def _add(self, parts: list[StageStats]) -> None:
        summed = (
            "ok",
            "failed",
            "cache_hits",
            "cache_misses",
            "backend_calls",
            "prompt_tokens",
            "completion_tokens",
            "batched_prompt_tokens",
            "batched_completion_tokens",
            "provider_failures",
        )
        for part in parts:
            self.sampling = self.sampling or part.sampling
            for field in (*summed, "seconds", "backend_seconds"):
                setattr(self, field, getattr(self, field) + getattr(part, field))
        self.failure_reasons = dict(
            sum((Counter(p.failure_reasons) for p in parts), Counter(self.failure_reasons))
        )


class Judgement(BaseModel):
    """One verdict of a check (a judge) on one attempt of a judged stage's item."""

    key: str
    #: the judged stage, and the check's name as its statistics are recorded
    stage: str
    check: str
    #: the judge's model
    judge: str
    attempt: int
    passed: bool
    verdict: dict[str, Any]


#: failure rows read from their column at a time
FAILURE_BATCH = 10_000


class FailureRows:
    """A stage's failure rows in order, left where they were written: each pass's are rows of its
    ``_failure`` column (JSON, in its file, mapped from disk), read a batch at a time when gone
    through, the pages read handed back. Held as objects, a million failed items were two
    gigabytes."""

    def __init__(self, rows: Iterable[FailureRow] = ()) -> None:
        listed = list(rows)
        self._parts: list[tuple[Dataset, np.ndarray] | list[FailureRow]] = [listed] if listed else []
        self._count = len(listed)

    def add(self, dataset: Dataset, rows: np.ndarray) -> None:
        """The failure rows at ``rows`` of ``dataset``'s table (its ``_failure`` column)."""
        if len(rows):
            self._parts.append((dataset, rows))
            self._count += len(rows)

    def extend(self, other: FailureRows) -> None:
        self._parts += other._parts
        self._count += other._count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[FailureRow]:
        for part in self._parts:
            if isinstance(part, list):
                yield from part
                continue
            dataset, rows = part
            column = dataset.data.column("_failure")
            with pages_released(dataset):
                for at in range(0, len(rows), FAILURE_BATCH):
                    for raw in values_at(column, rows[at : at + FAILURE_BATCH]):
                        yield FailureRow.model_validate_json(raw)


class StageResult(BaseModel):
    """The items a stage finished (with its output columns), its failure rows and statistics."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ok: Dataset
    failures: FailureRows
    stats: StageStats
    #: where each of ``ok``'s rows was in the stage's input (they keep its order)
    rows: np.ndarray = Field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: the statistics of the stage's checks (one entry per check)
    checks: list[StageStats] = Field(default_factory=list)
