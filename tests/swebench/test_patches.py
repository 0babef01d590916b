"""Parsing a gold patch: files, hunks on both sides, names."""

import git
import pytest

from lettuce_build.core.errors import PatchError
from lettuce_build.swebench.patches import parse_patch

from ..support.gitrepos import make_widgets_repo

AUTHOR = git.Actor("Tests", "tests@example.org")


def test_a_real_patch_gives_files_hunks_and_changed_base_lines(tmp_path):
    info = parse_patch(make_widgets_repo(tmp_path / "w")["patch"])
    assert info.paths == ["widgets/core.py"]
    [file] = info.files
    assert len(file.hunks) == 2
    assert file.hunks[0].old_changed == [10, 11]  # the two removed lines of scale()
    assert 24 in file.hunks[1].old_changed  # the insertion after "def mean(self):"


def test_names_come_from_changed_lines():
    patch = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n"
        " x = 1\n-def old_name(a):\n+def new_name(a):\n+    LIMIT = 'too many items'\n"
    )
    info = parse_patch(patch)
    assert info.identifiers() == ["new_name", "LIMIT", "old_name"]


def test_telling_names_are_the_fix_own_names_never_generic_words_or_dunders():
    info = parse_patch(
        "diff --git a/pkg/app.py b/pkg/app.py\n--- a/pkg/app.py\n+++ b/pkg/app.py\n"
        "@@ -10,3 +10,3 @@ def register_blueprint(self, blueprint):\n"
        "     def __init__(self, name):\n"
        "-        if endpoint and '.' in endpoint:\n"
        "+        if endpoint and '.' in endpoint.strip():\n"
        "-        self.name = name\n"
        "+        self.name = validate_name(name)\n"
    )
    assert info.definitions() == ["register_blueprint"]
    assert info.telling_names() == ["register_blueprint", "endpoint", "strip", "validate_name"]


def _git_diff(tmp_path, before: dict[str, str], after: dict[str, str]) -> str:
    """The diff git itself writes between two versions of some files."""
    repo = git.Repo.init(tmp_path / "repo", initial_branch="main")
    for files in (before, after):
        for name, text in files.items():
            (tmp_path / "repo" / name).write_text(text)
        repo.index.add(list(files))
        repo.index.commit("version", author=AUTHOR, committer=AUTHOR)
    return repo.git.diff("HEAD~1", "HEAD")


def test_a_removed_rst_underline_is_a_changed_line_not_a_file_header(tmp_path):
    patch = _git_diff(
        tmp_path,
        {"docs.rst": "Intro\n\nUsage\n-----\n\nCall it.\n"},
        {"docs.rst": "Intro\n\nUsage\n=====\n\nCall it.\n"},
    )
    [file] = parse_patch(patch).files
    assert file.path == "docs.rst" and file.removed == ["-----"] and file.added == ["====="]
    assert file.hunks[0].old_changed == [4]
    assert "------" in [raw for _, raw in file.hunks[0].lines]  # the patch's own line, kept


def test_an_added_line_starting_with_plus_signs_keeps_the_lines_after_it_in_place(tmp_path):
    patch = _git_diff(
        tmp_path,
        {"counter.c": "int f(int i) {\n    return i;\n}\n"},
        {"counter.c": "int f(int i) {\n++i;\n    return i;\n}\n"},
    )
    [file] = parse_patch(patch).files
    [hunk] = file.hunks
    assert file.added == ["++i;"]
    assert hunk.old_changed == [1]  # inserted after line 1
    assert hunk.side(new=True) == "int f(int i) {\n++i;\n    return i;\n}"
    assert hunk.side(new=False) == "int f(int i) {\n    return i;\n}"


def test_a_patch_that_is_not_a_unified_diff_is_an_error_naming_why():
    broken = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,5 @@\n-x = 1\n+x = 2\n"
    with pytest.raises(PatchError, match="not a unified diff"):
        parse_patch(broken)
