"""Phase 7's rows: repository-disjoint splits, the chat view, compression in lines, the decoy cap."""

from lettuce_build.squeez.assemble import build_row, decoy_cap, repo_split
from lettuce_build.squeez.execute import ToolResult
from lettuce_build.squeez.labels import Labelled


def record(**values):
    result = ToolResult(
        instance_id="pallets__flask-1",
        repo="pallets/flask",
        tool_type="grep",
        command="git grep -n -F -e resolve",
        query="Where is `resolve` defined?",
        **{"is_patch_file": True, **values},
    )
    return Labelled(
        result=result,
        task="resolve splits dotted endpoints wrongly",
        lines=4,
        relevant=[],
        eligible=True,
        kept=True,
    )


def test_the_chat_view_holds_query_task_and_output_and_a_tagged_verbatim_response():
    lines = ["a.py:1:x", "a.py:2:def resolve(e):", "a.py:3:y", "a.py:4:    return e"]
    row = build_row(
        record(),
        lines,
        gold=[{"start_line": 2, "end_line": 2}, {"start_line": 4, "end_line": 4}],
        gold_source="auto",
        auto=[],
    )
    assert (
        row["response"] == "<relevant_lines>\na.py:2:def resolve(e):\na.py:4:    return e\n</relevant_lines>"
    )
    user = row["messages"][1]["content"]
    assert user.startswith("<query>\nWhere is `resolve` defined?\n</query>\n<background_task>\n")
    assert user.endswith("<tool_output>\n" + "\n".join(lines) + "\n</tool_output>")
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["messages"][2]["content"] == row["response"]
    assert row["prompt"].startswith("<|im_start|>system\n") and row["prompt"].endswith(
        "<|im_start|>assistant\n"
    )
    assert user in row["prompt"]
    assert row["compression_ratio"] == 0.5  # in lines: 2 of 4 kept


def test_an_irrelevant_output_has_empty_tags_and_full_compression():
    row = build_row(record(is_patch_file=False), ["x", "y"], gold=[], gold_source="decoy", auto=[])
    assert row["response"] == "<relevant_lines>\n</relevant_lines>"
    assert row["is_irrelevant"] and not row["is_patch_file"] and row["compression_ratio"] == 1.0


def test_the_decoy_cap_keeps_decoys_at_most_the_share_of_all_rows():
    for rows in range(0, 200):
        decoys = decoy_cap(rows, 0.10)
        assert decoys <= 0.10 * (rows + decoys) + 1e-9
        assert decoy_cap(rows, 0.10) + 1 > 0.10 * (rows + decoys + 1)  # and no fewer than that allows
    assert decoy_cap(9, 0.10) == 1 and decoy_cap(8, 0.10) == 0 and decoy_cap(18, 0.10) == 2


def test_splits_never_share_a_repository():
    assert (repo_split("pallets/flask"), repo_split("psf/requests"), repo_split("django/django")) == (
        "test",
        "validation",
        "train",
    )
