"""The exact hallucination ratio: which items an injecting stage gets, and which are published
hallucinated.

Every item with a correct clean answer becomes a sample. Per split, exactly
``round(n x ratio)`` of them (half rounded up) are published hallucinated, chosen among the
items whose injection succeeded; the rest are published with their clean answer, and a failed
injection stays in failures/ with its reason.

Items are offered to the stage in seeded waves rather than all at once. Each item draws a
seeded number in [0, 1); the first wave offers, in each split that needs any, the items whose
draw is below ratio x a margin (about the items needed plus a margin, decided by the item
alone); each later wave offers more, in draw order, only where successes fell short, until
every split has enough or no item is left. A re-run replays the same waves from the request
cache. Which successes are published is seeded too (each split's first ones in draw order), so
a build is the same whichever machine runs it.

Because the first wave is decided item by item, a shard (which sees only its items) offers
exactly its part of the whole build's first wave (``max_waves=1``) and no request the whole
build would not make; the merge replays the balancing over every item, asking the model only
for later waves the shards could not know were needed.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

from datasets import Dataset, Value, concatenate_datasets
from pydantic import BaseModel, Field

from lettuce_build.core.seeding import fraction
from lettuce_build.engine.records import FailureRow, StageResult, StageStats
from lettuce_build.engine.runner import Check, Runner
from lettuce_build.engine.stage import Stage

#: the first wave offers the items whose draw is below this many times the ratio (injections do fail)
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


class Balanced(StageResult):
    """A stage result, with how the requested ratio came out."""

    report: RatioReport


def needed(items: int, ratio: float) -> int:
    """round(items x ratio), halves rounded up (Python's round() would round 2.5 to 2)."""
    return math.floor(items * ratio + 0.5)


def balance(
    runner: Runner,
    stage: Stage,
    items: Dataset,
    ratio: float,
    *,
    max_waves: int | None = None,
    checks: Sequence[Check] = (),
) -> Balanced:
    """Run an injecting stage so that each split gets exactly its share of hallucinated samples.

    Returns every item: the chosen ones with the stage's outputs and ``inject`` true, the others
    with empty outputs and ``inject`` false. ``max_waves``: stop after that many waves (a shard
    runs one: the merge balances). ``checks`` judge each injection: one they reject has failed,
    and later waves top up for it like for any failed injection.
    """
    keys: list[str] = items["key"][:]  # columns, not rows: the items stay on disk
    splits: list[str] = items["split"][:]
    rank = {key: fraction(runner.seed, key, "inject") for key in keys}
    order: dict[str, list[int]] = {}
    for index, split in enumerate(splits):
        order.setdefault(split, []).append(index)
    for indices in order.values():
        indices.sort(key=lambda i: rank[keys[i]])
    report = RatioReport(
        requested=ratio,
        by_split={
            split: SplitRatio(items=len(ix), needed=needed(len(ix), ratio)) for split, ix in order.items()
        },
    )
    succeeded: set[str] = set()
    failures: list[FailureRow] = []
    results: list[StageResult] = []
    offered: set[int] = set()
    wave = _first_wave(order, keys, rank, report, ratio)
    waves = 1  # decided so far, the first one included even when it offers nothing
    while True:
        if wave:  # a first wave may be empty: no item drew low enough
            offered.update(wave)
            result = runner.run(_offered(items, sorted(wave), waves), stage, checks)
            results.append(result)
            failures += result.failures
            succeeded.update(result.ok["key"][:])
            for split, indices in order.items():
                split_report = report.by_split[split]
                split_report.offered = sum(i in offered for i in indices)
                split_report.succeeded = sum(keys[i] in succeeded for i in indices)
        if max_waves is not None and waves >= max_waves:
            break
        wave = _next_wave(order, offered, report)
        waves += 1
        if not wave:
            break
    report.waves = len(results)
    chosen: set[str] = set()
    for split, indices in order.items():
        successes = [keys[i] for i in indices if keys[i] in succeeded]
        picked = successes[: report.by_split[split].needed]
        report.by_split[split].hallucinated = len(picked)
        chosen.update(picked)
    stats = StageStats.combined(stage, len(keys), [r.stats for r in results])
    return Balanced(
        ok=_published(items, stage, keys, chosen, [r.ok for r in results]),
        failures=failures,
        stats=stats,
        report=report,
        judgements=[j for r in results for j in r.judgements],
        checks=StageStats.per_name(part for r in results for part in r.checks),
    )


def _offered(items: Dataset, indices: list[int], wave: int) -> Dataset:
    """The items of one wave, marked to be injected (the column is added before the selection:
    adding one to a selection would copy the selected rows)."""
    name = _fingerprint(items._fingerprint, "wave", wave, indices)
    marked = items.add_column(
        "inject", [True] * len(items), new_fingerprint=f"{name}-inject", feature=Value("bool")
    )
    return marked.select(indices, new_fingerprint=f"{name}-items")


def _published(
    items: Dataset, stage: Stage, keys: list[str], chosen: set[str], waves: list[Dataset]
) -> Dataset:
    """Every item in its order: the chosen ones with the stage's outputs (from the wave that
    injected them) and ``inject`` true, the others with empty outputs and ``inject`` false."""
    name = _fingerprint(items._fingerprint, "published", sorted(chosen), [w._fingerprint for w in waves])
    parts = []
    for number, done in enumerate(waves):
        picked = [i for i, key in enumerate(done["key"][:]) if key in chosen]
        parts.append(done.select(picked, new_fingerprint=f"{name}-wave{number}"))
    plain = items.add_column(
        "inject", [False] * len(items), new_fingerprint=f"{name}-plain", feature=Value("bool")
    )
    for column, feature in stage.outputs.items():
        plain = plain.add_column(
            column, [None] * len(items), new_fingerprint=f"{name}-plain-{column}", feature=feature
        )
    rest = plain.select(
        [i for i, key in enumerate(keys) if key not in chosen], new_fingerprint=f"{name}-rest"
    )
    joined = concatenate_datasets([rest, *parts])
    position = {key: index for index, key in enumerate(keys)}
    where = [position[key] for key in joined["key"][:]]
    order = sorted(range(len(where)), key=where.__getitem__)
    return joined.select(order, new_fingerprint=f"{name}-ordered")


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _first_wave(
    order: dict[str, list[int]],
    keys: list[str],
    rank: dict[str, float],
    report: RatioReport,
    ratio: float,
) -> list[int]:
    """In each split that needs any, the items whose seeded draw is below ratio x the margin."""
    below = min(1.0, ratio * FIRST_WAVE_MARGIN)
    return [
        i
        for split, indices in order.items()
        if report.by_split[split].needed > 0
        for i in indices
        if rank[keys[i]] < below
    ]


def _next_wave(order: dict[str, list[int]], offered: set[int], report: RatioReport) -> list[int]:
    """Where successes fall short: the next items in draw order, twice as many as are missing."""
    wave: list[int] = []
    for split, indices in order.items():
        split_report = report.by_split[split]
        missing = split_report.needed - split_report.succeeded
        waiting = [i for i in indices if i not in offered]
        if missing > 0 and waiting:
            wave += waiting[: math.ceil(missing * LATER_WAVE_MARGIN)]
    return wave
