"""``--rpm``/``--tpm`` as token buckets shared by every request in flight, and the provider's
``x-ratelimit-*`` headers, which pause every request until their reset time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import pytest

from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.llm.rate_limits import RateLimiter, reset_seconds
from tests.support.openai_server import Answer, serve_http


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_per_minute_allow_a_seconds_worth_at_once_then_one_at_the_rate():
    clock = Clock()
    limiter = RateLimiter(rpm=120, tpm=None, clock=clock)  # two a second
    waits = [limiter.reserve(10) for _ in range(5)]
    assert waits == [0.0, 0.0, 0.5, 1.0, 1.5]
    clock.now += 10  # idle: the bucket refills to one second's worth, no more
    assert [limiter.reserve(10) for _ in range(3)] == [0.0, 0.0, 0.5]


def test_a_request_larger_than_the_token_bucket_waits_for_its_whole_size():
    clock = Clock()
    limiter = RateLimiter(rpm=None, tpm=6000, clock=clock)  # 100 tokens a second
    assert limiter.reserve(100) == 0.0
    assert limiter.reserve(300) == pytest.approx(3.0)
    limiter.settle(300, 100)  # it used a third of its estimate: the rest comes back
    assert limiter.reserve(1) == pytest.approx(1.01)


def test_the_providers_headers_pause_every_request_until_their_reset():
    clock = Clock()
    limiter = RateLimiter(rpm=None, tpm=None, clock=clock)
    assert limiter.reserve(10) == 0.0
    limiter.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"})
    assert limiter.reserve(10) == 90.0 and limiter.pause_left() == 90.0
    limiter.observe({"x-ratelimit-remaining-tokens": "12", "x-ratelimit-reset-tokens": "5s"})
    clock.now += 90
    assert limiter.reserve(10) == 0.0


def test_reset_times_are_read_in_the_providers_formats():
    assert reset_seconds("6m0s") == 360.0
    assert reset_seconds("20ms") == pytest.approx(0.02)
    assert reset_seconds("1h2m3.5s") == pytest.approx(3723.5)
    assert reset_seconds("2.5") == 2.5
    assert reset_seconds("soon") == 0.0


BODY = json.dumps(
    {
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
).encode()


@contextmanager
def recording_server(headers_for_first: dict[str, str] | None = None) -> Iterator[tuple[str, list[float]]]:
    """A chat server on loopback that records when each request arrived."""
    arrivals: list[float] = []
    lock = threading.Lock()

    def handle(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
        with lock:
            arrivals.append(time.monotonic())
            first = len(arrivals) == 1
        return 200, "application/json", BODY, (headers_for_first or {}) if first else {}

    with serve_http(handle) as url:
        yield url, arrivals


def requests(n: int) -> list[ChatRequest]:
    return [ChatRequest.of(None, f"request {i}", max_tokens=8) for i in range(n)]


def test_a_burst_of_requests_keeps_to_the_rate_measured_at_the_server():
    with recording_server() as (url, arrivals):
        backend = OpenAIBackend("m", OpenAIOptions(base_url=url, concurrency=16, rpm=300))  # 5 a second
        answers = backend.generate(requests(20))
    assert all(a.answered for a in answers) and len(arrivals) == 20
    arrivals.sort()
    # one second's worth at once, then one every 0.2 s: 15 more take 3 s
    span = arrivals[-1] - arrivals[0]
    assert span >= 2.8 and (len(arrivals) - 5) / span <= 5.3
    # any second holds at most the burst and a second of the rate (and one for timing)
    busiest = max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)
    assert busiest <= 11


def test_the_rate_holds_across_calls_of_one_build():
    with recording_server() as (url, arrivals):
        backend = OpenAIBackend("m", OpenAIOptions(base_url=url, concurrency=4, rpm=600))  # 10 a second
        for _ in range(3):
            backend.generate(requests(10))
    arrivals.sort()
    assert arrivals[-1] - arrivals[0] >= 1.8  # 30 requests: 10 at once, 20 more at 10 a second


def test_a_used_up_limit_in_the_headers_holds_the_next_request_back():
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}
    with recording_server(headers) as (url, arrivals):
        backend = OpenAIBackend("m", OpenAIOptions(base_url=url, concurrency=1))  # no --rpm at all
        backend.generate(requests(2))
    assert arrivals[1] - arrivals[0] >= 0.9
