"""Every dataset recipe names a known source and only options the CLI accepts."""

import shlex
from pathlib import Path

import pytest

from lettuce_build.cli import main
from lettuce_build.sources.registry import SOURCES

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "dataset_scripts").glob("*.sh"))


def commands(script: Path) -> list[list[str]]:
    text = script.read_text().replace("\\\n", " ")
    return [
        shlex.split(line.strip())[1:]
        for line in text.splitlines()
        if line.strip().startswith("lettuce-build ")
    ]


def test_there_is_a_recipe_per_published_dataset():
    names = {s.stem for s in SCRIPTS}
    assert {
        "lettucedetect-readme",
        "lettucedetect-wikipedia",
        "lettucedetect-acl",
        "lettucedetect-code",
        "lettucedetect-tool-output",
        "ragtruth",
        "psiloqa",
        "collections",
    } <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_each_recipe_parses_with_the_cli(script):
    found = commands(script)
    assert found, f"{script.name} runs no lettuce-build command"
    for args in found:
        args = [a.replace("$INPUT", "input").replace('"$INPUT"', "input") for a in args]
        command = main.get_command(None, args[0])
        context = command.make_context(args[0], args[1:], resilient_parsing=False)
        if args[0] == "build":
            assert context.params["source"] in SOURCES
            assert context.params["seed"] == 42
        if args[0] == "push":
            assert context.params["repo_id"]
