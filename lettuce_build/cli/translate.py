"""`lettuce-build translate`: samples into other languages, spans kept or the sample dropped."""

from __future__ import annotations

from pathlib import Path

import click

from lettuce_build.builds.recipe import Recipe
from lettuce_build.cli.fields import endpoint_options, field_option
from lettuce_build.cli.options import folder
from lettuce_build.core.languages import NAMES
from lettuce_build.llm.settings import EndpointSettings
from lettuce_build.sources.base import ItemOptions


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
@field_option("base_url", EndpointSettings.model_fields["base_url"])
@endpoint_options()
@field_option("seed", ItemOptions.model_fields["seed"])
@click.option(
    "--limit", type=click.IntRange(min=1), help="Translate at most N samples of SOURCE (a trial run)."
)
def translate(
    source: Path,
    languages: tuple[str, ...],
    out: Path,
    model: str,
    backend: str,
    base_url: str,
    api_key_env: str,
    concurrency: int,
    request_timeout: float,
    max_retries: int,
    rpm: int | None,
    tpm: int | None,
    seed: int,
    limit: int | None,
) -> None:
    """Translate the samples of SOURCE (a build folder, a Hub-style folder, a parquet, JSONL or JSON
    file of our rows, or an export such as LettuceDetect's JSON) into each --to language.

    Each answer goes with its spans in tags; a translation is kept only when every span comes back
    exactly once, inside the answer, and the text around them is in the asked language. Otherwise
    the sample is a failure row with the reason (span_lost, span_duplicated, span_moved, code_lost,
    not_translated, wrong_language). Resumable: run the same command to continue.
    """
    from lettuce_build.llm.factory import make_backend
    from lettuce_build.translate.run import translate as run_translation

    endpoint = EndpointSettings(
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        request_timeout=request_timeout,
        max_retries=max_retries,
        rpm=rpm,
        tpm=tpm,
    )
    chosen = make_backend("openai" if backend == "openai" else "vllm", model, endpoint=endpoint)
    report = run_translation(source, list(dict.fromkeys(languages)), out, chosen, seed=seed, limit=limit)
    click.echo(report.text(str(out)))
