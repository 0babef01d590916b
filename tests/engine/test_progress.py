"""A stage's bar: items counted once across attempts, and live figures (cache hits, tokens/s)."""

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.engine.progress import StageBar

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend


def test_the_figures_follow_the_batches_and_a_retry_moves_failed_to_ok():
    bar = StageBar("answer", total=4)
    bar.batch(0, ok=2, failed=2, cached=1, tokens=300)
    assert bar.figures()["cached"] == 1 and int(bar.figures()["tok/s"]) > 0
    bar.batch(1, ok=1, failed=0, cached=1, tokens=350)
    assert (bar.ok, bar.failed) == (3, 1)
    bar.rejected(1)
    assert (bar.ok, bar.failed) == (2, 2)
    bar.close()


def test_a_build_shows_cache_hits_and_tokens_per_second_on_its_bars(tmp_path, capfd):
    readmes = str(write_readmes(tmp_path / "readmes"))
    options = Recipe(source="readme", input=readmes, out=tmp_path / "out", ratio=0.5)
    run_build(options, ScriptedBackend(respond))
    first = capfd.readouterr().err
    assert "stage answer" in first and "cached=0" in first and "tok/s=" in first
    run_build(options, ScriptedBackend(respond))
    again = capfd.readouterr().err
    assert "cached=3" in again  # every item of the rerun answered from the cache
