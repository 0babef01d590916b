"""Real repositories, instances and offline environments for the squeez tests."""

import pytest

from lettuce_build.squeez.environments import Environments, EnvStatus
from lettuce_build.squeez.options import SqueezOptions
from lettuce_build.squeez.sandbox import Sandbox, detect_isolation

from ..support.gitrepos import write_instances
from ..support.wheels import PYTEST_DISTRIBUTIONS, repack


@pytest.fixture
def fixture_repos(tmp_path):
    """(instances file, repo URL template) for two real repositories and one that cannot be cloned."""
    return write_instances(tmp_path / "world")


@pytest.fixture(scope="session")
def offline_wheels(tmp_path_factory):
    """pytest (and setuptools, for setup.py builds) as wheels: environments install with no network."""
    return repack((*PYTEST_DISTRIBUTIONS, "setuptools"), tmp_path_factory.mktemp("wheels"))


@pytest.fixture(scope="session")
def offline_options(offline_wheels):
    return SqueezOptions(offline=True, find_links=[offline_wheels])


@pytest.fixture(scope="session")
def plain_env(tmp_path_factory, offline_options) -> EnvStatus:
    """A real environment (pytest only) built offline, for calls run one at a time."""
    root = tmp_path_factory.mktemp("plain-env")
    tree = root / "tree"
    tree.mkdir()
    environments = Environments(root / "envs", Sandbox(detect_isolation(), root / "sandbox"), offline_options)
    status = environments.ensure("plain", "acme/plain", version=None, tree=tree)
    assert status.ok or detect_isolation().mode != "bwrap", status.reason
    return status
