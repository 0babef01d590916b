"""What requests cost in dollars, and what a request will cost before it is sent.

One `Pricing` is made per build from ``--price-per-mtok IN/OUT`` and ``--batch-discount``; the
summary, manifest, card, the dry run and ``--max-cost`` all price tokens through it. A request
not yet sent is estimated as `estimated_tokens` says: its prompt's characters over
`CHARS_PER_TOKEN`, and its ``max_tokens`` in full (an upper bound: a cap must not be passed).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.llm.protocol import ChatRequest

#: characters per token of English prose and code for common tokenizers (an estimate)
CHARS_PER_TOKEN = 4.0


class Pricing(BaseModel):
    """Dollars per million prompt and completion tokens; requests answered through a provider's
    Batch API cost ``batch_discount`` of that."""

    model_config = ConfigDict(frozen=True)

    prompt: float = Field(ge=0.0)
    completion: float = Field(ge=0.0)
    batch_discount: float = Field(default=0.5, gt=0.0, le=1.0)

    def dollars(self, prompt_tokens: int, completion_tokens: int, *, batched: bool = False) -> float:
        live = prompt_tokens / 1e6 * self.prompt + completion_tokens / 1e6 * self.completion
        return live * self.batch_discount if batched else live

    def text(self) -> str:
        return f"${self.prompt:g}/${self.completion:g} per million tokens in/out"


def estimated_tokens(request: ChatRequest) -> tuple[int, int]:
    """(prompt, completion) tokens a request will use at most, by estimate: its rendered
    characters over `CHARS_PER_TOKEN`, and its ``max_tokens`` (a scoring request: one per
    continuation, which is all prefill)."""
    chars = sum(len(m.content) for m in request.messages)
    if calls := len(request.continuations):  # each call sends the messages and its continuation
        scored = sum(len(prefix) + len(text) for prefix, text in request.continuations)
        return round((chars * calls + scored) / CHARS_PER_TOKEN), calls
    return round(chars / CHARS_PER_TOKEN), request.max_tokens
