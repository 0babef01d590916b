"""A build described in a file: every setting of `lettuce-build build`.

Each build writes the recipe it ran to ``OUT/recipe.yaml``; ``build --config OUT/recipe.yaml``
replays it, and since every request is in the build's cache, a replay makes no model call.
A recipe names the API key's environment variable, never the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.plan import ExecutionPlan
from lettuce_build.builds.settings.run_spec import LoopSettings, RunSpec
from lettuce_build.core.errors import RecipeError
from lettuce_build.core.flags import NO_FLAG, flag, settings_error
from lettuce_build.core.leaks import public_url
from lettuce_build.engine.runner import DEFAULT_BATCH_SIZE
from lettuce_build.llm.embedded import DEFAULT_MODEL
from lettuce_build.llm.factory import ModelChoice
from lettuce_build.llm.protocol import BackendInfo
from lettuce_build.llm.ray_pool import RayOptions
from lettuce_build.llm.settings import BackendKind, EndpointSettings, EngineSettings, check_batch_kind

RECIPE_FILE = "recipe.yaml"
FIRST_IN_FILE = ("source", "input", "out", "model", "backend")


class StageSampling(BaseModel):
    """A stage's sampling, changed for one build (unset values keep the stage's)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0)
    max_tokens: int | None = Field(default=None, ge=1)
    repetition_penalty: float | None = Field(default=None, gt=0.0)


class Recipe(BuildOptions, EndpointSettings):
    """Everything a build needs, in the words of the command line's options: the build's options
    (builds/options.py), and the model, backend (an endpoint's settings for ``openai``) and
    executor that run it."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    """Model id or path; smollm2-135m is the embedded CPU model."""
    backend: BackendKind = "vllm"
    """vllm: the engine in this process (or on a Ray pool); openai: an OpenAI-compatible endpoint
    (--base-url)."""
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1)
    """Items per model call."""
    prompts: Path | None = Field(default=None, json_schema_extra=flag(exists=True))
    """A folder of prompt templates (<name>.yaml) that replace the package's."""
    sampling: dict[str, StageSampling] = Field(
        default_factory=dict, json_schema_extra=flag(metavar="STAGE:FIELD=VALUE")
    )
    """A stage's sampling, e.g. answer:temperature=0.2 or inject:max_tokens=900 (repeatable)."""
    #: the engine's settings: each has a flag of its own (and --engine-arg KEY=VALUE takes any)
    engine: EngineSettings = Field(default_factory=EngineSettings, json_schema_extra=NO_FLAG)
    executor: Literal["local", "ray"] = "local"
    """local: one engine in this process; ray: the model stages on a pool of Ray actors, one engine
    per actor for the whole build (pip install 'lettuce-build[ray]')."""
    ray_address: str | None = None
    """For --executor ray: the cluster (auto, ray://host:10001); default: start Ray here."""
    ray_actors: int = Field(default=1, ge=1)
    """For --executor ray: engines (actors) in the pool."""
    judge_model: list[str] = Field(default_factory=list)
    """For --verify: a judge model (repeatable: with two, both must pass and their agreement is
    reported). Default: the build's model; one of another family is recommended (a model tends to
    approve what it wrote itself)."""
    judge_backend: BackendKind | None = None
    """For --verify: the judges' backend (default: the build's)."""
    judge_base_url: str | None = None
    """For --verify with an openai judge: its endpoint (default: --base-url)."""

    @model_validator(mode="after")
    def _batches_need_an_endpoint(self) -> Recipe:
        check_batch_kind(self.backend, self)
        if self.batch and self.executor == "ray":
            raise ValueError("--batch hands each pass to the provider: it needs --executor local")
        return self

    @classmethod
    def checked(cls, settings: dict[str, Any]) -> Recipe:
        """A recipe from settings given by a person (flags, keywords); a value that does not fit
        is one line (`flags.settings_error`)."""
        try:
            return cls.model_validate(settings)
        except ValidationError as err:
            raise settings_error(cls, err) from err

    def models(self) -> ModelChoice:
        """The recipe's model and, for ``--verify``, its judges; how the model is run (here, or
        on a Ray pool) is the plan's (`ray_pool`)."""
        endpoint = EndpointSettings.model_validate(
            self.model_dump(include=set(EndpointSettings.model_fields))
        )
        # the recipe's own validators checked these settings (`check_batch_kind` among them)
        return ModelChoice.model_construct(
            kind=self.backend,
            model=self.model,
            endpoint=endpoint,
            engine=self.engine,
            verify=self.verify,
            judge_models=self.judge_model,
            judge_kind=self.judge_backend,
            judge_base_url=self.judge_base_url,
        )

    def run_spec(self, merged_from: Sequence[str] = ()) -> RunSpec:
        """The build's run, as the recipe says (``merged_from``: a merge's shard folders)."""
        plan = ExecutionPlan(
            shard=self.shard,
            replay=bool(merged_from),
            max_provider_failures=self.max_provider_failures,
            ray=self.ray_pool(),
        )
        loop = LoopSettings(ratio=self.ratio, batch_size=self.batch_size, plausibility=self.plausibility)
        return RunSpec(
            out=self.out,
            source=self.source,
            seed=self.seed,
            limit=self.limit,
            options=self,
            pricing=self.pricing(),
            max_cost=self.max_cost,
            merged_from=list(merged_from),
            plan=plan,
            models=self.models(),
            loop=loop,
        )

    def ray_pool(self) -> RayOptions | None:
        """The Ray actor pool the model stages run on (none: this process)."""
        if self.executor == "local":
            return None
        return RayOptions(address=self.ray_address, actors=self.ray_actors, batch_size=self.batch_size)

    def write_as_ran(self, info: BackendInfo, stages: list[str]) -> Path:
        """``OUT/recipe.yaml``: the recipe with the stages that ran and the dtype the engine chose
        for this processor (see `vllm_backend.cpu_settings`) written down, so the file says what
        ran; a dtype the user chose stays."""
        ran = self.model_copy(update={"stages": stages})
        dtype = info.options.get("dtype")
        if self.engine.dtype is None and info.backend.endswith("vllm") and isinstance(dtype, str):
            ran = ran.model_copy(update={"engine": self.engine.model_copy(update={"dtype": dtype})})
        return ran.write(self.out)

    def to_yaml(self) -> str:
        """The recipe as a file says it: credentials in ``base_url`` (``user:key@``, ``?api-key=``)
        never written; the key itself is never in a recipe, only its variable's name."""
        sampling = {name: values.model_dump(exclude_none=True) for name, values in self.sampling.items()}
        dumped = {**self.model_dump(mode="json"), "sampling": sampling}
        # what is built first, then how; the fields' own order is that of the models they extend
        data = {name: dumped[name] for name in (*FIRST_IN_FILE, *dumped) if name in dumped}
        data["base_url"] = public_url(self.base_url)
        if self.judge_base_url is not None:
            data["judge_base_url"] = public_url(self.judge_base_url)
        return yaml.safe_dump(data, sort_keys=False)

    def write(self, folder: Path) -> Path:
        path = folder / RECIPE_FILE
        path.write_text(self.to_yaml(), encoding="utf-8")
        return path

    @classmethod
    def read(cls, path: Path) -> Recipe:
        return cls.model_validate(read_recipe_file(path))


def read_recipe_file(path: Path) -> dict[str, Any]:
    """The recipe's settings as written, checked against `Recipe`; errors name file and field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise RecipeError(f"{path}: cannot read the recipe: {err}") from err
    except UnicodeDecodeError as err:
        raise RecipeError(f"{path}: not a recipe (YAML text): {err.reason} at byte {err.start}") from err
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: expected a mapping of build settings, got {type(data).__name__}")
    try:
        Recipe.model_validate({"source": "?", "out": ".", **data})
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise RecipeError(f"{path}: {field}: {first['msg']}") from err
    return data
