"""vLLM's OpenAI-compatible server on a CPU: the worker's threads bound as vLLM chooses (one core
of two kept for its scheduler) against bound to every core (``VLLM_CPU_OMP_THREADS_BIND``).

The same requests (16 chat requests over one real README, 8 at a time, 128 tokens each, seeded)
are sent to a server started each way; it prints the seconds of each and the ratio.

    python benchmarks/server_threads.py
"""

from __future__ import annotations

import concurrent.futures
import os
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's server, below
sys.path.insert(0, str(Path(__file__).resolve().parent))
from prose_quality import sixteen_readmes  # noqa: E402

from tests.support.vllm_server import vllm_openai_server  # noqa: E402

REQUESTS = 16
CONCURRENCY = 8


def ask(url: str, text: str, seed: int) -> int:
    body = {
        "model": "smollm2-135m",
        "messages": [{"role": "user", "content": f"{text[:3000]}\n\nWhat does this project do?"}],
        "max_tokens": 128,
        "seed": seed,
        "temperature": 0.7,
    }
    response = httpx.post(f"{url}/chat/completions", json=body, timeout=600)
    response.raise_for_status()
    return int(response.json()["usage"]["completion_tokens"])


def timed(texts: list[str], bind: str) -> tuple[float, int]:
    os.environ["VLLM_CPU_OMP_THREADS_BIND"] = bind  # the server passes it on
    with vllm_openai_server() as url:
        ask(url, texts[0], 0)  # warm
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(CONCURRENCY) as pool:
            tokens = sum(pool.map(lambda i: ask(url, texts[i % len(texts)], i), range(REQUESTS)))
        return time.perf_counter() - started, tokens


def main() -> None:
    texts = [p.read_text() for p in sorted(sixteen_readmes(Path("/tmp/server-threads/readmes")).glob("*.md"))]
    cores = f"0-{os.cpu_count() - 1}" if (os.cpu_count() or 1) > 1 else "0"
    default, default_tokens = timed(texts, "auto")  # vLLM's own default
    every, every_tokens = timed(texts, cores)
    print(f"{REQUESTS} requests, {CONCURRENCY} at a time, on {os.cpu_count()} cores")
    print(f"vLLM's binding (one core for the scheduler): {default:.1f} s, {default_tokens} tokens")
    print(f"every core ({cores}):                        {every:.1f} s, {every_tokens} tokens")
    print(f"every core / vLLM's binding: {every / default:.2f}x the time")


if __name__ == "__main__":
    main()
