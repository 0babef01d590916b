"""The throwaway copies of a pristine tree that sandboxed commands get (see squeez/sandbox.py):
hard links given to an unprivileged uid where that is safe, private copies where not."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path


def copy_tree(source: Path, target: Path, uid: int | None, *, link: bool = True) -> Path:
    """A throwaway copy of a pristine tree for one sandboxed command.

    With an unprivileged ``uid`` the files are hard links (cheap): the folders belong to the
    uid, so it may add, remove and replace files, while the linked files stay root's and
    cannot be changed in place. Otherwise (or with ``link=False``, for builds that rewrite
    files in place) the files are copied, and given to the uid.
    """
    if uid is None or not link:
        shutil.copytree(source, target, symlinks=True)
        if uid is not None:
            for folder, dirs, names in os.walk(target):
                for name in [*dirs, *names, "."]:
                    os.lchown(Path(folder) / name, uid, uid)
        return target
    for folder, dirs, names in os.walk(source):
        relative = Path(folder).relative_to(source)
        destination = target / relative
        destination.mkdir(parents=True, exist_ok=relative == Path("."))
        os.chown(destination, uid, uid)
        for name in names + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            src = Path(folder) / name
            if src.is_symlink():
                os.symlink(os.readlink(src), destination / name)
            else:
                os.link(src, destination / name)
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
    return target


def unlink_copies(tree: Path, paths: Sequence[str]) -> None:
    """Replace hard-linked files by private copies before the host itself edits them."""
    for path in paths:
        file = tree / path
        if file.is_file() and not file.is_symlink() and file.stat().st_nlink > 1:
            data = file.read_bytes()
            mode = file.stat().st_mode
            file.unlink()
            file.write_bytes(data)
            file.chmod(mode)
