"""Every example of the README runs, against one shared small build on the real engine: the
Python block builds `out/readme`, the commands read it, build the example rows and publish a
dry run. Commands run in this process (click's runner), so they share the suite's engine."""

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from lettuce_build.cli import main

ROOT = Path(__file__).resolve().parents[1]
#: blocks not run here, and why
NOT_RUN = {
    "make demo": "make demo and make test set up a machine and run this suite: CI runs make test",
}


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block."""
    return re.findall(r"```(\w+)\n(.*?)```", text, re.DOTALL)


def commands(code: str) -> list[list[str]]:
    """The lettuce-build command lines of a bash block, without comments."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith(".venv/bin/lettuce-build "):
            found.append(shlex.split(line)[1:])
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, embedded_backend):
    work = tmp_path_factory.mktemp("readme")
    (work / "examples").symlink_to(ROOT / "examples")
    before = Path.cwd()
    os.chdir(work)
    yield work
    os.chdir(before)


def test_every_readme_example_runs(workdir):
    readme = (ROOT / "README.md").read_text()
    found = blocks(readme)
    python = [code for language, code in found if language == "python"]
    bash = [code for language, code in found if language == "bash"]
    assert python and bash
    namespace: dict = {}
    for code in python:  # builds out/readme: the shared build the commands read
        exec(compile(code, "README.md", "exec"), namespace)
    assert (workdir / "out/readme/dataset").is_dir()
    runner = CliRunner()
    ran = 0
    for code in bash:
        if any(code.lstrip().startswith(skipped) for skipped in NOT_RUN):
            continue
        for args in commands(code):
            result = runner.invoke(main, args, catch_exceptions=False)
            assert result.exit_code == 0, f"{args}: {result.output[-2000:]}"
            ran += 1
    assert ran >= 5
    assert (workdir / "out/mine/dataset").is_dir() and (workdir / "readme.json").exists()
    assert (workdir / "hub-preview").is_dir()
