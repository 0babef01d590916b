"""Tool-call generation: seeded, 3-7 per instance, at least one read_file, argv lists, decoys flagged."""

import git

from lettuce_build.squeez.instances import SqueezInstance
from lettuce_build.squeez.toolcalls import TOOL_WEIGHTS, generate_tool_calls, issue_terms, module_name

from ..support.gitrepos import make_widgets_repo


def instance(tmp_path):
    info = make_widgets_repo(tmp_path / "widgets")
    return SqueezInstance(
        instance_id="acme__widgets-1",
        repo="acme/widgets",
        problem_statement=("`scale` ignores negatives; MeterReading is odd. See https://example.org/i/1"),
        FAIL_TO_PASS='["tests/test_core.py::test_scale_negative"]',
        **info,
    ), git.Repo(tmp_path / "widgets")


def test_the_weights_are_the_spec_table():
    assert TOOL_WEIGHTS["read_file"] == 0.25 and TOOL_WEIGHTS["grep"] == 0.15
    assert round(sum(TOOL_WEIGHTS.values()), 6) == 1.0


def test_calls_are_reproducible_for_a_seed_and_differ_across_seeds(tmp_path):
    inst, repo = instance(tmp_path)
    first = generate_tool_calls(inst, 7, repo)
    assert [c.command for c in first] == [c.command for c in generate_tool_calls(inst, 7, repo)]
    commands = {tuple(c.command for c in generate_tool_calls(inst, seed, repo)) for seed in range(8)}
    assert len(commands) > 1


def test_three_to_seven_distinct_calls_with_a_read_file(tmp_path):
    inst, repo = instance(tmp_path)
    for seed in range(20):
        calls = generate_tool_calls(inst, seed, repo)
        assert 3 <= len(calls) <= 7
        assert any(c.tool_type == "read_file" for c in calls)
        assert len({c.command for c in calls}) == len(calls)
        assert all(isinstance(c.argv, list) and all(isinstance(a, str) for a in c.argv) for c in calls)


def test_read_file_sometimes_targets_a_decoy_sibling_flagged_as_such(tmp_path):
    inst, repo = instance(tmp_path)
    reads = [
        c for seed in range(60) for c in generate_tool_calls(inst, seed, repo) if c.tool_type == "read_file"
    ]
    decoys = [c for c in reads if c.is_patch_file is False]
    assert decoys and all(c.target.startswith("widgets/") and c.target != "widgets/core.py" for c in decoys)
    assert any(c.is_patch_file for c in reads)


def test_names_come_from_the_issue_text_too():
    assert issue_terms("Calling `Meter.mean` on a FooBarBaz fails") == ["mean", "FooBarBaz"]
    assert module_name("src/widgets/core.py") == "widgets.core" and module_name("tests/test_x.py") is None
