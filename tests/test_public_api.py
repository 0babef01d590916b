"""The public surface is small, typed and documented: `lettuce_build.__all__` is what the README
names, every name in it resolves, and every error a public function raises is a `LettuceError`
from the one module that holds the hierarchy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lettuce_build
from lettuce_build.core import errors

ROOT = Path(__file__).resolve().parents[1]
#: a stage's signal to the runner, which makes it a failure row: it never reaches a caller
CONTROL_FLOW = {"ParseFailure"}


def test_all_is_what_the_api_reference_documents_and_every_name_resolves():
    reference = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    sentence = reference.split("The public names are those of", 1)[1].split(". ", 1)[0]
    documented = set(re.findall(r"`(\w+)`", sentence)) - {"lettuce_build", "__all__"}
    assert documented == set(lettuce_build.__all__) - {"__version__"}
    for name in lettuce_build.__all__:
        assert getattr(lettuce_build, name) is not None


def test_the_package_is_marked_typed():
    assert (ROOT / "lettuce_build" / "py.typed").is_file()


def test_every_error_class_lives_in_the_errors_module_and_derives_from_lettuce_error():
    defined_elsewhere = []
    for path in (ROOT / "lettuce_build").rglob("*.py"):
        if path == ROOT / "lettuce_build" / "core" / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name) and base.id.endswith(("Error", "Exception")) for base in node.bases
            ):
                if not node.name.startswith("_") and node.name not in CONTROL_FLOW:
                    defined_elsewhere.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert defined_elsewhere == []
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, Exception)]
    assert len(classes) > 15 and all(issubclass(c, errors.LettuceError) for c in classes)
