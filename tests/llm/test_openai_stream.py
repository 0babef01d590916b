"""An OpenAI-compatible endpoint answers a pass as a stream: each answer comes back as soon as the
server sends it, so the runner commits it at once and a killed build loses only what was in
flight."""

import threading

from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
from lettuce_build.llm.protocol import ChatRequest

from ..support.openai_server import serve


def test_each_answer_comes_back_as_it_arrives_not_with_the_slowest_of_its_batch():
    release = threading.Event()

    def respond(request: ChatRequest) -> str:
        asked = request.messages[-1].content
        if asked == "slow":
            release.wait(10)
        return f"answer to {asked}"

    requests = [ChatRequest.of(None, "slow"), *(ChatRequest.of(None, f"fast {i}") for i in range(5))]
    with serve(respond) as url:
        backend = OpenAIBackend("scripted", OpenAIOptions(base_url=url, concurrency=4))
        stream = backend.stream(iter(requests))
        first = next(stream)
        assert first and all(index != 0 for index, _ in first)  # the slow one holds nothing back
        release.set()
        answered = dict(pair for chunk in [first, *stream] for pair in chunk)
    assert sorted(answered) == list(range(6))
    assert answered[0].text == "answer to slow" and answered[3].text == "answer to fast 2"


def test_a_stream_takes_requests_only_as_the_concurrency_has_room():
    taken: list[int] = []

    def requests():
        for i in range(50):
            taken.append(i)
            yield ChatRequest.of(None, f"question {i}")

    with serve(lambda request: "ok") as url:
        backend = OpenAIBackend("scripted", OpenAIOptions(base_url=url, concurrency=2))
        stream = backend.stream(requests())
        next(stream)
        assert len(taken) <= 2 * 2 + 2  # twice the concurrency in flight, and what was answered
        rest = sum(len(chunk) for chunk in stream)
    assert len(taken) == 50 and rest >= 1
