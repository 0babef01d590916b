"""The Python API: `lettuce_build.build` returns the dataset and the summary and writes the recipe
that replays it; a custom backend is passed in; sources register with a decorator."""

import lettuce_build
from lettuce_build.schema import FEATURES
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.sources.registry import SOURCES, get_source, register_source

from .support.documents import respond, write_readmes
from .support.scripted import ScriptedBackend


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
