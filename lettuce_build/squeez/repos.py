"""Phase 2 and the checkouts phase 4 needs: one bare clone per repository, worktrees at a commit.

The URL template takes ``{repo}`` (``owner/name``), ``{owner}`` and ``{name}``; a local
path or a ``file://`` mirror works offline. A repository that cannot be cloned is
recorded with its reason, and its instances are skipped, not the run.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import git
from pydantic import BaseModel

DEFAULT_URL_TEMPLATE = "https://github.com/{repo}.git"


class RepoStatus(BaseModel):
    repo: str
    url: str
    path: str | None = None
    ok: bool
    reason: str | None = None


def repo_slug(repo: str) -> str:
    return repo.replace("/", "__")


class RepoManager:
    def __init__(self, root: Path, url_template: str = DEFAULT_URL_TEMPLATE) -> None:
        self.root = root
        self.url_template = url_template
        self._locks: dict[str, threading.Lock] = {}
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

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def worktree(self, repo: str, commit: str, worker: int = 0) -> Path:
        """A worktree of ``repo`` at ``commit`` for one worker, created once and switched after."""
        path = self.root / "worktrees" / f"{repo_slug(repo)}-w{worker}"
        bare = git.Repo(self.bare_path(repo))
        with self._lock(str(path)):
            if not (path / ".git").exists():
                shutil.rmtree(path, ignore_errors=True)
                with self._lock(f"bare::{repo}"):  # worktree add writes into the shared bare repo
                    bare.git.worktree("prune")
                    bare.git.worktree("add", "--detach", "--force", str(path), commit)
            else:
                checkout = git.Repo(path)
                checkout.git.checkout("--detach", "--force", commit)
            git.Repo(path).git.clean("-fdxq")  # leftovers of the previous command go
        return path

    def fresh_checkout(self, repo: str, commit: str, target: Path) -> Path:
        """A throwaway full checkout (the baseline the worktree benchmark compares against)."""
        shutil.rmtree(target, ignore_errors=True)
        checkout = git.Repo.clone_from(str(self.bare_path(repo)), target, no_checkout=True)
        checkout.git.checkout("--detach", commit)
        return target


def _git_error(err: git.GitCommandError) -> str:
    """The first line of git's stderr that says what went wrong."""
    stderr = str(err.stderr or "").strip().removeprefix("stderr:").strip().strip("'")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or [f"git exited with {err.status}"])[0]
