"""squeez over shards: `--shard i/n` runs the per-instance phases on a slice of the instances;
`merge` joins the slices and runs the phases that look across instances, giving the rows of a
single run."""

import json

import pytest
from click.testing import CliRunner

from lettuce_build.builds.settings.shards import Shard
from lettuce_build.cli import main
from lettuce_build.core.errors import ShardError
from lettuce_build.squeez.options import SqueezOptions
from lettuce_build.squeez.pipeline import Squeez
from lettuce_build.squeez.shards import merge_squeez

from ..support.scripted import ScriptedBackend
from .test_pipeline import teacher

#: tools whose output is the repository's own text: the same in every run (test and build
#: output carry timings)
STABLE_TOOLS = {"read_file", "grep", "git_log", "git_blame", "git_diff", "ls", "lint_output"}


def run(out, instances, template, offline_options, shard=None, phases=(1, 2, 3, 4, 5, 6)):
    squeez = Squeez(out, offline_options.model_copy(update={"repo_url": template, "seed": 3, "shard": shard}))
    for phase in phases:
        if phase == 1:
            squeez.phase1(str(instances))
        elif phase == 6:
            squeez.phase6(ScriptedBackend(teacher))
        else:
            {2: squeez.phase2, 3: squeez.phase3, 4: squeez.phase4, 5: squeez.phase5, 7: squeez.phase7}[
                phase
            ]()
    return squeez


def rows(out):
    return [
        json.loads(line)
        for split in ("train", "validation", "test")
        if (out / f"squeez_{split}.jsonl").exists()
        for line in (out / f"squeez_{split}.jsonl").read_text().splitlines()
    ]


def test_two_shards_merged_give_the_single_run_s_rows(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    run(tmp_path / "single", instances, template, offline_options, phases=(1, 2, 3, 4, 5, 6, 7))
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, folder in enumerate(shards):
        squeez = run(folder, instances, template, offline_options, shard=Shard(index=i, count=2))
        assert sum(1 for _ in squeez.instances()) < 3  # each holds a slice of the three
    result = CliRunner().invoke(main, ["merge", *map(str, shards), "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    assert "merged 2 shards: 3 instances" in result.output and "squeez validation: OK" in result.output

    single, merged = rows(tmp_path / "single"), rows(tmp_path / "merged")
    identity = ("instance_id", "command", "tool_type", "split", "gold_source")
    assert [[r[k] for k in identity] for r in merged] == [[r[k] for k in identity] for r in single]
    assert {r["gold_source"] for r in merged} >= {"teacher"}
    stable = [r for r in merged if r["tool_type"] in STABLE_TOOLS]
    assert stable and stable == [r for r in single if r["tool_type"] in STABLE_TOOLS]
    selection = json.loads((tmp_path / "merged" / "phase7_selection.json").read_text())
    assert selection == json.loads((tmp_path / "single" / "phase7_selection.json").read_text())


def test_squeez_merge_refuses_a_missing_shard_and_other_settings(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    first = Squeez(tmp_path / "a", SqueezOptions(repo_url=template, seed=3, shard=Shard(index=0, count=2)))
    first.phase1(str(instances))
    with pytest.raises(ShardError, match=r"shard\(s\) 1/2 missing"):
        list(merge_squeez([tmp_path / "a"], tmp_path / "merged"))
    other = Squeez(tmp_path / "b", SqueezOptions(repo_url=template, seed=4, shard=Shard(index=1, count=2)))
    other.phase1(str(instances))
    with pytest.raises(ShardError, match=r"b: seed is 4, .*a has 3"):
        list(merge_squeez([tmp_path / "a", tmp_path / "b"], tmp_path / "merged"))


def test_squeez_merge_refuses_a_shard_whose_phase_4_did_not_finish(tmp_path, fixture_repos, offline_options):
    instances, template = fixture_repos
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, folder in enumerate(shards):
        run(folder, instances, template, offline_options, shard=Shard(index=i, count=2), phases=(1, 2, 3, 4))
    results = sorted((shards[0] / "phase4").glob("*.jsonl"))
    results[0].unlink()  # as if killed mid-phase
    with pytest.raises(
        ShardError, match=r"shard0: phase 4 has not finished 1 instance\(s\).*re-run its phase 4"
    ):
        list(merge_squeez(shards, tmp_path / "merged"))
