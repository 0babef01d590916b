"""The one place a backend is made from command-line settings (builds and the squeez teacher)."""

from __future__ import annotations

from typing import Literal

from lettuce_build.llm.protocol import Backend
from lettuce_build.llm.settings import EngineSettings

BackendKind = Literal["vllm", "openai"]


def make_backend(
    kind: BackendKind,
    model: str,
    *,
    base_url: str = "http://127.0.0.1:8000/v1",
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
    engine: EngineSettings | None = None,
) -> Backend:
    """Offline vLLM for ``vllm`` (``engine`` over its defaults); any OpenAI-compatible endpoint at
    ``base_url`` for ``openai``.

    Imports are deferred: a cached rebuild never loads vLLM.
    """
    if kind == "vllm":
        from lettuce_build.llm.vllm_backend import VLLMBackend, VLLMOptions

        options = VLLMOptions.default_for(model)
        if engine is not None:
            chosen = engine.model_dump(exclude_none=True, exclude={"model_revision", "chat_template_kwargs"})
            options = options.model_copy(
                update={
                    **chosen,
                    "revision": engine.model_revision,
                    "chat_template_kwargs": engine.chat_template_kwargs or options.chat_template_kwargs,
                }
            )
        return VLLMBackend(model, options)
    from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions

    return OpenAIBackend(
        model, OpenAIOptions(base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
    )
