"""A stage's request for an item as the runner sends it: with the attempt's own seed, the stage's
JSON schema and the item's language."""

from __future__ import annotations

from typing import Any

from lettuce_build.core.languages import NAMES
from lettuce_build.core.seeding import number
from lettuce_build.engine.stage import Stage, item_language
from lettuce_build.llm.protocol import ChatRequest


def request_seed(build_seed: int, key: str, attempt: int) -> int:
    return number(build_seed, key, attempt, size=4) & 0x7FFFFFFF


def seeded_request(
    stage: Stage, item: dict[str, Any], *, build_seed: int, attempt: int, schema: dict[str, Any] | None
) -> ChatRequest:
    """The stage's request for an item, with the attempt's own seed and the stage's JSON schema."""
    seed = request_seed(build_seed, item["key"], attempt)
    schema = stage.item_schema(item) or schema
    request = stage.render(item)
    if (language := item_language(item)) != "en":  # an English build's requests stay as they were
        request = request.written_in(NAMES.get(language, f"the language of ISO 639-1 code {language!r}"))
    if schema is None:
        return request.with_params(seed=seed)
    return request.with_params(seed=seed, json_schema=schema)  # one copy of the request, not two
