"""Shared fixtures: small valid samples the tests build themselves."""

import pytest

from lettuce_build.core.schema import HallucinationSample, Span, default_prompt


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


@pytest.fixture(scope="session")
def embedded_backend():
    """vLLM's CPU build serving smollm2-135m, started once per test session (~15-40 s).

    Starting it is also the probe of whether the real engine runs on this machine at all: a
    test that needs it skips only when it cannot start, and says why.
    """
    from lettuce_build.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("smollm2-135m")
    try:
        backend.engine()
    except Exception as err:  # the engine fails in many ways; the skip names the one seen
        first = (str(err).strip().splitlines() or [""])[0][:200]
        pytest.skip(f"the embedded vLLM engine could not start here: {type(err).__name__}: {first}")
    return backend


@pytest.fixture(scope="session")
def readme_example(tmp_path_factory, embedded_backend):
    """The README's first example, a small readme build on the embedded model, run once for the
    session: the documented commands read it, and the real-engine smoke test checks it. The folder
    it ran in (`out/readme` inside) and the namespace it left."""
    from .support.examples import run_first_example

    work = tmp_path_factory.mktemp("examples")
    return work, run_first_example(work)


@pytest.fixture(scope="session")
def real_engine(embedded_backend) -> None:
    """For tests that start the embedded engine in another process (a server, a Ray actor, a
    notebook): they run wherever it starts in this one."""


@pytest.fixture(scope="session")
def vllm_server(real_engine):
    """A real OpenAI-compatible server on loopback (vLLM's CPU build serving smollm2-135m),
    started once for the modules that use it."""
    from .support.vllm_server import vllm_openai_server

    with vllm_openai_server() as url:
        yield url


@pytest.fixture
def hub_offline(monkeypatch):
    """The Hugging Face Hub unreachable as on a machine without network, at once: a test of
    what a Hub id that cannot be read does waits for no timeout."""
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


#: fixtures that start the embedded engine, a server of it, or a Ray cluster of engines
_ENGINE_FIXTURES = frozenset({"embedded_backend", "real_engine", "vllm_server", "ray_cluster"})
#: modules whose tests start an engine, a server or a browser in a process of their own (a
#: build on the command line, a notebook's kernel, a headless Chromium)
_ENGINE_MODULES = frozenset(
    {
        "tests/core/test_quiet.py",
        "tests/test_notebooks.py",
        "tests/llm/test_cpu_dtype.py",
        "tests/llm/test_ray_pool.py",
        "tests/view/test_review.py",
        "tests/view/test_samples.py",
        "tests/publish/test_lettucedetect_handoff.py",
        "tests/view/test_token_windows.py",
    }
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "engine: starts the real engine, a server or a browser (`make test-fast` leaves it out)"
    )


def pytest_collection_modifyitems(config, items):
    """Mark the tests of the real engine, its server and the browser: `make test-fast` leaves
    them out, and `make test` runs them after the others, one at a time (two engines on two
    cores starve each other), while the others run on three workers."""
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if _ENGINE_FIXTURES & set(item.fixturenames) or module in _ENGINE_MODULES:
            item.add_marker(pytest.mark.engine)
