"""A lean install: lettuce-build with its declared dependencies only (no vLLM, torch or Ray)
imports, builds over an OpenAI-compatible endpoint and shows what it built.

The fresh virtualenv gets, offline, exactly the distributions that the dependencies declared in
pyproject.toml pull in (resolved from this environment's installed metadata and linked in), then
lettuce-build itself installed by pip without dependencies: an import the declaration misses
fails here as it would for a user.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import venv
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from .support.documents import respond, write_readmes
from .support.openai_server import serve

# the venv layout and the symlinks below are Linux's
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the lean install is checked on Linux")

ROOT = Path(__file__).resolve().parents[1]
#: what the lean install must not contain: the engine and the cluster are extras
EXTRAS_ONLY = ("vllm", "torch", "ray")


def closure(requirements: list[str]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements pull in, extras followed, by name."""
    found: dict[str, metadata.Distribution] = {}
    pending = [(Requirement(text), "") for text in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = requirement.name.lower().replace("_", "-")
        wanted = [""] + sorted(requirement.extras)
        if name in found and not requirement.extras:
            continue
        distribution = found.setdefault(name, metadata.distribution(name))
        for text in distribution.requires or []:
            pending.extend((Requirement(text), each) for each in wanted)
    return found


def link(distribution: metadata.Distribution, site: Path) -> None:
    """The distribution's files in ``site``, as pip would have put them (scripts left out)."""
    source = Path(str(distribution.locate_file("")))
    for file in distribution.files or []:
        if str(file).startswith(".."):
            continue
        target = site / file
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source / file)


@pytest.fixture(scope="module")
def lean(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("lean")
    venv.EnvBuilder(with_pip=False).create(home / "venv")
    python = home / "venv" / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for distribution in closure([*declared, "pip", "setuptools"]).values():
        link(distribution, site)
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation", str(ROOT)],
        check=True,
        capture_output=True,
        cwd=home,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    return home / "venv" / "bin"


def test_the_lean_install_has_no_engine_and_imports_every_module(lean):
    check = (
        "import importlib, importlib.util, pkgutil, lettuce_build\n"
        f"assert not [m for m in {EXTRAS_ONLY!r} if importlib.util.find_spec(m)]\n"
        "for module in pkgutil.walk_packages(lettuce_build.__path__, 'lettuce_build.'):\n"
        "    importlib.import_module(module.name)\n"
        "print(lettuce_build.__file__)"
    )
    result = subprocess.run([lean / "python", "-c", check], capture_output=True, text=True, cwd=lean)
    assert result.returncode == 0, result.stderr
    assert str(ROOT) not in result.stdout  # the installed copy, not the checkout


def test_the_lean_install_builds_over_an_endpoint_and_shows_the_samples(lean, tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    out = tmp_path / "out"
    with serve(respond) as url:
        built = subprocess.run(
            [
                lean / "lettuce-build",
                "build",
                "--source",
                "readme",
                "--input",
                str(readmes),
                "--out",
                str(out),
            ]
            + ["--backend", "openai", "--base-url", url, "--model", "teacher", "--ratio", "1"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
    assert built.returncode == 0, built.stderr[-2000:]
    assert "hallucination ratio: achieved 1.00" in built.stdout
    shown = subprocess.run(
        [lean / "lettuce-build", "show", str(out), "-n", "1"], capture_output=True, text=True, cwd=tmp_path
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "question" in shown.stdout.lower()
