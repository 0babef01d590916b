"""A build described in a file: every setting of `lettuce-build build`.

Each build writes the recipe it ran to ``OUT/recipe.yaml``; ``build --config OUT/recipe.yaml``
replays it, and since every request is in the build's cache, a replay makes no model call.
A recipe names the API key's environment variable, never the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lettuce_build.builds.run import BuildOptions
from lettuce_build.builds.shards import Shard
from lettuce_build.core.errors import LettuceError
from lettuce_build.core.leaks import public_url
from lettuce_build.engine.runner import DEFAULT_BATCH_SIZE
from lettuce_build.llm.embedded import DEFAULT_MODEL
from lettuce_build.llm.protocol import Backend, BackendInfo
from lettuce_build.llm.settings import EngineSettings
from lettuce_build.stages.injection import EditAnchors

RECIPE_FILE = "recipe.yaml"


class RecipeError(LettuceError):
    """A recipe file that cannot be read: the file, the field and what was expected."""


class StageSampling(BaseModel):
    """A stage's sampling, changed for one build (unset values keep the stage's)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0)
    max_tokens: int | None = Field(default=None, ge=1)


class Recipe(BaseModel):
    """Everything a build needs, in the words of the command line's options."""

    model_config = ConfigDict(extra="forbid")

    source: str
    input: str | None = None
    out: Path
    model: str = DEFAULT_MODEL
    backend: Literal["vllm", "openai"] = "vllm"
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = Field(default=8, ge=1)
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1)
    limit: int | None = Field(default=None, ge=1)
    ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    seed: int = 0
    edit_anchors: EditAnchors = "constrained"
    mode: Literal["inject", "generate"] = "inject"
    language: str = "en"
    repo_url: str = "https://github.com/{repo}.git"
    #: a folder of prompt templates (``<name>.yaml``) that replace the package's
    prompts: Path | None = None
    #: per stage, sampling over the stage's own: {"answer": {"temperature": 0.2, "max_tokens": 600}}
    sampling: dict[str, StageSampling] = Field(default_factory=dict)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    #: this process builds one slice of the work items (``"i/n"``); `lettuce-build merge` joins them
    shard: Shard | None = None
    #: local: one engine in this process; ray: the model stages on Ray Data, one engine per actor
    executor: Literal["local", "ray"] = "local"
    #: the Ray cluster (``auto``, ``ray://host:10001``); none starts Ray on this machine
    ray_address: str | None = None
    ray_actors: int = Field(default=1, ge=1)

    def build_options(self) -> BuildOptions:
        return BuildOptions.model_validate(self.model_dump(include=set(BuildOptions.model_fields)))

    def stage_sampling(self) -> dict[str, dict[str, Any]]:
        """Per stage, the sampling values this recipe sets (as `run_build` takes them)."""
        return {name: values.model_dump(exclude_none=True) for name, values in self.sampling.items()}

    def make_backend(self) -> Backend:
        from lettuce_build.llm.factory import make_backend

        backend = make_backend(
            self.backend,
            self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            concurrency=self.concurrency,
            engine=self.engine,
        )
        if self.executor == "local":
            return backend
        from lettuce_build.llm.ray_pool import RayBackend, RayOptions

        options = RayOptions(address=self.ray_address, actors=self.ray_actors, batch_size=self.batch_size)
        return RayBackend(backend, options)

    def as_ran(self, info: BackendInfo) -> Recipe:
        """The recipe with the dtype the engine chose for this processor written down (see
        `VLLMOptions.for_cpu`), so the file says what ran; a dtype the user chose stays."""
        dtype = info.options.get("dtype")
        if self.engine.dtype is not None or not info.backend.endswith("vllm") or not isinstance(dtype, str):
            return self
        return self.model_copy(update={"engine": self.engine.model_copy(update={"dtype": dtype})})

    def to_yaml(self) -> str:
        """The recipe as a file says it: credentials in ``base_url`` (``user:key@``, ``?api-key=``)
        never written; the key itself is never in a recipe, only its variable's name."""
        data = self.model_dump(mode="json")
        data["base_url"] = public_url(self.base_url)
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
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: expected a mapping of build settings, got {type(data).__name__}")
    try:
        Recipe.model_validate({"source": "?", "out": ".", **data})
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise RecipeError(f"{path}: {field}: {first['msg']}") from err
    return data
