"""Real repositories and instances for the squeez tests."""

import pytest

from ..support.gitrepos import write_instances


@pytest.fixture
def fixture_repos(tmp_path):
    """(instances file, repo URL template) for two real repositories and one that cannot be cloned."""
    return write_instances(tmp_path / "world")
