"""What every backend speaks: chat requests in, completions out, in the same order."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field


# ChatMessage and ChatRequest are frozen dataclasses, not pydantic models: the runner makes one
# request per item and attempt (its hot path, measured in benchmarks/runner_overhead.py), and
# they never leave the process unchecked: backends turn them into their own wire formats.
@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat call. ``json_schema`` switches on structured output for that request."""

    messages: tuple[ChatMessage, ...]
    temperature: float = 0.7
    max_tokens: int = 400
    seed: int | None = None
    json_schema: dict[str, Any] | None = None
    #: > 1 discourages tokens already in the text (vLLM's ``repetition_penalty``; an OpenAI
    #: endpoint gets ``frequency_penalty`` = penalty - 1); 1.0 leaves sampling as it is
    repetition_penalty: float = 1.0
    #: a scoring request: nothing is generated; for each (prefix, scored) pair the conversation
    #: is continued by an assistant message ``prefix + scored``, and the completion's text is
    #: `Scores` JSON: per pair, the log-probabilities of the tokens that make ``scored`` (a
    #: prefill only). A backend or server that gives none answers with ``scored: false``
    continuations: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(
        cls,
        system: str | None,
        user: str,
        *,
        temperature: float = 0.7,
        max_tokens: int = 400,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        repetition_penalty: float = 1.0,
    ) -> ChatRequest:
        """A request with an optional system message and one user message."""
        messages = (
            (ChatMessage("system", system), ChatMessage("user", user))
            if system
            else (ChatMessage("user", user),)
        )
        return cls(
            messages, float(temperature), int(max_tokens), seed, json_schema, float(repetition_penalty)
        )

    def with_params(self, **changes: Any) -> ChatRequest:
        return replace(self, **changes)

    def written_in(self, language: str) -> ChatRequest:
        """The request with its system message asking for text in ``language`` (a name, say
        "German"): a build in another language asks for its questions, answers and edits there."""
        asked = (
            f"Write in {language}: every sentence you write is in {language}; names, numbers, "
            "code and commands stay as they are."
        )
        first, *rest = self.messages
        if first.role == "system":
            return replace(self, messages=(ChatMessage("system", f"{first.content}\n\n{asked}"), *rest))
        return replace(self, messages=(ChatMessage("system", asked), *self.messages))

    def conversation(self) -> list[dict[str, str]]:
        return [m.as_dict() for m in self.messages]

    def to_json(self) -> str:
        """The request as text, to cross a process boundary (a Ray actor) and come back whole."""
        fields = {
            name: getattr(self, name)
            for name in ("temperature", "max_tokens", "seed", "json_schema", "repetition_penalty")
        }
        if self.continuations:
            fields["continuations"] = [list(pair) for pair in self.continuations]
        return json.dumps({"messages": [[m.role, m.content] for m in self.messages], **fields})

    @classmethod
    def from_json(cls, text: str) -> ChatRequest:
        data = json.loads(text)
        messages = tuple(ChatMessage(role, content) for role, content in data.pop("messages"))
        pairs = tuple((prefix, scored) for prefix, scored in data.pop("continuations", []))
        return cls(messages, **data, continuations=pairs)

    def scoring(self) -> list[list[dict[str, str]]]:
        """The conversations a scoring request sends, one per continuation."""
        asked = self.conversation()
        return [
            [*asked, {"role": "assistant", "content": prefix + scored}]
            for prefix, scored in self.continuations
        ]


#: the finish_reason of a request never sent: its prompt alone exceeds the model's context
PROMPT_TOO_LONG = "prompt_too_long"
#: finish_reasons of a request the provider did not answer; the completion's text says why.
#: Refused: a 4xx other than 408/409/429 (a content filter, a bad key); error: a 5xx, a timeout
#: or a dropped connection, after every retry; malformed: a 200 that is no chat completion.
PROVIDER_REFUSED = "provider_refused"
PROVIDER_ERROR = "provider_error"
MALFORMED_RESPONSE = "malformed_response"
#: a completion with one of these is no answer: it is never cached, so a re-run asks again
PROVIDER_FAILURES = frozenset({PROVIDER_REFUSED, PROVIDER_ERROR, MALFORMED_RESPONSE})


class Scores(BaseModel):
    """What a scoring request's completion holds (its text, as JSON)."""

    #: False: the backend or server gives no prompt log-probabilities (``why`` says so)
    scored: bool = True
    why: str = ""
    #: per continuation, the log-probability of each token of its scored text
    logprobs: list[list[float]] = Field(default_factory=list)


def scored_tokens(tokens: Sequence[tuple[str, float | None]], scored: str) -> list[float]:
    """The log-probabilities of the last tokens of a prompt that together spell ``scored`` (its
    end): ``tokens`` are the prompt's (decoded text, log-probability) in order. A token that
    straddles the scored text's start counts: it holds part of it."""
    found: list[float] = []
    length = 0
    for text, logprob in reversed(tokens):
        if length >= len(scored):
            break
        length += len(text)
        if logprob is not None:
            found.append(logprob)
    return found[::-1]


class Completion(BaseModel):
    """A backend's answer. ``reasoning`` holds a reasoning model's thinking, kept apart from ``text``."""

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning: str | None = None

    @property
    def answered(self) -> bool:
        """Whether the provider answered (a failure of the provider is no answer to keep)."""
        return self.finish_reason not in PROVIDER_FAILURES

    @classmethod
    def of(cls, raw: str, reasoning: str | None = None, **usage: Any) -> Completion:
        """A completion from a model's raw text, with inline thinking moved to ``reasoning``
        (beside any the server returned apart): no stage ever parses a model's deliberation."""
        text, inline = split_thinking(raw)
        kept = "\n\n".join(part for part in (reasoning, inline) if part) or None
        return cls(text=text, reasoning=kept, **usage)


_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def split_thinking(raw: str) -> tuple[str, str | None]:
    """(text, thinking) of a raw response: ``<think>...</think>`` blocks, a leading block whose
    opening tag was in the prompt (text up to a first ``</think>``), and an unclosed ``<think>``
    (the rest is thinking: a response cut while it deliberated has no answer)."""
    thoughts: list[str] = []
    opened, closed = raw.find(_THINK_OPEN), raw.find(_THINK_CLOSE)
    if closed != -1 and (opened == -1 or closed < opened):
        thoughts.append(raw[:closed])
        raw = raw[closed + len(_THINK_CLOSE) :]
    while (start := raw.find(_THINK_OPEN)) != -1:
        end = raw.find(_THINK_CLOSE, start)
        thoughts.append(raw[start + len(_THINK_OPEN) : end if end != -1 else len(raw)])
        raw = raw[:start] + (raw[end + len(_THINK_CLOSE) :] if end != -1 else "")
    if not thoughts:
        return raw, None
    return raw.strip(), "\n\n".join(t.strip() for t in thoughts if t.strip()) or None


class BackendInfo(BaseModel):
    """What a manifest or card records about the backend that produced a build."""

    backend: str
    model: str
    version: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @property
    def context_tokens(self) -> int | None:
        """The model's context length in tokens, when the backend's settings fix it (a vLLM
        engine's ``max_model_len``); None when only the model or the server knows it."""
        value = self.options.get("max_model_len")
        return int(value) if value is not None else None


@runtime_checkable
class Backend(Protocol):
    """A model backend. ``generate`` answers every request, in order, in one call."""

    @property
    def model_id(self) -> str: ...

    def info(self) -> BackendInfo: ...

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]: ...


@runtime_checkable
class StreamingBackend(Backend, Protocol):
    """A backend that answers as it goes (a Ray actor pool, an OpenAI-compatible endpoint):
    given a whole pass of requests as an iterable, it answers them in chunks as they finish, each
    chunk (position in ``requests``, completion) pairs. It takes requests only as it has room for
    them, so a pass of any length holds a few batches in memory; the runner commits each chunk to
    the cache as it arrives, and a killed build loses only what was in flight."""

    def stream(self, requests: Iterable[ChatRequest]) -> Iterator[list[tuple[int, Completion]]]: ...

    def close(self) -> None:
        """Release the engines: the build that used them has ended."""
