"""The stages a build runs: its source's pipeline in the build's mode, with the per-stage
sampling, the edit mode and the refreshes it asks for; options of other sources refused."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.recipe import StageSampling
from lettuce_build.core.errors import RecipeError, SourceError
from lettuce_build.engine.stage import Stage
from lettuce_build.llm.embedded import EMBEDDED_MODELS
from lettuce_build.sources.base import Source, StageSettings
from lettuce_build.sources.registry import SOURCES
from lettuce_build.stages.answers import AnswerMode
from lettuce_build.stages.prose_edits import EditMode


def answer_mode(options: BuildOptions, model: str) -> AnswerMode:
    """The answers a build makes with ``model``: the embedded model's free answers were almost
    never grounded (measured: see the README), so ``auto`` makes it choose sentences."""
    if options.answers == "auto":
        return "extractive" if model in EMBEDDED_MODELS else "free"
    return options.answers


def edit_mode(options: BuildOptions, model: str) -> EditMode:
    """How a build's edits are made with ``model``: the embedded model's own edits were mostly
    garbage ("HTTPX" -> "True"), so ``auto`` has rules make them and it chooses."""
    if options.edit_anchors == "auto":
        return "rules" if model in EMBEDDED_MODELS else "constrained"
    return options.edit_anchors


def build_stages(
    options: BuildOptions, source: Source, sampling: Mapping[str, StageSampling], model: str
) -> list[Stage]:
    """The source's stages as this build runs them: mode and per-stage sampling applied; the
    options of other sources refused, and a recipe's stages checked against them."""
    _refuse_options_of_other_sources(options, source)
    settings = StageSettings(
        edit_anchors=edit_mode(options, model),
        seed=options.seed,
        answers=answer_mode(options, model),
        error_types=options.error_types,
        intensity=options.intensity,
        edits_asked=options.ratio > 0,
    )
    stages = source.pipeline(settings).stages(options.mode)
    if stages is None:
        raise SourceError(
            f"{options.source} makes no hallucinated answers (its spans come with its data): "
            "--mode generate needs a source with a context, a question and a clean answer"
        )
    unknown = set(sampling) - {stage.name for stage in stages}
    if unknown:
        raise SourceError(
            f"sampling for {sorted(unknown)}: {options.source} has the stages {[s.name for s in stages]}"
        )
    for stage in stages:  # on the instance: the class keeps its defaults
        if (changed := sampling.get(stage.name)) is not None:
            stage.sampling = stage.sampling.model_copy(update=changed.model_dump(exclude_none=True))
    names = [stage.name for stage in stages]
    if options.stages and options.stages != names:
        raise RecipeError(
            f"stages: the recipe ran {options.stages}, {options.source} now runs {names} "
            "(a recipe of another version; remove its `stages` to build with these)"
        )
    return stages


def _refuse_options_of_other_sources(options: BuildOptions, source: Source) -> None:
    """Options that only another source reads (`Source.own_options`), given to this one: refused
    in one line, never ignored."""
    for other in SOURCES.values():
        chosen = [
            name
            for name in other.own_options
            if name not in source.own_options
            and getattr(options, name)
            != BuildOptions.model_fields[name].get_default(call_default_factory=True)
        ]
        if chosen:
            flags = ", ".join("--" + name.replace("_", "-") for name in chosen)
            them = "them" if len(chosen) > 1 else "it"
            raise SourceError(
                f"{flags}: only --source {other.name} takes {them} ({source.name} makes the "
                "hallucinations its own source's way); leave them out"
            )


def refreshed(stages: Sequence[Stage], namespaces: dict[str, int], refresh: str | None) -> dict[str, int]:
    """The stages' cache namespaces after refreshing ``refresh`` (None: none) and every stage
    after it; each stage is set to its namespace."""
    names = [stage.name for stage in stages]
    if refresh is not None and refresh not in names:
        raise SourceError(f"--refresh {refresh}: this build's stages are {names}")
    namespaces = dict(namespaces)
    for stage in stages[names.index(refresh) :] if refresh is not None else []:
        namespaces[stage.name] = namespaces.get(stage.name, 0) + 1
    for stage in stages:
        stage.cache_namespace = f"refresh{namespaces[stage.name]}" if namespaces.get(stage.name) else ""
    return namespaces
