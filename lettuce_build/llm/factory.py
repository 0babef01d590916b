"""The one place a backend is made from command-line settings (builds and the squeez teacher)."""

from __future__ import annotations

from lettuce_build.llm.protocol import Backend
from lettuce_build.llm.settings import BackendKind, EndpointSettings, EngineSettings


def make_backend(
    kind: BackendKind,
    model: str,
    *,
    endpoint: EndpointSettings | None = None,
    engine: EngineSettings | None = None,
) -> Backend:
    """Offline vLLM for ``vllm`` (``engine`` over its defaults); for ``openai``, any
    OpenAI-compatible ``endpoint``.

    Imports are deferred: a cached rebuild never loads vLLM.
    """
    if kind == "vllm":
        from lettuce_build.llm.vllm_backend import VLLMBackend

        return VLLMBackend(model, engine)
    from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions

    # only the endpoint's own fields: ``endpoint`` may be a model that extends it (a Recipe)
    chosen = (endpoint or EndpointSettings()).model_dump(include=set(EndpointSettings.model_fields))
    return OpenAIBackend(model, OpenAIOptions(**chosen))
