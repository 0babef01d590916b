"""The model stages on a Ray cluster: a pool of Ray Core actors, one engine per actor, created
once per build and released at its end.

`RayBackend` wraps the backend a build would run locally (vLLM, unstarted). The stage loop
and the request cache stay in the driver: before each pass of a stage, the runner gives
`stream` the requests the cache lacks, as an iterable it renders lazily; the pool takes them a
batch at a time, keeping each actor two batches deep so it never waits for the driver (and the
driver never holds more of a pass than that), and hands each answered batch back as it
finishes, so the runner commits it to the one cache before anything is parsed. The
actors outlive the pass: every pass of every stage (attempts, balancing's waves) is served by
the engines the first one loaded; `close` (the stage loop calls it when the build ends) kills
them. Keys, seeds and parsing are the local build's, so given the same cache a Ray build writes
the same rows and starts no engine. An actor that dies is restarted by Ray (its engine loaded
again) and its batches in flight are retried there; a driver that dies loses only the batches
not yet handed back.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel, Field

from lettuce_build.core.errors import BackendError
from lettuce_build.core.lifeline import children_die_with_this_process
from lettuce_build.core.quiet import requiet
from lettuce_build.llm.protocol import Backend, BackendInfo, ChatRequest, Completion
from lettuce_build.llm.vllm_backend import VLLMBackend

NO_RAY = "--executor ray needs Ray: pip install 'lettuce-build[ray]'"
#: batches an actor holds at once: one computing, one waiting, so it never idles for the driver
DEPTH = 2


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
    """One engine in one Ray actor, alive for the whole build."""

    def __init__(self, engine: Backend) -> None:
        self.engine = engine

    def generate(self, requests: list[str]) -> list[str]:
        completions = self.engine.generate([ChatRequest.from_json(text) for text in requests])
        return [completion.model_dump_json() for completion in completions]


class RayBackend:
    """The backend protocol, plus `stream`: the runner hands it a whole pass (see engine/runner.py)."""

    def __init__(self, engine: Backend, options: RayOptions | None = None) -> None:
        if importlib.util.find_spec("ray") is None:  # said before the build starts, not at its first miss
            raise BackendError(NO_RAY)
        self.engine = engine  # never started here: each actor starts its own copy
        self.options = options or RayOptions()
        self._actors: list[Any] = []

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

    def stream(self, requests: Iterable[ChatRequest]) -> Iterator[list[tuple[int, Completion]]]:
        numbered = enumerate(requests)
        size = self.options.batch_size

        def next_batch() -> list[tuple[int, ChatRequest]]:
            # taken from the caller's iterable only when an actor has room for it
            return list(itertools.islice(numbered, size))

        batch = next_batch()
        if not batch:  # nothing to ask: no actor is started
            return
        ray = _ray()
        actors = self._pool(ray)
        in_flight: dict[Any, tuple[int, list[int]]] = {}

        def send(actor: int) -> None:
            """The batch taken last, to ``actor``, and the next one taken (none when the pass ends)."""
            nonlocal batch
            if batch:
                texts = [request.to_json() for _, request in batch]
                in_flight[actors[actor].generate.remote(texts)] = (actor, [index for index, _ in batch])
                batch = next_batch()

        for _ in range(DEPTH):
            for actor in range(len(actors)):
                send(actor)
        while in_flight:
            [ready], _ = ray.wait(list(in_flight), num_returns=1)
            actor, indices = in_flight.pop(ready)
            answered = ray.get(ready)
            send(actor)
            yield [
                (index, Completion.model_validate_json(text))
                for index, text in zip(indices, answered, strict=True)
            ]

    def start(self, request: ChatRequest) -> None:
        """Create the actors now and have each answer ``request``: their engines are loaded
        before a build's clock runs (a benchmark's fair start; a build needs none of this)."""
        ray = _ray()
        ray.get([actor.generate.remote([request.to_json()]) for actor in self._pool(ray)])

    def close(self) -> None:
        """Release the engines: kill the actors (a later pass would start new ones)."""
        if self._actors:
            ray = _ray()
            for actor in self._actors:
                ray.kill(actor)
            self._actors = []

    def _pool(self, ray: Any) -> list[Any]:
        """The build's actors, created at its first pass that asks the model."""
        if not self._actors:
            if not ray.is_initialized():
                if self.options.address is None:  # Ray's processes, started here: they die with us
                    children_die_with_this_process()
                ray.init(
                    address=self.options.address,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
            requiet("ray")  # Ray sets its loggers' levels when imported
            remote = ray.remote(
                num_cpus=self.options.cpus_per_actor,
                num_gpus=self._gpus_per_actor(ray),
                # a dead actor comes back (its engine loaded again) and gets its batches again
                max_restarts=-1,
                max_task_retries=-1,
            )(EngineActor)
            self._actors = [remote.remote(self._actor_engine()) for _ in range(self.options.actors)]
        return self._actors

    def _actor_engine(self) -> Backend:
        """The engine each actor runs: with tensor parallelism, on vLLM's own processes inside
        the actor (left alone, vLLM sees Ray running and asks it for a placement group of its
        own, which waits forever for the GPUs the actor already holds)."""
        engine = self.engine
        if isinstance(engine, VLLMBackend) and (engine.options.tensor_parallel_size or 1) > 1:
            settings = engine.options.model_copy(update={"distributed_executor_backend": "mp"})
            return VLLMBackend(engine.model, settings)
        return engine

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
    except ImportError as err:
        raise BackendError(NO_RAY) from err
    return ray
