"""Parsing a gold patch: files, hunks on both sides, names."""

from lettuce_build.swebench.patches import parse_patch

from ..support.gitrepos import make_widgets_repo


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
        "@@ -10,4 +10,4 @@ def register_blueprint(self, blueprint):\n"
        "     def __init__(self, name):\n"
        "-        if endpoint and '.' in endpoint:\n"
        "+        if endpoint and '.' in endpoint.strip():\n"
        "-        self.name = name\n"
        "+        self.name = validate_name(name)\n"
    )
    assert info.definitions() == ["register_blueprint"]
    assert info.telling_names() == ["register_blueprint", "endpoint", "strip", "validate_name"]
