"""A backend that never calls a model: for builds whose every response must already be cached."""

from __future__ import annotations

from collections.abc import Sequence

from lettuce_build.llm.protocol import BackendError, BackendInfo, ChatRequest, Completion


class CacheOnlyBackend:
    """Stands in for the backend a build was made with (same model id, so the same request keys);
    asked for anything, it refuses: the cache should have held it."""

    def __init__(self, info: BackendInfo, why: str) -> None:
        self._info = info
        self.why = why

    @property
    def model_id(self) -> str:
        return self._info.model

    def info(self) -> BackendInfo:
        return self._info

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        raise BackendError(f"{len(requests)} request(s) are in no cache: {self.why}")
