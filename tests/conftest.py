"""Shared fixtures: small valid samples the tests build themselves."""

import pytest

from lettuce_build.schema import HallucinationSample, Span, default_prompt


def _samples() -> list[HallucinationSample]:
    answer = "Install with `pip install lettuce` and run 🥬 `lettuce serve --port 8080`."
    start = answer.index("8080")
    context, question = "Run `lettuce serve --port 8000` after installing.", "How do I run it?"
    hallucinated = HallucinationSample(
        prompt=default_prompt(context, question),
        context=context,
        question=question,
        answer=answer,
        labels=[
            Span(
                start=start,
                end=start + 4,
                text="8080",
                label="NUMERICAL",
                category="contradiction",
                subcategory="numerical",
            )
        ],
        split="train",
        task_type="qa",
        dataset="lettucedetect-readme",
        context_modality="markdown",
        category="contradiction",
        subcategory="numerical",
        metadata={"doc_id": "acme/lettuce", "chunk": 0},
    )
    clean = hallucinated.model_copy(
        update={
            "labels": [],
            "category": None,
            "subcategory": None,
            "split": "test",
            "answer": "Run `lettuce serve --port 8000`.",
            "metadata": {"doc_id": "acme/other"},
        }
    )
    return [hallucinated, clean]


@pytest.fixture
def samples() -> list[HallucinationSample]:
    return _samples()


def _cpu_flags() -> set[str]:
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return set()
    return {
        flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":")[1].split()
    }


NO_AVX512 = "avx512f" not in _cpu_flags()
NO_AVX512_REASON = "vLLM's CPU build needs AVX-512 and this processor has no avx512f flag"


@pytest.fixture(scope="session")
def embedded_backend():
    """vLLM's CPU build serving smollm2-135m, started once per test session (~15-40 s)."""
    if NO_AVX512:
        pytest.skip(NO_AVX512_REASON)
    from lettuce_build.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("smollm2-135m")
    backend.engine()
    return backend
