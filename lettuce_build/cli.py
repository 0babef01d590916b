"""The `lettuce-build` command line."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from lettuce_build import __version__
from lettuce_build.audit import audit
from lettuce_build.taxonomy import (
    BUILTIN_SUBCATEGORIES,
    CATEGORY_DEFINITIONS,
    DEFAULT_TAXONOMY,
    DOCUMENT_LEVEL_DEFINITIONS,
    INJECTABLE_CATEGORIES,
    SUPPORTED,
    Taxonomy,
    TaxonomyError,
)

_TAXONOMY_FILE = click.option(
    "--taxonomy-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML/JSON file adding subcategories: {subcategories: {category: {name: definition}}}.",
)


def _load_taxonomy(path: Path | None) -> Taxonomy:
    if path is None:
        return DEFAULT_TAXONOMY
    try:
        return Taxonomy.from_file(path)
    except TaxonomyError as err:
        raise click.ClickException(str(err)) from err


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lettuce-build")
def main() -> None:
    """Build span-labelled hallucination and tool-output datasets for Hugging Face `datasets`."""


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
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@_TAXONOMY_FILE
@click.option("--max-shown", default=200, show_default=True, help="Print at most this many violations.")
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
