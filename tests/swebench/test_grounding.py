"""Grounded code contexts: every name a clean code answer uses is shown by its context, whether it
is imported at the top of a long file, defined in another module, or a method of a base class."""

from pathlib import Path

from lettuce_build.core.references import ungrounded_names
from lettuce_build.sources.code import build_answer, file_context, grounded_context
from lettuce_build.swebench.grounding import (
    GroundingBudget,
    definitions_in,
    import_header,
    referenced_definitions,
)
from lettuce_build.swebench.patches import parse_patch
from lettuce_build.swebench.trees import RepoTree

from ..support.gitrepos import make_fix_repo

FILLER = "".join(f"\n\ndef unrelated_{i}(x):\n    return x * {i}\n" for i in range(120))

HELPERS = '''"""Path helpers."""


def normalise_path(path):
    """Collapse repeated slashes."""
    while "//" in path:
        path = path.replace("//", "/")
    return path
'''

BASE = '''"""Base views."""


class BaseView:
    def render_header(self, title):
        return f"<h1>{title}</h1>"
'''

VIEWS = '''"""Views."""

from .base import BaseView
from .helpers import *


class PageView(BaseView):
    def show(self, title, path):
        return title + path
'''

VIEWS_FIXED = VIEWS.replace(
    "        return title + path", "        return self.render_header(title) + normalise_path(path)"
)

CLIENT = (
    '''"""A long client module."""

import os
from .errors import TooManyRedirects
'''
    + FILLER
    + """

def follow(response, limit):
    if limit < 0:
        return None
    return response
"""
)

CLIENT_FIXED = CLIENT.replace("        return None\n", "        raise TooManyRedirects(limit)\n")


def instance(tmp_path: Path, files: dict[str, str], fixed: dict[str, str]):
    info = make_fix_repo(tmp_path / "repo", files, fixed)
    tree = RepoTree(tmp_path / "repo" / ".git", info["base_commit"])
    return tree, parse_patch(info["patch"]), fixed


def function_answer(patch, fixed):
    answer, _ = build_answer("function", patch, fixed)
    return answer


def test_a_name_imported_at_the_top_of_a_long_file_is_in_the_context(tmp_path):
    files = {"pkg/client.py": CLIENT, "pkg/errors.py": "class TooManyRedirects(Exception):\n    pass\n"}
    tree, patch, fixed = instance(tmp_path, files, {"pkg/client.py": CLIENT_FIXED})
    answer = function_answer(patch, fixed)
    block = file_context("pkg/client.py", CLIENT, patch.files[0], chars=3000)
    assert "unrelated_1(" not in block  # windowed: the file is much longer than the budget
    assert "from .errors import TooManyRedirects" in block and "def follow" in block
    assert ungrounded_names(answer, block) == []


def test_a_helper_of_another_module_and_a_base_class_method_are_added_as_definitions(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/helpers.py": HELPERS, "pkg/views.py": VIEWS}
    tree, patch, fixed = instance(tmp_path, files, {"pkg/views.py": VIEWS_FIXED})
    answer = function_answer(patch, fixed)
    files_only = file_context("pkg/views.py", VIEWS, patch.files[0])
    assert ungrounded_names(answer, files_only) == ["normalise_path", "render_header"]

    context, added = grounded_context(patch, {"pkg/views.py": VIEWS}, answer=answer, tree=tree, budget=6000)
    assert [(d.name, d.path) for d in added] == [
        ("render_header", "pkg/base.py"),  # the changed file imports the base class's module
        ("normalise_path", "pkg/helpers.py"),  # ... and the helpers' (a star import)
    ]
    assert (
        "Referenced definitions:" in context and "class BaseView:\n    ...\n    def render_header" in context
    )
    assert ungrounded_names(answer, context) == []


def test_the_modules_the_answer_imports_are_searched_before_those_the_file_imports(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def pick(x):\n    return 'a'\n\n\ndef choose(x):\n    return x\n",
        "pkg/b.py": "def pick(x):\n    return 'b'\n\n\ndef choose(x):\n    return x\n",
        "pkg/main.py": "from .a import *\n\n\ndef run(x):\n    return x\n",
    }
    fixed = {"pkg/main.py": files["pkg/main.py"].replace("return x", "return pick(x)")}
    tree, patch, fixed = instance(tmp_path, files, fixed)
    answer = "```python\nfrom pkg.b import choose\n\n\ndef run(x):\n    return pick(choose(x))\n```"
    found = referenced_definitions(answer, "", tree=tree, changed=["pkg/main.py"])
    # what it calls unimported first; then what it imports and uses, which the context never shows
    assert [(d.name, d.path) for d in found] == [("pick", "pkg/b.py"), ("choose", "pkg/b.py")]
    both = referenced_definitions(
        answer.replace("choose\n", "choose, pick\n"), "", tree=tree, changed=["pkg/main.py"]
    )
    assert [(d.name, d.path) for d in both] == [("choose", "pkg/b.py"), ("pick", "pkg/b.py")]


def test_standard_library_and_third_party_names_stay_as_they_are(tmp_path):
    files = {"pkg/main.py": "import json\nimport requests\n\n\ndef run(x):\n    return x\n"}
    tree, patch, _ = instance(
        tmp_path, files, {"pkg/main.py": files["pkg/main.py"].replace("x\n", "x or 0\n")}
    )
    answer = "```python\ndef run(x):\n    return dumps(get(x))\n```"
    assert referenced_definitions(answer, "", tree=tree, changed=["pkg/main.py"]) == []


def test_the_budget_bounds_count_size_and_total(tmp_path):
    long_helper = "def big(x):\n" + "".join(f"    x += {i}\n" for i in range(200)) + "    return x\n"
    main = "from .more import *\n\n\ndef run(x):\n    return x\n"
    files = {"pkg/main.py": main, "pkg/more.py": long_helper + HELPERS}
    fixed = {"pkg/main.py": main.replace("return x", "return big(normalise_path(x))")}
    tree, patch, fixed = instance(tmp_path, files, fixed)
    answer = "```python\ndef run(x):\n    return big(normalise_path(x))\n```"
    tree_paths = ["pkg/main.py"]
    [first, second] = referenced_definitions(answer, "from .more import *", tree=tree, changed=tree_paths)
    assert len(first.source) <= GroundingBudget().chars_each and first.source.endswith("    ...")
    assert second.name == "normalise_path"
    one = referenced_definitions(
        answer, "from .more import *", tree=tree, changed=tree_paths, budget=GroundingBudget(definitions=1)
    )
    assert [d.name for d in one] == ["big"]
    small = GroundingBudget(total=300)
    assert [
        d.name
        for d in referenced_definitions(
            answer, "from .more import *", tree=tree, changed=tree_paths, budget=small
        )
    ] == ["normalise_path"]


def test_headers_and_definitions_of_a_module():
    source = (
        '"""Doc."""\n\nimport os\ntry:\n    import simplejson as json\nexcept ImportError:\n'
        "    import json\n\nX = 1\n\n\nclass A:\n    @property\n    def b(self):\n        return 1\n"
    )
    assert import_header(source).endswith("    import json")
    found = definitions_in(source)
    assert (
        found["X"] == "X = 1"
        and found["b"] == "class A:\n    ...\n    @property\n    def b(self):\n        return 1"
    )
    assert import_header("def f(:\n") == "" and definitions_in("def f(:\n") == {}


def test_the_repository_tree_reads_files_and_searches_every_file(tmp_path):
    tree, _, _ = instance(tmp_path, {"pkg/a.py": "def fetch_all():\n    pass\n"}, {"pkg/a.py": "x = 1\n"})
    assert tree.paths == ("pkg/a.py",) and tree.read("pkg/a.py").startswith("def fetch_all")
    assert tree.read("pkg/missing.py") is None
    assert tree.mentions("fetch_all") and not tree.mentions("fetch") and not tree.mentions("fetch_everything")


COMPAT = """import sys

is_py2 = sys.version_info[0] == 2
is_py3 = sys.version_info[0] == 3

try:
    import simplejson as json
except ImportError:
    import json

if is_py2:
    from urllib import quote
    builtin_str = str
elif is_py3:
    from urllib.parse import quote
    builtin_str = str
    basestring = (str, bytes)
"""


def test_names_bound_inside_module_level_if_and_try_blocks_and_imports_are_definitions():
    # requests' compat.py binds builtin_str under "if is_py2:" / "elif is_py3:" (psf__requests-1724)
    found = definitions_in(COMPAT)
    assert found["builtin_str"] == "if is_py2:\n    ...\n    builtin_str = str"
    assert found["basestring"] == "elif is_py3:\n    ...\n    basestring = (str, bytes)"
    assert found["json"] == "try:\n    ...\n    import simplejson as json"
    assert found["quote"] == "if is_py2:\n    ...\n    from urllib import quote"  # a re-export counts
