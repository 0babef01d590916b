"""Grounded code contexts: every name a code answer uses is shown by the context it comes with.

The taxonomy calls a name that appears nowhere in the context a fabricated reference, so a clean
answer calling a helper the context never shows teaches a detector to contradict itself. Two
things close that gap:

- a windowed Python file keeps its import header (`import_header`): a name imported at the top
  of a long file is then in the context, and an import is evidence that the name exists;
- the definitions the answer references that the context still lacks are looked up in the
  repository at the base commit and shown as a "Referenced definitions" block
  (`referenced_definitions`), searched in this order: the changed files (the functions and
  classes the patch modifies, then the rest of those files), the modules the answer imports,
  then the modules the changed files import (base classes, mixins, siblings). Standard-library
  and third-party names resolve to no file of the repository and stay as they are.

What may be added is bounded by `GroundingBudget`, in one place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

from lettuce_build.core.references import code_of, imported_unshown, ungrounded_names
from lettuce_build.swebench.trees import RepoTree


class GroundingBudget(BaseModel):
    """How far a code context may grow to show what its answer references."""

    #: at most this many definitions are added
    definitions: int = Field(default=8, ge=0)
    #: a longer definition keeps its first lines up to this many characters, then "..."
    chars_each: int = Field(default=1_200, ge=80)
    #: the whole block, at most (each definition counted as shown: its path and fence too)
    total: int = Field(default=4_000, ge=0)


DEFAULT_BUDGET = GroundingBudget()


class Definition(BaseModel):
    """A definition added to a context: the name it defines, where, and its (possibly cut) source."""

    name: str
    path: str
    source: str


def import_header(source: str) -> str:
    """A Python module's leading lines through its last import before the first definition: the
    docstring, the imports (those inside a top-level ``try``/``if`` too, as in compatibility
    shims) and what lies between them. Empty for a module that does not parse or imports nothing."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return ""
    end = 0
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            break
        if any(isinstance(inner, ast.Import | ast.ImportFrom) for inner in ast.walk(node)):
            end = node.end_lineno or end
    return "\n".join(source.split("\n")[:end])


def definitions_in(source: str) -> dict[str, str]:
    """The names a Python module defines, each with the source that defines it: functions,
    classes, single-name assignments and imports at module level, those inside a module-level
    ``if``/``try`` too (``if is_py2: builtin_str = str``, shown under the line that guards them),
    and methods (shown under their class's first line, so a reader sees whose method it is). An
    import defines the names it binds: a re-export is where a reader sees a name come from. The
    first definition of a name wins."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    lines = source.split("\n")

    def segment(node: ast.stmt, heads: tuple[str, ...] = ()) -> str:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)])
        return "\n".join([*heads, "\n".join(lines[first - 1 : node.end_lineno])])

    found: dict[str, str] = {}
    for node, heads in _module_level(tree.body, lines):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.setdefault(node.name, segment(node, heads))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                found.setdefault(targets[0].id, segment(node, heads))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound != "*":
                    found.setdefault(bound, segment(node, heads))
        if isinstance(node, ast.ClassDef):
            head = lines[node.lineno - 1]
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.setdefault(member.name, f"{head}\n    ...\n{segment(member)}")
    return found


def _module_level(
    body: list[ast.stmt], lines: list[str], heads: tuple[str, ...] = ()
) -> Iterator[tuple[ast.stmt, tuple[str, ...]]]:
    """Each statement that runs at module level, with the lines of the ``if``/``try`` blocks
    around it (each block's own opening line: ``if is_py2:``, ``except ImportError:``)."""
    for node in body:
        if not isinstance(node, ast.If | ast.Try):
            yield node, heads
            continue
        blocks = [node.body, node.orelse]
        if isinstance(node, ast.Try):
            blocks += [handler.body for handler in node.handlers] + [node.finalbody]
        for block in blocks:
            if not block:
                continue
            if block is node.body:
                opening = lines[node.lineno - 1]
            elif isinstance(block[0], ast.If) and lines[block[0].lineno - 1].lstrip().startswith("elif"):
                yield from _module_level(block, lines, heads)  # an elif opens its own block
                continue
            else:
                opening = lines[block[0].lineno - 2]  # "else:", "except ImportError:", "finally:"
            yield from _module_level(block, lines, (*heads, opening, "    ..."))


#: "from .x import a, b", or "from x import (a,\n b)" over several lines
_FROM_IMPORT = re.compile(
    r"^[+ -]?[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w \t,*]+))", re.MULTILINE
)
_IMPORT = re.compile(r"^[+ -]?[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)", re.MULTILINE)


def _module_index(tree: RepoTree) -> dict[str, list[str]]:
    """Every dotted suffix of every Python file's module name -> the files it may name, shortest
    path first ("flask.helpers" and "helpers" -> ["src/flask/helpers.py"])."""
    index: dict[str, list[str]] = {}
    for path in tree.paths:
        if not path.endswith(".py"):
            continue
        parts = list(PurePosixPath(path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for start in range(len(parts)):
            index.setdefault(".".join(parts[start:]), []).append(path)
    for paths in index.values():
        paths.sort(key=lambda p: (p.count("/"), "test" in p, p))
    return index


def imported_files(code: str, importer: str, tree: RepoTree, index: dict[str, list[str]]) -> list[str]:
    """The repository files that ``code`` (written in the file ``importer``) imports, in order.
    A relative import resolves against the importer's package; an absolute one to the shortest
    path whose module name ends with it. Modules of no file of the tree (the standard library,
    third-party packages) resolve to nothing."""
    found: list[str] = []
    package = PurePosixPath(importer).parent
    paths = set(tree.paths)
    for match in _FROM_IMPORT.finditer(code):
        dots, module, grouped, names = match.groups()
        names = grouped or names
        # the names imported, which may be submodules ("from . import helpers"); not "*"
        members = [n.strip() for n in names.replace("\n", ",").split(",") if n.strip() not in ("", "*")]
        if dots:
            base = package
            for _ in range(len(dots) - 1):
                base = base.parent
            stem = base.joinpath(*module.split(".")) if module else base
            candidates = [f"{stem}.py", f"{stem}/__init__.py"]
            candidates += [f"{stem}/{m.split()[0]}.py" for m in members]
            found += [str(PurePosixPath(c)) for c in candidates if str(PurePosixPath(c)) in paths]
        else:
            found += index.get(module, [])[:1]
            found += [p for m in members for p in index.get(f"{module}.{m.split()[0]}", [])[:1]]
    for match in _IMPORT.finditer(code):
        for module in match.group(1).split(","):
            found += index.get(module.strip(), [])[:1]
    return list(dict.fromkeys(found))


def _search_order(answer: str, changed: list[str], tree: RepoTree) -> Iterator[str]:
    """Where a missing name is looked for: the changed files, the modules the answer imports, then
    the modules the changed files import."""
    index = _module_index(tree)
    python = [p for p in changed if p.endswith(".py")]
    yield from python
    for path in python:
        yield from imported_files(code_of(answer), path, tree, index)
    for path in python:
        yield from imported_files(tree.read(path) or "", path, tree, index)


def _cut(source: str, chars: int) -> str:
    """The source's first whole lines within ``chars``, then a line "..." when anything was left out."""
    if len(source) <= chars:
        return source
    kept, used = [], 0
    for line in source.split("\n"):
        if used + len(line) + 1 > chars - 8:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, "    ..."])


#: methods of the builtin types: a call of one (``rows.append(x)``) needs no definition
_BUILTIN_METHODS = frozenset(
    name for kind in (str, bytes, list, dict, set, tuple, int, float) for name in dir(kind)
)
_METHOD_CALL = re.compile(r"(?<=[\w)\]])\.([A-Za-z_]\w*)\s*\(")


def _methods_called(answer: str, context: str) -> list[str]:
    """Methods the answer calls on other objects (``request.prepare_auth(...)``) that the context
    never names: not a fabricated reference by the taxonomy's letter (the object's class is not
    resolved), but a reader checks them as well, so they are shown when the repository has them,
    after every bare name."""
    called = dict.fromkeys(_METHOD_CALL.findall(code_of(answer)))
    return [
        name
        for name in called
        if name not in _BUILTIN_METHODS and not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", context)
    ]


def referenced_definitions(
    answer: str, context: str, *, tree: RepoTree, changed: list[str], budget: GroundingBudget = DEFAULT_BUDGET
) -> list[Definition]:
    """The definitions of the names ``answer`` uses that ``context`` never shows, found in the
    repository (see the module's docstring for the order), within ``budget``: the names it
    calls, raises or catches first, then those it imports from the repository and uses (the
    import says the name exists, but not what it is: psf__requests-1724's ``builtin_str``), then
    the methods it calls on other objects."""
    found: list[Definition] = []
    wanted = (
        ungrounded_names(answer, context),
        imported_unshown(answer, context),
        _methods_called(answer, context),
    )
    for names in wanted:
        missing = [name for name in names if name not in {d.name for d in found}]
        for path in dict.fromkeys(_search_order(answer, changed, tree)):
            if not missing:
                break
            defined = definitions_in(tree.read(path) or "")
            for name in [n for n in missing if n in defined]:
                definition = Definition(name=name, path=path, source=_cut(defined[name], budget.chars_each))
                used = sum(len(_block(d)) + 2 for d in found)  # 2: the blank line between blocks
                if len(found) < budget.definitions and used + len(_block(definition)) <= budget.total:
                    found.append(definition)
                missing.remove(name)
    return found


def render_definitions(definitions: list[Definition]) -> str:
    """The "Referenced definitions" block of a context (empty when there is nothing to add)."""
    if not definitions:
        return ""
    return "Referenced definitions:\n\n" + "\n\n".join(_block(d) for d in definitions)


def _block(definition: Definition) -> str:
    return f"From `{definition.path}`:\n```python\n{definition.source}\n```"
