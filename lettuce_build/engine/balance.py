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

An injecting stage may prefer some items (`Stage.preference`, a factor on the draw): the prose
rules prefer the answers whose edits are spelled from their context, so that more of the
published spans are ones only reading finds.

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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Dataset, Features, Value, concatenate_datasets
from pydantic import BaseModel, Field

from lettuce_build.core.memory import pages_released
from lettuce_build.core.seeding import fraction
from lettuce_build.engine.checks import Check
from lettuce_build.engine.columns import arrow_column, dataset_rows, empty_dataset, per_key, selected
from lettuce_build.engine.records import FailureRows, StageResult, StageStats
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.stage import Stage

#: the first wave offers the items whose draw is below this many times the ratio (injections do fail)
FIRST_WAVE_MARGIN = 1.5
#: later waves offer this many times what is still missing
LATER_WAVE_MARGIN = 2.0


class SplitRatio(BaseModel):
    """How one split's hallucinated share was reached."""

    #: the split's items, and how many of them the ratio wants hallucinated
    items: int
    needed: int
    #: items sent to the injection, those it edited, and those published hallucinated
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
    if len(items) == 0:  # every item failed before this stage: an empty result with its columns
        empty = empty_dataset(Features({**items.features, "inject": Value("bool"), **stage.outputs}))
        return Balanced(
            ok=empty,
            failures=FailureRows(),
            stats=StageStats.of(stage, 0),
            report=RatioReport(requested=ratio),
        )
    rank = per_key(items, lambda key: fraction(runner.seed, key, "inject"), np.float64)  # each item's draw
    if type(stage).preference is not Stage.preference:
        rank *= _preferences(items, stage)
    with pages_released(items):  # codes by first appearance
        encoded = pc.dictionary_encode(arrow_column(items, "split")).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order: dict[str, np.ndarray] = {}  # per split, its items' positions in draw order
    for code, split in enumerate(encoded.dictionary.to_pylist()):
        indices = np.flatnonzero(codes == code)
        order[split] = indices[np.argsort(rank[indices], kind="stable")]
    report = RatioReport(
        requested=ratio,
        by_split={
            split: SplitRatio(items=len(ix), needed=needed(len(ix), ratio)) for split, ix in order.items()
        },
    )
    succeeded = np.zeros(len(items), dtype=bool)
    offered = np.zeros(len(items), dtype=bool)
    failures = FailureRows()
    results: list[StageResult] = []
    done_at: list[np.ndarray] = []  # per wave, where the items it injected are among all
    wave = _first_wave(order, rank, report, ratio)
    del rank, codes, encoded  # 12 bytes an item no later wave needs (a million: 12 MB through every wave)
    waves = 1  # decided so far, the first one included even when it offers nothing
    while True:
        if len(wave):  # a first wave may be empty: no item drew low enough
            offered[wave] = True
            wave.sort()  # in place: a million items' first wave is 6 MB
            result = runner.run(_offered(items, wave, waves), stage, checks)
            done_at.append(wave[result.rows])
            result.rows = result.rows[:0]  # where they were is in done_at now
            results.append(result)
            failures.extend(result.failures)
            succeeded[done_at[-1]] = True
            for split, indices in order.items():
                split_report = report.by_split[split]
                split_report.offered = int(offered[indices].sum())
                split_report.succeeded = int(succeeded[indices].sum())
        if max_waves is not None and waves >= max_waves:
            break
        wave = _next_wave(order, offered, report)
        waves += 1
        if not len(wave):
            break
    report.waves = len(results)
    chosen = np.zeros(len(items), dtype=bool)
    for split, indices in order.items():
        picked = indices[succeeded[indices]][: report.by_split[split].needed]
        report.by_split[split].hallucinated = len(picked)
        chosen[picked] = True
    stats = StageStats.combined(stage, len(items), [r.stats for r in results])
    return Balanced(
        ok=_published(items, stage, chosen, [(r.ok, at) for r, at in zip(results, done_at, strict=True)]),
        failures=failures,
        stats=stats,
        report=report,
        checks=StageStats.per_name(part for r in results for part in r.checks),
    )


def _preferences(items: Dataset, stage: Stage) -> np.ndarray:
    """The stage's preference for each item, in order, read a batch at a time."""
    with pages_released(items):
        return np.fromiter(map(stage.preference, dataset_rows(items)), dtype=np.float64, count=len(items))


def _offered(items: Dataset, indices: np.ndarray, wave: int) -> Dataset:
    """The items of one wave, marked to be injected (the column is added before the selection:
    adding one to a selection would copy the selected rows)."""
    name = _fingerprint(items._fingerprint, "wave", wave, _digest(indices))
    marked = items.add_column(
        "inject", np.ones(len(items), dtype=bool), new_fingerprint=f"{name}-inject", feature=Value("bool")
    )
    return selected(marked, indices, f"{name}-items")


def _published(
    items: Dataset, stage: Stage, chosen: np.ndarray, waves: list[tuple[Dataset, np.ndarray]]
) -> Dataset:
    """Every item in its order: the chosen ones with the stage's outputs (from the wave that
    injected them: its rows, and where each is among ``items``) and ``inject`` true, the
    others with empty outputs and ``inject`` false."""
    name = _fingerprint(items._fingerprint, "published", _digest(chosen), [w._fingerprint for w, _ in waves])
    plain = items.add_column(
        "inject", np.zeros(len(items), dtype=bool), new_fingerprint=f"{name}-plain", feature=Value("bool")
    )
    for column, feature in stage.outputs.items():  # Arrow's nulls: no list of a million Nones
        empty = pa.nulls(len(items), Features({column: feature}).arrow_schema.field(column).type)
        plain = plain.add_column(column, empty, new_fingerprint=f"{name}-plain-{column}", feature=feature)
    # One selection over the parts laid end to end: each item's row is its own plain one, or, when
    # chosen, its row in the wave that injected it. (A selection of each part, then of their
    # concatenation, composed three index mappings: a million items' peak, +109 MB against +74.)
    parts = [plain, *(done for done, _ in waves)]
    source = np.arange(len(items), dtype=np.int64)
    start = len(plain)
    for done, positions in waves:
        picked = np.flatnonzero(chosen[positions])
        source[positions[picked]] = start + picked
        start += len(done)
    return selected(concatenate_datasets(parts), source, f"{name}-ordered")


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).data).hexdigest()  # its bytes as they lie: no copy


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _first_wave(
    order: dict[str, np.ndarray], rank: np.ndarray, report: RatioReport, ratio: float
) -> np.ndarray:
    """In each split that needs any, the items whose seeded draw is below ratio x the margin."""
    below = min(1.0, ratio * FIRST_WAVE_MARGIN)
    parts = [ix[rank[ix] < below] for split, ix in order.items() if report.by_split[split].needed > 0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _next_wave(order: dict[str, np.ndarray], offered: np.ndarray, report: RatioReport) -> np.ndarray:
    """Where successes fall short: the next items in draw order, twice as many as are missing."""
    parts = []
    for split, indices in order.items():
        split_report = report.by_split[split]
        missing = split_report.needed - split_report.succeeded
        waiting = indices[~offered[indices]]
        if missing > 0 and len(waiting):
            parts.append(waiting[: math.ceil(missing * LATER_WAVE_MARGIN)])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
