"""The code source on a real repository: context around the patch, three answer styles, size limits."""

import json
from pathlib import Path

import pytest

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.core.schema import check_sample
from lettuce_build.publish.hub import collect, render_card
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.code import CodeSource, build_answer, file_context
from lettuce_build.swebench.patches import parse_patch

from ..support.documents import code_respond
from ..support.gitrepos import CORE_BASE, CORE_FIXED, make_widgets_repo
from ..support.scripted import ScriptedBackend


@pytest.fixture
def world(tmp_path):
    info = make_widgets_repo(tmp_path / "src" / "acme" / "widgets")
    row = {
        "instance_id": "acme__widgets-1",
        "repo": "acme/widgets",
        "problem_statement": "scale ignores negatives",
        **info,
    }
    path = tmp_path / "instances.jsonl"
    path.write_text(
        json.dumps(row) + "\n" + json.dumps({**row, "instance_id": "ghost-1", "repo": "ghost/x"}) + "\n"
    )
    return path, f"file://{tmp_path}/src/{{repo}}", info


def load(path, template, tmp_path, seed=0):
    return CodeSource().load(
        str(path), LoadOptions(repo_url=template, work_dir=tmp_path / "repos", seed=seed)
    )


def test_context_is_the_touched_file_at_the_base_commit_in_a_fence(world, tmp_path):
    path, template, _ = world
    loaded = load(path, template, tmp_path)
    [item] = loaded.items
    assert item["context"].startswith('File: widgets/core.py\n```python\n"""Core widgets."""')
    assert "if value < 0:" in item["context"]  # the base version, not the fix
    # the raw issue; the request stage writes the question from it
    assert item["issue"] == "scale ignores negatives" and item["split"] == "test"
    assert json.loads(item["metadata"])["problem_statement"] == "scale ignores negatives"
    assert loaded.skipped == {"repository_unavailable:ghost/x": 1}


def test_a_long_file_keeps_a_window_around_the_patch():
    text = "\n".join(f"line {i}" for i in range(3000))
    patch = parse_patch(
        "diff --git a/big.py b/big.py\n--- a/big.py\n+++ b/big.py\n@@ -1500,1 +1500,1 @@\n"
        "-line 1499\n+line X\n"
    )
    block = file_context("big.py", text, patch.files[0])
    # 60 lines either side of the changed line 1500
    assert block.startswith("File: big.py (lines 1440-1560 of 3000)") and "line 1499" in block
    assert "line 10\n" not in block


def test_a_long_file_keeps_its_import_header_and_fits_its_budget():
    text = '"""Big."""\n\nimport os\nfrom .errors import TooManyRedirects\n\n' + "\n".join(
        f"def f{i}():\n    return {i}\n" for i in range(1500)
    )
    patch = parse_patch(
        "diff --git a/big.py b/big.py\n--- a/big.py\n+++ b/big.py\n@@ -3000,1 +3000,1 @@\n"
        "-    return 998\n+    raise TooManyRedirects()\n"
    )
    block = file_context("big.py", text, patch.files[0], chars=2000)
    assert len(block) <= 2000
    assert block.startswith("File: big.py (lines 1-4 and ")
    assert "from .errors import TooManyRedirects\n...\n" in block and "return 998" in block


def test_the_three_answer_styles(world):
    _, _, info = world
    patch = parse_patch(info["patch"])
    function, code = build_answer("function", patch, {"widgets/core.py": CORE_FIXED})
    assert "def scale(value, factor=DEFAULT_FACTOR):" in function and "if value < 0" not in function
    assert function.startswith("In `widgets/core.py`, the fixed functions:\n```python")
    hunk, _ = build_answer("hunk", patch, {})
    assert hunk.startswith("The fix to `widgets/core.py`:\n```diff\n@@ -") and "-    if value < 0:" in hunk
    replace, _ = build_answer("replace", patch, {})
    assert "replace:\n```python" in replace and "\nwith:\n```python" in replace
    # every hunk of the fix, in every style: the empty-readings guard is the patch's second hunk
    for answer in (function, hunk, replace):
        assert "if not self.readings:" in answer
    assert replace.count("replace:") == 2


def test_an_answer_covers_every_file_of_the_patch():
    patch = parse_patch(
        "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n"
        "@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
        "diff --git a/docs/b.md b/docs/b.md\n--- a/docs/b.md\n+++ b/docs/b.md\n"
        "@@ -1 +1 @@\n-old text\n+new text\n"
    )
    for style in ("function", "hunk", "replace"):
        answer, _ = build_answer(style, patch, {"pkg/a.py": "x = 1\ny = 3\n", "docs/b.md": None})
        assert "pkg/a.py" in answer and "docs/b.md" in answer and "new text" in answer and "y = 3" in answer
    assert CORE_BASE != CORE_FIXED


def test_styles_are_seeded_and_all_three_occur(world, tmp_path):
    path, template, _ = world
    styles = {
        json.loads(load(path, template, tmp_path / str(s), seed=s).items[0]["metadata"])["answer_style"]
        for s in range(12)
    }
    assert styles == {"function", "hunk", "replace"}


def init_patch(lines):
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/widgets/__init__.py b/widgets/__init__.py\n--- a/widgets/__init__.py\n"
        f"+++ b/widgets/__init__.py\n@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


@pytest.mark.parametrize(
    ("lines", "reason"),
    [(["X = 1"], "trivial_answer"), ([f"VALUE_{i} = '{'x' * 40}'" for i in range(300)], "huge_answer")],
)
def test_trivial_and_huge_answers_are_skipped_with_a_count(tmp_path, lines, reason):
    info = make_widgets_repo(tmp_path / "src" / "acme" / "widgets")
    path = tmp_path / "instances.jsonl"
    path.write_text(
        json.dumps(
            {
                "instance_id": "t-1",
                "repo": "acme/widgets",
                "problem_statement": "x",
                "base_commit": info["base_commit"],
                "patch": init_patch(lines),
            }
        )
        + "\n"
    )
    loaded = load(path, f"file://{tmp_path}/src/{{repo}}", tmp_path)
    assert loaded.items == [] and loaded.skipped == {reason: 1}


@pytest.mark.parametrize(
    ("struct_ratio", "seed", "error", "span_text"),
    [
        (1.0, 0, "fabricated_api", ".normalized_total()"),
        (0.0, 2, "wrong_implementation", " + offset_bias"),
        (0.0, 1, "unrequested_change", "record_history(value)"),
    ],
)
def test_a_scripted_code_build_asks_a_request_and_injects_a_coding_agents_error(
    world, tmp_path, struct_ratio, seed, error, span_text
):
    path, template, _ = world
    summary = run_build(
        Recipe(
            source="code",
            input=str(path),
            out=tmp_path / "out",
            ratio=1.0,
            repo_url=template,
            struct_ratio=struct_ratio,
            seed=seed,
        ),
        ScriptedBackend(code_respond),
    )
    assert summary.hallucinated == 1 and summary.failures == {}
    sample = summary.example
    assert check_sample(sample) == [] and sample.context_modality == "code"
    assert sample.question == "Please fix this: scale ignores negatives."
    assert sample.prompt.startswith("Question: Please fix this:")
    [span] = sample.labels
    assert span.label == error and span.text.endswith(span_text.strip())
    # an inserted block is labelled by what it adds: the line it follows stays true
    assert (error == "unrequested_change") == (span.text == "record_history(value)")
    fences = [i for i in range(len(sample.answer)) if sample.answer.startswith("```", i)]
    assert fences[0] < span.start < fences[-1]


def test_a_relative_output_folder_works_for_every_answer_style(world, tmp_path, monkeypatch):
    path, template, _ = world
    monkeypatch.chdir(tmp_path)
    styles = set()
    for seed in range(8):
        summary = run_build(
            Recipe(
                source="code",
                input=str(path),
                out=Path(f"out-{seed}"),
                ratio=0.0,
                repo_url=template,
                seed=seed,
            ),
            ScriptedBackend(code_respond),
        )
        assert summary.clean == 1 and summary.failures == {}
        styles.add(json.loads(summary.example.model_dump_json())["metadata"]["answer_style"])
    assert styles == {"function", "hunk", "replace"}


def test_the_code_card_publishes_the_share_of_answers_with_ungrounded_names(world, tmp_path):
    path, template, _ = world
    out = tmp_path / "out"
    run_build(
        Recipe(source="code", input=str(path), out=out, ratio=0.0, repo_url=template),
        ScriptedBackend(code_respond),
    )
    _, stats = collect(out, "code", max_failure_rate=1.0)
    readme = tmp_path / "README.md"
    readme.write_text("---\n---\n")
    render_card(readme, [stats], "org/code")
    assert "answers calling a name the context never shows: 0 of 1 (0.00)" in readme.read_text()
