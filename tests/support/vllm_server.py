"""A real OpenAI-compatible server on loopback: vLLM's CPU build serving smollm2-135m (tests only)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest


@contextmanager
def vllm_openai_server() -> Iterator[str]:
    """Yield the base URL (``.../v1``) of the server, started here and stopped after."""
    from lettuce_build.llm.embedded import embedded_model_path
    from lettuce_build.llm.vllm_backend import cpu_dtype

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # vLLM binds its CPU worker to one core and keeps the other for its scheduler; bound to every
    # core it answers the same requests in 0.57x the time (benchmarks/server_threads.py)
    cores = f"0-{(os.cpu_count() or 1) - 1}"
    env = {
        **os.environ,
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_LOGGING_LEVEL": "WARNING",
        "VLLM_CPU_OMP_THREADS_BIND": os.environ.get("VLLM_CPU_OMP_THREADS_BIND", cores),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(embedded_model_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--enforce-eager",
            "--served-model-name",
            "smollm2-135m",
            "--max-model-len",
            "4096",
            "--max-num-batched-tokens",
            "32768",
            "--dtype",
            cpu_dtype(),
            # a prompt whose prefix another request left cached is computed in other chunks, and
            # on a CPU that can change a sampled token: without the cache, the same request is
            # answered the same whatever was asked before it (a batch and a live build compare)
            "--no-enable-prefix-caching",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"vLLM server exited with {process.returncode}: {process.stderr.read()[-2000:]!r}")
        try:
            if httpx.get(f"{base}/v1/models", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(1)
    else:
        process.kill()
        pytest.fail("vLLM server did not come up in 300 s")
    try:
        yield f"{base}/v1"
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
