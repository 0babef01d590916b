"""The one place a backend is made from command-line settings (builds and the squeez teacher)."""

from __future__ import annotations

from typing import Literal

from lettuce_build.llm.protocol import Backend

BackendKind = Literal["vllm", "openai"]


def make_backend(
    kind: BackendKind,
    model: str,
    *,
    base_url: str = "http://127.0.0.1:8000/v1",
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
) -> Backend:
    """Offline vLLM for ``vllm``; any OpenAI-compatible endpoint at ``base_url`` for ``openai``.

    Imports are deferred: a cached rebuild never loads vLLM.
    """
    if kind == "vllm":
        from lettuce_build.llm.vllm_backend import VLLMBackend

        return VLLMBackend(model)
    from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions

    return OpenAIBackend(
        model, OpenAIOptions(base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
    )
