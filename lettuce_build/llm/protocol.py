"""What every backend speaks: chat requests in, completions out, in the same order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str
    content: str


class ChatRequest(BaseModel):
    """One chat call. ``json_schema`` switches on structured output for that request."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[ChatMessage, ...]
    temperature: float = 0.7
    max_tokens: int = 400
    seed: int | None = None
    json_schema: dict[str, Any] | None = None

    @classmethod
    def of(cls, system: str | None, user: str, **params: Any) -> ChatRequest:
        messages = [ChatMessage(role="system", content=system)] if system else []
        messages.append(ChatMessage(role="user", content=user))
        return cls(messages=tuple(messages), **params)


class Completion(BaseModel):
    """A backend's answer. ``reasoning`` holds a reasoning model's thinking, kept apart from ``text``."""

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning: str | None = None


class BackendInfo(BaseModel):
    """What a manifest or card records about the backend that produced a build."""

    backend: str
    model: str
    version: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """A model backend. ``generate`` answers every request, in order, in one call."""

    @property
    def model_id(self) -> str: ...

    def info(self) -> BackendInfo: ...

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]: ...
