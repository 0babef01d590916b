"""Every example of the README and of the documentation runs, against one shared small build on
the real engine. The first Python block of the README builds `out/readme`; the commands read it,
build the example rows, export and publish a dry run. Commands run in this process (click's
runner), so they share the suite's engine. A block that cannot run here is marked in the page
itself, with the reason: ``<!-- not run: needs a GPU -->`` on the line before it."""

import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from lettuce_build.cli import main

from .support.examples import examples, first_example


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
def workdir(readme_example):
    work, namespace = readme_example
    before = Path.cwd()
    os.chdir(work)
    yield work, namespace
    os.chdir(before)


def test_every_example_runs(workdir):
    work, namespace = workdir  # the README's first block ran there, once for the session
    found = [(page, language, code) for page, language, code, why in examples() if why is None]
    runner = CliRunner()
    for page, language, code in found:
        if language == "python":
            if code != first_example():
                exec(compile(code, page, "exec"), namespace)
            continue
        for args in commands(code):
            result = runner.invoke(main, args, catch_exceptions=False)
            assert result.exit_code == 0, f"{page}: lettuce-build {shlex.join(args)}: {result.output[-2000:]}"
    for made in ("out/readme/dataset", "out/mine/dataset", "readme.json", "hub-preview", "hub-layout"):
        assert (work / made).exists(), made
