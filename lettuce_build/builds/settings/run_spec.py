"""What a run is, decided from its command's settings before it opens: where it writes, what
its manifest records, how and on which models it runs, and how its stage loop asks. A build's
recipe makes its own (`Recipe.run_spec`); a translation and squeez's teacher phase make theirs;
the run context (builds/running/context.py) opens it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.plan import ExecutionPlan
from lettuce_build.engine.runner import DEFAULT_BATCH_SIZE
from lettuce_build.llm.factory import ModelChoice
from lettuce_build.llm.pricing import Pricing


class LoopSettings(BaseModel):
    """How a run's stage loop asks: the hallucinated share it balances to (stages that inject
    need one), items per model call, and whether the model scores its own work."""

    model_config = ConfigDict(frozen=True)

    ratio: float | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    plausibility: bool = False


class RunSpec(BaseModel):
    """What a run is, as its command's settings say: where it writes, what its manifest records,
    how it runs and on which models."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    out: Path
    #: the manifest's ``source``: a build's source, ``translate`` or ``squeez``
    source: str
    seed: int = 0
    limit: int | None = None
    #: a build's options, recorded in its manifest (the recipe as it is: validated already)
    options: SkipValidation[BuildOptions | None] = None
    pricing: Pricing | None = None
    max_cost: float | None = None
    #: the shard folders a merge joins
    merged_from: list[str] = Field(default_factory=list)
    #: where and how the model runs: shard, replay, Ray pool, provider-failure share
    plan: ExecutionPlan = Field(default_factory=ExecutionPlan)
    models: ModelChoice = Field(default_factory=ModelChoice)
    #: how its stage loop asks (the seed is the run's)
    loop: LoopSettings = Field(default_factory=LoopSettings)
