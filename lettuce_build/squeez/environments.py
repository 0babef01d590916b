"""Phase 4, before execution: one Python environment per (repository, environment version).

python, test_output and build_output calls import the repository's package and its
dependencies, so they run on an environment built for the repository, never on
lettuce-build's own interpreter:

- the spec (squeez/env_specs.py) comes from the ``swebench`` package's per-repository/version
  specs where it has them (the instance's ``version``, else the version read from the
  repository's own files at the base commit, else its nearest release tag): the Python
  version, pinned packages, requirement files;
- the interpreter is one this machine has (found on PATH and in pyenv-style version folders,
  never a hard-coded path), or ``--python``;
- ``uv`` builds it: a virtualenv, the pins, the requirement files, then the repository
  installed editable from ``/repo``, the path at which every sandboxed call later sees its own
  tree, so one environment serves every instance of the same spec;
- the build runs repository code (setup.py, build backends), so it runs in the sandbox: network
  only for installing, no secret in its environment, writes only to its environment folder (and
  a throwaway copy of the tree);
- files the build writes into the tree (setuptools_scm's ``_version.py``, extension modules
  compiled in place) are kept in ``DIR/envs/<key>.overlay/`` and laid over every call's own
  copy of the tree: an editable install needs them, and each call starts from a pristine tree;
- environments are cached in ``DIR/envs/<key>/`` with a status file beside them written by the
  host; a failed build is recorded with its reason and its instances' execution calls are
  skipped with that reason.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from pathlib import Path

from pydantic import BaseModel

from lettuce_build.core.paths import safe_name
from lettuce_build.squeez.env_specs import PROJECT_FILES, EnvOptions, EnvSpec, find_interpreters, spec_for
from lettuce_build.squeez.sandbox import Sandbox, interpreter_paths, sandbox_uid
from lettuce_build.squeez.tree_copies import copy_tree
from lettuce_build.squeez.usernet import INSTALL_HINT
from lettuce_build.swebench.repos import repo_slug

BUILD_TIMEOUT = 900.0
BUILD_ADDRESS_SPACE = 16 * 1024**3  # uv and compilers reserve far more address space than they use
#: build byproducts that no call needs: never kept in an overlay
_NOT_OVERLAY = frozenset({"__pycache__", "build", ".eggs", ".git", ".tox", ".nox"})
MAX_OVERLAY_BYTES = 256 * 1024**2
MAX_OVERLAY_FILES = 20_000


class EnvStatus(BaseModel):
    key: str
    repo: str
    version: str | None
    python: str
    interpreter: str
    path: str
    ok: bool
    reason: str | None = None
    notes: list[str] = []
    built_from: str
    seconds: float = 0.0
    #: files the build wrote into the tree, laid over each call's copy of it
    overlay: str | None = None

    @property
    def bin(self) -> Path:
        return Path(self.path) / "bin"


# --- builds --------------------------------------------------------------------------------


def _uv_binary() -> Path | None:
    try:
        import uv

        return Path(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        return Path(found) if found else None


def _failure_line(text: str) -> str:
    """The line of a build log that says what went wrong."""
    lines = [line.strip(" ×╰─▶│") for line in text.splitlines() if line.strip(" ×╰─▶│")]
    errors = [line for line in lines if re.search(r"error|failed|no solution|not found", line, re.I)]
    return (errors or lines or ["no output"])[-1][:300]


def _through_link(tree: Path, relative: Path) -> bool:
    """Whether a folder on the way to ``tree / relative`` is a symbolic link (it may lead anywhere)."""
    return any((tree / parent).is_symlink() for parent in relative.parents if parent != Path("."))


def apply_overlay(overlay: Path, tree: Path, uid: int | None) -> None:
    """Lay an environment's overlay over a call's own copy of the tree (given to ``uid``). Never
    through a linked folder of the tree: the host would write wherever it points."""
    for folder, _, names in os.walk(overlay):
        relative = Path(folder).relative_to(overlay)
        if _through_link(tree, relative / "x"):
            continue
        destination = tree / relative
        destination.mkdir(parents=True, exist_ok=True)
        for name in names:
            target = destination / name
            if target.is_dir() and not target.is_symlink():
                continue
            if os.path.lexists(target):
                target.unlink()  # a hard link to the pristine export: replaced, never written through
            shutil.copyfile(Path(folder) / name, target)
            if uid is not None:
                os.chown(target, uid, uid)
        if uid is not None:
            os.chown(destination, uid, uid)


def recorded_statuses(root: Path) -> list[EnvStatus]:
    """Every environment built (or failed) under ``root``, as recorded."""
    return [EnvStatus.model_validate_json(p.read_text()) for p in sorted(root.glob("*.json"))]


class Environments:
    """Builds (or reuses) the environment of each spec; thread-safe, one build per key at a time."""

    def __init__(self, root: Path, sandbox: Sandbox, options: EnvOptions | None = None) -> None:
        self.root = root.resolve()
        self.sandbox = sandbox
        self.options = options or EnvOptions()
        self.interpreters = find_interpreters()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def status_path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def statuses(self) -> list[EnvStatus]:
        return recorded_statuses(self.root)

    def ensure(
        self,
        instance_id: str,
        repo: str,
        *,
        version: str | None,
        tree: Path,
        worker: int = 0,
        tag: str | None = None,
    ) -> EnvStatus:
        spec = spec_for(
            repo, version, tree=tree, interpreters=self.interpreters, options=self.options, tag=tag
        )
        if isinstance(spec, str):
            key = safe_name(f"{repo_slug(repo)}-{version or 'unversioned'}")
            return self._record(
                EnvStatus(
                    key=key,
                    repo=repo,
                    version=version,
                    python="?",
                    interpreter="",
                    path="",
                    ok=False,
                    reason=spec,
                    built_from=instance_id,
                )
            )
        with self._guard:
            lock = self._locks.setdefault(spec.key, threading.Lock())
        with lock:
            done = self.status_path(spec.key)
            if done.exists():
                return EnvStatus.model_validate_json(done.read_text())
            return self._record(self._build(spec, instance_id, tree, worker))

    def _record(self, status: EnvStatus) -> EnvStatus:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.status_path(status.key)
        if not path.exists():
            path.write_text(status.model_dump_json(indent=2))
        return status

    def _build(self, spec: EnvSpec, instance_id: str, tree: Path, worker: int) -> EnvStatus:
        started = time.perf_counter()
        env = self.root / spec.key
        status = EnvStatus(
            key=spec.key,
            repo=spec.repo,
            version=spec.version,
            python=spec.python,
            interpreter=spec.interpreter,
            path=str(env),
            ok=False,
            notes=list(spec.notes),
            built_from=instance_id,
        )
        uv = _uv_binary()
        if uv is None:
            status.reason = "uv is not installed"
            return status
        if self.sandbox.isolation.mode != "bwrap":
            status.reason = "no sandbox on this machine: environment builds run repository code"
            return status
        if not self.options.offline and self.sandbox.isolation.network != "pasta":
            status.reason = f"no user-mode network for the package index ({INSTALL_HINT}; or --offline)"
            return status
        shutil.rmtree(env, ignore_errors=True)  # what a crashed build left
        env.mkdir(parents=True)
        uid = sandbox_uid(worker)
        if uid is not None:
            os.chown(env, uid, uid)
        scratch = self.root / "scratch" / f"{spec.key}-w{worker}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.parent.mkdir(parents=True, exist_ok=True)
        copy_tree(tree, scratch, uid, link=False)  # setup.py rewrites files it ships (egg-info)
        log: list[str] = []
        try:
            steps = self._steps(spec, env, uv, scratch)
            for name, argv, required in steps:
                captured = self._run(argv, spec, env=env, uv=uv, tree=scratch, worker=worker)
                log.append(f"$ {' '.join(argv)}\n{captured.text}")
                if captured.exit_code == 0:
                    continue
                why = "timed out" if captured.timed_out else _failure_line(captured.text)
                if required:
                    status.reason = f"{name}: {why}"
                    return status
                status.notes.append(f"{name} failed ({why})")
            status.overlay = self._save_overlay(spec.key, scratch, tree, status.notes)
            status.ok = True
            return status
        finally:
            status.seconds = round(time.perf_counter() - started, 1)
            shutil.rmtree(scratch, ignore_errors=True)
            (self.root / f"{spec.key}.log").write_text("\n".join(log), encoding="utf-8")
            if not status.ok:
                shutil.rmtree(env, ignore_errors=True)

    def _save_overlay(self, key: str, built: Path, pristine: Path, notes: list[str]) -> str | None:
        """Copy the regular files the build added to the tree (never links, never byproducts
        like build/ or egg-info) into ``<key>.overlay``; its path, or None when there are none."""
        overlay = self.root / f"{key}.overlay"
        shutil.rmtree(overlay, ignore_errors=True)
        total = files = 0
        for folder, dirs, names in os.walk(built):
            dirs[:] = [d for d in dirs if d not in _NOT_OVERLAY and not d.endswith(".egg-info")]
            for name in names:
                source = Path(folder) / name
                relative = source.relative_to(built)
                if source.is_symlink() or not source.is_file() or (pristine / relative).exists():
                    continue
                total += source.stat().st_size
                files += 1
                if total > MAX_OVERLAY_BYTES or files > MAX_OVERLAY_FILES:
                    notes.append(
                        f"files the build wrote into the tree exceed {MAX_OVERLAY_BYTES} bytes or "
                        f"{MAX_OVERLAY_FILES} files: not kept"
                    )
                    shutil.rmtree(overlay, ignore_errors=True)
                    return None
                (overlay / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, overlay / relative, follow_symlinks=False)
                os.chmod(overlay / relative, 0o644)
        return str(overlay) if overlay.exists() else None

    def _find_links(self) -> list[Path]:
        """The --find-links folders, copied where the sandbox's uid can read them (a user's own
        folder may be private to them); made once."""
        staged = []
        for number, folder in enumerate(self.options.find_links):
            target = self.root / "find-links" / str(number)
            with self._guard:
                if not target.exists():
                    partial = target.with_name(f"{number}.partial")
                    shutil.rmtree(partial, ignore_errors=True)
                    shutil.copytree(folder, partial)
                    for dirpath, _, files in os.walk(partial):
                        os.chmod(dirpath, 0o755)
                        for name in files:
                            os.chmod(Path(dirpath) / name, 0o644)
                    partial.rename(target)
            staged.append(target)
        return staged

    def _steps(self, spec: EnvSpec, env: Path, uv: Path, tree: Path) -> list[tuple[str, list[str], bool]]:
        """(name, argv, required): a failed required step fails the build, others become notes."""
        install = [str(uv), "pip", "install", "--python", str(env / "bin" / "python")]
        for folder in self._find_links():
            install += ["--find-links", str(folder)]
        if self.options.offline:
            install += ["--offline", "--no-index"]
        elif self.options.index_url:
            install += ["--index-url", self.options.index_url]
        steps = [
            (
                "create the virtualenv",
                [str(uv), "venv", "--python", spec.interpreter, str(env)],
                True,
            ),
            ("install the pinned packages", [*install, *spec.packages], True),
        ]
        for requirement in spec.requirements:
            steps.append((f"install {requirement}", [*install, "-r", f"/repo/{requirement}"], False))
        if any((tree / name).is_file() for name in PROJECT_FILES):
            steps.append(("install the repository", [*install, "-e", "/repo"], False))
        return steps

    def _run(self, argv: list[str], spec: EnvSpec, *, env: Path, uv: Path, tree: Path, worker: int):  # noqa: ANN202
        # every step runs on the spec's base interpreter (the environment's python links to it);
        # its mounts come from the host's choice, never from files the build wrote
        return self.sandbox.run(
            argv,
            tree=tree,
            read_only=[*interpreter_paths(Path(spec.interpreter)), uv, *self._find_links()],
            writable=[env],
            network=not self.options.offline,
            uid=sandbox_uid(worker),
            extra_env=_uv_env(network=not self.options.offline),
            timeout=BUILD_TIMEOUT,
            address_space=BUILD_ADDRESS_SPACE,
        )


def _uv_env(network: bool) -> dict[str, str]:
    env = {
        "UV_CACHE_DIR": "/tmp/uv-cache",  # inside the sandbox's own /tmp: gone with it
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
        "UV_LINK_MODE": "copy",
        "UV_NO_PROGRESS": "1",
    }
    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    if network and bundle.exists():  # a proxy's certificate authority, where the machine trusts one
        env["SSL_CERT_FILE"] = str(bundle)
    return env
