"""A rehearsal: the real runner over a `Completions` that records what it would send and
answers nothing (`build --dry-run`).

Cached answers are served as in a build, so what the build already has feeds the stages after
it exactly as it would. A request the cache lacks is counted (a miss, its prompt tokens by
estimate and its ``max_tokens`` as completion tokens, an upper bound; a scoring request's are
all prefill) and answered by a stand-in (`STAND_IN`) that the runner never parses: the stage's
columns get stand-in values instead (`stand_in_outputs`), so the stages after it, and the
checks of the stage, render requests of about the size they would.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any

from datasets import Features, List, Value
from datasets import Sequence as SequenceFeature

from lettuce_build.engine.completions import Completions, PassRequests
from lettuce_build.engine.records import StageStats
from lettuce_build.engine.stage import CheckStage, Stage
from lettuce_build.llm.pricing import CHARS_PER_TOKEN, estimated_tokens
from lettuce_build.llm.protocol import ChatRequest, Completion

#: the finish reason of a stand-in: what a rehearsal answers a request the cache lacks
STAND_IN = "stand_in"

#: what stands in where an item has no context to lend its words
FILLER = "lorem ipsum "


class Rehearsal(Completions):
    """Cache hits as in a build; each miss counted, never sent, and answered by a stand-in.
    Nothing is committed (its cache may be opened ``read_only``)."""

    generates = False

    def prefetch(self, prompt_version: str, pass_requests: PassRequests, stats: StageStats) -> Container[str]:
        return set()  # nothing is sent, so no cap is passed

    def ask(
        self, prompt_version: str, keys: Sequence[str], requests: Sequence[ChatRequest], stats: StageStats
    ) -> list[Completion]:
        stand_ins = [_stand_in(request) for request in requests]
        stats.prompt_tokens += sum(answer.prompt_tokens for answer in stand_ins)
        stats.completion_tokens += sum(answer.completion_tokens for answer in stand_ins)
        return stand_ins


def _stand_in(request: ChatRequest) -> Completion:
    prompt, completion = estimated_tokens(request)
    scoring = bool(request.continuations)  # prefills only: the model writes nothing
    return Completion(
        text="", finish_reason=STAND_IN, prompt_tokens=prompt, completion_tokens=0 if scoring else completion
    )


def stand_in_outputs(stage: Stage, item: dict[str, Any]) -> dict[str, Any]:
    """The stage's columns for an item whose answer a rehearsal stood in for: texts of about half
    the stage's ``max_tokens``, made of the item's own context (a rule that looks for names
    and numbers in an answer finds them as it would), or a copy of the input column the stage
    knows (`Stage.stand_in`); one element in each list, so that a check of the stage
    applies as it would; a check itself gives no verdict."""
    if isinstance(stage, CheckStage):
        return dict.fromkeys(stage.outputs)
    chars = max(1, round(stage.sampling.max_tokens * CHARS_PER_TOKEN / 2))
    words = str(item.get("context") or "") or FILLER
    text = (words * (chars // len(words) + 1))[:chars]
    known = stage.stand_in(item)
    return {name: known.get(name, _value(feature, text)) for name, feature in Features(stage.outputs).items()}


def _value(feature: Any, text: str) -> Any:
    """A value of ``feature``'s type: ``text`` for a string, one element for a list."""
    if isinstance(feature, dict):
        return {name: _value(inner, text) for name, inner in feature.items()}
    if isinstance(feature, (List, SequenceFeature)):
        return [_value(feature.feature, text)]
    if isinstance(feature, list):
        return [_value(feature[0], text)]
    if isinstance(feature, Value) and feature.dtype in ("string", "large_string"):
        return text
    if isinstance(feature, Value) and feature.dtype == "bool":
        return False
    return 0
