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


def make_judges(
    own: Backend,
    kind: BackendKind,
    models: list[str],
    *,
    judge_kind: BackendKind | None = None,
    endpoint: EndpointSettings | None = None,
    judge_base_url: str | None = None,
    engine: EngineSettings | None = None,
) -> list[Backend]:
    """The judges of a ``--verify`` run (``models``; none: the run's own model). A judge that is
    the run's own model on its own backend and endpoint is ``own`` itself (one engine, not two)."""
    endpoint = endpoint or EndpointSettings()
    judging = endpoint.model_copy(update={"base_url": judge_base_url or endpoint.base_url})
    kind_of_judges = judge_kind or kind
    judges = []
    for model in models or [own.model_id]:
        same = model == own.model_id and kind_of_judges == kind and judging.base_url == endpoint.base_url
        judges.append(own if same else make_backend(kind_of_judges, model, endpoint=judging, engine=engine))
    return judges
