"""`lettuce-build translate`: samples into other languages, spans kept or the sample dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.cli.fields import checked, field_option
from lettuce_build.cli.options import combined, folder
from lettuce_build.core.languages import NAMES
from lettuce_build.llm.settings import BackendKind, EndpointSettings
from lettuce_build.sources.base import ItemOptions

#: an OpenAI-compatible endpoint's settings, each its flag (--base-url, --concurrency, --batch, ...)
_ENDPOINT = combined(*(field_option(name, field) for name, field in EndpointSettings.model_fields.items()))


@click.command()
@click.argument("source", type=click.Path(exists=True, path_type=Path, resolve_path=True))
@click.option(
    "--to",
    "languages",
    multiple=True,
    required=True,
    type=click.Choice(sorted(NAMES)),
    help="A language to translate into (repeat for more): its ISO 639-1 code.",
)
@click.option("--out", required=True, type=folder(), help="The translation's folder (a build folder).")
@field_option("model", Recipe.model_fields["model"])
@field_option("backend", Recipe.model_fields["backend"])
@_ENDPOINT
@field_option("seed", ItemOptions.model_fields["seed"])
@click.option(
    "--limit", type=click.IntRange(min=1), help="Translate at most N samples of SOURCE (a trial run)."
)
@field_option("price_per_mtok", BuildOptions.model_fields["price_per_mtok"])
@click.option(
    "--verify",
    is_flag=True,
    help="A judge reads every translated span against the translated context, as it reads an "
    "injected one: a span judged supported drops its sample (judge_supported).",
)
@combined(
    *(
        field_option(name, Recipe.model_fields[name])
        for name in ("judge_model", "judge_backend", "judge_base_url")
    )
)
@click.option(
    "--dry-run", is_flag=True, help="Say what the translation would ask of the model and cost; ask nothing."
)
@click.option(
    "--exact",
    is_flag=True,
    help="With --dry-run: rehearse every item (default: a seeded sample of a large input, scaled).",
)
def translate(
    *,
    source: Path,
    languages: tuple[str, ...],
    out: Path,
    model: str,
    backend: BackendKind,
    seed: int,
    limit: int | None,
    price_per_mtok: tuple[float, float] | None,
    verify: bool,
    judge_model: tuple[str, ...],
    judge_backend: BackendKind | None,
    judge_base_url: str | None,
    dry_run: bool,
    exact: bool,
    **endpoint: Any,
) -> None:
    """Translate the samples of SOURCE (a build folder, a Hub-style folder, a parquet, JSONL or JSON
    file of our rows, or an export such as LettuceDetect's JSON) into each --to language.

    Each answer goes with its spans in tags; a translation is kept only when every span comes back
    exactly once, inside the answer, and the text around them is in the asked language. Otherwise
    the sample is a failure row with the reason (span_lost, span_duplicated, span_moved, code_lost,
    not_translated, wrong_language). Resumable: run the same command to continue.
    """
    from lettuce_build.llm.factory import ModelChoice
    from lettuce_build.llm.pricing import Pricing
    from lettuce_build.translate.report import TranslationOptions
    from lettuce_build.view.summary import dry_run_text

    models = checked(
        ModelChoice,
        {
            "kind": backend,
            "model": model,
            "endpoint": EndpointSettings(**endpoint),
            "verify": verify,
            "judge_models": list(judge_model),
            "judge_kind": judge_backend,
            "judge_base_url": judge_base_url,
        },
    )
    pricing = Pricing(prompt=price_per_mtok[0], completion=price_per_mtok[1]) if price_per_mtok else None
    options = TranslationOptions(
        source=source,
        languages=list(languages),
        out=out,
        seed=seed,
        limit=limit,
        pricing=pricing,
        models=models,
    )
    if dry_run:
        from lettuce_build.translate.estimate import estimate

        click.echo(dry_run_text(estimate(options, exact=exact)))
        return
    from lettuce_build.translate.run import translate as run_translation

    report = run_translation(options)
    click.echo(report.text(str(out)))
