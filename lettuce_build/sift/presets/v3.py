r"""v3: the v2 set with its known defects fixed (spec/sift.md), plus the ones found while
reproducing it.

Changes against v2, each for a reason:
- Patterns see the code, not the diff line: v2 matched the raw "+..." line, so the anchored
  `^\s*path\s*\(` could never fire.
- `@login_required\b` instead of `\b@login_required\b`: there is no word boundary before "@".
- The narrow request patterns come before the broad `\brequest\.`, which v2 listed first so
  that it swallowed every narrower match. Where `request` is pytest's fixture request (the
  pytest repository, any conftest.py), its attributes (`request.node`, `request.config`, ...)
  and its Session's (`request.session.items`) are not user input or auth; anywhere else they
  are what they say (Django's `request.path`, `request.session`).
- Exclusions are case-sensitive and apply to file_io only: under v2's case-insensitive,
  line-wide `\bPath\s*\(` every Django `path("...")` route line was dropped for every category.
  A pathlib line is still file_io when it calls the builtin `open(` (`open(Path(x))`).
- The route pattern `^\s*path\s*\(\s*['"]` is case-sensitive: `Path("out").write_text(...)`
  at a line start is not a route.
- `\bresolve\s*\(` is meant for URL resolving (`resolve(path)`) but also fires on pathlib's
  argument-less `.resolve()`; v2's line-wide `Path(` exclusion hid that. v3 wants an argument.
- `\bauthenticat` and `\bpermission` miss Django's own idioms (`is_authenticated`,
  `has_permission`): an underscore is a word character, so there is no boundary. v3 lets an
  underscore stand before them.
- Comments, trailing comments and docstrings of Python files are not code, and added lines
  of documentation files (.rst, .txt, .md) are not code either.
"""

from lettuce_build.sift.patterns import PatternSet
from lettuce_build.sift.presets.v2 import PRESET as V2

_PYTEST_REQUEST_ATTRIBUTES = (
    "node|config|param|getfixturevalue|addfinalizer|fixturename|fixturenames|applymarker|cls|module"
    "|function|instance|keywords|scope|path|fspath|raiseerror|session"
)
_PYTEST_SESSION_ATTRIBUTES = (
    "items|config|shouldfail|shouldstop|testscollected|testsfailed|gethookproxy|perform_collect|name"
    "|nodeid|startpath|_\\w*"
)

_categories = {name: list(patterns) for name, patterns in V2.categories.items()}
_categories["user_input"] = _categories["user_input"][1:4] + [r"\brequest\."] + _categories["user_input"][4:]
_categories["auth"] = [
    r"(?<![^\W_])authenticat",
    r"(?<![^\W_])permission",
    r"\blogin\b",
    r"\blogout\b",
    r"\bcsrf\b",
    r"@login_required\b",
    r"request\.session\b",
    r"session\[",
]

_REVISED_ROUTING = {
    r"\bresolve\s*\(": r"\bresolve\s*\(\s*(?!\)|strict\b)",
    r"^\s*path\s*\(\s*['\"]": r"(?-i:^\s*path\s*\(\s*['\"])",
}
_categories["url_routing"] = [_REVISED_ROUTING.get(source, source) for source in _categories["url_routing"]]
#: a line that calls the builtin open( is file I/O, whatever else it holds
_NO_BUILTIN_OPEN = r"^(?!.*(?<![\w.])open\s*\()"

PRESET = PatternSet(
    name="v3",
    description="v2 with its dead patterns revived and its false positives (comments, docs, pytest) removed.",
    categories=_categories,
    exclusions=[],
    category_exclusions={
        "file_io": [rf"{_NO_BUILTIN_OPEN}.*(?-i:pathlib\.Path)", rf"{_NO_BUILTIN_OPEN}.*(?-i:\bPath\s*\()"]
    },
    pytest_exclusions={
        "user_input": [rf"\brequest\.(?:{_PYTEST_REQUEST_ATTRIBUTES})\b"],
        "auth": [rf"request\.session\.(?:{_PYTEST_SESSION_ATTRIBUTES})\b"],
    },
    strip_added_marker=True,
    skip_comments_and_docstrings=True,
    skip_documentation_files=True,
)
