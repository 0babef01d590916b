"""`lettuce-build build`: every setting of a `Recipe` as an option (its default, choices and
help from the recipe's fields), or a recipe file with `--config` that the options override."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import click

from lettuce_build.builds.options import METHODS
from lettuce_build.builds.recipe import Recipe
from lettuce_build.cli.options import (
    PRICE,
    REPO_URL,
    count,
    default_of,
    endpoint_options,
    folder,
    one_of,
    share,
)
from lettuce_build.cli.recipe_flags import JsonObject, column_map, engine_args, load_config, stage_sampling
from lettuce_build.llm.settings import BackendKind
from lettuce_build.sources.base import Mode


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


@click.command(cls=_BuildCommand)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path, resolve_path=True),
    is_eager=True,
    expose_value=False,
    callback=load_config,
    help="A recipe file (every build writes OUT/recipe.yaml); options given here override it.",
)
@click.option("--source", required=True, help="A source name; see `lettuce-build sources`.")
@click.option("--input", help="Local input (folder or file) or a Hub dataset id; see the source.")
@click.option(
    "--out",
    "--output-dir",
    "out",
    required=True,
    type=folder(),
    help="Build folder: cache, manifest, failures, recipe.yaml, dataset/ and hub/. Re-running resumes.",
)
@click.option(
    "--model",
    default=default_of(Recipe, "model"),
    show_default=True,
    help="Model id or path; smollm2-135m is the embedded CPU model.",
)
@click.option("--model-revision", help="The model's revision on the Hub (branch, tag or commit).")
@one_of("--backend", Recipe, "backend")
@click.option(
    "--base-url", default=default_of(Recipe, "base_url"), show_default=True, help="For --backend openai."
)
@endpoint_options()
@share(
    "--max-provider-failures",
    default_of(Recipe, "max_provider_failures"),
    "Stop the build (its answers kept) once the provider refused or failed more than this share "
    "of the run's requests, and at least 10; the failed items are failure rows either way.",
)
@count("--batch-size", "Items per model call.", default=default_of(Recipe, "batch_size"))
@count("--tensor-parallel-size", "vLLM: GPUs to shard the model over.")
@count("--max-model-len", "vLLM: the context length to allocate for.", minimum=16)
@click.option(
    "--gpu-memory-utilization",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    help="vLLM: share of GPU memory.",
)
@click.option("--dtype", help="vLLM: weight dtype (auto, bfloat16, float16...).")
@click.option(
    "--engine-arg",
    "engine_arg",
    multiple=True,
    metavar="KEY=VALUE",
    callback=engine_args,
    help="Any other vLLM engine setting, e.g. max_num_seqs=64 or trust_remote_code=true (repeatable; "
    "checked against the engine's settings; a flag of its own wins).",
)
@click.option(
    "--chat-template-kwargs",
    type=JsonObject(),
    help="JSON for the chat template, e.g. '{\"enable_thinking\": false}' to turn thinking off.",
)
@count("--limit", "Build at most N work items (a trial run).")
@share("--ratio", default_of(Recipe, "ratio"), "Share of items that get injected hallucinations.")
@click.option(
    "--seed",
    default=default_of(Recipe, "seed"),
    show_default=True,
    help="Seeds item choices and per-request sampling.",
)
@one_of(
    "--edits",
    Recipe,
    "edit_anchors",
    "rules: edits made by rules from the answer's own text (numbers, dates, names, negations, "
    "quantifiers, another document's sentences), the model choosing; constrained: the model writes "
    "each edit of a string taken from the answer; free: of any string it copies (and may miscopy); "
    "auto: rules for the embedded model, constrained for others.",
)
@click.option(
    "--mode",
    "--method",
    "mode",
    type=click.Choice([*get_args(Mode), *METHODS]),
    default=default_of(Recipe, "mode"),
    show_default=True,
    help="inject: small edits applied to the clean answer (exact spans); generate: the model writes "
    "the hallucinated answer and spans are recovered by diff (natural, approximate). LettuceDetect's "
    "--method answer and context are inject and generate.",
)
@click.option(
    "--error-types",
    multiple=True,
    metavar="TYPE",
    help="An error type to make and publish, a category or category/subcategory of the taxonomy "
    "(repeatable; default: every one; see `lettuce-build taxonomy`).",
)
@click.option(
    "--dedup",
    is_flag=True,
    help="Keep one item of each group of near-duplicates (context and any given question and answer "
    "alike, MinHash), before any model call; the test copy stays where a group crosses splits.",
)
@click.option(
    "--decontaminate-against",
    multiple=True,
    metavar="SOURCE",
    help="A benchmark (file, folder or Hub id; our schema, LettuceDetect's, RAGTruth's, PsiloQA's or "
    "SWE-bench instances) whose rows stay out: items sharing a 13-word sequence with it, or from "
    "one of its SWE-bench instances, are skipped before any model call (repeatable).",
)
@click.option(
    "--mark-only",
    is_flag=True,
    help="With --decontaminate-against: keep contaminated items, noted in their metadata (contaminated).",
)
@click.option(
    "--decontaminate-repos",
    is_flag=True,
    help="With --decontaminate-against a SWE-bench file: also keep out every item of its repositories.",
)
@click.option(
    "--intensity",
    type=click.IntRange(1, 3),
    default=default_of(Recipe, "intensity"),
    show_default=True,
    help="custom: edits per hallucinated answer.",
)
@click.option(
    "--columns",
    metavar="OURS=THEIRS,...",
    callback=column_map,
    help="custom: the input's names for the columns, e.g. context=passage,question=query.",
)
@click.option(
    "--strict-input",
    is_flag=True,
    help="Stop before any model call when a row of the input cannot be used (default: skip it, "
    "counted and named).",
)
@one_of(
    "--answers",
    Recipe,
    "answers",
    "free: the model writes each answer; extractive: it picks 1-3 sentences of the evidence (true "
    "by construction; code: it picks a request made of the issue's words); auto: extractive for the "
    "embedded model, free otherwise.",
)
@click.option(
    "--verify",
    is_flag=True,
    help="A judge checks every clean answer (unsupported sentences fail it) and every injected "
    "span (one judged supported fails the injection); figures in the summary, manifest and card.",
)
@click.option(
    "--plausibility/--no-plausibility",
    default=default_of(Recipe, "plausibility"),
    show_default=True,
    help="Score every hallucinated span with the build's model against the text it replaced and "
    "refuse one far less likely (implausible_edit): a prefill per span, cached like answers.",
)
@click.option(
    "--judge-model",
    multiple=True,
    help="For --verify: a judge model (repeatable: with two, both must pass and their agreement "
    "is reported). Default: the build's model; one of another family is recommended.",
)
@click.option(
    "--judge-backend",
    type=click.Choice(list(get_args(BackendKind))),
    help="For --verify: the judges' backend (default: the build's).",
)
@click.option(
    "--judge-base-url", help="For --verify with an openai judge: its endpoint (default: --base-url)."
)
@share(
    "--struct-ratio",
    default_of(Recipe, "struct_ratio"),
    "code: share of injected items whose error is structural (an API that does not exist); the "
    "rest are intent errors (a wrong implementation, an unrequested change).",
)
@click.option(
    "--language",
    default=default_of(Recipe, "language"),
    show_default=True,
    help="Language (config) for multilingual sources.",
)
@REPO_URL
@click.option(
    "--prompts",
    type=click.Path(exists=True, file_okay=False, path_type=Path, resolve_path=True),
    help="A folder of prompt templates (<name>.yaml) that replace the package's.",
)
@click.option(
    "--sampling",
    multiple=True,
    callback=stage_sampling,
    help="A stage's sampling, e.g. answer:temperature=0.2 or inject:max_tokens=900 (repeatable).",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Build only shard I of N (0-based) of the work items, e.g. one task of a Slurm array; "
    "join the N folders with `lettuce-build merge`.",
)
@one_of(
    "--executor",
    Recipe,
    "executor",
    "local: one engine in this process; ray: the model stages on a pool of Ray actors, one engine "
    "per actor for the whole build "
    "(pip install 'lettuce-build[ray]').",
)
@click.option(
    "--ray-address", help="For --executor ray: the cluster (auto, ray://host:10001); default: start Ray here."
)
@count(
    "--ray-actors",
    "For --executor ray: engines (actors) in the pool.",
    default=default_of(Recipe, "ray_actors"),
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Load the items and count, per stage, the requests the build would send, its cache hits and "
    "the tokens, without starting an engine or writing anything.",
)
@click.option(
    "--price-per-mtok",
    type=PRICE,
    metavar="IN/OUT",
    help="Dollars per million prompt/completion tokens (3/15): every run's cost in dollars in the "
    "summary, manifest and card, and the dry run's estimate.",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0.0),
    metavar="USD",
    help="Dollars the build may spend over all its runs (needs --price-per-mtok): a pass that would "
    "pass it is not sent, and the build stops, its answers kept.",
)
@click.option(
    "--batch",
    is_flag=True,
    help="openai: send each pass through the provider's Batch API (files + batches endpoints): half "
    "the price at most providers, answers within --batch-window; a killed build re-attaches.",
)
@click.option(
    "--batch-window",
    default=default_of(Recipe, "batch_window"),
    show_default=True,
    help="With --batch: the completion window asked of the provider.",
)
@share(
    "--batch-discount",
    default_of(Recipe, "batch_discount"),
    "With --batch: the share of --price-per-mtok a batched request costs.",
)
@count(
    "--batch-max-requests",
    "With --batch: requests per batch file (the provider's limit).",
    default=default_of(Recipe, "batch_max_requests"),
)
@count(
    "--batch-max-bytes",
    "With --batch: bytes per batch file (the provider's limit).",
    default=default_of(Recipe, "batch_max_bytes"),
    minimum=1000,
)
@click.option(
    "--batch-poll-seconds",
    type=click.FloatRange(min=0.0, min_open=True),
    default=default_of(Recipe, "batch_poll_seconds"),
    show_default=True,
    help="With --batch: the longest wait between two looks at the batches in flight (the first "
    "after 1 s, each wait half again as long as the one before).",
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
    refresh: str | None,
    **settings: object,
) -> None:
    """Build a dataset from a source: questions, grounded answers, injected hallucinations.

    Writes OUT/recipe.yaml: `build --config OUT/recipe.yaml` replays the build.
    """
    from lettuce_build.api import build as run
    from lettuce_build.llm.settings import ENGINE_FIELDS
    from lettuce_build.view.summary import summary_text

    engine = {**settings.pop("engine_arg")}  # type: ignore[dict-item]
    engine |= {k: value for k in ENGINE_FIELDS if (value := settings.pop(k, None)) is not None}
    for listed in ("judge_model", "error_types", "decontaminate_against"):
        settings[listed] = list(settings[listed] or [])  # click gives a tuple
    recipe = Recipe.checked({**settings, "engine": engine})
    if dry_run:
        from lettuce_build.api import dry_run as estimate
        from lettuce_build.view.summary import dry_run_text

        click.echo(dry_run_text(estimate(recipe=recipe)))
        return
    result = run(
        recipe=recipe, refresh=refresh, verbose=bool(ctx.find_root().meta.get("lettuce_build.verbose"))
    )
    click.echo(summary_text(result.summary))
