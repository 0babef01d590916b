"""Commands about data itself: the taxonomy, validating, auditing and deduplicating an output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from lettuce_build.cli.options import TAXONOMY_FILE, count, folder, load_taxonomy
from lettuce_build.core.near_duplicates import THRESHOLD


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the taxonomy as JSON.")
@TAXONOMY_FILE
def taxonomy(as_json: bool, taxonomy_file: Path | None) -> None:
    """List categories, subcategories and their one-line definitions."""
    from lettuce_build.view.summary import taxonomy_json, taxonomy_text

    tax = load_taxonomy(taxonomy_file)
    click.echo(json.dumps(taxonomy_json(tax), indent=2) if as_json else taxonomy_text(tax))


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path, resolve_path=True))
@click.argument("others", nargs=-1, type=click.Path(exists=True, path_type=Path, resolve_path=True))
@click.option(
    "--strict", is_flag=True, help="Exit 1 when a quality gate's signal appears in any row (for CI)."
)
@click.option(
    "--max-spelling-f1",
    type=click.FloatRange(0.0, 1.0),
    help="With --strict: also exit 1 when the spelling baseline (an answer word its context never "
    "spells marks a hallucination) labels the rows with an example-level F1 above this: the data "
    "then teaches spelling, not reading. 0.67 is what calling every row hallucinated scores at a "
    "ratio of 0.5.",
)
@click.option(
    "--tokenizer",
    help="A tokenizer (a local folder or a Hub id) to measure each sample in tokens, as a detector reads it.",
)
@click.option(
    "--max-length",
    "max_lengths",
    multiple=True,
    type=click.IntRange(min=8),
    help="With --tokenizer: a detector's window in tokens (repeatable; default 4096 and 8192).",
)
def audit(
    *,
    path: Path,
    others: tuple[Path, ...],
    strict: bool,
    max_spelling_f1: float | None,
    tokenizer: str | None,
    max_lengths: tuple[int, ...],
) -> None:
    """The data-quality report of a build folder, dataset, parquet or JSONL file, or an export
    (LettuceDetect's format and the others `export` writes), with no model: the quality gates'
    signals per dataset and class (loops, markup, answers that ask or lack support, added spans
    already in the context), duplicates and train/test overlap, lengths, coverage and the
    category mix. With --tokenizer: per dataset and split, the samples a detector's window cuts
    (it truncates the prompt first) and the spans it would lose. Given several paths (the builds
    of a collection), each is reported, then the contexts found in two splits across them."""
    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.view.audit import quality_report, quality_text
    from lettuce_build.view.token_windows import TokenWindows

    if max_lengths and tokenizer is None:
        raise click.UsageError("--max-length needs --tokenizer")
    clean = True
    for each in (path, *others):
        if each.is_dir() and (note := BuildDir(each).unfinished_note()):
            click.echo(note, err=True)
        windows = TokenWindows(tokenizer, max_lengths or (4096, 8192)) if tokenizer else None
        report = quality_report(each, windows=windows)
        click.echo(quality_text(each, report))
        clean = clean and report.clean
        if max_spelling_f1 is not None and report.shortcuts.example_f1 > max_spelling_f1:
            click.echo(
                f"{each}: the spelling baseline's example F1 {report.shortcuts.example_f1:.2f} is above "
                f"--max-spelling-f1 {max_spelling_f1:.2f}",
                err=True,
            )
            clean = False
    if others:
        from lettuce_build.publish.dedup import split_leaks

        leaks = split_leaks([(each.name, each) for each in (path, *others)])
        click.echo(
            f"across the {len(others) + 1} paths: contexts in two splits (exact or near): {len(leaks)}"
        )
        click.echo("".join(f"  e.g. {leak}\n" for leak in leaks[:5]), nl=False)
        clean = clean and not leaks
    if strict and not clean:
        raise SystemExit(1)


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path, resolve_path=True))
@TAXONOMY_FILE
@count("--max-shown", "Print at most this many violations.", default=200, minimum=0)
def validate(path: Path, taxonomy_file: Path | None, max_shown: int) -> None:
    """Check every row of an output folder, parquet file or JSONL file.

    Prints counts per split, category and subcategory, then each violation with
    its row, field and reason. Exits 1 on any violation.
    """
    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.view.summary import validation_text
    from lettuce_build.view.validate import validate as check_output

    if path.is_dir() and (note := BuildDir(path).unfinished_note()):
        click.echo(note, err=True)
    report = check_output(path, load_taxonomy(taxonomy_file))
    click.echo(validation_text(path, report))
    if report.ok:
        click.echo("no violations")
        return
    click.echo(f"{report.problem_count} violation(s):", err=True)
    shown = report.problems[:max_shown]
    for problem in shown:
        click.echo(f"  {problem}", err=True)
    if report.problem_count > len(shown):
        click.echo(f"  ... and {report.problem_count - len(shown)} more", err=True)
    sys.exit(1)


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path, resolve_path=True))
@click.option(
    "--out",
    required=True,
    type=folder(),
    help="Where to write the deduplicated dataset (OUT/dataset, OUT/hub) and OUT/dedup.json.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=THRESHOLD,
    show_default=True,
    help="The MinHash similarity of both context and answer from which two rows are duplicates.",
)
def dedup(path: Path, out: Path, threshold: float) -> None:
    """Keep one row of each cluster of near-duplicates (context and answer both alike, MinHash
    over 5-word shingles) of a build folder, dataset, parquet or JSONL file in our schema. Where
    a cluster crosses splits the test copy stays; the pairs and counts per split are printed and
    written to OUT/dedup.json."""
    from lettuce_build.publish.dedup import dedup as deduplicate

    result = deduplicate(path, out, threshold)
    click.echo("\n".join(result.lines(out)))
