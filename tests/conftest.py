"""Shared fixtures: small valid samples the tests build themselves."""

import pytest

from lettuce_build.schema import HallucinationSample, Span


def _samples() -> list[HallucinationSample]:
    answer = "Install with `pip install lettuce` and run 🥬 `lettuce serve --port 8080`."
    start = answer.index("8080")
    hallucinated = HallucinationSample(
        prompt="Context:\n...\nQuestion: How do I run it?",
        context="Run `lettuce serve --port 8000` after installing.",
        question="How do I run it?",
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
