"""The documentation site builds with no warning, and its command-line reference lists every
command and option the CLI has (it is generated from the click commands: this proves it)."""

import html
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from lettuce_build.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "WARNING" not in result.stderr, result.stderr[-3000:]
    return out


def commands(group: click.Group, prefix: str = "lettuce-build") -> dict[str, click.Command]:
    found = {}
    for name, command in group.commands.items():
        found[f"{prefix} {name}"] = command
        if isinstance(command, click.Group):
            found.update(commands(command, f"{prefix} {name}"))
    return found


def test_the_site_builds_with_no_warning(site):
    for page in ("index.html", "getting-started/index.html", "reference/api/index.html"):
        assert (site / page).exists()
    api = (site / "reference/api/index.html").read_text()
    for name in ("build", "dry_run", "merge", "push", "export", "register_source", "LettuceError"):
        assert name in api


def test_the_cli_reference_lists_every_command_and_option(site):
    page = html.unescape((site / "reference/cli/index.html").read_text())
    missing = []
    for name, command in commands(main).items():
        if name not in page:
            missing.append(name)
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                missing += [f"{name} {flag}" for flag in param.opts if flag not in page]
    assert missing == []
