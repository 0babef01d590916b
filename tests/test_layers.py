"""The package's folders are its layers: a module imports only from its own folder and from
folders below it, deferred imports (inside functions) included, so the tree alone says where
a change goes and what it may touch."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lettuce_build"

#: lowest first; a folder may import from a folder of a lower rank only (and from itself)
LAYERS: dict[str, float] = {
    "core": 0,
    "llm": 1,
    "swebench": 1,
    "formats": 1,
    "rules": 1,
    "engine": 2,
    "prompts": 1,
    "stages": 3,
    "sources": 4,
    "builds": 5,
    # the rooms of builds, in their order: what a build is asked, what it keeps, how it runs
    "builds.settings": 5.1,
    "builds.storage": 5.2,
    "builds.running": 5.3,
    "view": 6,
    "publish": 7,
    "squeez": 8,
    "sift": 8,
    "translate": 8,
    "api": 9,
    "cli": 10,
}


def layer_of(module: str) -> str:
    """``lettuce_build.engine.runner`` -> ``engine``; the package itself counts as ``api``, and
    ``python -m lettuce_build`` (the command's entry) as ``cli``."""
    parts = module.split(".")
    if parts[1:] == ["__main__"]:
        return "cli"
    if len(parts) > 2 and (room := ".".join(parts[1:3])) in LAYERS:
        return room
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "api"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(("lettuce_build", *path.relative_to(PACKAGE).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) of every lettuce_build import in a file, wherever it stands; ``from a import
    b`` counts as ``a.b`` where that is a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("lettuce_build"):
                for alias in node.names:
                    inner = f"{node.module}.{alias.name}"
                    found.append((node.lineno, inner if inner in known else node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("lettuce_build")]
    return found


def violations() -> list[str]:
    wrong, known = [], modules()
    for module, path in known.items():
        here = layer_of(module)
        for line, imported in imports(path, known):
            there = layer_of(imported)
            if there != here and LAYERS[there] >= LAYERS[here]:
                wrong.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {here} imports {imported} ({there})"
                )
    return wrong


def test_every_folder_of_the_package_is_a_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(LAYERS), f"folders with no layer: {folders - set(LAYERS)}"
    loose = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "api", "__main__"}
    assert not loose, f"modules outside every layer folder: {loose}"


def test_no_module_imports_a_layer_above_its_own_or_beside_it():
    assert violations() == []


def test_each_layer_says_what_it_may_import():
    for folder in LAYERS:
        init = PACKAGE.joinpath(*folder.split(".")) / "__init__.py"
        if init.exists():
            assert "import" in (ast.get_docstring(ast.parse(init.read_text())) or "").lower(), folder


def module_graph() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports."""
    known = modules()
    return {
        module: {name for _, name in imports(path, known) if name in known and name != module}
        for module, path in known.items()
    }


def test_no_import_cycles_deferred_or_not():
    graph, cycles = module_graph(), []
    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for name in sorted(graph[module]):
            if state.get(name) == "open":
                cycles.append(" -> ".join([*trail[trail.index(name) :], name]))
            elif name not in state:
                visit(name, [*trail, name])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []
