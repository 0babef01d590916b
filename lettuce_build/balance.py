"""The exact hallucination ratio: which items an injecting stage gets, and which are published
hallucinated.

Every item with a correct clean answer becomes a sample. Per split, exactly
``round(n x ratio)`` of them (half rounded up) are published hallucinated, chosen among the
items whose injection succeeded; the rest are published with their clean answer, and a failed
injection stays in failures/ with its reason.

Items are offered to the stage in seeded waves rather than all at once: the first wave offers
each split the items it needs plus a margin, each later wave offers more only where successes
fell short, until every split has enough or no item is left. A re-run replays the same waves
from the request cache. Which successes are published is seeded too (each split's first ones in
the seeded order), so a build is the same whichever machine runs it.

A shard cannot see every item, so it offers all of its items in one wave (``offer_all``): the
merge then balances over the whole build from the cache, with no model call. Offering in
waves or all at once publishes the same items: waves offer each split's items in seeded order
until enough succeed, and the published ones are the first successes in that order either way.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from datasets import Dataset, Features, Value
from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.runner import FailureRow, Runner, Stage, StageResult, StageStats
from lettuce_build.sources.chunking import seeded_fraction

#: the first wave offers this many times the items a split needs (injections do fail)
FIRST_WAVE_MARGIN = 1.5
#: later waves offer this many times what is still missing
LATER_WAVE_MARGIN = 2.0


class SplitRatio(BaseModel):
    items: int
    needed: int
    offered: int = 0
    succeeded: int = 0
    hallucinated: int = 0

    @property
    def short_by(self) -> int:
        return self.needed - self.hallucinated


class RatioReport(BaseModel):
    """How the requested ratio was met, per split; the summary, manifest and card show it."""

    requested: float
    by_split: dict[str, SplitRatio] = Field(default_factory=dict)
    waves: int = 0

    @property
    def hallucinated(self) -> int:
        return sum(s.hallucinated for s in self.by_split.values())

    @property
    def items(self) -> int:
        return sum(s.items for s in self.by_split.values())

    @property
    def short_by(self) -> int:
        return sum(s.short_by for s in self.by_split.values())

    def shortfall(self) -> str | None:
        """One line saying where too few injections succeeded, or None when the ratio was met."""
        short = {name: s for name, s in self.by_split.items() if s.short_by > 0}
        if not short:
            return None
        parts = [
            f"{name}: {s.hallucinated} of {s.needed} (short by {s.short_by}; "
            f"{s.succeeded} of {s.offered} injections succeeded)"
            for name, s in short.items()
        ]
        return "too few injections succeeded for the requested ratio: " + "; ".join(parts)


class Balanced(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    ok: Dataset
    failures: list[FailureRow]
    stats: StageStats
    report: RatioReport


def needed(items: int, ratio: float) -> int:
    """round(items x ratio), halves rounded up (Python's round() would round 2.5 to 2)."""
    return math.floor(items * ratio + 0.5)


def balance(
    runner: Runner, stage: Stage, items: Dataset, ratio: float, *, offer_all: bool = False
) -> Balanced:
    """Run an injecting stage so that each split gets exactly its share of hallucinated samples.

    Returns every item: the chosen ones with the stage's outputs and ``inject`` true, the others
    with empty outputs and ``inject`` false. ``offer_all``: one wave offering every item (when
    the ratio asks for any), for shards.
    """
    rows = items.to_list()
    rank = {row["key"]: seeded_fraction(runner.seed, row["key"], "inject") for row in rows}
    order: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        order.setdefault(row["split"], []).append(index)
    for indices in order.values():
        indices.sort(key=lambda i: rank[rows[i]["key"]])
    report = RatioReport(
        requested=ratio,
        by_split={
            split: SplitRatio(items=len(ix), needed=needed(len(ix), ratio)) for split, ix in order.items()
        },
    )
    outputs: dict[str, dict[str, Any]] = {}  # key -> stage outputs, for every success
    failures: list[FailureRow] = []
    results: list[StageResult] = []
    offered: set[int] = set()
    while True:
        if offer_all:
            wave = [] if results or ratio == 0 else list(range(len(rows)))
        else:
            wave = _next_wave(order, offered, report, first=not results)
        if not wave:
            break
        offered.update(wave)
        subset = Dataset.from_list(
            [dict(rows[i], inject=True) for i in sorted(wave)], features=_with_inject(items)
        )
        result = runner.run(subset, stage)
        results.append(result)
        failures += result.failures
        for row in result.ok.to_list():
            outputs[row["key"]] = {name: row[name] for name in stage.outputs}
        for split, indices in order.items():
            split_report = report.by_split[split]
            split_report.offered = sum(i in offered for i in indices)
            split_report.succeeded = sum(rows[i]["key"] in outputs for i in indices)
    report.waves = len(results)
    chosen: set[str] = set()
    for split, indices in order.items():
        successes = [rows[i]["key"] for i in indices if rows[i]["key"] in outputs]
        picked = successes[: report.by_split[split].needed]
        report.by_split[split].hallucinated = len(picked)
        chosen.update(picked)
    empty = {name: None for name in stage.outputs}
    finished = [
        dict(row, **outputs[row["key"]], inject=True)
        if row["key"] in chosen
        else dict(row, **empty, inject=False)
        for row in rows
    ]
    features = Features({**_with_inject(items), **stage.outputs})
    ok = Dataset.from_list(finished, features=features) if finished else items.select([])
    return Balanced(ok=ok, failures=failures, stats=_merged(stage, len(rows), results), report=report)


def _next_wave(
    order: dict[str, list[int]], offered: set[int], report: RatioReport, *, first: bool
) -> list[int]:
    wave: list[int] = []
    for split, indices in order.items():
        split_report = report.by_split[split]
        missing = split_report.needed - split_report.succeeded
        waiting = [i for i in indices if i not in offered]
        if missing > 0 and waiting:
            margin = FIRST_WAVE_MARGIN if first else LATER_WAVE_MARGIN
            wave += waiting[: max(missing, math.ceil(missing * margin))]
    return wave


def _with_inject(items: Dataset) -> Features:
    return Features({**items.features, "inject": Value("bool")})


def _merged(stage: Stage, items: int, results: list[StageResult]) -> StageStats:
    """One stage entry for the manifest over every wave."""
    merged = StageStats(name=stage.name, prompt_version=stage.prompt_version, items_in=items)
    reasons: Counter[str] = Counter()
    for result in results:
        stats = result.stats
        merged.sampling = merged.sampling or stats.sampling
        merged.ok += stats.ok
        merged.failed += stats.failed
        merged.cache_hits += stats.cache_hits
        merged.cache_misses += stats.cache_misses
        merged.backend_calls += stats.backend_calls
        merged.completion_tokens += stats.completion_tokens
        merged.seconds += stats.seconds
        merged.backend_seconds += stats.backend_seconds
        reasons.update(stats.failure_reasons)
    merged.passed_through = items - merged.ok - merged.failed
    merged.failure_reasons = dict(reasons)
    return merged
