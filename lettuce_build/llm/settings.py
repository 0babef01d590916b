"""The vLLM engine settings a build chooses (a recipe's ``engine:``, the command line's flags)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EngineSettings(BaseModel):
    """vLLM engine settings; unset ones keep the engine's defaults (on a CPU, the measured ones)."""

    model_config = ConfigDict(extra="forbid")

    tensor_parallel_size: int | None = Field(default=None, ge=1)
    max_model_len: int | None = Field(default=None, ge=16)
    gpu_memory_utilization: float | None = Field(default=None, gt=0.0, le=1.0)
    dtype: str | None = None
    #: passed to the chat template, e.g. {"enable_thinking": false} to turn a model's thinking off
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    model_revision: str | None = None


#: the engine settings, which the command line takes as flags of their own
ENGINE_FIELDS = tuple(EngineSettings.model_fields)
