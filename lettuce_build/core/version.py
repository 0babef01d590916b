"""lettuce-build's own version, as installed (cards and manifests record it), and the hash of its code."""

import functools
import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    VERSION = version("lettuce-build")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0.0.0+unknown"


@functools.cache
def code_fingerprint() -> str:
    """A hash of the package's own code and prompts. Results kept on disk between runs (stage
    passes, loaded items) are keyed by it, so a changed gate or parser never serves what the
    code before it made, even when the version number stayed the same (an editable install)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(VERSION.encode())
    for path in sorted(p for p in root.rglob("*") if p.suffix in {".py", ".yaml"}):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
