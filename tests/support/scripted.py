"""A scripted backend: a test double of the backend protocol, for testing logic only."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from lettuce_build.llm.protocol import BackendInfo, ChatRequest, Completion, Scores

Responder = Callable[[ChatRequest], Completion | str]
UNSCORED = Scores(scored=False, why="a scripted backend scores nothing").model_dump_json()


class ScriptedBackend:
    """Answers each request with ``respond(request)``; records every request it is asked.

    ``fail_on_call`` raises on that (1-based) generate call, like a backend dying
    mid-build; ``delay`` sleeps per call; ``log`` appends one line per request;
    ``record=False`` keeps no request, nor a list per call (a benchmark's backend, whose memory
    is not the driver's);
    ``scores``: ``respond`` answers scoring requests (`ChatRequest.continuations`) too.
    """

    def __init__(
        self,
        respond: Responder,
        *,
        model: str = "scripted",
        fail_on_call: int | None = None,
        delay: float = 0.0,
        log: Path | None = None,
        record: bool = True,
        scores: bool = False,
    ) -> None:
        self.respond = respond
        self.model = model
        self.fail_on_call = fail_on_call
        self.delay = delay
        self.log = log
        self.record = record
        #: True: ``respond`` answers scoring requests too (else they are answered unscored)
        self.scores = scores
        #: each generate call's requests (none kept with ``record=False``)
        self.calls: list[list[ChatRequest]] = []
        self.call_count = 0

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def requests(self) -> list[ChatRequest]:
        return [r for call in self.calls for r in call]

    def info(self) -> BackendInfo:
        return BackendInfo(backend="scripted", model=self.model)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        self.call_count += 1
        if self.fail_on_call == self.call_count:
            self.calls.append([])
            raise RuntimeError(f"scripted backend failure on call {self.fail_on_call}")
        if self.record:  # a benchmark's million items make tens of thousands of calls
            self.calls.append(list(requests))
        if self.delay:
            time.sleep(self.delay)
        answers = []
        for request in requests:
            # a scoring request (the plausibility check) gets no scores unless the script gives some
            answer = self.respond(request) if not request.continuations or self.scores else UNSCORED
            answers.append(
                answer
                if isinstance(answer, Completion)
                else Completion(
                    text=answer,
                    finish_reason="stop",
                    # about four characters a token: counted without splitting the prompt, so
                    # that a benchmark's instant model costs next to nothing
                    prompt_tokens=sum(len(m.content) for m in request.messages) // 4 + 1,
                    completion_tokens=len(answer.split()),
                )
            )
        if self.log is not None:
            with self.log.open("a") as handle:
                handle.writelines(json.dumps(r.messages[-1].content) + "\n" for r in requests)
        return answers
