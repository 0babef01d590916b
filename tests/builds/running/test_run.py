"""Whole builds: scripted logic end to end, resume from the cache, fallback, the CLI, and the real engine."""

import json

import pytest
from click.testing import CliRunner
from datasets import load_dataset, load_from_disk

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.core.schema import FEATURES, check_sample, row_to_sample
from lettuce_build.view.summary import summary_text
from lettuce_build.view.validate import validate

from ...support.documents import respond, write_readmes
from ...support.openai_server import serve
from ...support.scripted import ScriptedBackend


@pytest.fixture
def readmes(tmp_path):
    return str(write_readmes(tmp_path / "readmes"))


def build(readmes, out, backend, **options):
    return run_build(Recipe(source="readme", input=readmes, out=out, **options), backend)


def test_a_scripted_build_writes_checked_samples_that_load_with_declared_features(tmp_path, readmes):
    summary = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=1.0)
    assert summary.items == summary.hallucinated > 0 and summary.achieved_ratio == 1.0
    assert summary.failures == {}
    loaded = load_dataset(str(tmp_path / "out" / "hub"), "readme")
    rows = [row for split in loaded.values() for row in split]
    assert all(split.features == FEATURES for split in loaded.values())
    assert len(rows) == summary.items
    for row in rows:
        sample = row_to_sample(row)
        assert check_sample(sample) == [] and sample.labels
        assert sample.category == "contradiction" and sample.context_modality == "markdown"
        assert sample.metadata["injection"]["applied"]
    assert validate(tmp_path / "out").ok
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert manifest.status == "finished"
    # the plausibility check is recorded like a stage (its scoring requests and their cost)
    assert [s.name for s in manifest.stages] == ["question", "answer", "inject", "plausibility", "assemble"]


def test_the_ratio_is_reported_as_achieved(tmp_path, readmes):
    summary = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=0.0)
    assert summary.hallucinated == 0 and summary.clean == summary.items and summary.achieved_ratio == 0.0


def test_a_rebuild_is_served_from_the_cache_with_no_model_call(tmp_path, readmes):
    first = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=0.5)
    again = ScriptedBackend(respond)
    second = build(readmes, tmp_path / "out", again, ratio=0.5)
    assert again.calls == []
    assert second.by_split == first.by_split and second.by_category == first.by_category


def test_what_a_build_cost_survives_a_fully_cached_rerun(tmp_path, readmes):
    first = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=0.5)
    assert first.cost.requests > 0 and first.cost.prompt_tokens > 0 and first.cost.completion_tokens > 0
    second = build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=0.5)
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert [run.requests for run in manifest.runs] == [first.cost.requests, 0]
    assert manifest.cost.requests == first.cost.requests
    assert manifest.cost.completion_tokens == first.cost.completion_tokens
    assert second.cost.requests == 0 and second.total_cost == manifest.cost
    assert f"model: all 2 runs {first.cost.requests} requests" in summary_text(second)


def nothing_fits(request):
    return (
        '{"changes": []}'
        if "training data for hallucination" in request.messages[0].content
        else respond(request)
    )


def test_a_failed_injection_leaves_a_clean_sample_and_its_failure_row(tmp_path, readmes):
    summary = build(readmes, tmp_path / "out", ScriptedBackend(nothing_fits), ratio=1.0)
    assert summary.hallucinated == 0 and summary.clean == summary.items and summary.achieved_ratio == 0.0
    assert summary.failures == {"inject": {"nothing_fits": summary.items}}
    assert summary.ratio.short_by == summary.items
    assert "too few injections succeeded for the requested ratio" in summary.ratio.shortfall()


def test_the_cli_build_over_an_openai_compatible_endpoint(tmp_path, readmes, monkeypatch):
    monkeypatch.setenv("LB_TEST_KEY", "sk-never-printed")
    with serve(respond) as url:
        result = CliRunner().invoke(
            main,
            [
                "build",
                "--source",
                "readme",
                "--input",
                readmes,
                "--out",
                str(tmp_path / "out"),
                "--backend",
                "openai",
                "--base-url",
                url,
                "--api-key-env",
                "LB_TEST_KEY",
                "--model",
                "teacher",
                "--ratio",
                "1",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "lettucedetect-readme:" in result.output and "hallucination ratio: achieved 1.00" in result.output
    assert "one sample:" in result.output and "contradiction/numerical" not in result.output
    hint = next(line for line in result.output.splitlines() if line.startswith("load it: "))
    assert hint == f"load it: datasets.load_dataset({str(tmp_path / 'out' / 'hub')!r}, 'readme')"
    assert load_dataset(str(tmp_path / "out" / "hub"), "readme")  # the name push publishes it under
    assert "sk-never-printed" not in result.output
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert b"sk-never-printed" not in path.read_bytes(), path
    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "out")])
    assert validated.exit_code == 0, validated.output


def test_the_cli_names_a_bad_input(tmp_path):
    result = CliRunner().invoke(
        main,
        ["build", "--source", "readme", "--input", str(tmp_path / "nope"), "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1 and "no such file or folder" in result.output


def test_sources_lists_the_registry():
    output = CliRunner().invoke(main, ["sources"]).output
    assert "readme" in output and "lettucedetect-wikipedia" in output and "acl" in output


def test_a_real_engine_smoke_build_of_the_readme_s_example(readme_example):
    work, namespace = readme_example  # the README's first block: four readme items, the embedded model
    out = work / "out" / "readme"
    summary = namespace["result"].summary
    assert summary.items == 4
    for failure in BuildDir(out).failures():  # the tiny model fails often; every failure must say why
        assert failure.reason and failure.stage in ("question", "answer", "inject", "assemble")
    produced = sum(summary.by_split.values())
    if produced:
        assert validate(out).ok
        for split in load_dataset(str(out / "hub"), "readme").values():
            for row in split:
                assert check_sample(row_to_sample(row)) == []
    assert json.loads((out / "manifest.json").read_text())["status"] == "finished"


# Reliability (issue 11): builds that fail, collide or are killed never lose or misattribute work.


def silent(request):
    """A model that answers nothing useful: every question attempt is empty."""
    return ""


def test_a_stage_where_every_item_fails_ends_the_build_normally_and_again_on_rerun(tmp_path, readmes):
    for _ in range(2):
        summary = build(readmes, tmp_path / "out", ScriptedBackend(silent))
        assert summary.items > 0 and sum(summary.by_split.values()) == 0
        assert summary.failures["question"] == {"empty_output": summary.items}
        assert BuildDir(tmp_path / "out").read_manifest().status == "finished"
    said = summary_text(summary)
    assert (
        f"no samples: most items failed in stage question; see `lettuce-build failures {tmp_path / 'out'}`"
        in said
    )
    assert "load it" not in said


def test_a_rebuild_with_no_samples_removes_the_outputs_of_the_build_before(tmp_path, readmes):
    build(readmes, tmp_path / "out", ScriptedBackend(respond), ratio=1.0)
    assert (tmp_path / "out" / "dataset").exists() and (tmp_path / "out" / "hub").exists()
    build(readmes, tmp_path / "out", ScriptedBackend(silent), seed=9)
    assert not (tmp_path / "out" / "dataset").exists() and not (tmp_path / "out" / "hub").exists()
    result = CliRunner().invoke(
        main,
        ["push", "--source", "readme", "--build", str(tmp_path / "out"), "--dry-run", str(tmp_path / "dry")],
    )
    assert result.exit_code == 1 and "made no samples" in result.output


def test_a_document_given_twice_is_skipped_and_counted(tmp_path, readmes):
    (tmp_path / "readmes" / "fastgrid.markdown").write_text(
        (tmp_path / "readmes" / "fastgrid.md").read_text()
    )
    summary = build(readmes, tmp_path / "out", ScriptedBackend(respond))
    assert summary.skipped["duplicate_document"] == 1 and summary.failures == {}
    rows = tmp_path / "repos.jsonl"
    rows.write_text(
        json.dumps({"repo": "line-2", "readme": (tmp_path / "readmes" / "pebble.md").read_text()})
        + "\n"
        + json.dumps({"repo": None, "readme": (tmp_path / "readmes" / "mintcache.md").read_text()})
        + "\n"
    )
    twice = build(str(rows), tmp_path / "out2", ScriptedBackend(respond))
    assert twice.skipped["duplicate_key"] >= 1


def test_two_files_of_one_stem_are_two_documents(tmp_path, readmes):
    (tmp_path / "readmes" / "fastgrid.txt").write_text(
        (tmp_path / "readmes" / "pebble.md").read_text() + "\nGravel is its sibling.\n"
    )
    summary = build(readmes, tmp_path / "out", ScriptedBackend(respond))
    assert summary.skipped == {} and summary.documents == 4
    keys = {
        json.loads(m)["doc_id"]
        for split in load_from_disk(str(tmp_path / "out" / "dataset")).values()
        for m in split["metadata"]
    }
    assert {"fastgrid.md", "fastgrid.txt"} <= keys


def test_a_build_stopped_by_an_error_is_marked_failed_not_running(tmp_path, readmes):
    with pytest.raises(RuntimeError, match="scripted backend failure"):
        build(readmes, tmp_path / "out", ScriptedBackend(respond, fail_on_call=1))
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert manifest.status == "failed" and "scripted backend failure" in manifest.error


def test_a_second_build_into_a_busy_folder_fails_at_once_naming_the_first(tmp_path, readmes):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom lettuce_build.builds.storage.folder import BuildDir\n"
            f"with BuildDir({str(tmp_path / 'out')!r}).lock():\n"
            "    print('HELD', flush=True)\n    time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "HELD"
        result = CliRunner().invoke(
            main, ["build", "--source", "readme", "--input", readmes, "--out", str(tmp_path / "out")]
        )
        assert result.exit_code == 1
        assert f"is in use by process {holder.pid}" in result.output and "Traceback" not in result.output
    finally:
        holder.kill()
        holder.wait()
    build(readmes, tmp_path / "out", ScriptedBackend(respond))  # a killed holder leaves no stale lock


@pytest.mark.parametrize("damage", ["random bytes", "half truncated"])
def test_a_damaged_cache_says_how_to_recover(tmp_path, readmes, damage):
    import os

    cache = tmp_path / "out" / "cache.sqlite"
    build(readmes, tmp_path / "out", ScriptedBackend(respond))
    if damage == "random bytes":
        cache.write_bytes(os.urandom(8192))
    else:
        data = cache.read_bytes()
        cache.write_bytes(data[: len(data) // 2])
    for stale in tmp_path.glob("out/cache.sqlite-*"):
        stale.unlink()
    for args in (
        ["cache", "stats", str(tmp_path / "out")],
        ["build", "--source", "readme", "--input", readmes, "--out", str(tmp_path / "out")],
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert "is damaged" in result.output and "move it aside" in result.output
    assert BuildDir(tmp_path / "out").read_manifest().status != "running"


def test_a_rerun_that_finishes_more_items_than_the_run_before_never_reuses_a_later_stages_pass(
    tmp_path, readmes
):
    """A provider that failed one question the first time answers it the second: the answer
    stage then runs over three items, not over the one item its kept pass held."""
    from lettuce_build.llm.protocol import PROVIDER_ERROR, Completion

    down = {"pebble"}

    def flaky(request):
        if "realistic question" in request.messages[0].content and any(
            name in request.messages[-1].content for name in down
        ):
            return Completion(text="HTTP 503 from the provider", finish_reason=PROVIDER_ERROR)
        return respond(request)

    first = build(readmes, tmp_path / "out", ScriptedBackend(flaky), ratio=1.0)
    assert first.items == 3 and sum(first.by_split.values()) == 2
    down.clear()
    second = build(readmes, tmp_path / "out", ScriptedBackend(flaky), ratio=1.0)
    assert sum(second.by_split.values()) == 3
