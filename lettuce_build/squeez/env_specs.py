"""What environment an instance needs (squeez phase 4): the Python version, pins and requirement
files of the ``swebench`` package's spec for its repository and version (the instance's, else the
one written in the tree, else its nearest release tag), and an interpreter this machine has."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.core.flags import flag
from lettuce_build.core.paths import safe_name
from lettuce_build.swebench.repos import repo_slug

_VERSION_PATTERNS = (
    re.compile(r"""^__version__\s*=\s*['"](\d+\.\d+)""", re.M),
    re.compile(r"""^VERSION\s*=\s*\(\s*(\d+)\s*,\s*(\d+)""", re.M),  # Django's tuple
    re.compile(r"""^version\s*=\s*['"]?(\d+\.\d+)""", re.M),  # setup.cfg, pyproject.toml
    re.compile(r"""\bversion\s*=\s*['"](\d+\.\d+)"""),  # setup.py
)
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_TAG_VERSION = re.compile(r"(\d+)\.(\d+)")


class EnvOptions(BaseModel):
    """How phase 4 builds a repository's environment (the package index is reached through the
    sandbox's user-mode network)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    python: str | None = None
    """Phase 4 environments: the Python version (3.9) or interpreter path to use instead of the
    swebench spec's."""
    find_links: list[Path] = Field(default_factory=list, json_schema_extra=flag(exists=True))
    """Phase 4 environments: a local folder of wheels to install from (repeatable)."""
    offline: bool = False
    """Phase 4 environments: install only from --find-links, never from the package index."""
    index_url: str | None = None
    """Phase 4 environments: the package index to install from instead of PyPI (a mirror)."""


class EnvSpec(BaseModel):
    repo: str
    version: str | None
    python: str
    interpreter: str
    requirements: list[str]  # requirement files, relative to the tree
    packages: list[str]  # pinned packages (and pytest)
    notes: list[str] = []

    @property
    def key(self) -> str:
        return safe_name(f"{repo_slug(self.repo)}-{self.version or 'unversioned'}-py{self.python}")


def find_interpreters(search_path: str | None = None) -> dict[str, Path]:
    """``{"3.9": path, ...}``: the CPython interpreters on PATH and in pyenv-style version folders.

    Found by name (``python3.N``) and checked to exist and be executable; the first found per
    version wins, PATH first.
    """
    folders = [Path(p) for p in (search_path or os.environ.get("PATH", "")).split(os.pathsep) if p]
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    for root in filter(None, roots):
        folders += sorted(Path(root, "versions").glob("*/bin"))
    found: dict[str, Path] = {}
    for folder in folders:
        for candidate in sorted(folder.glob("python[23].*")):
            match = re.fullmatch(r"python(\d\.\d+)", candidate.name)
            if match and os.access(candidate, os.X_OK) and "shims" not in candidate.parts:
                found.setdefault(match.group(1), candidate.resolve())
    return found


def _pick_interpreter(wanted: str, interpreters: dict[str, Path]) -> tuple[str, Path] | None:
    """The wanted version, else the nearest newer one this machine has."""
    if wanted in interpreters:
        return wanted, interpreters[wanted]
    newer = sorted((v for v in interpreters if Version(v) > Version(wanted)), key=Version)
    return (newer[0], interpreters[newer[0]]) if newer else None


@functools.cache
def swebench_specs() -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, list[str]]]:
    """The swebench package's per-repository/version specs and requirement paths ({} without it)."""
    try:
        from swebench.harness.constants import MAP_REPO_TO_REQS_PATHS, MAP_REPO_VERSION_TO_SPECS
    except ImportError:
        return {}, {}
    return MAP_REPO_VERSION_TO_SPECS, MAP_REPO_TO_REQS_PATHS


def detect_version(tree: Path) -> str | None:
    """``major.minor`` read from the repository's own files (``__version__``, Django's VERSION,
    setup.cfg/pyproject/setup.py); None when it is not written down (setuptools_scm, say)."""
    candidates = [
        *sorted(tree.glob("src/*/__init__.py")),
        *sorted(tree.glob("*/__init__.py")),
        *sorted(tree.glob("*/__version__.py")),
        *sorted(tree.glob("*/version.py")),
        *sorted(tree.glob("*/__pkginfo__.py")),  # pylint
        *(tree / name for name in ("setup.cfg", "pyproject.toml", "setup.py")),
    ]
    for file in candidates:
        if not file.is_file() or file.is_symlink():
            continue
        text = file.read_text(encoding="utf-8", errors="replace")[:200_000]
        for pattern in _VERSION_PATTERNS:
            if match := pattern.search(text):
                return ".".join(match.groups()) if match.lastindex and match.lastindex > 1 else match.group(1)
    return None


def tag_version(tag: str | None) -> str | None:
    """``major.minor`` of a release tag ("v7.1.2" -> "7.1")."""
    match = _TAG_VERSION.search(tag or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _spec_version(known: Sequence[str], wanted: str | None) -> str | None:
    """The spec key for a version: itself, else the newest known one not above it."""
    if wanted in known:
        return wanted
    parsed = _version(wanted) if wanted else None
    usable = sorted((k for k in known if _version(k)), key=Version)
    if parsed is None:
        return usable[-1] if usable else None
    below = [k for k in usable if Version(k) <= parsed]
    return below[-1] if below else (usable[0] if usable else None)


def _version(text: str) -> Version | None:
    """``text`` as a version (None: it is not one)."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def spec_for(
    repo: str,
    version: str | None,
    *,
    tree: Path,
    interpreters: dict[str, Path],
    options: EnvOptions,
    tag: str | None = None,
) -> EnvSpec | str:
    """The environment an instance needs, or why none can be made on this machine. The version is
    the instance's, else the one written in the tree, else its nearest release ``tag``'s."""
    specs, requirement_paths = swebench_specs()
    notes: list[str] = []
    detected = version or detect_version(tree) or tag_version(tag)
    repo_specs = specs.get(repo, {})
    key = _spec_version(list(repo_specs), detected) if repo_specs else None
    spec = repo_specs.get(key, {}) if key else {}
    if repo_specs and key != detected:
        notes.append(f"version {detected or 'not found'}: swebench spec {key} used")
    elif not repo_specs:
        notes.append("no swebench spec for this repository: its own dependencies only")
    python = str(spec.get("python", "3.11"))
    if options.python:
        if os.sep in options.python:
            return _spec(
                repo,
                key or detected,
                python=options.python,
                interpreter=Path(options.python),
                tree=tree,
                spec=spec,
                notes=notes,
            )
        python = options.python
    picked = _pick_interpreter(python, interpreters)
    if picked is None:
        found = ", ".join(sorted(interpreters, key=Version))
        return f"no Python {python} or newer on this machine (found: {found})"
    if picked[0] != python:
        notes.append(f"Python {python} is not installed: {picked[0]} used")
    spec_packages = spec.get("packages", "")
    requirements = []
    if spec_packages == "requirements.txt":
        requirements = [p for p in requirement_paths.get(repo, []) if (tree / p).is_file()][:1]
    elif spec_packages == "environment.yml":
        notes.append("the spec asks for a conda environment: its pip pins only")
    return _spec(
        repo,
        key or detected,
        python=picked[0],
        interpreter=picked[1],
        tree=tree,
        spec=spec,
        notes=notes,
        requirements=requirements,
    )


def _spec(
    repo: str,
    version: str | None,
    *,
    python: str,
    interpreter: Path,
    tree: Path,
    spec: dict[str, Any],
    notes: list[str],
    requirements: list[str] | None = None,
) -> EnvSpec:
    packages = list(spec.get("pip_packages", []))
    listed = spec.get("packages", "")
    if listed and listed not in ("requirements.txt", "environment.yml"):
        packages += listed.split()
    # the harness's conda environments always hold pytest and a setuptools that still ships
    # pkg_resources (which old code imports; setuptools 81 dropped it); a uv virtualenv holds
    # neither unless asked
    for name, requirement in (("pytest", "pytest"), ("setuptools", "setuptools<81")):
        if not any(re.match(rf"{name}\b", p, re.IGNORECASE) for p in packages):
            packages.append(requirement)
    return EnvSpec(
        repo=repo,
        version=version,
        python=python,
        interpreter=str(interpreter),
        requirements=requirements or [],
        packages=packages,
        notes=notes,
    )
