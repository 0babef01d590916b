"""The `lettuce-build` command line."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from lettuce_build import __version__
from lettuce_build.audit import audit
from lettuce_build.builddir import BuildDir
from lettuce_build.errors import LettuceError
from lettuce_build.taxonomy import (
    BUILTIN_SUBCATEGORIES,
    CATEGORY_DEFINITIONS,
    DEFAULT_TAXONOMY,
    DOCUMENT_LEVEL_DEFINITIONS,
    INJECTABLE_CATEGORIES,
    SUPPORTED,
    Taxonomy,
)


class _Share(click.ParamType):
    """A number in [0, 1] (click's FloatRange lets NaN through: NaN fails every comparison)."""

    name = "share"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not 0.0 <= number <= 1.0:
            self.fail(f"{value!r} is not in the range 0 to 1", param, ctx)
        return number


SHARE = _Share()

#: the collections `push --collection` knows (kept here so `--help` needs no heavy import)
COLLECTION_NAMES = ("lettucedetect-code-hallucination", "lettucedetect-prose-hallucination")

_TAXONOMY_FILE = click.option(
    "--taxonomy-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path, resolve_path=True),
    help="YAML/JSON file adding subcategories: {subcategories: {category: {name: definition}}}.",
)


def _load_taxonomy(path: Path | None) -> Taxonomy:
    if path is None:
        return DEFAULT_TAXONOMY
    return Taxonomy.from_file(path)


class _Commands(click.Group):
    """Errors a user can act on print as one line; their traceback only with --verbose."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except LettuceError as err:
            if ctx.meta.get(VERBOSE):
                raise
            raise click.ClickException(str(err)) from err


VERBOSE = "lettuce_build.verbose"


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lettuce-build")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of errors.")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Build span-labelled hallucination and tool-output datasets for Hugging Face `datasets`."""
    ctx.meta[VERBOSE] = verbose


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the taxonomy as JSON.")
@_TAXONOMY_FILE
def taxonomy(as_json: bool, taxonomy_file: Path | None) -> None:
    """List categories, subcategories and their one-line definitions."""
    tax = _load_taxonomy(taxonomy_file)
    if as_json:
        payload = {
            "span_categories": {
                c: {
                    "definition": CATEGORY_DEFINITIONS[c],
                    "subcategories": tax.subcategories.get(c, {}),
                }
                for c in (SUPPORTED, *INJECTABLE_CATEGORIES)
            },
            "document_level": DOCUMENT_LEVEL_DEFINITIONS,
            "subcategories": [f"{c}/{s}" for c in INJECTABLE_CATEGORIES for s in tax.subcategories[c]],
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo("Span categories")
    click.echo(f"  {SUPPORTED:<22} {CATEGORY_DEFINITIONS[SUPPORTED]} (default class; never a label)")
    for category in INJECTABLE_CATEGORIES:
        click.echo(f"  {category:<22} {CATEGORY_DEFINITIONS[category]}")
        for name, definition in tax.subcategories[category].items():
            marker = "" if name in BUILTIN_SUBCATEGORIES[category] else " (custom)"
            click.echo(f"    {category}/{name:<12} {definition}{marker}")
    click.echo("Document level")
    for name, definition in DOCUMENT_LEVEL_DEFINITIONS.items():
        click.echo(f"  {name:<22} {definition}")
    pairs = [f"{c}/{s}" for c in INJECTABLE_CATEGORIES for s in tax.subcategories[c]]
    click.echo(
        f"{len(pairs)} subcategories ({len(tax.subcategory_names())} distinct names; "
        "entity appears under two categories)"
    )


def _print_counts(title: str, counts: Counter[str]) -> None:
    click.echo(title)
    for name, count in sorted(counts.items()):
        click.echo(f"  {name:<40} {count:>8}")


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path, resolve_path=True))
@_TAXONOMY_FILE
@click.option(
    "--max-shown",
    default=200,
    show_default=True,
    type=click.IntRange(min=0),
    help="Print at most this many violations.",
)
def validate(path: Path, taxonomy_file: Path | None, max_shown: int) -> None:
    """Check every row of an output folder, parquet file or JSONL file.

    Prints counts per split, category and subcategory, then each violation with
    its row, field and reason. Exits 1 on any violation.
    """
    try:
        report = audit(path, _load_taxonomy(taxonomy_file))
    except (FileNotFoundError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"checked {report.rows} rows in {path}")
    _print_counts("split", report.by_split)
    _print_counts("category", report.by_category)
    _print_counts("span category/subcategory", report.by_subcategory)
    if report.ok:
        click.echo("no violations")
        return
    click.echo(f"{len(report.problems)} violation(s):", err=True)
    for problem in report.problems[:max_shown]:
        click.echo(f"  {problem}", err=True)
    if len(report.problems) > max_shown:
        click.echo(f"  ... and {len(report.problems) - max_shown} more", err=True)
    sys.exit(1)


@main.command()
@click.option(
    "--instances",
    default="princeton-nlp/SWE-bench",
    show_default=True,
    help="SWE-bench tasks: a local .jsonl/.parquet file or a Hub dataset id (test split).",
)
@click.option(
    "--verified",
    default="princeton-nlp/SWE-bench_Verified",
    show_default=True,
    help="SWE-bench Verified, to flag candidates in it: a local file or a Hub dataset id.",
)
@click.option("--no-verified", is_flag=True, help="Do not look up SWE-bench Verified membership.")
@click.option(
    "--preset",
    type=click.Choice(["v1", "v2", "v3"]),
    default="v2",
    show_default=True,
    help="Pattern set; v2 reproduces the published stage 1, v3 fixes its defects.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="Folder for stage1_candidates.json, stage1_funnel.json and the HF dataset.",
)
@click.option(
    "--compare",
    "compare_with",
    type=click.Choice(["v1", "v2", "v3"]),
    help="Also print the candidates this preset adds and drops against another, with reasons.",
)
@click.option(
    "--explain",
    "explain_id",
    metavar="INSTANCE_ID",
    help="Print each added line of one instance's patch that matched, and stop.",
)
def sift(
    instances: str,
    verified: str,
    no_verified: bool,
    preset: str,
    out_dir: Path | None,
    compare_with: str | None,
    explain_id: str | None,
) -> None:
    """Sift SWE-bench for tasks whose gold patch touches security-relevant code (stage 1)."""
    from lettuce_build.sift.presets import load_preset
    from lettuce_build.sift.report import comparison_table, explain, summary_table
    from lettuce_build.sift.stage1 import REQUIRED_COLUMNS, compare, write_sift_outputs
    from lettuce_build.sift.stage1 import sift as run_sift
    from lettuce_build.swebench import load_instance_rows

    pattern_set = load_preset(preset)
    rows = load_instance_rows(instances, REQUIRED_COLUMNS)
    if explain_id:
        row = next((r for r in rows if r["instance_id"] == explain_id), None)
        if row is None:
            raise click.ClickException(f"{explain_id} is not in {instances}")
        click.echo(f"{explain_id} ({row['repo']}), preset {preset}")
        click.echo(explain(row["patch"], pattern_set))
        return
    if out_dir is None:
        raise click.UsageError("--out is required unless --explain is given")
    verified_ids = None
    if not no_verified:
        verified_ids = {r["instance_id"] for r in load_instance_rows(verified, ["instance_id"])}
    result = run_sift(rows, verified_ids, pattern_set)
    write_sift_outputs(result, out_dir)
    click.echo(summary_table(result))
    for bad in result.invalid_rows:
        click.echo(f"  skipped row {bad.index} ({bad.instance_id}): {bad.reason}", err=True)
    if compare_with:
        other = run_sift(rows, verified_ids, load_preset(compare_with))
        click.echo(comparison_table(compare(rows, result, other, pattern_set), preset, compare_with))
    click.echo(f"wrote {out_dir}/stage1_candidates.json, stage1_funnel.json, dataset/ and hub/")


@main.command()
@click.argument("build_dir", type=click.Path(exists=True, file_okay=False, path_type=Path, resolve_path=True))
def status(build_dir: Path) -> None:
    """Show a build's state: stages, counts, cache hits, failures, timings."""
    from datetime import UTC, datetime

    build = BuildDir(build_dir)
    manifest = build.read_manifest()
    updated = datetime.fromtimestamp(manifest.updated, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    click.echo(f"{build_dir}: {manifest.status} (source {manifest.source}, updated {updated})")
    if manifest.backend:
        click.echo(
            f"  backend {manifest.backend.backend}, model {manifest.backend.model}, "
            f"{manifest.backend.version or 'version unknown'}; seed {manifest.seed}, limit {manifest.limit}"
        )
    click.echo(
        f"  {'stage':<12}{'prompt':<16}{'in':>7}{'ok':>7}{'failed':>8}{'hits':>8}{'misses':>8}{'seconds':>9}"
    )
    for s in manifest.stages:
        click.echo(
            f"  {s.name:<12}{s.prompt_version:<16}{s.items_in:>7}{s.ok + s.passed_through:>7}{s.failed:>8}"
            f"{s.cache_hits:>8}{s.cache_misses:>8}{s.seconds:>9.1f}"
        )
        for reason, count in sorted(s.failure_reasons.items()):
            click.echo(f"      {reason:<32}{count:>6}")
    for name, value in manifest.counts.items():
        click.echo(f"  {name}: {value}")


@main.command()
@click.argument("build_dir", type=click.Path(exists=True, file_okay=False, path_type=Path, resolve_path=True))
@click.option("--stage", help="Only failures of this stage.")
@click.option("--reason", help="Only failures with this reason.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def failures(build_dir: Path, stage: str | None, reason: str | None, as_json: bool) -> None:
    """List a build's failure rows: key, stage, reason, attempt, finish_reason, raw excerpt."""
    try:
        rows = BuildDir(build_dir).failures(stage, reason)
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    for row in rows:
        if as_json:
            click.echo(row.model_dump_json())
        else:
            excerpt = row.raw_excerpt[:120].replace("\n", "\\n")
            click.echo(
                f"{row.stage:<10} {row.reason:<22} attempt {row.attempt} {row.key}"
                f" (finish {row.finish_reason}): {row.detail}\n    raw: {excerpt}"
            )
    if not as_json:
        click.echo(f"{len(rows)} failure(s)")


@main.group()
def cache() -> None:
    """Inspect a build's request cache."""


@cache.command("stats")
@click.argument("build_dir", type=click.Path(exists=True, file_okay=False, path_type=Path, resolve_path=True))
def cache_stats(build_dir: Path) -> None:
    """Rows, hits, misses, tokens and size of BUILD_DIR/cache.sqlite."""
    build = BuildDir(build_dir)
    if not build.cache_path.exists():
        raise click.ClickException(f"{build.cache_path} does not exist")
    request_cache = build.open_cache()
    stats = request_cache.stats()
    request_cache.close()
    lookups = stats.hits + stats.misses
    click.echo(f"{build.cache_path}: {stats.rows} cached responses, {stats.size_bytes / 1e6:.1f} MB")
    click.echo(
        f"  lookups {lookups}: {stats.hits} hits, {stats.misses} misses"
        + (f" ({stats.hits / lookups:.0%} hit rate)" if lookups else "")
    )
    click.echo(f"  tokens: {stats.prompt_tokens} prompt, {stats.completion_tokens} completion")
    for model, count in stats.by_model.items():
        click.echo(f"  model {model}: {count}")
    for version, count in stats.by_prompt_version.items():
        click.echo(f"  prompt {version}: {count}")


@main.command()
def sources() -> None:
    """List the sources `build` knows, with their dataset names and upstream data."""
    from lettuce_build.sources.registry import SOURCES

    for name, cls in SOURCES.items():
        click.echo(f"{name:<12} {cls.dataset_name:<28} {cls.modality:<12} {cls.card.upstream}")


@main.command()
@click.option("--source", "source_name", required=True, help="A source name; see `lettuce-build sources`.")
@click.option(
    "--input", "input_path", help="Local input (folder or file) or a Hub dataset id; see the source."
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="Build folder: cache, manifest, failures, dataset/ and hub/. Re-running resumes.",
)
@click.option(
    "--model",
    default="smollm2-135m",
    show_default=True,
    help="Model id or path; smollm2-135m is the embedded CPU model.",
)
@click.option(
    "--backend", "backend_name", type=click.Choice(["vllm", "openai"]), default="vllm", show_default=True
)
@click.option(
    "--base-url", default="http://127.0.0.1:8000/v1", show_default=True, help="For --backend openai."
)
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable holding the API key (the key itself never goes on the command line).",
)
@click.option(
    "--concurrency",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="Requests in flight, for --backend openai.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Build at most N work items (a trial run).")
@click.option(
    "--ratio",
    default=0.5,
    show_default=True,
    type=SHARE,
    help="Share of items that get injected hallucinations.",
)
@click.option("--seed", default=0, show_default=True, help="Seeds item choices and per-request sampling.")
@click.option(
    "--fallback",
    type=click.Choice(["none", "clean"]),
    default="none",
    show_default=True,
    help="`clean`: an item whose injection failed becomes a clean sample (counted).",
)
@click.option(
    "--language", default="en", show_default=True, help="Language (config) for multilingual sources."
)
@click.option(
    "--repo-url",
    default="https://github.com/{repo}.git",
    show_default=True,
    help="code source: clone URL template ({repo} = owner/name); a local path or file:// works too.",
)
def build(
    source_name: str,
    input_path: str | None,
    out_dir: Path,
    model: str,
    backend_name: str,
    base_url: str,
    api_key_env: str,
    concurrency: int,
    limit: int | None,
    ratio: float,
    seed: int,
    fallback: str,
    language: str,
    repo_url: str,
) -> None:
    """Build a dataset from a source: questions, grounded answers, injected hallucinations."""
    from lettuce_build.build import BuildOptions, run_build
    from lettuce_build.display import render_sample
    from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
    from lettuce_build.llm.vllm_backend import VLLMBackend

    backend = (
        VLLMBackend(model)
        if backend_name == "vllm"
        else OpenAIBackend(
            model, OpenAIOptions(base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
        )
    )
    options = BuildOptions(
        source=source_name,
        input=input_path,
        out=out_dir,
        limit=limit,
        ratio=ratio,
        seed=seed,
        fallback=fallback,
        language=language,
        repo_url=repo_url,
    )
    summary = run_build(options, backend)
    click.echo("")
    click.echo(
        click.style(
            f"{summary.dataset}: {sum(summary.by_split.values())} samples in {summary.out}", bold=True
        )
    )
    click.echo(
        f"  documents {summary.documents}, work items {summary.items}"
        + (f", skipped inputs {summary.skipped}" if summary.skipped else "")
    )
    click.echo(f"  splits: {summary.by_split or 'none'}")
    click.echo(f"  categories: {summary.by_category or 'none'}")
    click.echo(
        f"  hallucination ratio: achieved {summary.achieved_ratio:.2f} "
        f"({summary.hallucinated} hallucinated, {summary.clean} clean), "
        f"requested {summary.requested_ratio:.2f}"
        + (f"; {summary.fallback_clean} fell back to clean" if summary.fallback_clean else "")
    )
    for stage, reasons in summary.failures.items():
        click.echo(f"  failures in {stage}: {reasons}")
    share = 1 - summary.backend_seconds / summary.seconds if summary.seconds else 0.0
    click.echo(
        f"  time: {summary.seconds:.1f} s, {summary.backend_seconds:.1f} s in the model backend "
        f"({share:.1%} outside it)"
    )
    if summary.example is not None:
        click.echo("")
        click.echo(click.style("one sample:", bold=True))
        click.echo(render_sample(summary.example))
    click.echo("")
    click.echo(f"load it: datasets.load_dataset({str(summary.out / 'hub')!r}, {summary.dataset!r})")


@main.command(context_settings={"ignore_unknown_options": False})
@click.option(
    "--phase",
    "first_phase",
    type=click.IntRange(1, 8),
    required=True,
    help="Phases to run, in order: --phase 1 2 3 4 5 6 7 8 (each reads the previous one's files).",
)
@click.argument("more_phases", nargs=-1, type=click.IntRange(1, 8))
@click.option(
    "--output-dir", required=True, type=click.Path(file_okay=False, path_type=Path, resolve_path=True)
)
@click.option(
    "--instances",
    default="princeton-nlp/SWE-bench",
    show_default=True,
    help="Phase 1 input: a local .jsonl/.parquet of SWE-bench instances or a Hub dataset id.",
)
@click.option(
    "--repo-url",
    default="https://github.com/{repo}.git",
    show_default=True,
    help="Clone URL template with {repo} (owner/name), {owner}, {name}; a local path or file:// works too.",
)
@click.option(
    "--workers",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="Parallel clones and instances in phase 2 and 4.",
)
@click.option("--teacher-model", help="Phase 6 teacher; without it the auto-labels are the gold spans.")
@click.option("--teacher-base-url", help="OpenAI-compatible endpoint of the teacher; without it, local vLLM.")
@click.option(
    "--teacher-api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable holding the teacher's API key.",
)
@click.option(
    "--concurrency",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="Teacher requests in flight.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Phase 1: keep the first N instances.")
@click.option("--seed", default=0, show_default=True, help="Seeds tool-call generation and teacher sampling.")
@click.option(
    "--allow-network", is_flag=True, help="Run curl calls (with network); otherwise they are skipped."
)
def squeez(
    first_phase: int,
    more_phases: tuple[int, ...],
    output_dir: Path,
    instances: str,
    repo_url: str,
    workers: int,
    teacher_model: str | None,
    teacher_base_url: str | None,
    teacher_api_key_env: str,
    concurrency: int,
    limit: int | None,
    seed: int,
    allow_network: bool,
) -> None:
    """Build the squeez tool-output dataset from SWE-bench repositories (phases 1-8)."""
    from lettuce_build.squeez.pipeline import Squeez

    phases = [first_phase, *more_phases]
    pipeline = Squeez(
        output_dir, url_template=repo_url, workers=workers, seed=seed, allow_network=allow_network
    )
    with BuildDir(output_dir).lock():
        for phase in phases:
            if phase == 1:
                click.echo(pipeline.phase1(instances, limit))
            elif phase == 6:
                click.echo(
                    pipeline.phase6(
                        _teacher(teacher_model, teacher_base_url, teacher_api_key_env, concurrency)
                    )
                )
            elif phase == 8:
                text, report = pipeline.phase8()
                click.echo(text)
                if not report.ok:
                    raise click.ClickException(
                        "validation failed: repository overlap, non-verbatim lines or secrets in rows"
                    )
            else:
                click.echo(getattr(pipeline, f"phase{phase}")())


def _teacher(model: str | None, base_url: str | None, api_key_env: str, concurrency: int):  # noqa: ANN202
    if model is None:
        return None
    if base_url is None:
        from lettuce_build.llm.vllm_backend import VLLMBackend

        return VLLMBackend(model)
    from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions

    return OpenAIBackend(
        model, OpenAIOptions(base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
    )


@main.command()
@click.option("--source", "source_name", help="Publish one source's build as its own config.")
@click.option(
    "--build",
    "build_dir",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="The build folder of --source (default: out/<source>).",
)
@click.option(
    "--collection",
    type=click.Choice(sorted(COLLECTION_NAMES)),
    help="Publish every available source of a collection, one config each.",
)
@click.option(
    "--builds",
    "builds_root",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    default=Path("out"),
    show_default=True,
    help="With --collection: a folder holding one build folder per source name.",
)
@click.option("--repo-id", help="ORG/NAME on the Hub (default for --collection: the collection's name).")
@click.option("--private", is_flag=True, help="Create the repository private.")
@click.option("--revision", help="Push to this branch (created if needed).")
@click.option(
    "--dry-run",
    "dry_run",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="Write the exact Hub layout to this folder instead of pushing.",
)
@click.option(
    "--max-failure-rate",
    default=0.5,
    show_default=True,
    type=SHARE,
    help="Refuse a build whose share of failed items is above this.",
)
def push(
    source_name: str | None,
    build_dir: Path | None,
    collection: str | None,
    builds_root: Path,
    repo_id: str | None,
    private: bool,
    revision: str | None,
    dry_run: Path | None,
    max_failure_rate: float,
) -> None:
    """Publish builds as Hub datasets: one config per source, one commit per config, a merged card.

    The token comes from HF_TOKEN or the saved Hugging Face login and is never printed or uploaded.
    """
    import os

    from huggingface_hub import HfApi

    from lettuce_build.hub import COLLECTIONS, FolderTarget, HubTarget, publish

    if (source_name is None) == (collection is None):
        raise click.UsageError("give exactly one of --source or --collection")
    if source_name is not None:
        jobs = [(source_name, build_dir or Path("out") / source_name)]
    else:
        jobs = [
            (s, builds_root / s)
            for s in COLLECTIONS[collection]
            if (builds_root / s / "manifest.json").exists()
        ]
        missing = [s for s in COLLECTIONS[collection] if s not in {j[0] for j in jobs}]
        if missing:
            click.echo(f"not in {builds_root}, left out: {', '.join(missing)}")
        if not jobs:
            raise click.ClickException(f"no build of any {collection} source under {builds_root}")
    repo = repo_id or (collection if collection else None)
    if dry_run is None and repo is None:
        raise click.UsageError("--repo-id is required unless --dry-run is given")
    if dry_run is not None:
        target = FolderTarget(dry_run, repo or dry_run.name)
    else:
        target = HubTarget(HfApi(token=os.environ.get("HF_TOKEN")), repo, private=private, revision=revision)
    for source, path in jobs:
        where = publish(path, source, target, max_failure_rate=max_failure_rate)
        click.echo(f"published {source} from {path} -> {where}")
