"""`build --refresh STAGE`: that stage and the ones after it are asked anew, the ones before
come from the cache, and later runs reuse the new answers."""

import pytest

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.errors import SourceError

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend


def stage_misses(out):
    return {s.name: s.cache_misses for s in BuildDir(out).read_manifest().stages if s.name != "assemble"}


def test_a_refreshed_stage_and_those_after_it_are_asked_anew_and_then_kept(tmp_path):
    readmes = str(write_readmes(tmp_path / "readmes"))
    options = Recipe(source="readme", input=readmes, out=tmp_path / "out", ratio=0.5)
    first = run_build(options, ScriptedBackend(respond))

    again = ScriptedBackend(respond)
    run_build(options, again, refresh="answer")
    misses = stage_misses(tmp_path / "out")
    assert misses["question"] == 0  # before the refreshed stage: all from the cache
    assert misses["answer"] == first.items and misses["inject"] > 0
    assert BuildDir(tmp_path / "out").read_manifest().cache_namespaces == {"answer": 1, "inject": 1}

    later = ScriptedBackend(respond)
    run_build(options, later)
    assert later.calls == []  # the refreshed answers are the ones a plain rerun finds

    run_build(options, ScriptedBackend(respond), refresh="inject")
    assert BuildDir(tmp_path / "out").read_manifest().cache_namespaces == {"answer": 1, "inject": 2}


def test_refreshing_a_stage_the_build_does_not_have_names_its_stages(tmp_path):
    readmes = str(write_readmes(tmp_path / "readmes"))
    options = Recipe(source="readme", input=readmes, out=tmp_path / "out")
    with pytest.raises(
        SourceError, match=r"--refresh answers: this build's stages are \['question', 'answer'"
    ):
        run_build(options, ScriptedBackend(respond), refresh="answers")
