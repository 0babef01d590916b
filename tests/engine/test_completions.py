"""Where a stage's answers come from: a streaming backend (engines on a cluster) is handed a
pass's misses as it takes them, and the pass then finds every answer in the cache."""

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from datasets import Dataset

from lettuce_build.engine.completions import Completions, StreamingCompletions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import ChatRequest, Completion

from ..support.scripted import ScriptedBackend
from ..support.stages import DoubleStage, correct


class CountingStage(DoubleStage):
    """Counts the requests it renders."""

    def __init__(self) -> None:
        super().__init__()
        self.rendered = 0

    def render(self, item: dict[str, Any]) -> ChatRequest:
        self.rendered += 1
        return super().render(item)


class ChunkedStream(ScriptedBackend):
    """A scripted model behind `stream`: it takes ``chunk`` requests at a time from the pass it
    is given and answers them; notes how many requests the stage had rendered by each answer."""

    def __init__(self, stage: CountingStage, chunk: int) -> None:
        super().__init__(correct)
        self.stage = stage
        self.chunk = chunk
        self.rendered_at_answers: list[int] = []

    def stream(self, requests: Iterable[ChatRequest]) -> Iterator[list[tuple[int, Completion]]]:
        taken = iter(requests)
        position = 0
        while batch := list(itertools.islice(taken, self.chunk)):
            self.rendered_at_answers.append(self.stage.rendered)
            yield [(position + i, answer) for i, answer in enumerate(self.generate(batch))]
            position += len(batch)

    def close(self) -> None:
        pass


def numbers(values: list[int]) -> Dataset:
    return Dataset.from_list([{"key": f"item-{i:04d}", "n": n} for i, n in enumerate(values)])


def streamed(tmp_path, dataset, chunk=4, batch_size=8):
    stage = CountingStage()
    backend = ChunkedStream(stage, chunk)
    cache = RequestCache(tmp_path / "cache.sqlite")
    result = Runner(StreamingCompletions(backend, cache), batch_size=batch_size).run(dataset, stage)
    return result, backend, cache


def test_a_pass_is_rendered_as_the_backend_takes_it_not_before(tmp_path):
    result, backend, _ = streamed(tmp_path, numbers(list(range(100))), chunk=4, batch_size=8)
    # the first answers came back when one batch of the pass (8 requests) had been rendered:
    # the driver never holds the whole pass
    assert backend.rendered_at_answers[0] <= 8
    assert len(backend.rendered_at_answers) == 25
    assert result.ok.num_rows == 100 and not result.failures
    assert result.stats.backend_calls == 1 and result.stats.cache_misses == 100


def test_a_streamed_pass_writes_the_rows_a_batch_by_batch_pass_writes(tmp_path):
    dataset = numbers(list(range(30)))
    result, _, _ = streamed(tmp_path / "streamed", dataset)
    cache = RequestCache(tmp_path / "plain" / "cache.sqlite")
    plain = Runner(Completions(ScriptedBackend(correct), cache), batch_size=8).run(dataset, DoubleStage())
    assert result.ok.to_list() == plain.ok.to_list()


def test_requests_the_cache_holds_are_not_streamed_again(tmp_path):
    streamed(tmp_path, numbers(list(range(10))))[2].close()
    again, backend, _ = streamed(tmp_path, numbers(list(range(12))))
    assert len(backend.requests) == 2  # items 10 and 11
    assert again.stats.cache_hits == 10 and again.stats.cache_misses == 2
    assert again.ok.num_rows == 12
