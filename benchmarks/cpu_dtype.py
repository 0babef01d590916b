"""The CPU engine's dtype: generated tokens/s of smollm2-135m with float32 (the baseline) and
with bfloat16, each in an engine of its own (one after the other, in a subprocess each), on
the same requests. bfloat16 runs only where this processor computes it natively (AVX512-BF16
or AMX), since elsewhere torch emulates it and the engine never picks it; `--emulated` runs it
anyway, to measure what the emulation costs.

    python benchmarks/cpu_dtype.py [N] [--emulated]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from lettuce_build.llm.vllm_backend import native_bf16

QUESTIONS = [
    "Explain in three sentences what a package manager does.",
    "Describe how a hash table handles collisions.",
    "What does a compiler's lexer do?",
    "Why do databases use write-ahead logs?",
]


def run_one(dtype: str, n: int) -> dict[str, float]:
    from lettuce_build.llm.protocol import ChatMessage, ChatRequest
    from lettuce_build.llm.settings import EngineSettings
    from lettuce_build.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("smollm2-135m", EngineSettings(dtype=dtype))
    started = time.perf_counter()
    backend.engine()
    load = time.perf_counter() - started
    requests = [
        ChatRequest(
            messages=(ChatMessage(role="user", content=QUESTIONS[i % len(QUESTIONS)]),),
            temperature=0.7,
            max_tokens=128,
            seed=i,
        )
        for i in range(n)
    ]
    started = time.perf_counter()
    completions = backend.generate(requests)
    seconds = time.perf_counter() - started
    tokens = sum(c.completion_tokens for c in completions)
    return {"load": load, "seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / seconds}


def measure(dtype: str, n: int) -> dict[str, float]:
    code = f"import json, cpu_dtype; print(json.dumps(cpu_dtype.run_one({dtype!r}, {n})))"
    here = __file__.rsplit("/", 1)[0]
    done = subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    n = int(next((a for a in sys.argv[1:] if a.isdigit()), 32))
    emulated = "--emulated" in sys.argv
    baseline = measure("float32", n)
    print(
        f"float32:  {baseline['tokens_per_s']:.0f} tokens/s ({baseline['tokens']:.0f} tokens in "
        f"{baseline['seconds']:.1f} s; engine load {baseline['load']:.1f} s) 1.00x"
    )
    if not native_bf16() and not emulated:
        print("bfloat16: skipped: this processor has neither AVX512-BF16 nor AMX, so torch emulates it")
        return
    other = measure("bfloat16", n)
    kind = "native" if native_bf16() else "emulated"
    print(
        f"bfloat16 ({kind}): {other['tokens_per_s']:.0f} tokens/s ({other['tokens']:.0f} tokens in "
        f"{other['seconds']:.1f} s; engine load {other['load']:.1f} s) "
        f"{other['tokens_per_s'] / baseline['tokens_per_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
