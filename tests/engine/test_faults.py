"""What a stage makes of answers that are no answers: a provider's refusal or failure is a
failure row of its item (never cached, the batch's other answers committed first), too many of
them stop the build after committing; text past max_tokens or holding characters no published
text may hold fails its item; the cache keeps whatever the model wrote, lone surrogates included."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset

from lettuce_build.core.errors import ProviderFailuresError
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.cache import RequestCache, answered_totals
from lettuce_build.llm.protocol import PROVIDER_ERROR, PROVIDER_REFUSED, ChatRequest, Completion

from ..support.scripted import ScriptedBackend
from ..support.stages import DoubleStage, correct, number_of


def numbers(count: int) -> Dataset:
    return Dataset.from_list([{"key": f"item-{i:04d}", "n": i} for i in range(count)])


def refusing(*refused: int, reason: str = PROVIDER_REFUSED):
    def respond(request: ChatRequest) -> Completion | str:
        if number_of(request) in refused:
            return Completion(text="HTTP 400 from http://x/v1: content filter", finish_reason=reason)
        return correct(request)

    return respond


def run(tmp_path, backend, count: int, **limits) -> tuple:
    cache = RequestCache(tmp_path / "cache.sqlite")
    result = Runner(Completions(backend, cache, **limits), batch_size=8).run(numbers(count), DoubleStage())
    return result, cache


def test_a_refused_request_is_a_failure_row_of_its_item_and_the_rest_are_answered(tmp_path):
    result, cache = run(tmp_path, ScriptedBackend(refusing(3)), 20)
    assert len(result.ok) == 19
    [failure] = result.failures
    assert (failure.key, failure.reason, failure.retryable) == ("item-0003", "provider_refused", False)
    assert "content filter" in failure.detail
    # every answer but the refusal was committed; the refusal was not cached
    assert cache.stats().rows == 19


def test_a_re_run_asks_only_what_the_provider_did_not_answer(tmp_path):
    run(tmp_path, ScriptedBackend(refusing(3, 7, reason=PROVIDER_ERROR)), 20)
    again = ScriptedBackend(correct)
    result, _ = run(tmp_path, again, 20)
    assert sorted(number_of(r) for r in again.requests) == [3, 7]
    assert len(result.ok) == 20 and len(result.failures) == 0


def test_too_many_provider_failures_stop_the_build_after_committing(tmp_path):
    dead = ScriptedBackend(refusing(*range(0, 40, 2)))  # every other request refused
    with pytest.raises(ProviderFailuresError, match="run the same command again") as raised:
        run(tmp_path, dead, 40, max_provider_failures=0.1)
    assert "provider_refused" in str(raised.value) and "--max-provider-failures" in str(raised.value)
    # what was answered before it stopped is in the cache
    assert answered_totals(tmp_path / "cache.sqlite")[0] >= 4


def test_a_few_failures_in_a_large_run_do_not_stop_it(tmp_path):
    result, _ = run(tmp_path, ScriptedBackend(refusing(*range(9))), 200, max_provider_failures=0.01)
    assert len(result.failures) == 9 and len(result.ok) == 191


def test_text_past_max_tokens_is_too_long_whatever_the_server_says(tmp_path):
    def flood(request: ChatRequest) -> Completion | str:
        if number_of(request) == 2:
            return Completion(text="x" * 100_000, finish_reason="stop", completion_tokens=3)
        return correct(request)

    result, _ = run(tmp_path, ScriptedBackend(flood), 5)
    [failure] = result.failures
    assert failure.reason == "too_long" and "100,000 characters" in failure.detail


@pytest.mark.parametrize(
    "inserted",
    ["\ud800", "\x00", "\x1b[2J", "\x85", "\u202e", "\u2066", "\u200b", "\ufeff"],
    ids=["surrogate", "nul", "esc", "c1", "rlo", "isolate", "zwsp", "bom"],
)
def test_a_character_no_published_text_may_hold_fails_the_item_and_is_retried(tmp_path, inserted):
    def corrupt(request: ChatRequest) -> str:
        value = 2 * number_of(request)
        if value != 4:
            return correct(request)
        # a string field the stage ignores still holds the character: the response is refused
        return json.dumps({"value": value, "note": inserted + "x"})  # escaped, as JSON travels

    backend = ScriptedBackend(corrupt)
    result, cache = run(tmp_path, backend, 4)
    [failure] = result.failures
    assert failure.reason == "invalid_characters" and failure.key == "item-0002"
    assert sum(number_of(r) == 2 for r in backend.requests) == DoubleStage.max_attempts
    # the cache kept what the model wrote, exactly, the lone surrogate included
    stored = [c.text for c in cache.get_many(cache_keys(cache)).values() if "note" in c.text]
    assert stored and all(json.loads(text)["note"] == inserted + "x" for text in stored)


def cache_keys(cache: RequestCache) -> list[str]:
    return [key for (key,) in cache._db.execute("SELECT key FROM responses")]


def test_the_cache_stores_a_lone_surrogate_losslessly(tmp_path):
    cache = RequestCache(tmp_path / "cache.sqlite")
    written = Completion(text="caf\u00e9 \ud83d half an emoji", reasoning="\udfff", finish_reason="stop")
    cache.put_many("m", "v1", [("k", written)])
    cache.close()
    [read] = RequestCache(tmp_path / "cache.sqlite").get_many(["k"]).values()
    assert (read.text, read.reasoning) == (written.text, written.reasoning)
