"""tool_output: squeez rows become grounded answers with targeted tool-output injection."""

import json

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.tool_output import TARGETS, ToolOutputSource

from ..support.documents import respond
from ..support.scripted import ScriptedBackend

OUTPUT = "\n".join(
    f"src/pkg/module.py:{i}: def handler_{i}(request): return registry.lookup(request)" for i in range(1, 30)
)
#: the test split's instance sees another tool output (the same one in two splits is a leak)
TEST_OUTPUT = "\n".join(
    f"src/pkg/views.py:{i}: def render_{i}(page): return template.render(page, theme)" for i in range(1, 30)
)


def squeez_row(instance, tool, relevant, split="train", output=OUTPUT):
    return {
        "instance_id": instance,
        "repo": "acme/pkg",
        "split": split,
        "tool_type": tool,
        "command": "git grep",
        "query": "Where is the request handler registered for lookups?",
        "background_task": "Fix the lookup",
        "tool_output": output,
        "relevant_lines": relevant,
        "is_irrelevant": not relevant,
    }


def write_build(folder):
    folder.mkdir()
    rows = [
        squeez_row("a-1", "grep", OUTPUT.split("\n")[3:6]),
        squeez_row("a-1", "grep", OUTPUT.split("\n")[7:9]),
        squeez_row("b-1", "read_file", []),
    ]
    (folder / "squeez_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "squeez_test.jsonl").write_text(
        json.dumps(squeez_row("c-1", "grep", TEST_OUTPUT.split("\n")[:2], "test", TEST_OUTPUT)) + "\n"
    )
    return folder


def test_keys_are_split_instance_tool_and_repeated_types_are_numbered(tmp_path):
    loaded = ToolOutputSource().load(str(write_build(tmp_path / "sq")), LoadOptions())
    assert [i["key"] for i in loaded.items] == ["train::a-1::grep", "train::a-1::grep::2", "test::c-1::grep"]
    assert loaded.skipped == {"irrelevant_output": 1}
    item = loaded.items[0]
    assert item["context"] == OUTPUT and item["question"].startswith("Where is")
    assert item["evidence"].startswith("Task:\nFix the lookup\n\nRelevant lines of the tool output:\n")
    assert (item["target_category"], item["target_subcategory"]) in TARGETS


def test_the_allowed_targets_are_the_issue_list():
    assert set(TARGETS) == {
        ("contradiction", "value"),
        ("contradiction", "numerical"),
        ("unsupported_addition", "claim"),
        ("unsupported_addition", "behavior"),
        ("fabricated_reference", "identifier"),
        ("fabricated_reference", "section"),
    }


def test_a_scripted_tool_output_build(tmp_path):
    summary = run_build(
        Recipe(
            source="tool_output", input=str(write_build(tmp_path / "sq")), out=tmp_path / "out", ratio=1.0
        ),
        ScriptedBackend(respond),
    )
    assert sum(summary.by_split.values()) + sum(sum(r.values()) for r in summary.failures.values()) >= 3
    assert summary.example.context_modality == "tool_output"
