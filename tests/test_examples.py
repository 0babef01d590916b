"""Every example of the README and of the documentation runs, against one shared small build on
the real engine. The first Python block of the README builds `out/readme`; the commands read it,
build the example rows, export and publish a dry run. Commands run in this process (click's
runner), so they share the suite's engine. A block that cannot run here is marked in the page
itself, with the reason: ``<!-- not run: needs a GPU -->`` on the line before it."""

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from lettuce_build.cli import main

ROOT = Path(__file__).resolve().parents[1]
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


def commands(code: str) -> list[list[str]]:
    """The lettuce-build command lines of a bash block, comments dropped."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith((".venv/bin/lettuce-build ", "lettuce-build ")):
            found.append(shlex.split(line)[1:])
        elif line:
            raise AssertionError(f"a line no example runner knows: {line!r}")
    return found


def test_every_block_runs_or_says_why_not():
    found = examples()
    assert len(found) >= 20
    for page, _, _, why in found:
        assert why is None or len(why) > 10, f"{page}: say why a block is not run"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, embedded_backend):
    work = tmp_path_factory.mktemp("examples")
    (work / "examples").symlink_to(ROOT / "examples")
    before = Path.cwd()
    os.chdir(work)
    yield work
    os.chdir(before)


def test_every_example_runs(workdir):
    found = [(page, language, code) for page, language, code, why in examples() if why is None]
    # the README's Python block first: it makes out/readme, the build the other examples read
    found.sort(key=lambda example: example[0] != "README.md" or example[1] != "python")
    namespace: dict = {}
    runner = CliRunner()
    for page, language, code in found:
        if language == "python":
            exec(compile(code, page, "exec"), namespace)
            continue
        for args in commands(code):
            result = runner.invoke(main, args, catch_exceptions=False)
            assert result.exit_code == 0, f"{page}: lettuce-build {shlex.join(args)}: {result.output[-2000:]}"
    for made in ("out/readme/dataset", "out/mine/dataset", "readme.json", "hub-preview", "hub-layout"):
        assert (workdir / made).exists(), made
