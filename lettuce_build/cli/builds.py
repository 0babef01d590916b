"""Commands about builds: run one, and look at its state, failures and cache."""

from __future__ import annotations

from pathlib import Path

import click

from lettuce_build.cli.options import REPO_URL, count, endpoint_options, folder, share


@click.command()
@click.argument("build_dir", type=folder(exists=True))
def status(build_dir: Path) -> None:
    """Show a build's state: stages, counts, cache hits, failures, timings."""
    from lettuce_build.builddir import BuildDir
    from lettuce_build.display import status_text

    click.echo(status_text(build_dir, BuildDir(build_dir).read_manifest()))


@click.command()
@click.argument("build_dir", type=folder(exists=True))
@click.option("--stage", help="Only failures of this stage.")
@click.option("--reason", help="Only failures with this reason.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def failures(build_dir: Path, stage: str | None, reason: str | None, as_json: bool) -> None:
    """List a build's failure rows: key, stage, reason, attempt, finish_reason, raw excerpt."""
    from lettuce_build.builddir import BuildDir
    from lettuce_build.display import failure_text

    build = BuildDir(build_dir)
    every = build.failures(None, None)
    for name, wanted, known in (
        ("stage", stage, {r.stage for r in every}),
        ("reason", reason, {r.reason for r in every}),
    ):
        if wanted is not None and wanted not in known:
            listed = ", ".join(sorted(known)) or "none"
            message = f"no failure of this build has {name} {wanted!r}; its {name}s: {listed}"
            raise click.BadParameter(message, param_hint=f"--{name}")
    rows = build.failures(stage, reason)
    for row in rows:
        click.echo(row.model_dump_json() if as_json else failure_text(row))
    if not as_json:
        click.echo(f"{len(rows)} failure(s)")


@click.group()
def cache() -> None:
    """Inspect a build's request cache."""


@cache.command("stats")
@click.argument("build_dir", type=folder(exists=True))
def cache_stats(build_dir: Path) -> None:
    """Rows, hits, misses, tokens and size of BUILD_DIR/cache.sqlite."""
    from lettuce_build.builddir import BuildDir
    from lettuce_build.display import cache_stats_text

    build = BuildDir(build_dir)
    if not build.cache_path.exists():
        raise click.ClickException(f"{build.cache_path} does not exist")
    request_cache = build.open_cache()
    try:
        click.echo(cache_stats_text(build.cache_path, request_cache.stats()))
    finally:
        request_cache.close()


@click.command()
def sources() -> None:
    """List the sources `build` knows, with their dataset names and upstream data."""
    from lettuce_build.cards import card_text
    from lettuce_build.sources.registry import SOURCES

    for name, cls in SOURCES.items():
        click.echo(
            f"{name:<12} {cls.dataset_name:<28} {cls.modality:<12} {card_text(cls.dataset_name).upstream}"
        )


@click.command()
@click.option("--source", "source_name", required=True, help="A source name; see `lettuce-build sources`.")
@click.option(
    "--input", "input_path", help="Local input (folder or file) or a Hub dataset id; see the source."
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=folder(),
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
@endpoint_options()
@count("--limit", "Build at most N work items (a trial run).")
@share("--ratio", 0.5, "Share of items that get injected hallucinations.")
@click.option("--seed", default=0, show_default=True, help="Seeds item choices and per-request sampling.")
@click.option(
    "--edits",
    "edit_anchors",
    type=click.Choice(["constrained", "free"]),
    default="constrained",
    show_default=True,
    help="constrained: each edit replaces a string taken from the answer (numbers, names, code, "
    "sentences), so it always lands; free: any string the model copies (and may miscopy).",
)
@click.option(
    "--language", default="en", show_default=True, help="Language (config) for multilingual sources."
)
@REPO_URL
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
    edit_anchors: str,
    language: str,
    repo_url: str,
) -> None:
    """Build a dataset from a source: questions, grounded answers, injected hallucinations."""
    from lettuce_build.build import BuildOptions, run_build
    from lettuce_build.display import summary_text
    from lettuce_build.llm.factory import make_backend

    backend = make_backend(
        backend_name,
        model,
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,  # type: ignore[arg-type]
    )
    options = BuildOptions(
        source=source_name,
        input=input_path,
        out=out_dir,
        limit=limit,
        ratio=ratio,
        seed=seed,
        edit_anchors=edit_anchors,  # type: ignore[arg-type]
        language=language,
        repo_url=repo_url,
    )
    click.echo(summary_text(run_build(options, backend)))
