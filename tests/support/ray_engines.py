"""Engines for Ray actors in tests: scripted ones that log what they are asked, and one that
kills its own actor once, as a crashed GPU worker would."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from lettuce_build.llm.protocol import BackendInfo, ChatRequest, Completion
from tests.support.documents import flaky_respond
from tests.support.scripted import ScriptedBackend


class LoggedEngine:
    """`flaky_respond` behind the backend protocol; one line in ``log`` per request asked, written
    before answering. With ``die_on_call``, the first process to reach that call (counted per
    process) kills itself instead of answering, once: ``marker`` says it happened."""

    def __init__(
        self, log: Path, die_on_call: int | None = None, marker: Path | None = None, loads: Path | None = None
    ) -> None:
        self.inner = ScriptedBackend(flaky_respond)
        self.log = log
        #: one line per engine that started (its first call), as a vLLM engine loads on its first
        self.loads = loads
        self.die_on_call = die_on_call
        self.marker = marker
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def info(self) -> BackendInfo:
        return self.inner.info()

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        self.calls += 1
        if self.calls == 1 and self.loads is not None:
            with self.loads.open("a") as handle:
                handle.write(f"{os.getpid()}\n")
        with self.log.open("a") as handle:
            handle.writelines(f"{os.getpid()}\n" for _ in requests)
        if self.calls == self.die_on_call and self.marker is not None and self._first_to_die():
            os._exit(1)
        return self.inner.generate(requests)

    def _first_to_die(self) -> bool:
        assert self.marker is not None
        try:  # created exclusively: of several actors reaching the call, one dies
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True
