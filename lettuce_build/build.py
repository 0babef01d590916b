"""A whole build: load a source, run its stages, assemble and check samples, write the output.

Every stage goes through the runner (so a re-run resumes from the request
cache), every failure is a row in ``failures/``, every sample passes
`check_sample` before it is written, and the manifest records what was done.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from datasets import Dataset, DatasetDict
from pydantic import BaseModel, Field

from lettuce_build.builddir import BuildDir, Manifest
from lettuce_build.llm.protocol import Backend
from lettuce_build.output import write_output
from lettuce_build.runner import FailureRow, Runner, StageResult, StageStats
from lettuce_build.schema import FEATURES, SPLITS, HallucinationSample, check_sample, sample_to_row
from lettuce_build.sources.base import LoadOptions, Source, SourceError
from lettuce_build.sources.registry import get_source

ASSEMBLE_STAGE = "assemble"


class BuildOptions(BaseModel):
    source: str
    out: Path
    input: str | None = None
    limit: int | None = None
    ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    seed: int = 0
    fallback: Literal["none", "clean"] = "none"
    language: str = "en"
    repo_url: str = "https://github.com/{repo}.git"


class BuildSummary(BaseModel):
    source: str
    dataset: str
    out: Path
    documents: int
    items: int
    skipped: dict[str, int]
    by_split: dict[str, int]
    by_category: dict[str, int]
    hallucinated: int
    clean: int
    fallback_clean: int
    requested_ratio: float
    achieved_ratio: float
    failures: dict[str, dict[str, int]]
    seconds: float
    backend_seconds: float
    example: HallucinationSample | None = None


def run_build(options: BuildOptions, backend: Backend) -> BuildSummary:
    build = BuildDir(options.out)
    with build.lock():
        manifest = Manifest(
            source=options.source,
            backend=backend.info(),
            seed=options.seed,
            limit=options.limit,
            parameters=options.model_dump(mode="json", exclude={"out"}),
        )
        try:
            return _run(options, backend, build, manifest)
        except BaseException as err:
            # whatever stopped the build (an error, Ctrl-C), the manifest never claims it is running
            manifest.status = "failed"
            manifest.counts = {"error": f"{type(err).__name__}: {err}"[:500]}
            build.write_manifest(manifest)
            raise


def _unique(items: list[dict[str, Any]], skipped: Counter[str]) -> list[dict[str, Any]]:
    """The first item of each key; later ones (a document given twice) are counted and skipped."""
    seen: set[str] = set()
    unique = []
    for item in items:
        if item["key"] in seen:
            skipped["duplicate_key"] += 1
            continue
        seen.add(item["key"])
        unique.append(item)
    return unique


def _run(options: BuildOptions, backend: Backend, build: BuildDir, manifest: Manifest) -> BuildSummary:
    started = time.perf_counter()
    source = get_source(options.source)
    loaded = source.load(
        options.input,
        LoadOptions(
            limit=options.limit,
            ratio=options.ratio,
            seed=options.seed,
            language=options.language,
            repo_url=options.repo_url,
            work_dir=Path(options.out) / "repos",
        ),
    )
    items = _unique(loaded.items, loaded.skipped)
    if not items:
        raise SourceError(
            f"{options.source}: no work items from {options.input} "
            f"(skipped: {dict(loaded.skipped) or 'nothing'})"
        )
    build.write_manifest(manifest)
    cache = build.open_cache()
    try:
        runner = Runner(backend, cache, seed=options.seed)
        backend_seconds = 0.0

        def record(result: StageResult) -> None:
            nonlocal backend_seconds
            build.record_stage(manifest, result.stats, result.failures)
            backend_seconds += result.stats.backend_seconds

        dataset, injection_failed = source.run_stages(runner, Dataset.from_list(items), record)
        fallback_rows = injection_failed if options.fallback == "clean" else []
        samples, invalid = _assemble(source, dataset.to_list() + fallback_rows)
        build.record_stage(
            manifest,
            StageStats(
                name=ASSEMBLE_STAGE,
                prompt_version="-",
                items_in=len(dataset) + len(fallback_rows),
                ok=len(samples),
                failed=len(invalid),
                failure_reasons=dict(Counter(f.reason for f in invalid)),
            ),
            invalid,
        )
    finally:
        cache.close()

    by_split: dict[str, list[dict[str, Any]]] = {}
    for sample in samples:
        by_split.setdefault(sample.split, []).append(sample_to_row(sample))
    # always written: a build with no samples removes the outputs of the build before it
    write_output(
        DatasetDict({s: Dataset.from_list(by_split[s], features=FEATURES) for s in SPLITS if s in by_split}),
        options.out,
        source.dataset_name,
    )
    hallucinated = sum(1 for s in samples if s.labels)
    summary = BuildSummary(
        source=options.source,
        dataset=source.dataset_name,
        out=options.out,
        documents=loaded.documents,
        items=len(items),
        skipped=dict(loaded.skipped),
        by_split={s: len(by_split[s]) for s in SPLITS if s in by_split},
        by_category=dict(Counter(s.category or "(clean)" for s in samples)),
        hallucinated=hallucinated,
        clean=len(samples) - hallucinated,
        fallback_clean=len(fallback_rows),
        requested_ratio=options.ratio,
        achieved_ratio=hallucinated / len(samples) if samples else 0.0,
        failures=build.failure_summary(),
        seconds=time.perf_counter() - started,
        backend_seconds=backend_seconds,
        example=next((s for s in samples if s.labels), samples[0] if samples else None),
    )
    manifest.status = "finished"
    manifest.counts = summary.model_dump(
        mode="json",
        include={
            "documents",
            "items",
            "skipped",
            "by_split",
            "by_category",
            "hallucinated",
            "clean",
            "fallback_clean",
            "requested_ratio",
            "achieved_ratio",
        },
    )
    build.write_manifest(manifest)
    return summary


def _assemble(
    source: Source, rows: list[dict[str, Any]]
) -> tuple[list[HallucinationSample], list[FailureRow]]:
    samples, invalid = [], []
    for row in rows:
        sample = source.sample(row)
        if row.get("fallback_reason"):
            sample.metadata["fallback_clean"] = row["fallback_reason"]
        violations = check_sample(sample)
        if violations:
            invalid.append(
                FailureRow(
                    key=row["key"],
                    stage=ASSEMBLE_STAGE,
                    reason=violations[0].reason,
                    detail="; ".join(str(v) for v in violations),
                    attempt=0,
                    raw_excerpt=json.dumps(sample_to_row(sample))[:300],
                )
            )
            continue
        samples.append(sample)
    return samples, invalid
