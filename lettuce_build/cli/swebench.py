"""Commands over SWE-bench: the security sift and the squeez pipeline."""

from __future__ import annotations

from pathlib import Path

import click

from lettuce_build.cli.fields import checked, endpoint_options, model_options
from lettuce_build.cli.options import folder, instances_option
from lettuce_build.sift.options import SiftOptions
from lettuce_build.squeez.options import SqueezOptions

#: the squeez options a user reaches for first lead its help; the others follow as declared
SQUEEZ_FIRST = ("repo_url", "workers", "limit", "seed", "allow_network")


@click.command()
@instances_option("SWE-bench tasks: a local .jsonl/.parquet file or a Hub dataset id (test split).")
@model_options(SiftOptions)
def sift(instances: str, **settings: object) -> None:
    """Sift SWE-bench for tasks whose gold patch touches security-relevant code (stage 1)."""
    from lettuce_build.sift.presets import load_preset
    from lettuce_build.sift.report import comparison_table, explain, summary_table
    from lettuce_build.sift.stage1 import REQUIRED_COLUMNS, compare, write_sift_outputs
    from lettuce_build.sift.stage1 import sift as run_sift
    from lettuce_build.swebench.instances import load_instance_rows

    options = checked(SiftOptions, settings)
    pattern_set = load_preset(options.preset)
    rows = load_instance_rows(instances, REQUIRED_COLUMNS)
    if options.explain:
        row = next((r for r in rows if r["instance_id"] == options.explain), None)
        if row is None:
            raise click.ClickException(f"{options.explain} is not in {instances}")
        click.echo(f"{options.explain} ({row['repo']}), preset {options.preset}")
        click.echo(explain(row["patch"], pattern_set, row["repo"]))
        return
    if options.out is None:
        raise click.UsageError("--out is required unless --explain is given")
    verified_ids = None
    if not options.no_verified:
        verified_ids = {r["instance_id"] for r in load_instance_rows(options.verified, ["instance_id"])}
    result = run_sift(rows, verified_ids, pattern_set)
    write_sift_outputs(result, options.out)
    click.echo(summary_table(result))
    for bad in result.invalid_rows:
        click.echo(f"  skipped row {bad.index} ({bad.instance_id}): {bad.reason}", err=True)
    if options.compare:
        other = run_sift(rows, verified_ids, load_preset(options.compare))
        click.echo(
            comparison_table(compare(rows, result, other, pattern_set), options.preset, options.compare)
        )
    click.echo(f"wrote {options.out}/stage1_candidates.json, stage1_funnel.json, dataset/ and hub/")


@click.command()
@click.option(
    "--phase",
    "first_phase",
    type=click.IntRange(1, 8),
    required=True,
    help="Phases to run, in order: --phase 1 2 3 4 5 6 7 8 (each reads the previous one's files).",
)
@click.argument("more_phases", nargs=-1, type=click.IntRange(1, 8))
@click.option("--out", "--output-dir", "output_dir", required=True, type=folder(), help="The phases' folder.")
@instances_option("Phase 1 input: a local .jsonl/.parquet of SWE-bench instances or a Hub dataset id.")
@model_options(SqueezOptions, first=SQUEEZ_FIRST)
@click.option("--teacher-model", help="Phase 6 teacher; without it the auto-labels are the gold spans.")
@click.option("--teacher-base-url", help="OpenAI-compatible endpoint of the teacher; without it, local vLLM.")
@endpoint_options("teacher-")
def squeez(
    *,
    first_phase: int,
    more_phases: tuple[int, ...],
    output_dir: Path,
    instances: str,
    teacher_model: str | None,
    teacher_base_url: str | None,
    teacher_api_key_env: str,
    concurrency: int,
    request_timeout: float,
    max_retries: int,
    rpm: int | None,
    tpm: int | None,
    **settings: object,
) -> None:
    """Build the squeez tool-output dataset from SWE-bench repositories (phases 1-8)."""
    from lettuce_build.builds.storage.folder import BuildDir
    from lettuce_build.llm.factory import ModelChoice
    from lettuce_build.llm.settings import BackendKind, EndpointSettings
    from lettuce_build.squeez.pipeline import Squeez

    options = checked(SqueezOptions, settings)
    teacher = None
    if teacher_model is not None:
        endpoint = EndpointSettings(
            base_url=teacher_base_url or "",
            api_key_env=teacher_api_key_env,
            concurrency=concurrency,
            request_timeout=request_timeout,
            max_retries=max_retries,
            rpm=rpm,
            tpm=tpm,
        )
        kind: BackendKind = "vllm" if teacher_base_url is None else "openai"
        teacher = ModelChoice(kind=kind, model=teacher_model, endpoint=endpoint)
    pipeline = Squeez(output_dir, options)
    with BuildDir(output_dir).lock():
        for message in pipeline.run([first_phase, *more_phases], instances=instances, teacher=teacher):
            click.echo(message)
