"""What running a stage leaves behind: a failure row per failed item, the stage's statistics,
and the result the runner returns."""

from __future__ import annotations

from collections import Counter
from typing import Any

from datasets import Dataset
from pydantic import BaseModel, ConfigDict, Field

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
    completion_tokens: int = 0
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
        summed = ("ok", "failed", "cache_hits", "cache_misses", "backend_calls", "completion_tokens")
        for part in parts:
            total.sampling = total.sampling or part.sampling
            for field in (*summed, "seconds", "backend_seconds"):
                setattr(total, field, getattr(total, field) + getattr(part, field))
        total.passed_through = items - total.ok - total.failed
        total.failure_reasons = dict(sum((Counter(p.failure_reasons) for p in parts), Counter()))
        return total


class StageResult(BaseModel):
    """The items a stage finished (with its output columns), its failure rows and statistics."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ok: Dataset
    failures: list[FailureRow]
    stats: StageStats
