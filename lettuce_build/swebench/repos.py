"""Repositories of SWE-bench instances: one bare clone each, and exports of a commit without `.git`.

Shared by squeez (phase 2 clones, phase 4 trees) and the code source (files at a base commit).

The URL template takes ``{repo}`` (``owner/name``), ``{owner}`` and ``{name}``; a local
path or a ``file://`` mirror works offline. A repository that cannot be cloned is
recorded with its reason, and its instances are skipped, not the run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import git
from pydantic import BaseModel, Field

from lettuce_build.core.errors import RepoError
from lettuce_build.core.paths import safe_name

DEFAULT_URL_TEMPLATE = "https://github.com/{repo}.git"
#: the setting of where repositories are cloned from, which builds and squeez runs both take
RepoUrl = Annotated[
    str,
    Field(
        description="Where repositories are cloned from (the code source, squeez, the sift): a URL "
        "template ({repo} = owner/name, also {owner}, {name}); a local path or file:// works too."
    ),
]


class RepoStatus(BaseModel):
    repo: str
    url: str
    path: str | None = None
    ok: bool
    reason: str | None = None


def host_git_env() -> dict[str, str]:
    """The environment host git runs with: no secrets, no system or global config, no hooks."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(Path.home()),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.hooksPath",
        "GIT_CONFIG_VALUE_0": os.devnull,
    }


def repo_slug(repo: str) -> str:
    return safe_name(repo.replace("/", "__"))


class RepoManager:
    def __init__(self, root: Path, url_template: str = DEFAULT_URL_TEMPLATE) -> None:
        self.root = root.resolve()  # git runs in other folders: a relative root would move with it
        self.url_template = url_template
        self._locks: dict[str, threading.Lock] = {}
        self._holders: dict[Path, int] = {}
        self._guard = threading.Lock()

    def url(self, repo: str) -> str:
        owner, _, name = repo.partition("/")
        return self.url_template.format(repo=repo, owner=owner, name=name)

    def bare_path(self, repo: str) -> Path:
        return self.root / "bare" / f"{repo_slug(repo)}.git"

    def clone(self, repo: str) -> RepoStatus:
        """A bare clone, reused when it already exists."""
        url, path = self.url(repo), self.bare_path(repo)
        if (path / "HEAD").exists():
            return RepoStatus(repo=repo, url=url, path=str(path), ok=True)
        staging = path.with_name(path.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            git.Repo.clone_from(url, staging, bare=True)
        except git.GitCommandError as err:
            shutil.rmtree(staging, ignore_errors=True)
            return RepoStatus(repo=repo, url=url, ok=False, reason=f"clone failed: {_git_error(err)}")
        staging.rename(path)
        return RepoStatus(repo=repo, url=url, path=str(path), ok=True)

    def has_commit(self, repo: str, commit: str) -> bool:
        try:
            git.Repo(self.bare_path(repo)).commit(commit)
        except (ValueError, git.BadName, git.GitCommandError):
            return False
        return True

    def nearest_tag(self, repo: str, commit: str) -> str | None:
        """The newest tag reachable from ``commit`` ("v7.1.2"), None when there is none."""
        try:
            return git.Repo(self.bare_path(repo)).git.describe("--tags", "--abbrev=0", commit) or None
        except (git.GitCommandError, git.NoSuchPathError):
            return None

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def export(self, repo: str, commit: str) -> Path:
        """The files of ``repo`` at ``commit``, without ``.git``: a pristine tree, made once.

        Written by host git from the bare clone alone (a throwaway index, hooks off), and never
        handed to sandboxed code itself: commands get copies of it (`squeez.tree_copies.copy_tree`).
        """
        path = self._export_path(repo, commit)
        with self._lock(str(path)):
            if path.exists():  # only a finished export is ever renamed into place
                return path
            staging = path.with_name(path.name + ".partial")
            index = path.with_name(path.name + ".index")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            env = {
                **host_git_env(),
                "GIT_DIR": str(self.bare_path(repo)),
                "GIT_WORK_TREE": str(staging),
                "GIT_INDEX_FILE": str(index),
            }
            try:
                for argv in (["git", "read-tree", commit], ["git", "checkout-index", "-a", "-f"]):
                    done = subprocess.run(argv, env=env, capture_output=True, cwd=staging)
                    if done.returncode:
                        shutil.rmtree(staging, ignore_errors=True)
                        why = done.stderr.decode(errors="replace").strip()
                        raise RepoError(f"{repo}@{commit[:12]}: {why}")
            finally:
                index.unlink(missing_ok=True)
            staging.rename(path)
        return path

    def _export_path(self, repo: str, commit: str) -> Path:
        return self.root / "trees" / repo_slug(repo) / safe_name(commit)

    @contextmanager
    def exported(self, repo: str, commit: str) -> Iterator[Path]:
        """An export held for the block; the last holder of a commit's export removes it."""
        path = self._export_path(repo, commit)
        with self._guard:
            self._holders[path] = self._holders.get(path, 0) + 1
        try:
            yield self.export(repo, commit)
        finally:
            with self._guard:
                self._holders[path] -= 1
                last = self._holders[path] == 0
            if last:
                with self._lock(str(path)):
                    if not self._holders[path]:
                        shutil.rmtree(path, ignore_errors=True)


def _git_error(err: git.GitCommandError) -> str:
    """The first line of git's stderr that says what went wrong."""
    stderr = str(err.stderr or "").strip().removeprefix("stderr:").strip().strip("'")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or [f"git exited with {err.status}"])[0]
