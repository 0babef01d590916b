"""The one place a backend is made from command-line settings: `ModelChoice` names a command's
model and its judges (a build's recipe, translate's flags, the squeez teacher's), and the run
context (builds/running/context.py) makes them once from it."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lettuce_build.llm.embedded import DEFAULT_MODEL
from lettuce_build.llm.protocol import Backend
from lettuce_build.llm.settings import BackendKind, EndpointSettings, EngineSettings, check_batch_kind


class ModelChoice(BaseModel):
    """The models a command runs, as its settings name them: its own and, with ``verify``, the
    judges that read its work. Made into backends by the run context, once per run."""

    model_config = ConfigDict(frozen=True)

    kind: BackendKind = "vllm"
    model: str = DEFAULT_MODEL
    endpoint: EndpointSettings = Field(default_factory=EndpointSettings)
    engine: EngineSettings | None = None
    verify: bool = False
    #: the judges' models (none: the command's own model)
    judge_models: list[str] = Field(default_factory=list)
    judge_kind: BackendKind | None = None
    judge_base_url: str | None = None

    @model_validator(mode="after")
    def _batches_need_an_endpoint(self) -> ModelChoice:
        check_batch_kind(self.kind, self.endpoint)
        return self

    def made(
        self, *, backend: Backend | None = None, judges: Sequence[Backend] | None = None
    ) -> tuple[Backend, list[Backend]]:
        """The run's model and its judges, made once: ``backend`` and ``judges`` replace the ones
        named here (a test's scripted backend, an API caller's own)."""
        model = backend or self.backend()
        return model, self.judges(model) if judges is None else list(judges)

    def backend(self) -> Backend:
        return make_backend(self.kind, self.model, endpoint=self.endpoint, engine=self.engine)

    def judges(self, own: Backend) -> list[Backend]:
        """The judges of a ``verify`` run (none without it); ``own``: the run's model."""
        if not self.verify:
            return []
        return make_judges(
            own,
            self.kind,
            self.judge_models,
            judge_kind=self.judge_kind,
            endpoint=self.endpoint,
            judge_base_url=self.judge_base_url,
            engine=self.engine,
        )


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
