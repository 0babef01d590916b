"""`translate --dry-run`: what a translation would ask of its model, and what it would cost,
rehearsed as a build's dry run is: its work items run through the translation's stages on the
real runner in a read-only run context (builds/running/context.py), the folder's cache served
and every miss counted, never asked.

The context stage asks about the answers whose spans came back; a rehearsal stands in for the
answers it lacks, so every item is counted there too: its figures are an upper bound, as are
completion tokens (each request's ``max_tokens``).
"""

from __future__ import annotations

from datasets import Dataset

from lettuce_build.builds.running.context import rehearse
from lettuce_build.builds.running.dry_run import SAMPLE_ITEMS, DryRun, Scale, estimated
from lettuce_build.core.seeding import reservoir
from lettuce_build.llm.protocol import Backend
from lettuce_build.translate.report import TranslationOptions, TranslationReport
from lettuce_build.translate.run import ITEM_FEATURES, STAGES, run_spec, work_items


def estimate(options: TranslationOptions, *, backend: Backend | None = None, exact: bool = False) -> DryRun:
    """The translation ``options`` ask for counted, never asked: on a seeded sample of more than
    `SAMPLE_ITEMS` items, scaled to them all, unless ``exact`` (as a build's dry run)."""
    with rehearse(run_spec(options), backend=backend) as run:
        report = TranslationReport.empty(options, run.backend.model_id)
        counted, rehearsed = reservoir(work_items(options, report), None if exact else SAMPLE_ITEMS, seed=0)
        if rehearsed:
            run.loop.run([kind() for kind in STAGES], Dataset.from_list(rehearsed, features=ITEM_FEATURES))
    scale = Scale(population=counted, sample=len(rehearsed))
    return DryRun(
        source="translate",
        documents=report.rows,
        items=counted,
        sampled=len(rehearsed) if len(rehearsed) < counted else None,
        requests_margin=scale.margin([stats.cache_misses for stats in run.manifest.stages]),
        skipped=dict(report.skipped),
        stages=[estimated(stats, scale) for stats in run.manifest.stages],
        pricing=options.pricing,
        batched=bool(run.backend.info().options.get("batch", False)),
        steps=[
            f"read: the samples of {options.source}",
            *(f"{kind.name}: asks the model" for kind in STAGES),
        ],
    )
