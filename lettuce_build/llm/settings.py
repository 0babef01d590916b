"""The settings a build chooses for its model, declared once: the vLLM engine's (a recipe's
``engine:``, the command line's flags, and what the engine ran with, the machine's defaults
filled in) and an OpenAI-compatible endpoint's."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BackendKind = Literal["vllm", "openai"]


class EndpointSettings(BaseModel):
    """An OpenAI-compatible endpoint as a build names it (the key only by its variable)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    base_url: str = "http://127.0.0.1:8000/v1"
    """For --backend openai."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the API key (the key itself never goes on the command line, and is
    never written anywhere)."""
    concurrency: int = Field(default=8, ge=1)
    """Requests in flight to an OpenAI-compatible endpoint."""
    request_timeout: float = Field(default=300.0, gt=0.0)
    """Seconds one request to an OpenAI-compatible endpoint may take before it is retried."""
    max_retries: int = Field(default=5, ge=0)
    """Retries of a request after 408/409/429, 5xx, a timeout or a dropped connection (exponential
    backoff, Retry-After honoured); then it is a provider_error failure row."""
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute to an OpenAI-compatible endpoint, shared by all in flight (x-ratelimit-*
    headers honoured either way)."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens (prompt + max_tokens) per minute to an OpenAI-compatible endpoint, shared by all in
    flight."""
    batch: bool = False
    """openai: send each pass through the provider's Batch API (files + batches endpoints): half the
    price at most providers, answers within --batch-window; a killed build re-attaches."""
    batch_window: str = "24h"
    """With --batch: the completion window asked of the provider."""
    # OpenAI takes 50,000 requests and 200 MB per input file
    batch_max_requests: int = Field(default=50_000, ge=1)
    """With --batch: requests per batch file (the provider's limit)."""
    batch_max_bytes: int = Field(default=200_000_000, ge=1_000)
    """With --batch: bytes per batch file (the provider's limit)."""
    batch_poll_seconds: float = Field(default=30.0, gt=0.0)
    """With --batch: the longest wait between two looks at the batches in flight (the first after 1 s,
    each wait half again as long as the one before)."""


def check_batch_kind(kind: BackendKind, endpoint: EndpointSettings) -> None:
    """``--batch`` goes through a provider's Batch API: only an endpoint has one."""
    if endpoint.batch and kind != "openai":
        raise ValueError("--batch sends requests through a provider's Batch API: it needs --backend openai")


class EngineSettings(BaseModel):
    """vLLM engine settings; an unset one (None) takes the machine's default (see
    `vllm_backend.engine_defaults`: on a CPU, the measured ones)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    tensor_parallel_size: int | None = Field(default=None, ge=1)
    """vLLM: GPUs to shard the model over."""
    max_model_len: int | None = Field(default=None, ge=16)
    """vLLM: the context length to allocate for."""
    gpu_memory_utilization: float | None = Field(default=None, gt=0.0, le=1.0)
    """vLLM: share of GPU memory."""
    dtype: str | None = None
    """vLLM: weight dtype (auto, bfloat16, float16...)."""
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    """JSON for the chat template, e.g. '{"enable_thinking": false}' to turn thinking off."""
    model_revision: str | None = None
    """The model's revision on the Hub (branch, tag or commit), for reproducible recipes."""
    max_num_seqs: int | None = Field(default=None, ge=1)
    """vLLM: sequences in one engine step."""
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    """vLLM: tokens one engine step schedules."""
    enforce_eager: bool | None = None
    """vLLM: run eagerly, no CUDA graphs or compilation (default: on a CPU)."""
    distributed_executor_backend: Literal["mp", "ray", "uni"] | None = None
    """vLLM: how tensor-parallel workers run (mp: its own processes; the Ray executor sets mp for
    engines inside its actors)."""
    trust_remote_code: bool | None = None
    """vLLM: run the model repository's own code (only for a model you trust)."""

    def over(self, defaults: EngineSettings) -> EngineSettings:
        """These settings, with every unset one taken from ``defaults``."""
        return defaults.model_copy(update=self.model_dump(exclude_none=True, exclude_defaults=True))
