"""The stage runner: cached resume after crashes, failure rows with reasons, retries with new seeds."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset

from lettuce_build.builds.storage.items import WorkPasses
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.seeded import request_seed
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import PROMPT_TOO_LONG, ChatRequest, Completion

from ..support.processes import kill_9_after
from ..support.scripted import ScriptedBackend
from ..support.stages import DoubleStage, correct, number_of

REPO_ROOT = Path(__file__).resolve().parents[2]


def items(n: int, **extra) -> Dataset:
    return Dataset.from_list([{"key": f"item-{i:04d}", "n": i, **extra} for i in range(n)])


def run(backend, tmp_path, dataset, batch_size=8, seed=0):
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        return Runner(Completions(backend, cache), batch_size=batch_size, seed=seed).run(
            dataset, DoubleStage()
        )
    finally:
        cache.close()


def test_a_clean_run_parses_every_item(tmp_path):
    backend = ScriptedBackend(correct)
    result = run(backend, tmp_path, items(20))
    assert result.ok["doubled"] == [2 * i for i in range(20)]
    assert len(result.failures) == 0 and result.stats.ok == 20
    assert len(backend.calls) == 3  # one backend call per batch of 8


def test_a_second_run_is_served_entirely_from_the_cache(tmp_path):
    run(ScriptedBackend(correct), tmp_path, items(20))
    again = ScriptedBackend(correct)
    result = run(again, tmp_path, items(20))
    assert again.calls == [] and result.stats.cache_hits == 20 and result.stats.cache_misses == 0
    assert result.ok["doubled"] == [2 * i for i in range(20)]


def test_a_crash_in_batch_k_loses_only_that_batch(tmp_path):
    crashing = ScriptedBackend(correct, fail_on_call=3)
    with pytest.raises(RuntimeError, match="failure on call 3"):
        run(crashing, tmp_path, items(40))
    assert len(crashing.requests) == 16  # batches 1 and 2 were answered and committed

    rerun = ScriptedBackend(correct)
    result = run(rerun, tmp_path, items(40))
    assert len(rerun.requests) == 40 - 16  # only what the cache does not hold
    assert sorted(result.ok["key"]) == [f"item-{i:04d}" for i in range(40)]
    assert len(set(result.ok["key"])) == 40


def test_a_real_kill_9_mid_build_resumes_without_loss_or_duplicates(tmp_path):
    build, log, result_file = tmp_path / "build", tmp_path / "asked.log", tmp_path / "result.json"
    n = 64
    command = [
        sys.executable,
        "-m",
        "tests.support.slow_build",
        str(build),
        str(n),
        "0.4",
        str(log),
        str(result_file),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    kill_9_after(process, log, 24)  # three answered batches
    assert not result_file.exists()

    cache = RequestCache(build / "cache.sqlite")
    committed = cache.stats().rows
    cache.close()
    assert 24 <= committed < n

    finished = subprocess.run([*command[:5], "0", *command[6:]], cwd=REPO_ROOT, env=env, timeout=300)
    assert finished.returncode == 0
    outcome = json.loads(result_file.read_text())
    assert sorted(outcome["keys"]) == [f"item-{i:04d}" for i in range(n)]
    assert outcome["asked"] == n - committed  # the rerun asked only for what was not committed


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ('{"value": ', "malformed_json"),
        ("   ", "empty_output"),
        (Completion(text='{"value": 4', finish_reason="length"), "truncated"),
        ('{"number": 4}', "schema_mismatch"),
        ('{"value": 5}', "wrong_value"),
    ],
)
def test_bad_responses_become_failure_rows_with_reasons(tmp_path, answer, reason):
    result = run(ScriptedBackend(lambda r: answer), tmp_path, items(1))
    assert len(result.ok) == 0
    [failure] = result.failures
    assert (failure.key, failure.stage, failure.reason) == ("item-0000", "double", reason)
    assert failure.attempt == DoubleStage.max_attempts - 1
    assert result.stats.failure_reasons == {reason: 1}


def test_a_prompt_the_model_cannot_take_is_a_failure_row_and_never_retried(tmp_path):
    too_long = Completion(text="", finish_reason=PROMPT_TOO_LONG, prompt_tokens=5000)
    backend = ScriptedBackend(lambda r: too_long)
    [failure] = run(backend, tmp_path, items(1)).failures
    assert failure.reason == "prompt_too_long" and "5000 prompt tokens" in failure.detail
    assert failure.attempt == 0 and len(backend.calls) == 1


def test_thinking_is_never_parsed_and_an_answer_that_only_thinks_is_a_failure_row(tmp_path):
    def think(request):
        if number_of(request) == 0:  # deliberates until cut, never answers
            return Completion.of("<think>The user wants the number doubled, so", finish_reason="length")
        return Completion.of(f"<think>Double it.</think>{correct(request)}", finish_reason="stop")

    result = run(ScriptedBackend(think), tmp_path, items(3))
    assert sorted(result.ok["doubled"]) == [2, 4]
    assert {f.reason for f in result.failures} == {"thinking_only"}


def test_a_failure_row_keeps_finish_reason_and_a_raw_excerpt(tmp_path):
    long = Completion(text='{"value": ' + "9" * 1000, finish_reason="length")
    [failure] = run(ScriptedBackend(lambda r: long), tmp_path, items(1)).failures
    assert failure.finish_reason == "length"
    assert failure.raw_excerpt == long.text[:300]


def test_a_retry_is_a_new_attempt_with_its_own_seed(tmp_path):
    seen: list[ChatRequest] = []

    def wrong_first(request):
        seen.append(request)
        n = number_of(request)
        return '{"value": 0}' if len([r for r in seen if number_of(r) == n]) == 1 else correct(request)

    result = run(
        ScriptedBackend(wrong_first),
        tmp_path,
        items(
            3,
        ),
        batch_size=8,
    )
    assert result.ok["doubled"] == [0, 2, 4]
    assert len(result.failures) == 0
    seeds_of_item_1 = [r.seed for r in seen if number_of(r) == 1]
    assert seeds_of_item_1 == [request_seed(0, "item-0001", 0), request_seed(0, "item-0001", 1)]
    assert len(set(seeds_of_item_1)) == 2


def test_attempts_are_cached_so_a_rerun_replays_them_without_model_calls(tmp_path):
    def always_wrong(request):
        return '{"value": -1}'

    run(ScriptedBackend(always_wrong), tmp_path, items(2))
    rerun = ScriptedBackend(always_wrong)
    result = run(rerun, tmp_path, items(2))
    assert rerun.calls == [] and len(result.failures) == 2


def test_items_the_stage_does_not_apply_to_pass_through_without_a_call(tmp_path):
    dataset = Dataset.from_list([{"key": "a", "n": 1, "skip": True}, {"key": "b", "n": 2, "skip": False}])
    backend = ScriptedBackend(correct)
    result = run(backend, tmp_path, dataset)
    assert result.ok["key"] == ["a", "b"] and result.ok["doubled"] == [None, 4]
    assert len(backend.requests) == 1 and result.stats.passed_through == 1


def test_the_build_seed_changes_request_seeds(tmp_path):
    first, second = ScriptedBackend(correct), ScriptedBackend(correct)
    run(first, tmp_path / "a", items(2), seed=1)
    run(second, tmp_path / "b", items(2), seed=2)
    assert [r.seed for r in first.requests] != [r.seed for r in second.requests]


def test_requests_of_a_response_model_stage_carry_its_json_schema(tmp_path):
    backend = ScriptedBackend(correct)
    run(backend, tmp_path, items(1))
    assert backend.requests[0].json_schema["properties"]["value"]["type"] == "integer"


def test_retries_of_the_whole_stage_go_to_the_backend_together(tmp_path):
    attempts: dict[int, int] = {}

    def first_try_fails_for_3_11_17(request):
        n = number_of(request)
        attempts[n] = attempts.get(n, 0) + 1
        return '{"value": -1}' if n in (3, 11, 17) and attempts[n] == 1 else correct(request)

    backend = ScriptedBackend(first_try_fails_for_3_11_17)
    result = run(backend, tmp_path, items(20), batch_size=8)
    assert [len(call) for call in backend.calls] == [8, 8, 4, 3]  # three first-pass batches, one retry pass
    assert result.ok["doubled"][:] == [2 * i for i in range(20)]  # input order restored


def test_a_cut_response_is_truncated_unless_the_stage_keeps_complete_lines():
    from lettuce_build.engine.responses import check_response
    from lettuce_build.engine.stage import ParseFailure
    from lettuce_build.stages.questions import QuestionStage

    cut = Completion(text="How do I install it?\nAnd then, what about the", finish_reason="length")
    assert check_response(QuestionStage(), cut) == "How do I install it?"
    with pytest.raises(ParseFailure, match="truncated"):
        check_response(QuestionStage(), Completion(text="How do I inst", finish_reason="length"))
    with pytest.raises(ParseFailure, match="truncated"):
        check_response(DoubleStage(), Completion(text='{"value": 4}\n{"val', finish_reason="length"))


class RetryOnRerunStage(DoubleStage):
    retries_failures_on_rerun = True


def test_a_stage_may_retry_its_failures_afresh_on_the_next_run(tmp_path):
    calls = {"n": 0}

    def wrong_twice_then_right(request):
        calls["n"] += 1
        return '{"value": -1}' if calls["n"] <= 2 else correct(request)

    cache = RequestCache(tmp_path / "c.sqlite")
    first = Runner(Completions(ScriptedBackend(wrong_twice_then_right), cache)).run(
        items(1), RetryOnRerunStage()
    )
    assert [f.attempt for f in first.failures] == [1]  # two fresh attempts, both wrong
    rerun_backend = ScriptedBackend(wrong_twice_then_right)
    rerun_backend.respond = lambda r: correct(r)
    second = Runner(Completions(rerun_backend, cache)).run(items(1), RetryOnRerunStage())
    assert second.ok["doubled"][:] == [0] and len(rerun_backend.requests) == 1  # attempt 2, fresh
    cache.close()


class CountingStage(DoubleStage):
    """Counts its renders and parses, which a kept pass must not repeat."""

    def __init__(self) -> None:
        self.renders = 0
        self.parses = 0

    def render(self, item):
        self.renders += 1
        return super().render(item)

    def parse(self, item, response):
        self.parses += 1
        return super().parse(item, response)


def on_disk(dataset: Dataset, folder: Path) -> Dataset:
    dataset.save_to_disk(str(folder))
    return Dataset.load_from_disk(str(folder))


def run_kept(tmp_path, dataset, seed=0):
    stage = CountingStage()
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        # passes kept beside the items, as a build keeps them in its work folder
        passes = WorkPasses(tmp_path / "items")
        result = Runner(
            Completions(ScriptedBackend(correct), cache), batch_size=8, seed=seed, passes=passes
        ).run(dataset, stage)
    finally:
        cache.close()
    return stage, result


def test_a_rerun_over_items_on_disk_loads_each_pass_and_renders_nothing(tmp_path):
    dataset = on_disk(items(20, skip=False), tmp_path / "items")
    first, made = run_kept(tmp_path, dataset)
    assert first.renders == 20 and first.parses == 20
    assert list((tmp_path / "items").glob("pass-*.json"))  # kept beside the items, with its record

    again, kept = run_kept(tmp_path, Dataset.load_from_disk(str(tmp_path / "items")))
    assert again.renders == 0 and again.parses == 0
    assert kept.ok.to_list() == made.ok.to_list()
    assert kept.stats.cache_hits == 20 and kept.stats.cache_misses == 0 and kept.stats.ok == 20
    assert kept.stats.sampling == made.stats.sampling


def test_a_pass_over_a_selection_keeps_its_rows_beside_it_and_a_rerun_joins_the_same(tmp_path):
    every = on_disk(items(20, skip=False), tmp_path / "items")
    first, made = run_kept(tmp_path, every.select([15, 2, 9, 4], new_fingerprint="picked"))
    assert list((tmp_path / "items").glob("pass-*-part-items.arrow"))  # the selection's rows, copied
    assert made.ok["key"] == [every[i]["key"] for i in (15, 2, 9, 4)]

    every = Dataset.load_from_disk(str(tmp_path / "items"))
    again, kept = run_kept(tmp_path, every.select([15, 2, 9, 4], new_fingerprint="picked"))
    assert again.renders == 0
    assert kept.ok.to_list() == made.ok.to_list() and kept.ok._fingerprint == made.ok._fingerprint


def test_a_pass_is_kept_only_for_what_decided_it(tmp_path):
    run_kept(tmp_path, on_disk(items(20, skip=False), tmp_path / "items"))
    other_seed, _ = run_kept(tmp_path, Dataset.load_from_disk(str(tmp_path / "items")), seed=1)
    assert other_seed.renders == 20


def test_a_pass_without_its_record_did_not_finish_and_runs_again(tmp_path):
    run_kept(tmp_path, on_disk(items(20, skip=False), tmp_path / "items"))
    for record in (tmp_path / "items").glob("pass-*.json"):
        record.unlink()
    again, result = run_kept(tmp_path, Dataset.load_from_disk(str(tmp_path / "items")))
    assert again.renders == 20 and result.stats.ok == 20
    assert result.stats.cache_hits == 20  # answered from the request cache, not asked again
