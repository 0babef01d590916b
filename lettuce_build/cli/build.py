"""`lettuce-build build`: every setting of a `Recipe` as an option, made from the recipe's fields
(cli/fields.py: name, type, default, bounds, choices and help are declared there, once), or a
recipe file with `--config` that the options override."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from lettuce_build.builds.settings.recipe import FIRST_IN_FILE, Recipe
from lettuce_build.cli.fields import model_options
from lettuce_build.cli.recipe_flags import engine_args, load_config
from lettuce_build.llm.settings import EngineSettings


class _BuildCommand(click.Command):
    """`build --help` ends with the sources it knows (read when help is asked for) and examples."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from lettuce_build.sources.registry import SOURCES

        with formatter.section("Sources"):
            formatter.write_dl([(name, cls.dataset_name) for name, cls in SOURCES.items()])
        with formatter.section("Examples"):
            for line in BUILD_EXAMPLES:
                formatter.write(f"  {line}\n")


BUILD_EXAMPLES = (
    "lettuce-build build --source readme --input examples/readmes --out out/readme --limit 8",
    "lettuce-build build --source wikipedia --out out/wiki --model Qwen/Qwen2.5-3B-Instruct \\\n"
    "    --model-revision main --max-model-len 8192 --gpu-memory-utilization 0.85",
    "lettuce-build build --config out/readme/recipe.yaml    # replays the build from its cache",
    "lettuce-build build --source readme --input docs --out out/part0 --shard 0/2   # then merge",
    "lettuce-build build --source readme --input docs --out out/readme --executor ray --ray-actors 4",
)


#: the options a user reaches for first lead the help; the others follow as their models declare them
FIRST_OPTIONS = (*FIRST_IN_FILE, "limit", "ratio", "seed", "mode", "edit_anchors", "answers", "error_types")


@click.command(cls=_BuildCommand)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path, resolve_path=True),
    is_eager=True,
    expose_value=False,
    callback=load_config,
    help="A recipe file (every build writes OUT/recipe.yaml); options given here override it.",
)
@model_options(Recipe, first=FIRST_OPTIONS)
@model_options(EngineSettings)
@click.option(
    "--engine-arg",
    "engine_arg",
    multiple=True,
    metavar="KEY=VALUE",
    callback=engine_args,
    help="Any vLLM engine setting, e.g. max_num_seqs=64 or trust_remote_code=true (repeatable; "
    "checked against the engine's settings; a flag of its own wins).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Load the items and count, per stage, the requests the build would send, its cache hits and "
    "the tokens, without starting an engine or writing anything (more than 3,000 items: estimated from "
    "a seeded sample of them, with a 95% interval).",
)
@click.option(
    "--exact",
    is_flag=True,
    help="With --dry-run: rehearse every item, however many (default: a sample of a large input).",
)
@click.option(
    "--refresh",
    metavar="STAGE",
    help="Ask this stage anew, and every stage after it, ignoring their cached answers (after "
    "changing a prompt or the model); later runs reuse the new answers.",
)
@click.pass_context
def build(
    ctx: click.Context,
    dry_run: bool,
    exact: bool,
    refresh: str | None,
    **settings: object,
) -> None:
    """Build a dataset from a source: questions, grounded answers, injected hallucinations.

    Writes OUT/recipe.yaml: `build --config OUT/recipe.yaml` replays the build.
    """
    from lettuce_build.api import build as run
    from lettuce_build.view.summary import summary_text

    # the engine: its flags as a recipe file set them, then --engine-arg, then its flags given here
    flags = {k: value for k in EngineSettings.model_fields if (value := settings.pop(k)) is not None}
    given = {k for k in flags if ctx.get_parameter_source(k) is ParameterSource.COMMANDLINE}
    engine = {k: v for k, v in flags.items() if k not in given}
    engine |= {**settings.pop("engine_arg")} | {k: flags[k] for k in given}  # type: ignore[dict-item]
    for param in ctx.command.params:  # click gives a repeated option's values as a tuple
        if param.multiple and isinstance(values := settings.get(str(param.name)), tuple):
            settings[str(param.name)] = list(values)
    recipe = Recipe.checked({**settings, "engine": engine})
    if dry_run:
        from lettuce_build.api import dry_run as estimate
        from lettuce_build.view.summary import dry_run_text

        click.echo(dry_run_text(estimate(recipe=recipe, exact=exact)))
        return
    result = run(
        recipe=recipe, refresh=refresh, verbose=bool(ctx.find_root().meta.get("lettuce_build.verbose"))
    )
    click.echo(summary_text(result.summary))
