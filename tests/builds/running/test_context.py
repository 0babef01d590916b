"""The run context owns a run's manifest: whatever stops a build, a translation or squeez's
teacher phase, the manifest never says ``running``. A backend that raises something no one
expected leaves it ``failed``, with the reason."""

import pytest

from lettuce_build.api import build
from lettuce_build.builds.running.context import open_run
from lettuce_build.builds.settings.run_spec import RunSpec
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.translate.report import TranslationOptions
from lettuce_build.translate.run import translate

from ...support.documents import write_readmes
from ...support.scripted import ScriptedBackend
from ...translate.test_translate import write_rows


class Broken(RuntimeError):
    """Nothing in the package expects this."""


def broken(request):
    raise Broken("the backend fell over")


def failed_with(folder):
    manifest = BuildDir(folder).read_manifest()
    return manifest.status, manifest.error


def test_a_build_whose_backend_raises_leaves_its_manifest_failed_with_the_reason(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(Broken):
        build("readme", input=write_readmes(tmp_path / "r"), out=out, backend=ScriptedBackend(broken))
    assert failed_with(out) == ("failed", "Broken: the backend fell over")


def test_a_translation_whose_backend_raises_leaves_its_manifest_failed_with_the_reason(tmp_path):
    options = TranslationOptions(
        source=write_rows(tmp_path / "rows.jsonl"), languages=["de"], out=tmp_path / "de"
    )
    with pytest.raises(Broken):
        translate(options, backend=ScriptedBackend(broken))
    assert failed_with(tmp_path / "de") == ("failed", "Broken: the backend fell over")


def test_a_run_that_ends_normally_is_finished_and_a_stop_is_interrupted(tmp_path):
    from lettuce_build.core.interrupts import Interrupted

    with open_run(RunSpec(out=tmp_path / "a", source="test"), backend=ScriptedBackend(broken)) as run:
        assert run.manifest.status == "running"
    assert failed_with(tmp_path / "a") == ("finished", None)
    with pytest.raises(Interrupted) as stop:
        with open_run(RunSpec(out=tmp_path / "b", source="test"), backend=ScriptedBackend(broken)):
            raise Interrupted(2)
    assert failed_with(tmp_path / "b")[0] == "interrupted"
    assert stop.value.line.startswith("interrupted: 0 answers kept, no stage finished")
