"""What a raw completion must be before a stage parses it: answered by the provider, within its
max_tokens, free of characters no published text may hold (core/characters.py), not cut, and the
JSON the stage asked for. Every way it is not is a `ParseFailure` with a stable reason."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from lettuce_build.core.characters import invalid_character, invalid_in
from lettuce_build.engine.stage import FIELD_LENGTH, CutText, ParseFailure, Stage
from lettuce_build.llm.protocol import PROMPT_TOO_LONG, Completion

#: more characters than this per token of max_tokens is an answer past its limit, whatever the
#: server says of its token count (the longest tokens of common vocabularies are runs of 16 or
#: so spaces; no answer averages more)
MAX_CHARS_PER_TOKEN = 24


def check_response(stage: Stage, completion: Completion) -> Any:
    """Turn a raw completion into what `stage.parse` takes, or raise `ParseFailure`: what the
    provider did not answer, what is longer than its max_tokens allows, what holds a character
    no published text may (core/characters.py), what is cut or not the JSON asked for."""
    text = completion.text
    if completion.finish_reason == PROMPT_TOO_LONG:
        detail = f"{completion.prompt_tokens} prompt tokens do not fit the model's context"
        raise ParseFailure("prompt_too_long", detail, retry=False)
    if not completion.answered:
        # the provider's failure is the item's, not the build's: a re-run asks again (it was
        # never cached), so this run does not spend another attempt on it
        raise ParseFailure(str(completion.finish_reason), completion.text, retry=False)
    limit = stage.sampling.max_tokens
    if completion.completion_tokens > limit or len(text) > limit * MAX_CHARS_PER_TOKEN:
        # a server that ignores max_tokens (and says "stop") must not hand a stage a million
        # characters: the answer is longer than the request allowed
        detail = f"{len(text):,} characters, {completion.completion_tokens} tokens for max_tokens {limit}"
        raise ParseFailure("too_long", detail)
    if not text.strip() and completion.reasoning:
        detail = f"the model only thought ({len(completion.reasoning)} characters), it gave no answer"
        raise ParseFailure("thinking_only", detail)
    if completion.finish_reason == "length":
        kept = stage.salvage(text) if stage.response_model is None else None
        if not kept or not kept.strip():
            raise ParseFailure("truncated", "the response hit max_tokens (finish_reason == 'length')")
        text = CutText(kept)
    if not text.strip():
        raise ParseFailure("empty_output", "the model returned no text")
    if stage.response_model is None:
        if problem := invalid_character(text):
            raise ParseFailure("invalid_characters", problem)
        return text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseFailure("malformed_json", f"{err.msg} at position {err.pos}") from err
    # checked as decoded: JSON escapes ("\u202e", "\ud800") are characters only now
    if problem := invalid_in(data):
        raise ParseFailure("invalid_characters", problem)
    try:
        return stage.response_model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        reason = FIELD_LENGTH if first["type"] == FIELD_LENGTH else "schema_mismatch"
        raise ParseFailure(reason, f"{where}: {first['msg']}") from err
