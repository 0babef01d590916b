"""The model stages on a Ray cluster: Ray Data with an actor pool, one engine per actor.

`RayBackend` wraps the backend a build would run locally (vLLM, unstarted). The stage loop
and the request cache stay in the driver: before each pass of a stage, the runner gives
`stream` every request the cache lacks; Ray Data sends them in batches through a pool of
actors, each holding its own copy of the engine, and hands each answered batch back as it
finishes, so the runner commits it to the one cache before anything is parsed. Keys, seeds and
parsing are the local build's, so given the same cache a Ray build writes the same rows and
starts no engine; an actor that dies loses its batch in flight, which Ray Data retries on a
restarted actor, and a driver that dies loses only the batches not yet handed back.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, Field

from lettuce_build.core.quiet import requiet
from lettuce_build.llm.protocol import Backend, BackendError, BackendInfo, ChatRequest, Completion

NO_RAY = "--executor ray needs Ray Data: pip install 'lettuce-build[ray]'"


class RayOptions(BaseModel):
    """Where and how wide: ``address`` None starts a local Ray instance (``auto`` joins the
    cluster this machine belongs to)."""

    address: str | None = None
    actors: int = Field(default=1, ge=1)
    #: requests per actor call
    batch_size: int = Field(default=64, ge=1)
    cpus_per_actor: float = Field(default=1.0, ge=0.0)
    #: None: the engine's tensor-parallel size when the cluster has GPUs, else none
    gpus_per_actor: float | None = Field(default=None, ge=0.0)


class EngineActor:
    """One engine in one Ray actor; Ray Data calls it with batches of requests."""

    def __init__(self, engine: Backend) -> None:
        self.engine = engine

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        requests = [ChatRequest.from_json(str(text)) for text in batch["request"]]
        completions = self.engine.generate(requests)
        return {"index": list(batch["index"]), "completion": [c.model_dump_json() for c in completions]}


class RayBackend:
    """The backend protocol, plus `stream`: the runner hands it a whole pass (see engine/runner.py)."""

    def __init__(self, engine: Backend, options: RayOptions | None = None) -> None:
        if importlib.util.find_spec("ray") is None:  # said before the build starts, not at its first miss
            raise BackendError(NO_RAY)
        self.engine = engine  # never started here: each actor starts its own copy
        self.options = options or RayOptions()

    @property
    def model_id(self) -> str:
        return self.engine.model_id

    def info(self) -> BackendInfo:
        inner = self.engine.info()
        options = {**inner.options, "ray": self.options.model_dump(exclude={"address"})}
        return inner.model_copy(update={"backend": f"ray/{inner.backend}", "options": options})

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        answers: dict[int, Completion] = {}
        for chunk in self.stream(requests):
            answers.update(chunk)
        return [answers[index] for index in range(len(requests))]

    def stream(self, requests: Sequence[ChatRequest]) -> Iterator[list[tuple[int, Completion]]]:
        if not requests:
            return
        ray = _ray()
        if not ray.is_initialized():
            ray.init(
                address=self.options.address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
        requiet("ray", "ray.data")  # Ray sets its loggers' levels when imported
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # the stage bar says how far the stage is
        rows = [{"index": i, "request": r.to_json()} for i, r in enumerate(requests)]
        answered = ray.data.from_items(rows).map_batches(
            EngineActor,
            fn_constructor_kwargs={"engine": self.engine},
            compute=ray.data.ActorPoolStrategy(size=min(self.options.actors, len(rows))),
            batch_size=self.options.batch_size,
            num_cpus=self.options.cpus_per_actor,
            num_gpus=self._gpus_per_actor(ray),
        )
        for batch in answered.iter_batches(batch_size=None, batch_format="numpy"):
            yield [
                (int(index), Completion.model_validate_json(str(text)))
                for index, text in zip(batch["index"], batch["completion"], strict=True)
            ]

    def _gpus_per_actor(self, ray: Any) -> float:
        if self.options.gpus_per_actor is not None:
            return self.options.gpus_per_actor
        if not ray.cluster_resources().get("GPU"):
            return 0.0
        options = getattr(self.engine, "options", None)
        return float(getattr(options, "tensor_parallel_size", 1) or 1)


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as err:
        raise BackendError(NO_RAY) from err
    return ray
