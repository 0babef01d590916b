"""Every command, given what a careless user gives it, answers in one line and never with a
traceback (``-v`` shows the traceback): impossible output paths, malformed flag values, files
that are not what they should be, folders that are not builds, corrupt outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.output import write_output
from lettuce_build.cli import main
from lettuce_build.core.errors import RecipeError

from .builds.storage.test_output import build as samples_dataset

OFFLINE = ["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"]


@pytest.fixture
def place(tmp_path, samples):
    """A build folder with outputs, a plain file, a binary file and a folder that is no build."""
    out = tmp_path / "out"
    write_output(samples_dataset(samples), out, "readme")
    BuildDir(out).write_manifest(Manifest(source="readme", status="finished"))
    (tmp_path / "file.txt").write_text("not a folder\n")
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "plain").mkdir()
    (tmp_path / "readmes").mkdir()
    (tmp_path / "readmes" / "a.md").write_text("# A\n\nA is a tool. It renders tables fast.\n")
    return tmp_path


BAD_USE = {
    "build: --out under a file": (
        ["build", "--source", "readme", "--input", "{t}/readmes", "--out", "{t}/file.txt/out", *OFFLINE],
        "lies under",
    ),
    "build: an error type the writing model's menu does not make": (
        ["build", "--source", "readme", "--input", "{t}/readmes", "--out", "{t}/o", *OFFLINE]
        + ["--edits", "constrained", "--error-types", "fabricated_reference/section"],
        "markdown edits (--edits constrained) makes the types contradiction/entity",
    ),
    "build: an error type no rule makes": (
        ["build", "--source", "custom", "--input", "{t}/readmes", "--out", "{t}/o", *OFFLINE]
        + ["--edits", "rules", "--error-types", "unsupported_addition/subjective"],
        "the rules that make edits (--edits rules) make the types contradiction/entity",
    ),
    "build: --out is a file": (
        ["build", "--source", "readme", "--input", "{t}/readmes", "--out", "{t}/file.txt", *OFFLINE],
        "is a file",
    ),
    "build: --shard 3/2": (
        [
            "build",
            "--source",
            "readme",
            "--input",
            "{t}/readmes",
            "--out",
            "{t}/o",
            "--shard",
            "3/2",
            *OFFLINE,
        ],
        "--shard",
    ),
    "build: --shard x": (
        ["build", "--source", "readme", "--input", "{t}/readmes", "--out", "{t}/o", "--shard", "x", *OFFLINE],
        "I/N",
    ),
    "build: a sampling value that is no number": (
        ["build", "--source", "readme", "--out", "{t}/o", "--sampling", "answer:temperature=abc"],
        "answer:temperature=abc",
    ),
    "build: a binary --config": (["build", "--config", "{t}/binary.bin"], "binary.bin"),
    "build: an input path that does not exist": (
        ["build", "--source", "readme", "--input", "{t}/nowhere/rows.jsonl", "--out", "{t}/o", *OFFLINE],
        "no such file",
    ),
    "build: a relative input path that does not exist is no Hub id": (
        ["build", "--source", "wikipedia", "--input", "data/rows.jsonl", "--out", "{t}/o", *OFFLINE],
        "no such file",
    ),
    "build: an unknown source": (["build", "--source", "nosuch", "--out", "{t}/o", *OFFLINE], "nosuch"),
    "push --dry-run under a file": (
        ["push", "--source", "readme", "--build", "{t}/out", "--dry-run", "{t}/file.txt/hub"],
        "lies under",
    ),
    "show --html under a file": (["show", "{t}/out", "--html", "{t}/file.txt/page.html"], "is a file"),
    "show --html a folder": (["show", "{t}/out", "--html", "{t}/plain"], "is a directory"),
    "show: not a build": (["show", "{t}/plain"], "not a build folder"),
    "failures: not a build": (["failures", "{t}/plain"], "not a build folder"),
    "status: not a build": (["status", "{t}/plain"], "manifest.json"),
    "report: not a build": (["report", "{t}/plain"], "no generated samples"),
    "merge --out under a file": (["merge", "{t}/out", "--out", "{t}/file.txt/merged"], "lies under"),
    "merge: not shards": (["merge", "{t}/plain", "--out", "{t}/merged"], "plain"),
    "audit: a binary .json": (["audit", "{t}/binary.json"], "binary.json"),
    "validate: a binary .json": (["validate", "{t}/binary.json"], None),
    "validate: a folder with nothing in it": (["validate", "{t}/plain"], "plain"),
    "taxonomy: a binary --taxonomy-file": (["taxonomy", "--taxonomy-file", "{t}/binary.bin"], "binary.bin"),
    "sift: instances that do not exist": (
        ["sift", "--instances", "{t}/nowhere.jsonl", "--no-verified", "--out", "{t}/sift"],
        "nowhere.jsonl",
    ),
    "cache stats: not a build": (["cache", "stats", "{t}/plain"], "cache.sqlite"),
    "squeez: --output-dir under a file": (
        ["squeez", "--phase", "1", "--output-dir", "{t}/file.txt/sq", "--instances", "{t}/nowhere.jsonl"],
        "file.txt",
    ),
    "squeez: --shard 5/2": (
        ["squeez", "--phase", "1", "--output-dir", "{t}/sq", "--shard", "5/2"],
        "the index runs from 0 to 1",
    ),
    "squeez: a later phase before the first": (
        ["squeez", "--phase", "2", "--output-dir", "{t}/sq"],
        "phase 1",
    ),
}


def invoke(args: list[str], where: Path) -> tuple[int, str, BaseException | None]:
    filled = [arg.replace("{t}", str(where)) for arg in args]
    result = CliRunner().invoke(main, filled)
    return result.exit_code, result.output, result.exception


@pytest.mark.parametrize("case", list(BAD_USE))
def test_bad_use_is_one_line_never_a_traceback(place, case):
    (place / "binary.json").write_bytes(bytes(range(256)))
    args, expected = BAD_USE[case]
    code, output, raised = invoke(args, place)
    assert code != 0, output
    # an exception that reached the runner would have been a traceback on a terminal
    assert raised is None or isinstance(raised, SystemExit), f"{type(raised).__name__}: {raised}"
    assert "Traceback" not in output
    if expected is None:  # a report of what is wrong, a line per problem, instead of one error
        return
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and expected in errors[0], output


def test_verbose_shows_the_traceback_of_a_bug(place, monkeypatch):
    import lettuce_build.view.summary as summary

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(summary, "status_text", broken)
    BuildDir(place / "out").write_manifest(Manifest(source="readme", status="finished"))
    quiet = CliRunner().invoke(main, ["status", str(place / "out")])
    assert quiet.exit_code == 1 and "unexpected KeyError" in quiet.output and "-v" in quiet.output
    loud = CliRunner().invoke(main, ["-v", "status", str(place / "out")])
    assert isinstance(loud.exception, KeyError)


def test_a_truncated_arrow_file_is_named_a_corrupt_output(place):
    arrow = next((place / "out" / "dataset").rglob("*.arrow"))
    arrow.write_bytes(arrow.read_bytes()[:100])
    for args in (["show", "{t}/out"], ["validate", "{t}/out/dataset"]):
        code, output, raised = invoke(args, place)
        assert code != 0 and raised is None or isinstance(raised, SystemExit)
        assert "corrupt" in output and "Traceback" not in output, output


def test_a_folder_whose_last_run_did_not_finish_says_so_first(place):
    BuildDir(place / "out").write_manifest(
        Manifest(source="readme", status="failed", error="KeyboardInterrupt")
    )
    for args in (["show", "{t}/out"], ["validate", "{t}/out"], ["audit", "{t}/out"], ["failures", "{t}/out"]):
        _, output, _ = invoke(args, place)
        assert output.splitlines()[0].startswith("note: the last run of this build did not finish"), (
            args,
            output,
        )


def test_a_recipe_value_of_the_wrong_type_names_its_option(tmp_path):
    from lettuce_build.builds.settings.recipe import Recipe

    with pytest.raises(RecipeError, match="--ratio"):
        Recipe.checked({"source": "readme", "out": str(tmp_path), "ratio": "lots"})
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(json.dumps({"source": "readme", "out": str(tmp_path), "ratio": 2}))
    result = CliRunner().invoke(main, ["build", "--config", str(recipe)])
    assert result.exit_code != 0 and "Traceback" not in result.output and "ratio" in result.output
