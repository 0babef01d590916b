"""The Python API: what `lettuce-build build` and `push` do, as functions.

    import lettuce_build
    result = lettuce_build.build("readme", input="docs/", out="out/readme", limit=8)
    result.dataset["train"][0], result.summary.achieved_ratio
    lettuce_build.push("readme", build="out/readme", repo_id="me/lettucedetect-readme")
    # shards, on as many machines, then joined into the build one process would have made
    lettuce_build.build("readme", input="docs/", out="out/part0", shard="0/2")  # and 1/2
    lettuce_build.merge("out/part0", "out/part1", out="out/readme")

`build` takes any setting of a recipe (see `lettuce_build.builds.settings.recipe.Recipe`) as a keyword, or a
whole recipe (``prompts=`` a folder of templates replacing the package's; ``sampling=`` per
stage), and any object that speaks the backend protocol (`lettuce_build.llm.protocol`) in
place of the one the recipe names. It returns the dataset it wrote and the build's summary.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Unpack

from datasets import DatasetDict, load_from_disk
from pydantic import BaseModel, ConfigDict

from lettuce_build.builds.running.dry_run import DryRun, estimate
from lettuce_build.builds.running.run import BuildSummary, run_build
from lettuce_build.builds.settings.api_keywords import Settings
from lettuce_build.builds.settings.recipe import RECIPE_FILE, Recipe
from lettuce_build.builds.storage.output import DATASET_DIR
from lettuce_build.core.errors import LettuceError, PublishError
from lettuce_build.core.paths import check_writable
from lettuce_build.core.quiet import quiet
from lettuce_build.core.tables import write_jsonl
from lettuce_build.formats import ExportCounts
from lettuce_build.llm.protocol import Backend
from lettuce_build.llm.settings import BackendKind
from lettuce_build.publish import DEFAULT_MAX_FAILURE_RATE

#: where rows given in memory (``build(input=[...])``) are written for the build to read
IN_MEMORY_INPUT = "input.jsonl"


class BuildResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    #: the samples per split, as written to ``out/dataset`` (empty when the build made none)
    dataset: DatasetDict
    summary: BuildSummary
    #: where the recipe of this build was written (``out/recipe.yaml``): `build(recipe=...)` replays it
    recipe_path: Path


def build(
    source: str | None = None,
    *,
    out: str | Path | None = None,
    recipe: Recipe | str | Path | None = None,
    backend: Backend | BackendKind | None = None,
    judges: Sequence[Backend] | None = None,
    verbose: bool = False,
    refresh: str | None = None,
    input: str | Path | Iterable[Any] | None = None,
    **settings: Unpack[Settings],
) -> BuildResult:
    """Build a dataset from ``source`` into ``out`` (or run ``recipe``, a `Recipe` or its file,
    with ``settings`` over it). ``input=`` is a path, a Hub id, or rows in memory: a `Dataset`,
    an `IterableDataset` or a list of dicts (written to ``out/input.jsonl``, which the recipe
    names, so the build replays); ``backend`` replaces the model backend the settings describe
    (or, as text, names its kind, as ``--backend`` does: ``"vllm"`` or ``"openai"``), ``judges`` the
    judges of a ``verify=True`` build; ``refresh`` names a stage to ask anew, with
    the stages after it, ignoring their cached answers (after a prompt or model change)."""
    quiet(verbose)
    # the backend's kind (as the command line's --backend names it) is a setting of the recipe
    kind, backend = (backend, None) if isinstance(backend, str) else (None, backend)
    path = str(input) if isinstance(input, str | Path) else None
    recipe = _recipe(source, recipe, {"out": out, "input": path, "backend": kind, **settings})
    check_writable(recipe.out)  # before any input is read or model started
    if input is not None and not isinstance(input, str | Path):  # rows in memory: a file the build reads
        recipe = recipe.model_copy(update={"input": str(_input_file(input, recipe.out))})
    summary = run_build(recipe, backend, judges=judges, refresh=refresh)
    return _result(summary, recipe.out / RECIPE_FILE)


def dry_run(
    source: str | None = None,
    *,
    out: str | Path | None = None,
    recipe: Recipe | str | Path | None = None,
    input: str | Path | None = None,
    backend: BackendKind | None = None,
    exact: bool = False,
    **settings: Unpack[Settings],
) -> DryRun:
    """What `build` with the same arguments would ask of its model, without starting an engine
    or writing anything (see `lettuce_build.builds.running.dry_run`): estimated from a seeded
    sample of a large input's items unless ``exact``."""
    quiet()
    given = {"out": out, "input": None if input is None else str(input), "backend": backend}
    recipe = _recipe(source, recipe, {**given, **settings})
    return estimate(recipe, exact=exact)


def merge(
    *shards: str | Path, out: str | Path, backend: Backend | None = None, verbose: bool = False
) -> BuildResult:
    """Join the folders of one build's shards (``build(..., shard="i/n")``) into ``out``: the
    unsharded build (see `lettuce_build.builds.running.merge`); ``backend`` replaces the recipe's."""
    from lettuce_build.builds.running.merge import merge_builds

    quiet(verbose)
    out = Path(out).resolve()
    summary = merge_builds([Path(s) for s in shards], out, backend)
    return _result(summary, out / RECIPE_FILE)


def _input_file(data: Iterable[Any], out: Path) -> Path:
    """In-memory rows as ``out``/input.jsonl, checked row by row."""
    rows = []
    for index, row in enumerate(data):
        if not isinstance(row, Mapping):
            raise LettuceError(f"input row {index}: a {type(row).__name__}, expected a dict of columns")
        try:
            json.dumps(row)
        except (TypeError, ValueError) as err:
            raise LettuceError(
                f"input row {index}: {err} (columns must be text, numbers, lists or dicts)"
            ) from None
        rows.append(dict(row))
    if not rows:
        raise LettuceError("input: no rows")
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / IN_MEMORY_INPUT, rows)
    return out / IN_MEMORY_INPUT


def _recipe(source: str | None, recipe: Recipe | str | Path | None, settings: Mapping[str, Any]) -> Recipe:
    """The recipe of a call: the one given (or read from its file) with ``settings`` over it."""
    if isinstance(recipe, str | Path):
        recipe = Recipe.read(Path(recipe))
    given = {"source": source, **settings}
    chosen = {key: value for key, value in given.items() if value is not None}
    if recipe is not None and not chosen:  # a checked recipe travels whole
        return recipe.model_copy(update={"out": Path(recipe.out).resolve()})
    recipe = Recipe.checked({**recipe.model_dump(), **chosen} if recipe is not None else chosen)
    return recipe.model_copy(update={"out": Path(recipe.out).resolve()})


def _result(summary: BuildSummary, recipe_path: Path) -> BuildResult:
    folder = summary.out / DATASET_DIR
    dataset = load_from_disk(str(folder)) if folder.exists() else DatasetDict()
    return BuildResult(dataset=dataset, summary=summary, recipe_path=recipe_path)


def push(
    source: str,
    *,
    build: str | Path,
    repo_id: str | None = None,
    dry_run: str | Path | None = None,
    private: bool = False,
    revision: str | None = None,
    max_failure_rate: float | None = None,
) -> str:
    """Publish one source's build as its config of ``repo_id`` (or into the folder ``dry_run``);
    returns where it went. The token comes from HF_TOKEN or the saved Hugging Face login."""
    import os

    from huggingface_hub import HfApi

    from lettuce_build.publish.hub import FolderTarget, HubTarget, Target, publish

    if dry_run is None and repo_id is None:
        raise PublishError("give repo_id, or dry_run for a local folder")
    target: Target
    if dry_run is not None:
        check_writable(Path(dry_run), "--dry-run folder")
        target = FolderTarget(Path(dry_run).resolve(), repo_id or Path(dry_run).name)
    else:
        assert repo_id is not None
        api = HfApi(token=os.environ.get("HF_TOKEN"))
        target = HubTarget(api, repo_id, private=private, revision=revision)
    limit = DEFAULT_MAX_FAILURE_RATE if max_failure_rate is None else max_failure_rate
    return publish(Path(build).resolve(), source, target, max_failure_rate=limit)


def export(source: str | Path, *, format: str, out: str | Path, config: str | None = None) -> ExportCounts:
    """Write the samples of a build folder, an output folder or file, or a Hub dataset id in
    another tool's layout (``format``: ``lettucedetect``, ``ragtruth``, ``sft``, ``spans`` or
    ``jsonl``; see `lettuce_build.formats`) to ``out``; returns what was written."""
    from lettuce_build.publish.export import export as write_export

    return write_export(source, format, out, config=config)
