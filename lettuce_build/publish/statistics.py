"""What a published config's card says about it (``card_stats.json``, uploaded beside its data):
collected from its build folder: counts, the audit's figures, failures, the prompts and how the
answers were written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from datasets import DatasetDict, load_from_disk
from pydantic import BaseModel, Field

from lettuce_build.builds.running.stages_of import answer_mode
from lettuce_build.builds.settings.recipe import RECIPE_FILE
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.output import DATASET_DIR
from lettuce_build.builds.storage.samples import ASSEMBLE_STAGE
from lettuce_build.builds.storage.screening import screening_lines
from lettuce_build.core.errors import PublishError
from lettuce_build.core.schema import row_to_sample
from lettuce_build.core.version import VERSION
from lettuce_build.prompts import load_prompt
from lettuce_build.publish.cards import DatasetCardText, card_text
from lettuce_build.sources.registry import get_source
from lettuce_build.view.audit import quality_report, quality_text
from lettuce_build.view.reviews import REVIEWS_FILE, ReviewLog, Verdict, confirmed, review_report
from lettuce_build.view.span_report import span_quality
from lettuce_build.view.validate import validate

STATS_FILE = "card_stats.json"


class ConfigStats(BaseModel):
    """Everything the card says about one config; uploaded beside the data as card_stats.json."""

    config: str
    card: DatasetCardText
    modality: str
    rows: int
    items: int
    hallucinated: int
    achieved_ratio: float
    ratio_shortfall: str | None = None
    requested_ratio: float | None
    splits: dict[str, int]
    taxonomy_counts: list[dict[str, Any]]
    failures: dict[str, dict[str, int]]
    failure_rate: float
    stages: list[dict[str, Any]]
    model: str | None
    backend: str | None
    engine_version: str | None
    seed: int
    lettuce_build_version: str
    example: str | None = None
    #: the prompt templates of its stages: name, version, system and user text
    prompts: list[dict[str, str]] = Field(default_factory=list)
    #: whether the build's recipe.yaml is published beside the data (`build --config` replays it)
    recipe: bool = False
    #: how hallucinated answers were made: "inject" (edits, exact spans) or "generate"
    mode: str = "inject"
    #: generator mode: the span-quality report (span_report.py)
    span_quality: str | None = None
    #: how clean answers were written: "free" (by the model) or "extractive" (chosen sentences)
    answers: str | None = None
    #: how the code source's developer requests were made: "free" (written by the model) or
    #: "chosen" (among requests made of the issue's own words)
    requests: str | None = None
    #: the plausibility check's figures (stages/plausibility.py), as lines
    plausibility: list[str] = Field(default_factory=list)
    #: what the build asked of its model over all its runs: requests, tokens and, when the build
    #: was given a price, dollars
    cost: str | None = None
    #: what reviewers confirmed (`lettuce-build review`), as lines; empty when nobody reviewed
    reviews: list[str] = Field(default_factory=list)
    #: ``push --reviewed-only SPLIT``: that split, and the rows it kept of those it had
    gold: tuple[str, int, int] | None = None
    #: what ``--verify``'s judges found (their report's lines), empty when nothing was judged
    judge: list[str] = Field(default_factory=list)
    #: `lettuce-build audit` over the published rows
    data_quality: str = ""
    #: what was kept out before any model call: benchmarks checked, near-duplicates (lines)
    screening: list[str] = Field(default_factory=list)
    #: the error types the build asked for (``--error-types``; empty: every one)
    error_types: list[str] = Field(default_factory=list)
    #: your own data (custom): how many published rows brought each of question, answer and
    #: labels (the rest were generated); None for the other sources
    given: dict[str, int] | None = None


def _example(dataset: DatasetDict) -> str | None:
    for split in dataset.values():
        for row in split:
            sample = row_to_sample(row)
            if sample.labels:
                shown = sample.model_dump(include={"question", "answer", "labels", "category", "subcategory"})
                shown["question"] = shown["question"][:300]
                return json.dumps(shown, indent=2, ensure_ascii=False)
    return None


def _confirmed_only(
    dataset: DatasetDict, split: str, verdicts: list[Verdict], build_path: Path
) -> tuple[DatasetDict, tuple[str, int, int]]:
    """``dataset`` with ``split`` cut to the rows every reviewer confirmed whole."""
    if split not in dataset:
        raise PublishError(f"--reviewed-only {split}: {build_path} has the splits {', '.join(dataset)}")
    rows = dataset[split]
    by_key: dict[str, list[Verdict]] = {}  # each row looks at its own verdicts, not every one
    for verdict in verdicts:
        by_key.setdefault(verdict.key, []).append(verdict)
    kept = []
    for i, row in enumerate(rows):
        sample = row_to_sample(row)
        if confirmed(sample, by_key.get(str(sample.metadata.get("key")), [])):
            kept.append(i)
    if not kept:
        raise PublishError(
            f"--reviewed-only {split}: no row of {split} is confirmed by a reviewer; review it with "
            f"`lettuce-build review {build_path} --split {split}`"
        )
    dataset[split] = rows.select(kept)
    return dataset, (split, len(kept), len(rows))


def _cost(manifest: Manifest) -> str | None:
    cost = manifest.cost
    if not cost.requests:
        return None
    batched = cost.batched_prompt_tokens + cost.batched_completion_tokens
    through = f", {batched:,} of them through a Batch API" if batched else ""
    priced = ""
    if cost.dollars is not None and manifest.options is not None and (pricing := manifest.options.pricing()):
        discount = f", batched at {pricing.batch_discount:g} of it" if batched else ""
        priced = f"; ${cost.dollars:.2f} at {pricing.text()}{discount}"
    return (
        f"{cost.requests:,} model requests, {cost.prompt_tokens:,} prompt and "
        f"{cost.completion_tokens:,} completion tokens{through}{priced}"
    )


def collect(
    build_path: Path, source_name: str, max_failure_rate: float, reviewed_only: str | None = None
) -> tuple[DatasetDict, ConfigStats]:
    """Load a finished build and check it may be published; refuse with the reason otherwise.
    ``reviewed_only``: that split keeps only the rows reviewers confirmed whole (a gold split)."""
    build = BuildDir(build_path)
    manifest = build.read_manifest()
    if manifest.status != "finished":
        raise PublishError(f"{build_path}: the build is {manifest.status}, not finished; re-run it first")
    if manifest.source != source_name:
        raise PublishError(f"{build_path} is a build of {manifest.source!r}, not {source_name!r}")
    if not (build_path / DATASET_DIR).exists():
        raise PublishError(
            f"{build_path}: the build made no samples, nothing to publish; see why with "
            f"`lettuce-build failures {build_path}`"
        )
    report = validate(build_path / DATASET_DIR)
    if not report.ok:
        raise PublishError(
            f"{build_path}: {report.problem_count} rows fail the invariants, e.g. {report.problems[0]}"
        )
    # an item that made no sample failed; a failed injection still made a clean sample
    items = manifest.counts.items if manifest.counts else 0
    lost = items - report.rows
    rate = lost / items if items else 0.0
    if rate > max_failure_rate:
        raise PublishError(
            f"{build_path}: {lost} of {items} items made no sample ({rate:.0%}), above the "
            f"limit of {max_failure_rate:.0%}; pass --max-failure-rate to publish anyway"
        )
    dataset = load_from_disk(str(build_path / DATASET_DIR))
    verdicts = ReviewLog(build_path / REVIEWS_FILE).verdicts()
    reviews = (
        review_report(
            (row_to_sample(row) for split in dataset.values() for row in split),
            verdicts,
            judged=bool(manifest.options and manifest.options.verify),
        ).lines()
        if verdicts
        else []
    )
    gold = None
    if reviewed_only is not None:
        dataset, gold = _confirmed_only(dataset, reviewed_only, verdicts, build_path)
    source = get_source(source_name)
    card = card_text(source.dataset_name)
    spans: Counter[tuple[str, str | None]] = Counter()
    given: Counter[str] = Counter()
    hallucinated = rows = 0
    for split in dataset.values():
        for labels, metadata in zip(split["labels"][:], split["metadata"][:], strict=True):
            rows += 1
            hallucinated += bool(labels)
            spans.update((s["category"], s["subcategory"]) for s in labels)
            given.update(json.loads(metadata).get("given", []))
    backend = manifest.backend
    stages = [
        s.model_dump(include={"name", "prompt_version", "prompt", "sampling", "ok", "failed"})
        for s in manifest.stages
        if s.name != ASSEMBLE_STAGE
    ]
    ratio = manifest.counts.ratio if manifest.counts else None
    stats = ConfigStats(
        config=source_name,
        card=card,
        modality=source.modality,
        rows=rows,
        items=items,
        hallucinated=hallucinated,
        achieved_ratio=hallucinated / rows if rows else 0.0,
        ratio_shortfall=ratio.shortfall() if ratio else None,
        requested_ratio=manifest.options.ratio if manifest.options else None,
        splits={s: len(d) for s, d in dataset.items()},
        taxonomy_counts=[
            {"category": c, "subcategory": s, "count": n}
            for (c, s), n in sorted(spans.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
        ],
        failures=build.failure_summary(),
        failure_rate=rate,
        stages=stages,
        prompts=_prompts(stages),
        recipe=(build_path / RECIPE_FILE).exists(),
        mode=manifest.options.mode if manifest.options else "inject",
        span_quality=quality.text() if (quality := span_quality(build_path, dataset)) else None,
        answers=_answer_mode(manifest),
        requests=_request_mode(manifest),
        judge=judged.lines() if (judged := manifest.counts and manifest.counts.judge) else [],
        plausibility=[
            line
            for scored in (
                (manifest.counts.plausibility, manifest.counts.question_fit) if manifest.counts else ()
            )
            if scored is not None
            for line in scored.lines()
        ],
        cost=_cost(manifest),
        reviews=reviews,
        gold=gold,
        data_quality=quality_text(Path(source_name), quality_report(build_path)),  # no local path
        screening=screening_lines(manifest.options, manifest.counts.skipped, _marked(dataset))
        if manifest.options and manifest.counts
        else [],
        model=backend.model if backend else None,
        backend=backend.backend if backend else None,
        engine_version=backend.version if backend else None,
        seed=manifest.seed,
        lettuce_build_version=VERSION,
        example=_example(dataset),
        error_types=manifest.options.error_types if manifest.options else [],
        given={name: given[name] for name in ("question", "answer", "labels")}
        if source_name == "custom"
        else None,
    )
    return dataset, stats


def _marked(dataset: DatasetDict) -> int:
    """Rows kept with a contamination note (``--mark-only``)."""
    return sum(
        '"contaminated": ' in metadata for split in dataset.values() for metadata in split["metadata"][:]
    )


def _answer_mode(manifest: Manifest) -> str | None:
    """How the build's clean answers were written, when it wrote any."""
    if manifest.options is None or manifest.backend is None:
        return None
    if not any(stage.name == "answer" for stage in manifest.stages):
        return None
    return answer_mode(manifest.options, manifest.backend.model)


def _request_mode(manifest: Manifest) -> str | None:
    """How the build's developer requests were made, when it made any (told by the prompt)."""
    for stage in manifest.stages:
        if stage.name == "request":
            return "chosen" if stage.prompt_version.startswith("developer_request_choice") else "free"
    return None


def _prompts(stages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The prompt templates the stages used, by their versions (the card quotes them)."""
    found = []
    for stage in stages:
        if stage.get("prompt") is None:  # a stage whose prompt is not a template file
            continue
        template = load_prompt(stage["prompt"])
        if template.version == stage.get("prompt_version"):
            found.append(template.model_dump(include={"name", "version", "system", "user"}))
    return found
