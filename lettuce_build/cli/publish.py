"""Handing builds on: to the Hub (or a local dry-run folder), and to other tools' layouts."""

from __future__ import annotations

import os
from pathlib import Path

import click

from lettuce_build.cli.options import folder, share
from lettuce_build.publish import DEFAULT_MAX_FAILURE_RATE
from lettuce_build.publish.catalog import COLLECTIONS


@click.command()
@click.option("--source", "source_name", help="Publish one source's build as its own config.")
@click.option(
    "--build", "build_dir", type=folder(), help="The build folder of --source (default: out/<source>)."
)
@click.option(
    "--collection",
    type=click.Choice(sorted(COLLECTIONS)),
    help="Publish every available source of a collection, one config each.",
)
@click.option(
    "--builds",
    "builds_root",
    type=folder(),
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
    type=folder(),
    help="Write the exact Hub layout to this folder instead of pushing.",
)
@click.option("--create-pr", is_flag=True, help="Open a pull request with each commit instead of committing.")
@click.option("--commit-message", help="The commit's message (default: names the config and its rows).")
@share(
    "--max-failure-rate",
    DEFAULT_MAX_FAILURE_RATE,
    "Refuse a build whose share of failed items is above this.",
)
@click.option(
    "--reviewed-only",
    metavar="SPLIT",
    help="Publish only the rows of SPLIT that reviewers confirmed whole (`lettuce-build review`): a "
    "gold split; the card says so.",
)
@click.option(
    "--allow-split-leaks",
    is_flag=True,
    help="Push even when a context (or a near-duplicate of it) is in two splits, within or across builds.",
)
def push(
    *,
    source_name: str | None,
    build_dir: Path | None,
    collection: str | None,
    builds_root: Path,
    repo_id: str | None,
    private: bool,
    revision: str | None,
    dry_run: Path | None,
    create_pr: bool,
    commit_message: str | None,
    max_failure_rate: float,
    reviewed_only: str | None,
    allow_split_leaks: bool,
) -> None:
    """Publish builds as Hub datasets: one config per source, one commit per config, a merged card.

    The token comes from HF_TOKEN or the saved Hugging Face login and is never printed or uploaded.
    """
    from huggingface_hub import HfApi

    from lettuce_build.core.paths import check_writable
    from lettuce_build.publish.hub import FolderTarget, HubTarget, publish, push_jobs

    if (source_name is None) == (collection is None):
        raise click.UsageError("give exactly one of --source or --collection")
    plan = push_jobs(source_name, build_dir, collection, builds_root)
    if plan.missing:
        click.echo(f"not in {builds_root}, left out: {', '.join(plan.missing)}")
    repo = repo_id or collection
    if dry_run is None and repo is None:
        raise click.UsageError("--repo-id is required unless --dry-run is given")
    if dry_run is not None:
        check_writable(dry_run, "--dry-run folder")
        target: FolderTarget | HubTarget = FolderTarget(dry_run, repo or dry_run.name)
    else:
        assert repo is not None
        api = HfApi(token=os.environ.get("HF_TOKEN"))
        target = HubTarget(api, repo, private=private, revision=revision, create_pr=create_pr)
    if not allow_split_leaks:
        from lettuce_build.publish.dedup import split_leaks

        if leaks := split_leaks(plan.jobs):
            raise click.ClickException(
                f"{len(leaks)} context(s) in two splits, e.g. {leaks[0]}: a detector would be tested on "
                "what it trained on (lettuce-build audit names them; --allow-split-leaks pushes anyway)"
            )
    for source, path in plan.jobs:
        where = publish(
            path,
            source,
            target,
            max_failure_rate=max_failure_rate,
            commit_message=commit_message,
            reviewed_only=reviewed_only,
        )
        click.echo(f"published {source} from {path} -> {where}")


#: the formats `export` writes: lettuce_build.formats.FORMATS, named here so that `--help` imports
#: none of them (tests/test_cli.py checks the two agree)
EXPORT_FORMATS = ("lettucedetect", "ragtruth", "sft", "spans", "jsonl")


@click.command()
@click.argument("source")
@click.option(
    "--format", "layout", type=click.Choice(EXPORT_FORMATS), required=True, help="The layout to write."
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="The file to write (a folder for ragtruth).",
)
@click.option("--config", help="With a Hub dataset id: the config to export (default: all of them).")
def export(source: str, layout: str, out: Path, config: str | None) -> None:
    """Write the samples of SOURCE (a build folder, a Hub-style or saved dataset folder, a
    parquet or JSONL file, or a Hub dataset id) in another tool's layout:

    \b
    lettucedetect  a JSON array of LettuceDetect's HallucinationSample fields
                   (splits train/dev/test), which its trainer and evaluators read
    ragtruth       RAGTruth's response.jsonl and source_info.jsonl (a folder)
    sft            chat rows for a generative detector: the spans quoted and typed
    spans          one row per hallucinated span, for a span-type classifier
    jsonl          our own schema, one row per line

    `validate` and `audit` read every export back, with the same counts.
    """
    from lettuce_build.publish.export import export as write_export

    counts = write_export(source, layout, out, config=config)
    splits = ", ".join(f"{split} {n}" for split, n in sorted(counts.by_split.items()))
    click.echo(
        f"wrote {counts.samples} samples ({counts.spans} spans; {splits or 'none'}) as {layout} to {out}"
    )
    for note in counts.notes:
        click.echo(note, err=True)
    click.echo(f"check it: lettuce-build audit {out}")
