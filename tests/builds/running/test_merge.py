"""`lettuce-build merge`: the shards of a build, joined, are the unsharded build row for row,
with the exact ratio and no model call; folders that are not all the shards of one build are
refused, naming what does not fit."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from datasets import load_from_disk

import lettuce_build
from lettuce_build.builds.running.merge import merge_builds
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.core.errors import ShardError
from lettuce_build.engine.balance import needed
from lettuce_build.llm.cache import RequestCache

from ...sources.test_psiloqa import write as write_psiloqa
from ...support.documents import classify_respond, flaky_respond, write_many_readmes
from ...support.processes import kill_9_after
from ...support.scripted import ScriptedBackend

REPO_ROOT = Path(__file__).resolve().parents[3]


def build(docs, out, shard=None, **settings):
    # the recipe's model: `merge` makes the recipe's backend, whose keys must match the cache's
    backend = ScriptedBackend(flaky_respond, model="smollm2-135m")
    lettuce_build.build("readme", input=str(docs), out=out, shard=shard, backend=backend, **settings)
    return backend


def shards(docs, root, n, **settings):
    folders = [root / f"shard{i}" for i in range(n)]
    for i, folder in enumerate(folders):
        build(docs, folder, f"{i}/{n}", **settings)
    return folders


def rows(out):
    dataset = load_from_disk(str(out / "dataset"))
    return {split: dataset[split].to_list() for split in dataset}


def same_build(merged, single):
    assert rows(merged) == rows(single)
    a, b = BuildDir(merged), BuildDir(single)
    assert a.failures() == b.failures()
    assert a.read_manifest().counts == b.read_manifest().counts


@pytest.mark.parametrize("n", [2, 3])
def test_shards_merged_are_the_unsharded_build_row_for_row(tmp_path, n):
    docs = write_many_readmes(tmp_path / "docs", 24)
    build(docs, tmp_path / "single", ratio=0.5)
    folders = shards(docs, tmp_path, n, ratio=0.5)
    held = [BuildDir(f).read_manifest().shard.items for f in folders]
    assert sum(held) == 24 and all(held)

    later = ScriptedBackend(flaky_respond, model="smollm2-135m")
    summary = merge_builds(folders, tmp_path / "merged", backend=later)

    same_build(tmp_path / "merged", tmp_path / "single")
    single_cache = RequestCache.in_build(tmp_path / "single").stats().rows
    assert RequestCache.in_build(tmp_path / "merged").stats().rows == single_cache
    # the merge asked only for injections of later waves, which no shard could know were needed
    assert all("training data for hallucination detectors" in r.messages[0].content for r in later.requests)
    assert summary.ratio.short_by == 0
    for split, report in summary.ratio.by_split.items():
        assert report.hallucinated == needed(report.items, 0.5), split
    assert BuildDir(tmp_path / "single").failures(stage="inject"), "the responder fails some injections"
    merged = BuildDir(tmp_path / "merged").read_manifest()
    assert merged.shard is None and merged.merged_from == [str(f) for f in folders]


def test_shards_started_from_the_single_build_s_cache_ask_nothing_and_merge_into_it(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 24)
    build(docs, tmp_path / "single")
    folders = [tmp_path / f"shard{i}" for i in range(2)]
    asked = []
    for i, folder in enumerate(folders):
        folder.mkdir()
        shutil.copy(tmp_path / "single" / "cache.sqlite", folder / "cache.sqlite")
        asked += build(docs, folder, f"{i}/2").requests
    later = ScriptedBackend(flaky_respond, model="smollm2-135m")
    merge_builds(folders, tmp_path / "merged", backend=later)
    assert asked == [] and later.calls == []
    same_build(tmp_path / "merged", tmp_path / "single")


def test_the_merged_build_validates_shows_pushes_and_replays_from_its_recipe(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 12)
    folders = shards(docs, tmp_path, 2, ratio=1.0)  # one wave: the merge (the recipe's vLLM) asks nothing
    cli = CliRunner()
    merged = tmp_path / "merged"
    result = cli.invoke(main, ["merge", *map(str, folders), "--out", str(merged)])
    assert result.exit_code == 0, result.output
    assert "lettucedetect-readme: 12 samples" in result.output
    assert cli.invoke(main, ["validate", str(merged / "hub")]).exit_code == 0
    assert "merged from 2 shards: " in cli.invoke(main, ["status", str(merged)]).output
    assert "shard 1/2: " in cli.invoke(main, ["status", str(folders[1])]).output
    shown = cli.invoke(main, ["show", str(merged), "-n", "2"])
    assert shown.exit_code == 0 and "lettucedetect-readme" in shown.output
    where = lettuce_build.push("readme", build=merged, dry_run=tmp_path / "hub", max_failure_rate=1.0)
    assert str(tmp_path / "hub") in where
    again = ScriptedBackend(flaky_respond, model="smollm2-135m")
    replay = lettuce_build.build(recipe=merged / "recipe.yaml", backend=again)  # an unsharded recipe
    assert again.calls == [] and replay.summary.shard is None  # the merged cache holds it all
    assert {s: len(d) for s, d in replay.dataset.items()} == {s: len(r) for s, r in rows(merged).items()}


def test_a_non_injecting_source_merges_too_and_a_failed_span_is_not_retried(tmp_path):
    data = write_psiloqa(tmp_path / "pq")
    single = lettuce_build.build(
        "psiloqa", input=str(data), out=tmp_path / "single", backend=ScriptedBackend(classify_respond)
    )
    folders = [tmp_path / f"s{i}" for i in range(2)]
    for i, folder in enumerate(folders):
        lettuce_build.build(
            "psiloqa", input=str(data), out=folder, shard=f"{i}/2", backend=ScriptedBackend(classify_respond)
        )
    merged = lettuce_build.merge(*folders, out=tmp_path / "merged", backend=ScriptedBackend(classify_respond))
    same_build(tmp_path / "merged", tmp_path / "single")
    assert {s: d.to_list() for s, d in merged.dataset.items()} == rows(tmp_path / "single")
    assert single.summary.failures == {"classify": {"malformed_json": 1}}


def test_merge_refuses_shards_of_builds_with_other_settings(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 8)
    build(docs, tmp_path / "a", "0/2", ratio=0.5)
    build(docs, tmp_path / "b", "1/2", ratio=0.3)
    with pytest.raises(ShardError, match=r"b: ratio is 0.3, .*a has 0.5; shards of one build share"):
        merge_builds([tmp_path / "a", tmp_path / "b"], tmp_path / "merged")


def test_merge_refuses_a_duplicated_shard_and_a_missing_one(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 8)
    folders = shards(docs, tmp_path, 2)
    shutil.copytree(folders[0], tmp_path / "copy")
    with pytest.raises(ShardError, match=r"shard 0/2 given twice \(.*shard0 and .*copy\)"):
        merge_builds([folders[0], tmp_path / "copy", folders[1]], tmp_path / "merged")
    with pytest.raises(ShardError, match=r"shard\(s\) 1/2 missing; give all 2"):
        merge_builds([folders[0]], tmp_path / "merged")
    with pytest.raises(ShardError, match=r"is one of the shards"):
        merge_builds(folders, folders[0])


def test_merge_refuses_a_missing_work_item_and_an_unfinished_shard(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 8)
    folders = shards(docs, tmp_path, 2)
    items = folders[1] / "items.jsonl"
    lines = items.read_text().splitlines(keepends=True)
    items.write_text("".join(lines[1:]))
    with pytest.raises(ShardError, match=r"1 of 8 work items are in no shard"):
        merge_builds(folders, tmp_path / "merged")
    manifest = BuildDir(folders[0]).read_manifest()
    manifest.status = "failed"
    BuildDir(folders[0]).write_manifest(manifest)
    with pytest.raises(ShardError, match=r"shard0: shard 0/2 has not finished \(status failed\); re-run"):
        merge_builds(folders, tmp_path / "merged")
    with pytest.raises(ShardError, match=r"not a shard"):
        build(docs, tmp_path / "whole")
        merge_builds([tmp_path / "whole"], tmp_path / "merged")


def test_merge_reads_each_shard_s_items_in_order_and_refuses_a_file_out_of_order(tmp_path):
    """The shards' items are merged as they are read (never all held): each file must be in the
    build's order, as a shard writes it."""
    docs = write_many_readmes(tmp_path / "docs", 8)
    folders = shards(docs, tmp_path, 2)
    items = folders[1] / "items.jsonl"
    lines = items.read_text().splitlines(keepends=True)
    items.write_text("".join([lines[1], lines[0], *lines[2:]]))
    with pytest.raises(ShardError, match=r"shard1's work items are out of order at position \d+"):
        merge_builds(folders, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()  # refused before anything was written


def test_a_shard_killed_mid_run_resumes_and_still_merges_into_the_single_build(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 24)
    build(docs, tmp_path / "single")
    killed, log = tmp_path / "shard1", tmp_path / "asked.log"
    command = [
        sys.executable,
        "-m",
        "tests.support.shard_build",
        str(docs),
        str(killed),
        "1/2",
        "0.3",
        str(log),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    kill_9_after(process, log, 8)  # two answered batches of 4
    assert BuildDir(killed).read_manifest().status == "running"  # a kill -9 writes nothing more
    cache = RequestCache.in_build(killed)
    committed = cache.stats().rows
    cache.close()
    asked_before = len(log.read_text().splitlines())
    assert committed >= 4 and asked_before - committed <= 4  # the kill lost at most the batch in flight

    rerun = build(docs, killed, "1/2")
    assert len(rerun.requests) + committed == BuildDir(killed).open_cache().stats().rows
    shard0 = tmp_path / "shard0"
    build(docs, shard0, "0/2")
    merge_builds(
        [shard0, killed], tmp_path / "merged", backend=ScriptedBackend(flaky_respond, model="smollm2-135m")
    )
    same_build(tmp_path / "merged", tmp_path / "single")
    assert json.loads((killed / "manifest.json").read_text())["status"] == "finished"


def test_a_merged_verify_build_is_judged_by_the_judges_its_shards_used(tmp_path, monkeypatch):
    import lettuce_build.llm.factory as factory

    from ...support.judges import judge

    made = factory.make_backend
    # the recipe's judge is made by name, as the shards' was; here a scripted one stands in
    monkeypatch.setattr(
        factory,
        "make_backend",
        lambda kind, model, **kw: judge(model) if model == "judge-x" else made(kind, model, **kw),
    )

    docs = write_many_readmes(tmp_path / "docs", 12)
    folders = [tmp_path / f"shard{i}" for i in range(2)]
    for i, folder in enumerate(folders):
        backend = ScriptedBackend(flaky_respond, model="smollm2-135m")
        lettuce_build.build(
            "readme",
            input=str(docs),
            out=folder,
            shard=f"{i}/2",
            backend=backend,
            verify=True,
            judge_model=["judge-x"],
            judges=[judge("judge-x")],
        )
    merge_builds(folders, tmp_path / "merged", ScriptedBackend(flaky_respond, model="smollm2-135m"))
    manifest = BuildDir(tmp_path / "merged").read_manifest()
    # before, a merge passed no judges: the build's own model judged it
    assert [j.model for j in manifest.judges] == ["judge-x"]
    assert manifest.counts is not None and manifest.counts.judge is not None
    assert manifest.counts.judge.judges == ["judge-x"]


def test_shards_of_a_deduplicated_build_drop_the_same_copies_the_single_build_drops(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 12)
    for original in sorted(docs.glob("*.md"))[:2]:  # two documents given twice, a line changed
        copy = original.read_text().replace("one file per worksheet", "a file per worksheet")
        (docs / f"copy-of-{original.name}").write_text(copy)
    build(docs, tmp_path / "single", ratio=0.5, dedup=True)
    folders = shards(docs, tmp_path, 2, ratio=0.5, dedup=True)
    merge_builds(folders, tmp_path / "merged", backend=ScriptedBackend(flaky_respond, model="smollm2-135m"))
    same_build(tmp_path / "merged", tmp_path / "single")
    assert BuildDir(tmp_path / "single").read_manifest().counts.skipped == {"near_duplicate": 2}
