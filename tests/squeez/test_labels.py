"""Phase 5: which lines of a real-looking output are about the fix, and which outputs go on."""

from lettuce_build.squeez.execute import ToolResult
from lettuce_build.squeez.labels import label, relevant_lines
from lettuce_build.swebench.patches import parse_patch

#: the fix changes line 42 of pkg/core.py, inside ``def resolve``
PATCH = parse_patch(
    "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
    "@@ -40,5 +40,5 @@ def resolve(endpoint):\n"
    "     if endpoint is None:\n"
    "         return None\n"
    "-    return endpoint.split('.')\n"
    "+    return endpoint.rsplit('.', 1)\n"
    "     # done\n"
    "     pass\n"
)


def result(tool_type, output, target="pkg/core.py", is_patch_file=True):
    return ToolResult(
        instance_id="i",
        repo="r",
        tool_type=tool_type,
        command="c",
        query="q",
        target=target,
        is_patch_file=is_patch_file,
        output=output,
    )


def blame_line(number, code, path=""):
    return f"5a49656e {path}(Some Author 2021-01-01 12:00:00 +0000 {number:>4}) {code}"


def test_blame_marks_the_changed_lines_and_the_changed_definition_not_every_line_with_the_path():
    # a renamed file's blame prints its path on every line: that says nothing about the fix
    lines = [blame_line(n, f"x_{n} = {n}", "pkg/core.py ") for n in range(1, 60)]
    lines[29] = blame_line(30, "def resolve(endpoint):", "pkg/core.py ")
    found = relevant_lines(result("git_blame", "\n".join(lines)), PATCH)
    assert [i + 1 for i in found] == [30, 40, 41, 42, 43, 44]


def test_lint_marks_whole_findings_at_changed_lines_only():
    finding = [
        "E501 Line too long (120 > 88)",
        "  --> pkg/core.py:{line}:89",
        "   |",
        "{line} |     return something_long",
        "   |",
        "",
    ]
    far = [text.format(line=10) for text in finding]
    near = [text.format(line=42) for text in finding]
    output = "\n".join(far + near + far + ["Found 3 errors."])
    found = relevant_lines(result("lint_output", output), PATCH)
    assert found == [6, 7, 8, 9, 10]  # the second finding, blank line aside


def test_grep_marks_hits_near_the_change_and_the_definition_of_the_changed_function():
    output = "\n".join(
        [
            "docs/api.rst:12:resolve an endpoint",
            "pkg/core.py:30:def resolve(endpoint):",
            "pkg/core.py:42:    return endpoint.split('.')",
            "pkg/core.py:300:    resolve(x)",
            "pkg/other.py:5:from pkg.core import resolve",
        ]
    )
    assert relevant_lines(result("grep", output), PATCH) == [1, 2]


def test_test_output_marks_the_failure_evidence_not_the_test_source():
    output = "\n".join(
        [
            "..F",
            "=================================== FAILURES ===================================",
            "______________________________ test_resolve_dotted ______________________________",
            "",
            "    def test_resolve_dotted():",
            "        value = 'a.b.c'",
            "        # assert the last part alone is split off",
            ">       assert resolve(value) == ['a.b', 'c']",
            "E       AssertionError: assert ['a', 'b', 'c'] == ['a.b', 'c']",
            "",
            "tests/test_core.py:8: AssertionError",
            "=========================== short test summary info ============================",
            "FAILED tests/test_core.py::test_resolve_dotted - AssertionError: assert ['a', 'b', 'c']...",
            "1 failed, 2 passed in 0.05s",
        ]
    )
    assert relevant_lines(result("test_output", output), PATCH) == [2, 7, 8, 10, 12, 13]


def test_git_diff_marks_an_earlier_change_only_where_it_reaches_the_fix():
    output = "\n".join(
        [
            "diff --git a/pkg/core.py b/pkg/core.py",
            "index 1111111..2222222 100644",
            "--- a/pkg/core.py",
            "+++ b/pkg/core.py",
            "@@ -3,3 +3,3 @@ import os",
            " import sys",
            "-import re",
            "+import regex",
            " ",
            "@@ -41,3 +41,3 @@ def resolve(endpoint):",
            "         return None",
            "-    return endpoint.split('/')",
            "+    return endpoint.split('.')",
        ]
    )
    assert relevant_lines(result("git_diff", output), PATCH) == [0, 1, 2, 3, 9, 10, 11, 12]


def test_ls_marks_the_touched_file_its_tests_and_their_folders():
    output = "\n".join(
        [
            "pkg:",
            "total 12",
            "-rw-r--r-- 1 u u  300 Jan  1 00:00 core.py",
            "-rw-r--r-- 1 u u  200 Jan  1 00:00 util.py",
            "",
            "tests:",
            "-rw-r--r-- 1 u u  100 Jan  1 00:00 test_core.py",
            "-rw-r--r-- 1 u u  100 Jan  1 00:00 test_util.py",
        ]
    )
    assert relevant_lines(result("ls", output, target="pkg tests"), PATCH) == [0, 2, 5, 6]


def test_collected_tests_of_the_instance_test_files_are_relevant():
    output = "\n".join([f"tests/test_util.py::test_{i}" for i in range(5)] + ["tests/test_core.py::test_a"])
    found = relevant_lines(result("build_output", output), PATCH, tests=["tests/test_core.py"])
    assert found == [5]


def numbered(count):
    return "\n".join(f"{n:>6}\tline {n}" for n in range(1, count + 1))


def test_an_output_of_ten_lines_or_more_goes_on_even_when_its_labels_fail_the_keep_filter():
    short = label(result("read_file", numbered(9)), PATCH)
    assert not short.eligible and short.reason == "fewer than 10 lines (9)" and short.held == "too few lines"
    weak = label(result("git_log", "\n".join(f"abc{n} commit {n}" for n in range(12))), PATCH)
    assert weak.eligible and not weak.kept  # the teacher decides; only without one is it dropped
    assert (
        weak.reason == "fewer than 3 relevant lines (0 of 12 lines)" and weak.held == "too few relevant lines"
    )


def test_keep_filter_reasons_give_counts_that_never_contradict_the_bounds():
    # 2 relevant lines of 101 is a share of 0.0198: rounded it would read "0.02 outside [0.02, 0.4]"
    output = numbered(101)
    patch = parse_patch(
        "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
        "@@ -50,2 +50,2 @@\n-a\n-b\n+c\n+d\n"
    )
    labelled = label(result("read_file", output), patch)
    assert labelled.relevant == [49, 50]
    assert labelled.reason == "fewer than 3 relevant lines (2 of 101 lines)"
    wide = parse_patch(
        "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
        "@@ -1,2 +1,2 @@\n-a\n+c\n x\n@@ -50,2 +50,2 @@\n-b\n+d\n y\n"
    )
    assert (
        label(result("read_file", numbered(300)), wide).reason == "relevant share below 0.02 (4 of 300 lines)"
    )


def test_a_decoy_goes_on_as_all_irrelevant_without_labels():
    decoy = label(result("read_file", numbered(40), target="pkg/util.py", is_patch_file=False), PATCH)
    assert decoy.eligible and decoy.kept and decoy.relevant == []
