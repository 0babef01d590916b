"""The one path from a recipe to a finished build, which `lettuce_build.build` (a new build or a
replay of its recipe) and `merge` (a replay of shards) both take: the recipe's backend and
judges made (unless given), the build run under the recipe's prompts, and the recipe it ran
written beside its outputs, with the stages it ran and what the engine chose (its dtype)
written down."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lettuce_build.builds.recipe import Recipe
from lettuce_build.builds.run import BuildSummary, Replay, run_build
from lettuce_build.llm.protocol import Backend
from lettuce_build.prompts import prompts_from


def run_recipe(
    recipe: Recipe,
    *,
    backend: Backend | None = None,
    judges: Sequence[Backend] | None = None,
    replay: Replay | None = None,
    refresh: str | None = None,
) -> tuple[BuildSummary, Path]:
    """Build ``recipe`` into its ``out`` folder; returns the summary and where the as-ran recipe
    was written. ``backend``/``judges`` replace the ones the recipe names; ``replay``: the work
    items and answers at hand (a merge); ``refresh``: a stage to ask anew, with those after it."""
    backend = backend or recipe.make_backend()
    if judges is None:
        judges = recipe.make_judges(backend) if recipe.verify else []
    with prompts_from(recipe.prompts):
        summary = run_build(
            recipe.build_options(),
            backend,
            batch_size=recipe.batch_size,
            sampling=recipe.stage_sampling(),
            replay=replay,
            judges=judges,
            refresh=refresh,
            ray=recipe.ray_pool(),
        )
    return summary, recipe.as_ran(backend.info(), summary.stages).write(recipe.out)
