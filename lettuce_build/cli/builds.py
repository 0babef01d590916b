"""Commands about builds already made: their state, failures, samples and cache, the sources
they can be made from, and merging shards (`build` itself is in cli/build.py)."""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

import click

from lettuce_build.cli.options import (
    count,
    folder,
)


@click.command()
@click.argument("build_dir", type=folder(exists=True))
def status(build_dir: Path) -> None:
    """Show a build's state: stages, counts, cache hits, failures, timings."""
    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.view.summary import status_text

    click.echo(status_text(build_dir, BuildDir(build_dir).read_manifest()))


@click.command()
@click.argument("build_dir", type=folder(exists=True))
@click.option("--stage", help="Only failures of this stage.")
@click.option("--reason", help="Only failures with this reason.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def failures(build_dir: Path, stage: str | None, reason: str | None, as_json: bool) -> None:
    """List a build's failure rows: key, stage, reason, attempt, finish_reason, raw excerpt."""
    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.view.summary import failure_text

    build = BuildDir(build_dir)
    build.require_build()
    if note := build.unfinished_note():
        click.echo(note, err=True)
    # counted first, then listed: both a row at a time, so any number of failures fits
    known = {known for per_stage in build.failure_summary().values() for known in per_stage}
    if reason is not None and reason not in known:
        listed = ", ".join(sorted(known)) or "none"
        message = f"no failure of this build has reason {reason!r}; its reasons: {listed}"
        raise click.BadParameter(message, param_hint="--reason")
    listed_rows = 0
    for row in build.iter_failures(stage, reason):
        click.echo(row.model_dump_json() if as_json else failure_text(row))
        listed_rows += 1
    if not as_json:
        click.echo(f"{listed_rows} failure(s)")


@click.command()
@click.argument("build_dir", type=folder(exists=True))
@click.option("--split", help="Only this split.")
@click.option("--category", help="Only samples with a span of this category (`clean`: samples without).")
@count("-n", "How many samples.", default=5)
@click.option("--failures", "show_failures", is_flag=True, help="Show the build's failure rows instead.")
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path, resolve_path=True),
    help="Write every matching sample to one self-contained page (filters, types on hover).",
)
def show(
    *,
    build_dir: Path,
    split: str | None,
    category: str | None,
    n: int,
    show_failures: bool,
    html_file: Path | None,
) -> None:
    """Look at a build's samples, spans highlighted by category (or at its failures)."""
    from rich.console import Console

    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.core.paths import check_writable
    from lettuce_build.view.samples import iter_samples, load_samples, sample_panel, write_page
    from lettuce_build.view.summary import failure_text

    build = BuildDir(build_dir)
    build.require_build()
    if note := build.unfinished_note():
        click.echo(note, err=True)
    if show_failures:
        for row in islice(build.iter_failures(), n):
            click.echo(failure_text(row))
        return
    if html_file is not None:
        if html_file.is_dir():
            raise click.BadParameter(
                f"{html_file} is a folder; give the page's file name", param_hint="--html"
            )
        check_writable(html_file.parent, "folder of --html")
        matching = iter_samples(build_dir, split=split, category=category)
        written = write_page(html_file, matching, lambda count: f"{build_dir.name}: {count} samples")
        click.echo(f"wrote {written} samples to {html_file}")
        return
    samples = load_samples(build_dir, split=split, category=category, limit=n)
    console = Console()
    for number, sample in enumerate(samples, start=1):
        console.print(sample_panel(sample, number))
    if not samples:
        click.echo("no sample matches")


@click.command()
@click.argument("build_dir", type=folder(exists=True))
@click.option("--split", help="Review only this split (e.g. the test split, for a gold set).")
@click.option(
    "--reviewer",
    default=lambda: os.environ.get("USER") or "reviewer",
    show_default="$USER",
    help="Whose verdicts these are (figures compare reviewers).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port (default: any free one).")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to serve on; anything but loopback exposes the samples to the network (a warning).",
)
@click.option("--no-browser", is_flag=True, help="Only print the page's address.")
def review(
    *, build_dir: Path, split: str | None, reviewer: str, port: int, host: str, no_browser: bool
) -> None:
    """Give verdicts on a build's samples in the browser: one sample at a time, keyboard first.

    Verdicts are appended to BUILD_DIR/reviews.jsonl (also through POST /api/verdicts); `audit`
    and the card report what reviewers confirmed; `push --reviewed-only SPLIT` publishes only that.
    """
    import webbrowser

    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.core.lifeline import outliving
    from lettuce_build.core.paths import check_writable
    from lettuce_build.view.review_samples import ReviewSamples
    from lettuce_build.view.review_server import LOOPBACK, ReviewServer
    from lettuce_build.view.reviews import REVIEWS_FILE, ReviewLog

    BuildDir(build_dir).require_build()
    check_writable(build_dir, "build folder (its reviews.jsonl)")
    samples = ReviewSamples(build_dir, split=split)
    if host not in LOOPBACK:
        click.secho(
            f"warning: serving on {host}: anyone who can reach it and has the address can read and review",
            fg="yellow",
            err=True,
        )
    log = ReviewLog(build_dir / REVIEWS_FILE)
    server = ReviewServer(samples, log=log, reviewer=reviewer, host=host, port=port)
    click.echo(f"reviewing {len(server.samples)} samples of {build_dir} as {reviewer}: {server.url}")
    click.echo("Ctrl-C stops the server; every verdict is already saved.")
    if not no_browser:
        with outliving():  # the user's browser is not the command's to stop
            webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


@click.command()
@click.argument("build_dir", type=folder())
def report(build_dir: Path) -> None:
    """Span quality of a generator-mode build: diff spans against what the model reported."""
    from lettuce_build.view.span_report import span_quality

    if not build_dir.is_dir():
        raise click.ClickException(f"{build_dir} does not exist: build it first")
    quality = span_quality(build_dir)
    if quality is None:
        raise click.ClickException(f"{build_dir} has no generated samples (build it with --mode generate)")
    click.echo(quality.text())


@click.group()
def cache() -> None:
    """Inspect a build's request cache."""


@cache.command("stats")
@click.argument("build_dir", type=folder(exists=True))
def cache_stats(build_dir: Path) -> None:
    """Rows, hits, misses, tokens and size of BUILD_DIR/cache.sqlite."""
    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.view.summary import cache_stats_text

    build = BuildDir(build_dir)
    if not build.cache_path.exists():
        raise click.ClickException(f"{build.cache_path} does not exist")
    request_cache = build.open_cache()
    try:
        click.echo(cache_stats_text(build.cache_path, request_cache.stats()))
    finally:
        request_cache.close()


@click.command()
@click.option(
    "--stages",
    "with_stages",
    is_flag=True,
    help="Also list each source's stages, in order, as a build runs them (the embedded model's "
    "and a capable model's, in injection and generation mode).",
)
def sources(with_stages: bool) -> None:
    """List the sources `build` knows, with their dataset names and upstream data."""
    from lettuce_build.publish.cards import card_text
    from lettuce_build.sources.registry import SOURCES

    for name, cls in SOURCES.items():
        click.echo(
            f"{name:<12} {cls.dataset_name:<28} {cls.modality:<12} {card_text(cls.dataset_name).upstream}"
        )
        if with_stages:
            for line in _stage_lines(name):
                click.echo(f"  {line}")


def _stage_lines(source: str) -> list[str]:
    """The stages of ``source`` for each kind of model and mode, as `build_stages` makes them."""
    from lettuce_build.builds.running.stages_of import build_stages
    from lettuce_build.builds.settings.options import BuildOptions
    from lettuce_build.core.errors import SourceError
    from lettuce_build.llm.embedded import DEFAULT_MODEL
    from lettuce_build.sources.registry import get_source

    lines = []
    for model, who in ((DEFAULT_MODEL, "embedded model"), ("any-other-model", "a capable model")):
        for mode in ("inject", "generate"):
            options = BuildOptions(source=source, out=Path("."), mode=mode)
            try:
                stages = build_stages(options, get_source(source), {}, model)
            except SourceError:  # a source whose spans come with its data has no generation
                continue
            described = " -> ".join(f"{s.name} ({type(s).__name__})" for s in stages) or "no model stage"
            lines.append(f"{who}, {mode}: {described}")
    return lines


@click.command()
@click.argument("shards", nargs=-1, required=True, type=folder(exists=True))
@click.option("--out", required=True, type=folder(), help="The merged build's folder.")
def merge(shards: tuple[Path, ...], out: Path) -> None:
    """Join the folders of `build --shard I/N` (all N of them) into one build, as one process
    would have made it; no model is called. squeez shards (`squeez --shard I/N`) are joined
    the same way, then phases 5, 7 and 8 run over all of them."""
    from lettuce_build.squeez.shard_record import is_squeez_shard
    from lettuce_build.squeez.shards import merge_squeez

    if all(is_squeez_shard(folder) for folder in shards):
        for line in merge_squeez(list(shards), out):
            click.echo(line)
        return
    from lettuce_build.builds.running.merge import merge_builds
    from lettuce_build.view.summary import summary_text

    click.echo(summary_text(merge_builds(list(shards), out)))
