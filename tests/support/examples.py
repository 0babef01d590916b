"""The code blocks of the README and of the documentation, and the README's first example run once
for the tests that read its build."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: a fenced block, with the "not run" mark that may stand on the line before it
_BLOCK = re.compile(
    r"(?:<!-- not run: (?P<why>[^>]*?) -->\n)?```(?P<language>\w+)\n(?P<code>.*?)```", re.DOTALL
)


def examples() -> list[tuple[str, str, str, str | None]]:
    """(page, language, code, why it is not run) of every bash and python block."""
    found = []
    for page in PAGES:
        for match in _BLOCK.finditer(page.read_text()):
            if match["language"] in ("bash", "python"):
                found.append((str(page.relative_to(ROOT)), match["language"], match["code"], match["why"]))
    return found


def first_example() -> str:
    """The README's first Python block: it builds `out/readme`, which the other examples read."""
    return next(
        code for page, language, code, _ in examples() if page == "README.md" and language == "python"
    )


def run_first_example(work: Path) -> dict[str, Any]:
    """Run the README's first Python block in ``work`` (beside a link to `examples/`), as a user
    would from a clone: its namespace, for the blocks after it."""
    (work / "examples").symlink_to(ROOT / "examples")
    namespace: dict[str, Any] = {}
    before = Path.cwd()
    os.chdir(work)
    try:
        exec(compile(first_example(), "README.md", "exec"), namespace)
    finally:
        os.chdir(before)
    return namespace
