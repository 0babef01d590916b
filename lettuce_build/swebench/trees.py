"""A repository's files at one commit, read from its bare clone: nothing is checked out, and no
code of the repository runs (host git with `host_git_env`, as everywhere on the host)."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from lettuce_build.core.errors import RepoError
from lettuce_build.swebench.repos import host_git_env


class RepoTree:
    """The tree of ``commit`` in the bare clone at ``bare``: its paths, a file's text, and whether a
    word occurs anywhere in it. Reads are cached: a code item asks for the same files many times."""

    def __init__(self, bare: Path, commit: str) -> None:
        self.bare = bare
        self.commit = commit
        self._texts: dict[str, str | None] = {}

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", "--git-dir", str(self.bare), *args], capture_output=True, env=host_git_env(), check=False
        )

    @functools.cached_property
    def paths(self) -> tuple[str, ...]:
        listed = self._git("ls-tree", "-r", "--name-only", "-z", self.commit)
        return tuple(p for p in listed.stdout.decode("utf-8", "replace").split("\0") if p)

    def read(self, path: str) -> str | None:
        """The file's text at the commit; None when it is not there (a file a patch creates)."""
        if path not in self._texts:
            shown = self._git("show", f"{self.commit}:{path}")
            self._texts[path] = shown.stdout.decode("utf-8", "replace") if shown.returncode == 0 else None
        return self._texts[path]

    def mentions(self, word: str) -> bool:
        """Whether ``word`` occurs as a whole word in any file of the tree (``git grep -w``)."""
        found = self._git("grep", "-q", "-w", "-F", "-e", word, self.commit, "--")
        if found.returncode > 1:  # 1: not found; more: git could not search (no such clone or commit)
            raise RepoError(f"git grep in {self.bare} at {self.commit[:12]}: {found.stderr.decode().strip()}")
        return found.returncode == 0
