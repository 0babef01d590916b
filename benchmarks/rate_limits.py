"""``--rpm`` under a burst, measured at the server, against the same burst with no limit; and what
the limiter costs the CPU per request, next to what the backend's own work per request costs.

    python benchmarks/rate_limits.py [REQUESTS] [RPM]     # defaults: 300 requests at 3000 rpm

A loopback chat server answers at once and records when each request arrived; the backend sends
every request in one call with 32 in flight, as a build's pass does.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.llm.rate_limits import RateLimiter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's loopback server
from tests.support.openai_server import Answer, serve_http  # noqa: E402

BODY = json.dumps(
    {
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
).encode()


def burst(n: int, rpm: int | None) -> tuple[float, int, float]:
    """(seconds from first to last arrival, most arrivals in any one second, CPU seconds)."""
    arrivals: list[float] = []

    def handle(method: str, path: str, headers: object, body: bytes) -> Answer:
        arrivals.append(time.monotonic())
        return 200, "application/json", BODY, {}

    with serve_http(handle) as url:
        backend = OpenAIBackend("m", OpenAIOptions(base_url=url, concurrency=32, rpm=rpm))
        requests = [ChatRequest.of(None, f"request {i}", max_tokens=8) for i in range(n)]
        cpu = time.process_time()
        backend.generate(requests)
        cpu = time.process_time() - cpu
    arrivals.sort()
    busiest = max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)
    return arrivals[-1] - arrivals[0], busiest, cpu


def limiter_cost(n: int = 100_000) -> float:
    """Seconds of CPU per request for the limiter's own bookkeeping (reserve, observe, settle)."""
    limiter = RateLimiter(rpm=10**9, tpm=10**12)
    headers = {"x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-requests": "120ms"}
    started = time.process_time()
    for _ in range(n):
        limiter.reserve(500)
        limiter.observe(headers)
        limiter.settle(500, 300)
    return (time.process_time() - started) / n


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rpm = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rate = rpm / 60
    free_span, free_busiest, free_cpu = burst(n, None)
    span, busiest, cpu = burst(n, rpm)
    burst_size = max(1, round(rate))
    expected = (n - burst_size) / rate
    print(f"{n} requests, 32 in flight, --rpm {rpm} ({rate:g} a second, a burst of {burst_size})")
    print(f"{'':24}{'span s':>9}{'req/s':>9}{'busiest 1 s':>13}{'CPU ms/req':>12}")
    for name, s, b, c in (
        ("no limit (baseline)", free_span, free_busiest, free_cpu),
        ("--rpm", span, busiest, cpu),
    ):
        print(f"{name:24}{s:>9.2f}{(n - 1) / s if s else float('inf'):>9.1f}{b:>13}{c / n * 1e3:>12.3f}")
    print(
        f"after the burst: {(n - burst_size) / span:.1f} requests a second asked {rate:g} "
        f"(span {span:.2f} s, expected {expected:.2f} s)"
    )
    print(f"busiest second: {busiest}, at most burst + rate = {burst_size + round(rate)} allowed")
    per = limiter_cost()
    print(
        f"limiter bookkeeping: {per * 1e6:.2f} us of CPU per request, "
        f"{per / (free_cpu / n):.4f} of the backend's own CPU per request ({free_cpu / n * 1e3:.3f} ms)"
    )


if __name__ == "__main__":
    main()
