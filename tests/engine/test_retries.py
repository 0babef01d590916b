"""A retried item carries what its earlier attempts were refused for, so that a stage can ask
again without what a check refused; the finished rows carry nothing of it."""

from typing import Any

from datasets import Dataset

from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import ChatRequest

from ..support.scripted import ScriptedBackend
from ..support.stages import DoubleStage, number_of


class RememberingStage(DoubleStage):
    """Asks with the details of its earlier refusals, as a menu stage leaves out a refused pick."""

    name = "remembering"

    def render(self, item: dict[str, Any]) -> ChatRequest:
        refused = "; ".join(self.earlier(item))
        return ChatRequest.of("Double the number.", f"refused: [{refused}] number {item['n']}", max_tokens=16)


def test_a_retry_is_asked_with_what_its_earlier_attempts_were_refused_for(tmp_path):
    asked: list[str] = []

    def wrong_for_odd_numbers_at_first(request: ChatRequest) -> str:
        asked.append(request.messages[-1].content)
        n = number_of(request)
        first = "refused: []" in request.messages[-1].content
        return f'{{"value": {0 if first and n % 2 else 2 * n}}}'

    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        dataset = Dataset.from_list([{"key": f"item-{i}", "n": i} for i in range(4)])
        runner = Runner(Completions(ScriptedBackend(wrong_for_odd_numbers_at_first), cache), batch_size=8)
        result = runner.run(dataset, RememberingStage())
    finally:
        cache.close()
    assert result.ok["doubled"] == [0, 2, 4, 6] and len(result.failures) == 0
    assert "refused: [expected 2, got 0] number 1" in asked
    assert "refused: [expected 6, got 0] number 3" in asked
    assert "_earlier" not in result.ok.column_names  # a finished row carries no attempt's columns
