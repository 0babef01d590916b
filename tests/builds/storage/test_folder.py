"""The build folder: manifest, failure files, and the status / failures / cache stats commands."""

import json

import pytest
from click.testing import CliRunner
from datasets import Dataset

from lettuce_build.builds.settings.options import BuildCounts
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.cli import main
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner

from ...support.scripted import ScriptedBackend
from ...support.stages import DoubleStage, correct


@pytest.fixture
def build(tmp_path) -> BuildDir:
    """A build whose double stage answered 5 items right and 2 wrong."""

    def answer(request):
        n = int(request.messages[-1].content.split()[-1])
        return '{"value": 999}' if n in (3, 5) else correct(request)

    build = BuildDir(tmp_path / "build")
    backend = ScriptedBackend(answer)
    cache = build.open_cache()
    result = Runner(Completions(backend, cache)).run(
        Dataset.from_list([{"key": f"k{i}", "n": i} for i in range(7)]), DoubleStage()
    )
    cache.close()
    counts = BuildCounts(
        documents=1,
        items=5,
        skipped={},
        by_split={"train": 5},
        by_category={"(clean)": 5},
        hallucinated=0,
        clean=5,
        requested_ratio=0.0,
        achieved_ratio=0.0,
        yield_=1.0,
    )
    manifest = Manifest(source="numbers", backend=backend.info(), counts=counts)
    build.record_stage(manifest, result.stats, result.failures)
    return build


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_manifest_records_each_stage_once(build):
    manifest = build.read_manifest()
    assert [s.name for s in manifest.stages] == ["double"]
    stats = manifest.stages[0]
    assert (stats.items_in, stats.ok, stats.failed, stats.failure_reasons) == (7, 5, 2, {"wrong_value": 2})
    build.record_stage(manifest, stats, [])
    assert len(build.read_manifest().stages) == 1 and build.failures() == []


def test_status_shows_stages_counts_and_reasons(build):
    result = invoke("status", build.path)
    assert result.exit_code == 0, result.output
    assert "double" in result.output and "double-v1" in result.output
    assert "wrong_value" in result.output and "items: 5" in result.output and "yield: 1.0" in result.output


def test_failures_can_be_filtered_by_stage_and_reason(build):
    result = invoke("failures", build.path, "--reason", "wrong_value")
    assert "2 failure(s)" in result.output and "expected 6, got 999" in result.output
    assert "0 failure(s)" in invoke("failures", build.path, "--stage", "inject").output
    rows = [json.loads(line) for line in invoke("failures", build.path, "--json").stdout.splitlines()]
    assert {r["key"] for r in rows} == {"k3", "k5"} and {r["attempt"] for r in rows} == {1}


def test_cache_stats_counts_rows_hits_and_misses(build):
    result = invoke("cache", "stats", build.path)
    assert result.exit_code == 0, result.output
    assert "9 cached responses" in result.output  # 7 first attempts + 2 retries
    assert "9 misses" in result.output and "model scripted: 9" in result.output


def test_status_of_a_folder_that_is_not_a_build_says_so(tmp_path):
    result = invoke("status", tmp_path)
    assert result.exit_code == 1 and "no manifest.json" in result.output


def test_a_corrupt_failure_file_names_file_and_line(build):
    (build.path / "failures" / "double.jsonl").write_text('{"key": "x"}\n')
    result = invoke("failures", build.path)
    assert result.exit_code == 1 and "double.jsonl:1" in result.output


def test_the_cost_counts_every_answer_the_cache_holds_after_a_killed_run(tmp_path):
    # a killed run records none of its stages; the answers it cached were paid for all the same
    from lettuce_build.llm.protocol import Completion

    folder = BuildDir(tmp_path / "out")
    cache = folder.open_cache()
    answer = Completion(text="ok", finish_reason="stop", prompt_tokens=10, completion_tokens=3)
    cache.put_many("m", "v1", [(f"k{i}", answer) for i in range(201)])
    cache.close()
    manifest = Manifest(source="readme")
    folder.write_manifest(manifest)
    cost = folder.read_manifest().cost
    assert (cost.requests, cost.prompt_tokens, cost.completion_tokens) == (201, 2010, 603)
