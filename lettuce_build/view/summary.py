"""Terminal views: samples, build summaries, status, cache statistics, audits, the taxonomy."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lettuce_build.builds.running.dry_run import DryRun
from lettuce_build.builds.storage.folder import Manifest, RunCost
from lettuce_build.core.gates import GATE_REASONS
from lettuce_build.core.schema import HallucinationSample
from lettuce_build.core.taxonomy import (
    BUILTIN_SUBCATEGORIES,
    CATEGORY_DEFINITIONS,
    DOCUMENT_LEVEL_DEFINITIONS,
    INJECTABLE_CATEGORIES,
    SUPPORTED,
    Taxonomy,
)
from lettuce_build.engine.records import FailureRow
from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger
from lettuce_build.llm.cache import CacheStats
from lettuce_build.view.samples import answer_pieces, excerpt, span_type, terminal_color
from lettuce_build.view.validate import ValidationReport

if TYPE_CHECKING:  # build imports every source; the summary's type is all display needs of it
    from lettuce_build.builds.running.run import BuildSummary


def highlight_answer(sample: HallucinationSample) -> str:
    """The answer with each span in its category's colour, tagged with its number."""
    pieces = []
    for text, index in answer_pieces(sample):
        if index is None:
            pieces.append(text)
            continue
        color = terminal_color(sample.labels[index])
        pieces.append(click.style(f"[{text}]", fg=color, bold=True) + click.style(f"^{index + 1}", fg=color))
    return "".join(pieces)


def render_sample(sample: HallucinationSample) -> str:
    lines = [
        click.style("question: ", bold=True) + sample.question,
        click.style("context:  ", bold=True) + excerpt(sample.context).replace("\n", "\n          "),
        click.style("answer:   ", bold=True) + highlight_answer(sample).replace("\n", "\n          "),
    ]
    for number, span in enumerate(sample.labels, start=1):
        lines.append(f"  ^{number} [{span.start}:{span.end}] {span_type(span)}: {span.text!r}")
    if not sample.labels:
        lines.append("  (a clean sample: no hallucinated spans)")
    return "\n".join(lines)


def counts_text(title: str, counts: Mapping[str, int]) -> str:
    return "\n".join([title, *(f"  {name:<40} {count:>8}" for name, count in sorted(counts.items()))])


def validation_text(path: Path, report: ValidationReport) -> str:
    """The counts `validate` prints before any violation."""
    return "\n".join(
        [
            f"checked {report.rows} rows in {path}",
            counts_text("split", report.by_split),
            counts_text("category", report.by_category),
            counts_text("span category/subcategory", report.by_subcategory),
        ]
    )


def taxonomy_text(taxonomy: Taxonomy) -> str:
    lines = ["Span categories"]
    lines.append(f"  {SUPPORTED:<22} {CATEGORY_DEFINITIONS[SUPPORTED]} (default class; never a label)")
    for category in INJECTABLE_CATEGORIES:
        lines.append(f"  {category:<22} {CATEGORY_DEFINITIONS[category]}")
        for name, definition in taxonomy.subcategories[category].items():
            marker = "" if name in BUILTIN_SUBCATEGORIES[category] else " (custom)"
            lines.append(f"    {category}/{name:<12} {definition}{marker}")
    lines.append("Document level")
    lines.extend(f"  {name:<22} {definition}" for name, definition in DOCUMENT_LEVEL_DEFINITIONS.items())
    pairs = [f"{c}/{s}" for c in INJECTABLE_CATEGORIES for s in taxonomy.subcategories[c]]
    lines.append(
        f"{len(pairs)} subcategories ({len(taxonomy.subcategory_names())} distinct names; "
        "entity appears under two categories)"
    )
    return "\n".join(lines)


def taxonomy_json(taxonomy: Taxonomy) -> dict[str, Any]:
    return {
        "span_categories": {
            c: {"definition": CATEGORY_DEFINITIONS[c], "subcategories": taxonomy.subcategories.get(c, {})}
            for c in (SUPPORTED, *INJECTABLE_CATEGORIES)
        },
        "document_level": DOCUMENT_LEVEL_DEFINITIONS,
        "subcategories": [f"{c}/{s}" for c in INJECTABLE_CATEGORIES for s in taxonomy.subcategories[c]],
    }


def status_text(path: Path, manifest: Manifest) -> str:
    updated = datetime.fromtimestamp(manifest.updated, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [f"{path}: {manifest.status} (source {manifest.source}, updated {updated})"]
    if manifest.backend:
        lines.append(
            f"  backend {manifest.backend.backend}, model {manifest.backend.model}, "
            f"{manifest.backend.version or 'version unknown'}; seed {manifest.seed}, limit {manifest.limit}"
        )
    if manifest.shard:
        record = manifest.shard
        lines.append(f"  shard {record.shard}: {record.items} of the build's {record.total_items} work items")
    if manifest.merged_from:
        lines.append(f"  merged from {len(manifest.merged_from)} shards: {', '.join(manifest.merged_from)}")
    lines.append(
        f"  {'stage':<12}{'prompt':<16}{'in':>7}{'ok':>7}{'failed':>8}{'hits':>8}{'misses':>8}{'seconds':>9}"
    )
    for s in manifest.stages:
        lines.append(
            f"  {s.name:<12}{s.prompt_version:<16}{s.items_in:>7}{s.ok + s.passed_through:>7}{s.failed:>8}"
            f"{s.cache_hits:>8}{s.cache_misses:>8}{s.seconds:>9.1f}"
        )
        lines.extend(f"      {reason:<32}{count:>6}" for reason, count in sorted(s.failure_reasons.items()))
    if manifest.error:
        lines.append(f"  error: {manifest.error}")
    lines.extend(batch_lines(path))
    if manifest.cost.dollars is not None:
        lines.append(f"  model so far: {cost_text(manifest.cost)}")
    if manifest.counts:
        counts = manifest.counts.model_dump(mode="json", by_alias=True)
        lines.extend(f"  {name}: {value}" for name, value in counts.items())
    return "\n".join(lines)


def batch_lines(path: Path) -> list[str]:
    """The build's batches still at the provider (``--batch``), as it last saw them."""
    ledger = BatchLedger(path / BATCHES_FILE)
    records = ledger.records()
    waiting = [r for r in records if not r.collected]
    if not records:
        return []
    lines = [f"  batches: {len(records)} sent, {len(waiting)} in flight"]
    for r in waiting:
        sent = datetime.fromtimestamp(r.submitted, UTC).strftime("%Y-%m-%d %H:%M UTC")
        lines.append(
            f"    {r.batch_id or '(being made: file ' + r.file_id + ')'} {r.status}: {r.completed} answered, "
            f"{r.failed} failed of {r.requests} ({r.prompt_version}, sent {sent}); the next run of the "
            "build collects it"
        )
    return lines


def failure_text(row: FailureRow) -> str:
    raw = row.raw_excerpt[:120].replace("\n", "\\n")
    return (
        f"{row.stage:<10} {row.reason:<22} attempt {row.attempt} {row.key}"
        f" (finish {row.finish_reason}): {row.detail}\n    raw: {raw}"
    )


def cache_stats_text(path: Path, stats: CacheStats) -> str:
    lookups = stats.hits + stats.misses
    lines = [
        f"{path}: {stats.rows} cached responses, {stats.size_bytes / 1e6:.1f} MB",
        f"  lookups {lookups}: {stats.hits} hits, {stats.misses} misses"
        + (f" ({stats.hits / lookups:.0%} hit rate)" if lookups else ""),
        f"  tokens: {stats.prompt_tokens} prompt, {stats.completion_tokens} completion",
    ]
    lines.extend(f"  model {model}: {count}" for model, count in stats.by_model.items())
    lines.extend(f"  prompt {version}: {count}" for version, count in stats.by_prompt_version.items())
    return "\n".join(lines)


def dry_run_text(dry: DryRun) -> str:
    """What a build would ask of its model, per stage, and what it would cost at its price."""
    skipped = f", skipped {dry.skipped}" if dry.skipped else ""
    lines = [
        f"dry run of {dry.source}: {dry.documents} documents, {dry.items} work items{skipped}",
        f"  {'stage':<12} {'items':>7} {'cached':>7} {'to send':>7} {'prompt tok':>11} {'compl. tok':>11}",
    ]
    for stage in dry.stages:
        lines.append(
            f"  {stage.name:<12} {stage.items:>7} {stage.cache_hits:>7} {stage.cache_misses:>7}"
            f" {stage.prompt_tokens:>11} {stage.completion_tokens:>11}"
        )
    asked = sum(s.cache_misses for s in dry.stages)
    margin = f" (95% interval ±{dry.requests_margin})" if dry.sampled is not None else ""
    lines.append(
        f"  total: {asked} requests to send{margin}, about {dry.prompt_tokens} prompt tokens and at most "
        f"{dry.completion_tokens} completion tokens (first attempts; retries and judges come on top)"
    )
    if dry.sampled is not None:
        lines.append(
            f"  estimated: the stages rehearsed on a seeded sample of {dry.sampled} of the {dry.items} "
            "items (--exact counts every one)"
        )
    if dry.pricing is not None and dry.dollars is not None:
        batched = f", batched at {dry.pricing.batch_discount:g} of it" if dry.batched else ""
        lines.append(f"  estimated cost at {dry.pricing.text()}{batched}: at most ${dry.dollars:.2f}")
    if dry.steps:
        lines.append("the steps it runs, in order:")
        lines += [f"  {n}. {step}" for n, step in enumerate(dry.steps, 1)]
    return "\n".join(lines)


def cost_text(cost: RunCost) -> str:
    batched = cost.batched_prompt_tokens + cost.batched_completion_tokens
    tokens = cost.prompt_tokens + cost.completion_tokens
    return (
        f"{cost.requests} requests, {cost.prompt_tokens} prompt and {cost.completion_tokens} "
        f"completion tokens"
        + (f" ({batched / tokens:.0%} through batches)" if batched and tokens else "")
        + f", {cost.backend_seconds:.1f} s"
        + (f", ${cost.dollars:.4f}" if cost.dollars is not None else "")
    )


def gate_rejections(failures: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """Per stage, the failures that a quality gate (core/gates.py) gave, by reason."""
    found = {
        stage: {reason: n for reason, n in reasons.items() if reason in GATE_REASONS}
        for stage, reasons in failures.items()
    }
    return {stage: reasons for stage, reasons in found.items() if reasons}


def summary_text(summary: BuildSummary) -> str:
    """What a build prints when it ends: counts, ratio, failures, time, one sample, how to load it."""
    lines = [
        "",
        click.style(
            f"{summary.dataset}: {sum(summary.by_split.values())} samples in {summary.out}", bold=True
        ),
        f"  documents {summary.documents}, work items {summary.items}"
        + (f", skipped inputs {summary.skipped}" if summary.skipped else ""),
        f"  splits: {summary.by_split or 'none'}",
        f"  categories: {summary.by_category or 'none'}",
        *([f"  error types asked: spans made per type {summary.error_types}"] if summary.error_types else []),
        f"  yield: {sum(summary.by_split.values())} samples of {summary.items} work items "
        f"({summary.yield_:.2f} per item)",
        f"  hallucination ratio: achieved {summary.achieved_ratio:.2f} "
        f"({summary.hallucinated} hallucinated, {summary.clean} clean), "
        f"requested {summary.requested_ratio:.2f}",
    ]
    if summary.shard is not None:
        lines.append(
            f"  shard {summary.shard} of the build: once all {summary.shard.count} have finished, "
            "`lettuce-build merge SHARD_DIR... --out DIR` joins them and meets the ratio over all items"
        )
    elif summary.ratio is not None and (shortfall := summary.ratio.shortfall()):
        lines.append(click.style(f"  {shortfall}", fg="yellow"))
    lines.extend(f"  failures in {stage}: {reasons}" for stage, reasons in summary.failures.items())
    if gated := gate_rejections(summary.failures):
        parts = [f"{stage} {sum(reasons.values())} {reasons}" for stage, reasons in gated.items()]
        lines.append("  the quality gates rejected: " + "; ".join(parts))
    if summary.judge is not None:
        lines.extend(f"  judge: {line}" for line in summary.judge.lines())
    for scored in (summary.plausibility, summary.question_fit):
        if scored is not None:
            lines.extend(f"  {line}" for line in scored.lines())
    if summary.shortcuts is not None:
        lines.extend(f"  {line}" for line in summary.shortcuts.lines())
    share = 1 - summary.backend_seconds / summary.seconds if summary.seconds else 0.0
    lines.append(
        f"  time: {summary.seconds:.1f} s, {summary.backend_seconds:.1f} s in the model backend "
        f"({share:.1%} outside it)"
    )
    lines.append(f"  model: this run {cost_text(summary.cost)}")
    if summary.runs > 1:
        lines.append(f"  model: all {summary.runs} runs {cost_text(summary.total_cost)}")
    if not summary.by_split:  # nothing to load: say why and where to look
        worst = max(
            ((stage, sum(reasons.values())) for stage, reasons in summary.failures.items()),
            key=lambda pair: pair[1],
            default=None,
        )
        why = f"most items failed in stage {worst[0]}" if worst else "no item reached the end"
        advice = f"no samples: {why}; see `lettuce-build failures {summary.out}`"
        lines += ["", click.style(advice, fg="red", bold=True)]
        return "\n".join(lines)
    if summary.example is not None:
        lines += ["", click.style("one sample:", bold=True), render_sample(summary.example)]
    lines += [
        "",
        f"load it: datasets.load_dataset({str(summary.out / 'hub')!r}, {summary.source!r})",
        f"look at it: lettuce-build show {summary.out}",
    ]
    return "\n".join(lines)
