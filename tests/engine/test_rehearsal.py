"""A rehearsal (a dry run): the real runner over completions that serve the cache, count what it
lacks and send nothing; the stage's columns get stand-ins of their types."""

from typing import Any

from datasets import Dataset, List, Value

from lettuce_build.engine.completions import Completions
from lettuce_build.engine.rehearsal import FILLER, Rehearsal, stand_in_outputs
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.stage import Sampling, Stage
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.pricing import CHARS_PER_TOKEN
from lettuce_build.stages.plausibility import PlausibilityCheck

from ..support.scripted import ScriptedBackend
from ..support.stages import DoubleStage, correct


def items(n: int) -> Dataset:
    return Dataset.from_list([{"key": f"item-{i:04d}", "n": i} for i in range(n)])


def test_cached_answers_are_served_and_the_rest_counted_never_sent_nor_written(tmp_path):
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        Runner(Completions(ScriptedBackend(correct), cache)).run(items(3), DoubleStage())
        before = cache.stats()
    finally:
        cache.close()
    backend = ScriptedBackend(correct)
    looked_up = RequestCache(tmp_path / "cache.sqlite", read_only=True)
    try:
        result = Runner(Rehearsal(backend, looked_up)).run(items(5), DoubleStage())
    finally:
        looked_up.close()
    assert backend.calls == []
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:  # not an answer, nor a count of hits, was written
        assert cache.stats().model_dump(exclude={"size_bytes"}) == before.model_dump(exclude={"size_bytes"})
    finally:
        cache.close()
    stats = result.stats
    assert (stats.cache_hits, stats.cache_misses, stats.ok, stats.failed) == (3, 2, 5, 0)
    assert stats.completion_tokens == 2 * 16  # each miss's max_tokens: at most
    assert stats.prompt_tokens > 0
    # the cached items carry their answers, the others a stand-in of the column's type
    assert result.ok["doubled"][:] == [0, 2, 4, 0, 0]


class Writes(Stage):
    name = "writes"
    prompt_version = "writes-v1"
    sampling = Sampling(max_tokens=50)
    outputs = {
        "answer": Value("string"),
        "cut": Value("bool"),
        "labels": List({"start": Value("int32"), "category": Value("string")}),
    }

    def render(self, item: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        raise NotImplementedError


def test_a_stand_in_is_of_each_columns_type_made_of_the_items_context_and_a_check_gives_no_verdict():
    outputs = stand_in_outputs(Writes(), {"context": "Version 2.1 of Acme ships 14 plugins. "})
    chars = round(50 * CHARS_PER_TOKEN / 2)  # about half what the stage may write
    assert (
        outputs["answer"].startswith("Version 2.1 of Acme ships 14 plugins. Version")
        and len(outputs["answer"]) == chars
    )
    assert outputs["cut"] is False
    assert outputs["labels"] == [{"start": 0, "category": outputs["answer"]}]  # one, so checks apply
    assert stand_in_outputs(Writes(), {})["answer"].startswith(FILLER)
    assert stand_in_outputs(PlausibilityCheck(), {"context": "x"}) == {"judgement": None}
