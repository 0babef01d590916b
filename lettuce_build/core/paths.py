"""Paths: keys that come from input data (instance ids, repository names) made safe file
names, and a folder checked for writing before any work is done in it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import regex

from lettuce_build.core.errors import PathError

_UNSAFE = regex.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME_CHARS = 120


def safe_name(key: str) -> str:
    """A file name for ``key`` that stays inside its folder: no separators, no leading dot.

    Readable keys (``django__django-11099``) stay as they are; anything else keeps its safe
    characters and gains a short hash of the original, so distinct keys never collide.
    """
    cleaned = _UNSAFE.sub("_", key).lstrip(".")[:MAX_NAME_CHARS]
    if cleaned == key and cleaned:
        return cleaned
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{cleaned}-{digest}" if cleaned else digest


def check_writable(path: Path, what: str = "output folder") -> None:
    """Refuse, before any model call, a folder that cannot be made or written: one that is a
    file, lies under a file, or whose nearest existing folder is not writable."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise PathError(f"{what} {path} is a file, not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise PathError(f"{what} {path} lies under {existing}, which is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PathError(f"{what} {path}: {existing} is not writable")
