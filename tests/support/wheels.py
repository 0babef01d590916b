"""Wheels the tests build themselves, so squeez's environments install with no network.

`repack` turns distributions installed in this interpreter (pytest and what it needs) back
into wheels, file for file from their RECORD; `make_wheel` writes a small pure-Python wheel.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

#: pytest and its dependencies: enough for a test run inside an offline environment
PYTEST_DISTRIBUTIONS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")


def _wheel_name(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def repack(names: tuple[str, ...], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        dist = metadata.distribution(name)
        target = folder / _wheel_name(dist.metadata["Name"], dist.version)
        if target.exists():
            continue
        with zipfile.ZipFile(target, "w") as wheel:
            for file in dist.files or []:
                path = Path(str(dist.locate_file(file)))
                if path.is_file() and "__pycache__" not in file.parts and not str(file).startswith(".."):
                    wheel.write(path, str(file))
    return folder


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def make_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel holding ``files`` (path -> text)."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: lettuce-build-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = [_record_line(p, t.encode()) for p, t in contents.items()] + [f"{info}/RECORD,,"]
    target = folder / _wheel_name(name, version)
    with zipfile.ZipFile(target, "w") as wheel:
        for path, text in contents.items():
            wheel.writestr(path, text)
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return target
