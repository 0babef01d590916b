"""squeez's teacher phase runs in a run context of its own: a teacher whose backend raises
something no one expected leaves the phase's manifest ``failed`` with the reason, never
``running``."""

import pytest

from lettuce_build.builds.storage.folder import BuildDir

from ..support.scripted import ScriptedBackend
from .test_shards import run


class Broken(RuntimeError):
    """Nothing in the package expects this."""


def broken(request):
    raise Broken("the teacher fell over")


def test_a_teacher_whose_backend_raises_leaves_phase_6_s_manifest_failed(
    tmp_path, fixture_repos, offline_options
):
    instances, template = fixture_repos
    squeez = run(tmp_path / "out", instances, template, offline_options, phases=(1, 2, 3, 4, 5))
    with pytest.raises(Broken):
        squeez.phase6(ScriptedBackend(broken))
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert (manifest.source, manifest.status) == ("squeez", "failed")
    assert manifest.error == "Broken: the teacher fell over"
