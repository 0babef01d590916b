"""The Python API: `lettuce_build.build` returns the dataset and the summary and writes the recipe
that replays it; a custom backend is passed in; sources register with a decorator."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset

import lettuce_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.errors import LettuceError, SourceError
from lettuce_build.core.schema import FEATURES
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.sources.registry import SOURCES, get_source, register_source
from lettuce_build.stages.answers import AnswerStage

from .support.documents import respond, write_readmes
from .support.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parents[1]


def test_build_returns_the_dataset_and_summary_and_its_recipe_replays_it(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    backend = ScriptedBackend(respond)
    result = lettuce_build.build("readme", input=str(docs), out=tmp_path / "out", ratio=1.0, backend=backend)
    assert result.summary.items == 3 == sum(len(split) for split in result.dataset.values())
    assert result.dataset["train"].features == FEATURES
    assert result.recipe_path == tmp_path / "out" / "recipe.yaml"
    again = ScriptedBackend(respond)
    replay = lettuce_build.build(recipe=result.recipe_path, backend=again)
    assert again.calls == [] and replay.dataset["train"].to_list() == result.dataset["train"].to_list()
    assert replay.summary.hallucinated == result.summary.hallucinated == 3


def readme_rows(docs):
    return [{"repo": path.stem, "readme": path.read_text()} for path in sorted(docs.glob("*.md"))]


@pytest.mark.parametrize("shape", ["list", "dataset", "iterable"])
def test_input_may_be_rows_in_memory_and_the_recipe_still_replays(tmp_path, shape):
    rows = readme_rows(write_readmes(tmp_path / "docs"))
    data = {
        "list": rows,
        "dataset": Dataset.from_list(rows),
        "iterable": Dataset.from_list(rows).to_iterable_dataset(),
    }[shape]
    result = lettuce_build.build(
        "readme", input=data, out=tmp_path / "out", ratio=0.5, backend=ScriptedBackend(respond)
    )
    from_files = lettuce_build.build(
        "readme",
        input=str(tmp_path / "docs"),
        out=tmp_path / "files",
        ratio=0.5,
        backend=ScriptedBackend(respond),
    )
    assert result.summary.items == from_files.summary.items == len(rows)
    again = ScriptedBackend(respond)
    replay = lettuce_build.build(recipe=result.recipe_path, backend=again)
    assert again.calls == [] and replay.summary.items == len(rows)


def test_rows_in_memory_that_are_not_json_name_the_row(tmp_path):
    with pytest.raises(LettuceError, match="input row 1: a str, expected a dict of columns"):
        lettuce_build.build("readme", input=[{"repo": "a", "readme": "x"}, "oops"], out=tmp_path / "o")
    with pytest.raises(LettuceError, match="input row 0: .*not JSON serializable"):
        lettuce_build.build("readme", input=[{"repo": "a", "readme": object()}], out=tmp_path / "o")


def test_push_to_a_dry_run_folder(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    out = tmp_path / "out"
    lettuce_build.build("readme", input=str(docs), out=out, ratio=1.0, backend=ScriptedBackend(respond))
    where = lettuce_build.push("readme", build=out, dry_run=tmp_path / "hub", max_failure_rate=1.0)
    assert (tmp_path / "hub" / "readme").is_dir() and str(tmp_path / "hub") in where


def test_a_source_registers_with_a_decorator():
    @register_source
    class Notes(ReadmeSource):
        name = "notes"

    try:
        assert isinstance(get_source("notes"), Notes)
    finally:
        del SOURCES["notes"]


def test_a_prompts_folder_replaces_a_template_and_its_version_for_that_build_only(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "answer.yaml").write_text(
        'version: answer-v99\nsystem: "Answer in one line."\nuser: "Q: {{ question }}\\nE: {{ evidence }}"\n'
    )
    docs = write_readmes(tmp_path / "docs")
    mine = "Answer in one line."

    def answer(request):  # one line of the evidence: grounded, as the gates require
        evidence = request.messages[-1].content.split("E: ", 1)[1]
        return max(evidence.splitlines(), key=len)

    backend = ScriptedBackend(lambda r: answer(r) if r.messages[0].content == mine else respond(r))
    result = lettuce_build.build(
        "readme", input=str(docs), out=tmp_path / "out", backend=backend, prompts=folder, ratio=0.0
    )
    asked = [r for r in backend.requests if r.messages[0].content == mine]
    assert len(asked) == result.summary.items
    stages = {s.name: s for s in BuildDir(tmp_path / "out").read_manifest().stages}
    assert stages["answer"].prompt_version == "answer-v99"
    assert AnswerStage().prompt_version != "answer-v99"  # outside the build, the package's again


def test_a_stage_s_sampling_can_be_changed_for_one_build_and_a_wrong_stage_is_named(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    backend = ScriptedBackend(respond)
    sampling = {"answer": {"temperature": 0.1, "max_tokens": 321}}
    lettuce_build.build("readme", input=str(docs), out=tmp_path / "out", backend=backend, sampling=sampling)
    answers = [r for r in backend.requests if r.max_tokens == 321]
    assert answers and all(r.temperature == 0.1 for r in answers)
    with pytest.raises(SourceError, match=r"sampling for \['anwser'\]: readme has the stages"):
        lettuce_build.build(
            "readme",
            input=str(docs),
            out=tmp_path / "o2",
            backend=backend,
            sampling={"anwser": {"temperature": 0}},
        )


def test_the_backend_may_be_named_by_its_kind_as_on_the_command_line(tmp_path):
    from .support.openai_server import serve

    with serve(respond) as url:
        result = lettuce_build.build(
            "readme",
            input=str(write_readmes(tmp_path / "docs")),
            out=tmp_path / "out",
            backend="openai",
            base_url=url,
            model="teacher",
        )
    assert result.summary.items > 0 and BuildDir(tmp_path / "out").read_manifest().backend.backend == "openai"


#: the modules that type `build` and `dry_run`'s keywords
TYPED_BY = (
    "lettuce_build.api",
    "lettuce_build.builds.settings.api_keywords",
    "lettuce_build.builds.settings.recipe",
    "lettuce_build.builds.settings.shards",
    "lettuce_build.llm.settings",
)


def test_a_type_checker_accepts_the_keywords_of_build_and_names_a_wrong_one(tmp_path):
    """What an editor shows a user: the keywords are typed (a keyword that was also a parameter
    left them all untyped, which only a type checker's run showed)."""
    calls = tmp_path / "calls.py"
    calls.write_text(
        "from lettuce_build.api import build, dry_run\n"
        'build("readme", ratio=0.3, shard="0/2", prompts="p", engine={"dtype": "bf16"}, backend="openai")\n'
        'dry_run("readme", limit=3, backend="vllm")\n'
        'build("readme", ratio="high")\n'
        'build("readme", ratoi=0.3)\n'
        'dry_run("readme", backend="claude")\n'
    )
    # the modules the keywords' types live in are read; every other module is skipped, the rest
    # of the package and its dependencies alike (read whole, in a fresh cache, it took 45 s of
    # the fast tier; with pydantic and the others read, 5 s; skipped, 0.6 s, the same errors)
    config = tmp_path / "mypy.ini"
    typed = ",".join(TYPED_BY)
    config.write_text(f"[mypy]\nfollow_imports = skip\n[mypy-{typed}]\nfollow_imports = silent\n")
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(calls),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT)},
    )
    wrong = sorted({int(line.split(":")[1]) for line in checked.stdout.splitlines() if ": error:" in line})
    assert wrong == [4, 5, 6], checked.stdout
    assert 'incompatible type "str"; expected "float"' in checked.stdout and '"ratoi"' in checked.stdout


def test_the_keywords_of_build_are_the_recipes_fields_written_from_them():
    """`build(**settings)` is typed: its keywords are the recipe's fields, in a file written from
    `Recipe` (``make keywords``), which is never stale."""
    from lettuce_build.api import Settings
    from lettuce_build.builds.settings.keywords import KEYWORDS_FILE, keywords_source

    explicit = {"source", "out", "input", "backend"}  # parameters of their own
    recorded = {"stages"}  # written by the build, not chosen
    assert set(Settings.__annotations__) == set(Recipe.model_fields) - explicit - recorded
    assert KEYWORDS_FILE.read_text(encoding="utf-8") == keywords_source(), "stale: run `make keywords`"
    written = keywords_source()
    assert "    shard: Shard | str | None\n" in written  # given as "I/N" too
    assert "    prompts: str | Path | None\n" in written and "    ratio: float\n" in written
