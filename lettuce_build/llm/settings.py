"""The settings a build chooses for its model, declared once: the vLLM engine's (a recipe's
``engine:``, the command line's flags, and what the engine ran with, the machine's defaults
filled in) and an OpenAI-compatible endpoint's."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BackendKind = Literal["vllm", "openai"]


class EndpointSettings(BaseModel):
    """An OpenAI-compatible endpoint as a build names it (the key only by its variable)."""

    base_url: str = "http://127.0.0.1:8000/v1"
    #: the environment variable holding the API key; the key itself is never written anywhere
    api_key_env: str = "OPENAI_API_KEY"
    #: requests in flight
    concurrency: int = Field(default=8, ge=1)
    #: seconds one request may take before it is given up (and retried)
    request_timeout: float = Field(default=300.0, gt=0.0)
    #: retries of a request after its first try, with exponential backoff (``Retry-After`` when
    #: the server gives one), for 408, 409, 429, 5xx, timeouts and dropped connections
    max_retries: int = Field(default=5, ge=0)
    #: requests and tokens (prompt + ``max_tokens``) per minute, shared by every request in
    #: flight (none: only the provider's own ``x-ratelimit-*`` headers and 429s hold it back)
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)
    #: each pass's requests go through the provider's Batch API (its files and batches
    #: endpoints) instead of one call each: half the price at most providers, answers within
    #: ``batch_window``
    batch: bool = False
    batch_window: str = "24h"
    #: what one batch may hold: OpenAI takes 50,000 requests and 200 MB per input file
    batch_max_requests: int = Field(default=50_000, ge=1)
    batch_max_bytes: int = Field(default=200_000_000, ge=1_000)
    #: the longest wait, in seconds, between two looks at batches in flight (the first look is
    #: after 1 s, each wait half again as long as the one before)
    batch_poll_seconds: float = Field(default=30.0, gt=0.0)


class EngineSettings(BaseModel):
    """vLLM engine settings; an unset one (None) takes the machine's default (see
    `vllm_backend.engine_defaults`: on a CPU, the measured ones)."""

    model_config = ConfigDict(extra="forbid")

    tensor_parallel_size: int | None = Field(default=None, ge=1)
    max_model_len: int | None = Field(default=None, ge=16)
    gpu_memory_utilization: float | None = Field(default=None, gt=0.0, le=1.0)
    dtype: str | None = None
    #: passed to the chat template, e.g. {"enable_thinking": false} to turn a model's thinking off
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    #: the model's revision on the Hub (a branch, tag or commit), for reproducible recipes
    model_revision: str | None = None
    max_num_seqs: int | None = Field(default=None, ge=1)
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    enforce_eager: bool | None = None
    #: how vLLM runs tensor-parallel workers (``mp``: its own processes); the Ray executor sets
    #: ``mp`` for engines inside its actors
    distributed_executor_backend: Literal["mp", "ray", "uni"] | None = None
    trust_remote_code: bool | None = None

    def over(self, defaults: EngineSettings) -> EngineSettings:
        """These settings, with every unset one taken from ``defaults``."""
        return defaults.model_copy(update=self.model_dump(exclude_none=True, exclude_defaults=True))


#: the engine settings, which the command line takes as flags of their own
ENGINE_FIELDS = tuple(EngineSettings.model_fields)
