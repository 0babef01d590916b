"""The real engine: vLLM's CPU build with the embedded smollm2-135m model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.protocol import PROMPT_TOO_LONG, ChatRequest
from lettuce_build.llm.settings import EngineSettings
from lettuce_build.llm.vllm_backend import VLLMBackend, cpu_settings, engine_kwargs

from ..support.stages import COUNTRIES, Capital, CapitalStage

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_answers_json_schema_requests_with_schema_valid_json(embedded_backend):
    schema = Capital.model_json_schema()
    requests = [
        ChatRequest.of(
            "Answer with JSON.", f"What is the capital of {c}?", max_tokens=64, seed=i, json_schema=schema
        )
        for i, c in enumerate(COUNTRIES)
    ]
    completions = embedded_backend.generate(requests)
    assert len(completions) == len(requests)
    for completion in completions:
        assert completion.finish_reason == "stop", completion
        Capital.model_validate_json(completion.text)  # raises if not schema-valid
        assert completion.prompt_tokens > 0 and completion.completion_tokens > 0


def test_the_same_seed_gives_the_same_answer(embedded_backend):
    request = ChatRequest.of(None, "Name a colour.", temperature=1.0, max_tokens=16, seed=1234)
    first, second = embedded_backend.generate([request, request])
    assert first.text == second.text


def test_a_cached_rebuild_never_starts_or_even_imports_vllm(embedded_backend, tmp_path):
    items = Dataset.from_list([{"key": c, "country": c} for c in COUNTRIES])
    first = Runner(Completions(embedded_backend, BuildDir(tmp_path).open_cache())).run(items, CapitalStage())
    assert first.stats.cache_misses == len(COUNTRIES)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    output = subprocess.run(
        [sys.executable, "-m", "tests.support.cached_rebuild", str(tmp_path)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    report = json.loads(output.strip().splitlines()[-1])
    assert report["hits"] == len(COUNTRIES) and report["misses"] == 0
    assert report["engine_started"] is False and report["vllm_imported"] is False
    assert report["cities"] == list(first.ok["city"])


def test_cpu_options_carry_the_measured_settings():
    options = cpu_settings().over(EngineSettings())
    assert options.enforce_eager and options.max_num_batched_tokens == 32768
    assert "chat_template_kwargs" not in engine_kwargs(options)  # a chat() argument, not an engine one
    assert not options.trust_remote_code


@pytest.fixture
def small_step_backend(embedded_backend, monkeypatch):
    """The embedded model on an engine whose step schedules 4,096 tokens, not the default 32,768:
    the same crash at an eighth of the prefill (seconds, not a minute and a half). It stays for the
    session with a small KV cache: vLLM's teardown of one engine unsets state the other needs."""
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    backend = VLLMBackend(embedded_backend.model, EngineSettings(max_num_batched_tokens=4096))
    backend.engine()
    return backend


def test_a_seeded_batch_longer_than_one_engine_step_is_split_instead_of_crashing_the_cpu_engine(
    small_step_backend,
):
    # 24 prompts of ~220 tokens hold more than the 4,096 tokens one step of this engine schedules:
    # sent whole, the engine chunks the prefill and dies ("CPU Generator does not use offset");
    # the default engine does the same past its 32,768 (checked by hand: the same error)
    padding = "word " * 190
    requests = [ChatRequest.of(None, f"{i} {padding} Say hi.", max_tokens=4, seed=i) for i in range(24)]
    tokens = small_step_backend._prompt_tokens([r.conversation() for r in requests])
    assert sum(tokens) > 4096
    groups = small_step_backend._prefill_groups(tokens, seeded=True)
    assert len(groups) >= 2 and groups[0][0] == 0 and groups[-1][1] == 24
    assert len(small_step_backend.generate(requests)) == 24


def test_a_prompt_longer_than_the_context_is_never_sent_and_the_rest_of_the_batch_is_answered(
    embedded_backend,
):
    # sent, it would make the engine reject the whole batch
    huge = ChatRequest.of(None, "word " * 5000 + "Say hi.", max_tokens=4, seed=1)
    short = ChatRequest.of(None, "Say hi.", max_tokens=4, seed=1)
    near = ChatRequest.of(None, "word " * 4040 + "Say hi.", max_tokens=200, seed=1)  # room for a few tokens
    too_long, answered, cut = embedded_backend.generate([huge, short, near])
    assert too_long.finish_reason == PROMPT_TOO_LONG and too_long.text == "" and too_long.prompt_tokens > 4096
    assert answered.finish_reason in ("stop", "length") and answered.completion_tokens > 0
    assert cut.finish_reason != PROMPT_TOO_LONG and cut.prompt_tokens + cut.completion_tokens <= 4096
