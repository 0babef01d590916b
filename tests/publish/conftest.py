"""A build for the tests of what reads builds (export, the hand-off to the detector trainer)."""

from pathlib import Path

import pytest

import lettuce_build

from ..support.documents import respond, write_many_readmes
from ..support.scripted import ScriptedBackend


@pytest.fixture(scope="module")
def scripted_build(tmp_path_factory) -> Path:
    """A scripted build of 24 READMEs: every split, half of the samples hallucinated."""
    root = tmp_path_factory.mktemp("build")
    docs = write_many_readmes(root / "docs", 24)
    backend = ScriptedBackend(respond)
    lettuce_build.build("readme", input=str(docs), out=root / "out", ratio=0.5, backend=backend)
    return root / "out"
