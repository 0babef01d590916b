"""Turning keys that come from input data (instance ids, repository names) into safe file names."""

from __future__ import annotations

import hashlib

import regex

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
