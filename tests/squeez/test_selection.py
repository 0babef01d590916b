"""Phases 5-7 over recorded tool results: what goes to the teacher, what gold a row gets, and the
decoy cap. (Phase 4's results are written as phase 4 writes them.)"""

import json

from lettuce_build.squeez.execute import ToolResult, number_lines
from lettuce_build.squeez.options import SqueezOptions
from lettuce_build.squeez.pipeline import Squeez

from ..support.scripted import ScriptedBackend

PATCH = (
    "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
    "@@ -20,5 +20,5 @@ def resolve(endpoint):\n"
    "     a = 1\n     b = 2\n-    return endpoint.split('.')\n+    return endpoint.rsplit('.', 1)\n"
    "     c = 3\n     d = 4\n"
)


def recorded(tmp_path, results, seed=0) -> Squeez:
    out = tmp_path / "out"
    (out / "phase4").mkdir(parents=True)
    instance = {
        "instance_id": "acme__pkg-1",
        "repo": "acme/pkg",
        "base_commit": "a" * 40,
        "patch": PATCH,
        "problem_statement": "resolve splits every dot",
    }
    (out / "phase1_instances.jsonl").write_text(json.dumps(instance) + "\n")
    (out / "phase4" / "acme__pkg-1.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    return Squeez(out, SqueezOptions(seed=seed))


def read_file(n, target="pkg/core.py", is_patch_file=True):
    source = "\n".join(f"line_{i} = {i}" for i in range(1, 61))
    return ToolResult(
        instance_id="acme__pkg-1",
        repo="acme/pkg",
        tool_type="read_file",
        command=f"git show {n}:{target}",
        query="Which lines matter?",
        target=target,
        is_patch_file=is_patch_file,
        output=number_lines(source),
    )


#: a grep whose auto-label finds 2 lines (the exact fix line and the definition): too few for the
#: keep filter, exactly what a teacher should see
GREP = ToolResult(
    instance_id="acme__pkg-1",
    repo="acme/pkg",
    tool_type="grep",
    command="git grep -n -F -e resolve",
    query="Where is `resolve` defined or used?",
    output="\n".join(
        [f"docs/page{i}.rst:{i}:see resolve" for i in range(10)]
        + ["pkg/core.py:19:def resolve(endpoint):", "pkg/core.py:22:    return endpoint.split('.')"]
    ),
)


def rows(squeez):
    return [
        json.loads(line)
        for s in ("train", "validation", "test")
        for line in squeez.out.joinpath(f"squeez_{s}.jsonl").read_text().splitlines()
    ]


def test_decoys_are_capped_at_their_share_of_rows_labelled_irrelevant_and_reported(tmp_path):
    results = [read_file(n) for n in range(18)] + [read_file(n, "pkg/util.py", False) for n in range(10)]
    squeez = recorded(tmp_path, results)
    assert "28 of 28 outputs go on: 18 to the teacher, 10 decoys" in squeez.phase5()
    assert "decoys: 2 of 10 kept (at most 10% of rows)" in squeez.phase7()
    assembled = rows(squeez)
    decoys = [r for r in assembled if not r["is_patch_file"]]
    assert len(assembled) == 20 and len(decoys) == 2
    assert all(r["is_irrelevant"] and r["gold_source"] == "decoy" and r["gold_spans"] == [] for r in decoys)
    text, report = squeez.phase8()
    assert report.decoy_rows == 2 and report.selection.decoys_available == 10
    assert "decoys: 2 of 10 kept" in text
    again = recorded(tmp_path / "again", results)
    again.phase5()
    again.phase7()
    assert [r["command"] for r in rows(again)] == [r["command"] for r in assembled]  # seeded choice


def test_an_output_whose_auto_label_has_two_lines_reaches_the_teacher_and_gets_its_spans(tmp_path):
    squeez = recorded(tmp_path, [GREP])
    assert "1 to the teacher" in squeez.phase5()
    squeez.phase6(None)
    assert "0 rows" in squeez.phase7()  # without a teacher, 2 lines fail the keep filter
    teacher = ScriptedBackend(lambda r: json.dumps({"spans": [{"start": 11, "end": 12}]}))
    squeez.phase6(teacher)
    [request] = teacher.requests
    assert "Tool: grep\nCommand: git grep -n -F -e resolve" in request.messages[-1].content
    squeez.phase7()
    [row] = rows(squeez)
    assert row["gold_source"] == "teacher" and row["gold_spans"] == [{"start_line": 11, "end_line": 12}]
    assert row["relevant_lines"] == [
        "pkg/core.py:19:def resolve(endpoint):",
        "pkg/core.py:22:    return endpoint.split('.')",
    ]
    assert row["auto_spans"] == [{"start_line": 11, "end_line": 12}]  # the teacher agreed with the label
