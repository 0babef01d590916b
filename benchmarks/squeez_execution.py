"""squeez execution on a generated repository (many commits, many files, a test suite):

- time to the first executed call of an instance with a cold environment cache (its
  environment built with uv from the package index, in the sandbox) and with a warm one;
- tool calls per second with 1 and with N workers, execution types (python, pytest) included,
  on the shared environment;
- the sandbox's throwaway tree (one export per instance, a linked copy per call) against a
  fresh checkout per call.

Needs the package index (the cold build installs pytest).

    python benchmarks/squeez_execution.py [WORKERS] [INSTANCES]
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import git

from lettuce_build.squeez.env_specs import EnvOptions
from lettuce_build.squeez.environments import Environments
from lettuce_build.squeez.execute import Executor
from lettuce_build.squeez.sandbox import Sandbox, copy_tree, detect_isolation, sandbox_uid
from lettuce_build.squeez.toolcalls import ToolCall
from lettuce_build.swebench.repos import RepoManager


def generated_repo(path: Path, commits: int = 40, files: int = 60) -> list[str]:
    repo = git.Repo.init(path, initial_branch="main")
    rng = random.Random(0)
    shas = []
    author = git.Actor("Bench", "bench@example.org")
    for c in range(commits):
        changed = rng.sample(range(files), 6) if c else range(files)
        for f in changed:
            target = path / f"pkg/mod_{f}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(f"def f_{f}_{i}(x):\n    return x * {c + i}\n" for i in range(40)))
        extra = {}
        if not c:  # a test suite and the pytest setting that puts the package on its path
            extra = {
                "pkg/__init__.py": "",
                "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
                "tests/test_mods.py": "".join(
                    f"from pkg.mod_{f} import f_{f}_1\n\n\ndef test_{f}():\n    assert f_{f}_1(1) >= 1\n\n\n"
                    for f in range(files)
                ),
            }
            for name, text in extra.items():
                (path / name).parent.mkdir(parents=True, exist_ok=True)
                (path / name).write_text(text)
        repo.index.add([f"pkg/mod_{f}.py" for f in changed] + list(extra))
        shas.append(repo.index.commit(f"commit {c}", author=author, committer=author).hexsha)
    return shas


def calls_for(commit: str, index: int) -> list[ToolCall]:
    base = dict(instance_id=f"bench-{index}", repo="bench/repo", base_commit=commit, query="q")
    return [
        ToolCall(
            **base,
            tool_type="read_file",
            argv=["git", "show", f"{commit}:pkg/mod_{index % 60}.py"],
            runs_in="bare",
        ),
        ToolCall(
            **base,
            tool_type="grep",
            argv=["git", "grep", "-n", "-e", f"f_{index % 60}_1", commit],
            runs_in="bare",
        ),
        ToolCall(
            **base, tool_type="git_log", argv=["git", "log", "--oneline", "-20", commit], runs_in="bare"
        ),
        ToolCall(**base, tool_type="ls", argv=["ls", "-la", "pkg"], runs_in="tree"),
        ToolCall(
            **base,
            tool_type="python",
            argv=["python", "-c", f"import pkg.mod_{index % 60} as m; print(len(dir(m)))"],
            runs_in="tree",
        ),
        ToolCall(
            **base,
            tool_type="test_output",
            argv=["python", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "tests/test_mods.py"],
            runs_in="tree",
            timeout=60.0,
        ),
    ]


def first_call_seconds(executor: Executor, commit: str) -> tuple[float, str]:
    """Seconds from an instance's start to its first executed (python) call's result."""
    [python] = [c for c in calls_for(commit, 0) if c.tool_type == "python"]
    started = time.perf_counter()
    [result] = executor.run_instance([python])
    return time.perf_counter() - started, result.skipped or result.output.strip()


class WorkerCalls:
    """Runs one instance's calls; each pool thread keeps one worker id (and sandbox uid)."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.ids = itertools.count()
        self.local = threading.local()

        self.skipped = 0

    def __call__(self, item: tuple[str, int]) -> int:
        if not hasattr(self.local, "worker"):
            self.local.worker = next(self.ids)
        results = self.executor.run_instance(calls_for(*item), self.local.worker)
        self.skipped += sum(1 for r in results if r.skipped)
        return len(results)


def main() -> None:
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    instances = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shas = generated_repo(root / "src" / "bench" / "repo")
        repos = RepoManager(root / "out", f"file://{root}/src/{{repo}}")
        repos.clone("bench/repo")
        isolation = detect_isolation()

        def executor_on(envs: Path) -> Executor:
            environments = Environments(envs, Sandbox(isolation, root / "sandbox"), EnvOptions(python="3.11"))
            return Executor(repos, isolation, environments=environments)

        cold, outcome = first_call_seconds(executor_on(root / "envs"), shas[-1])
        warm, _ = first_call_seconds(executor_on(root / "envs"), shas[-1])  # the same folder: built
        print(f"time to the first executed call (it printed {outcome[:40]!r}):")
        print(f"  cold environment cache {cold:.2f} s, warm {warm:.2f} s: warm is {cold / warm:.1f}x faster")
        executor = executor_on(root / "envs")
        work = [(shas[-1 - (i % 10)], i) for i in range(instances)]
        print(
            f"{instances} instances x 6 calls (2 run repository code) on a {len(shas)}-commit "
            f"repository; isolation: {isolation.mode}"
        )
        rates = {}
        for n in (1, workers):
            started = time.perf_counter()
            runner = WorkerCalls(executor)
            with ThreadPoolExecutor(n) as pool:
                done = sum(pool.map(runner, work))
            seconds = time.perf_counter() - started
            rates[n] = done / seconds
            print(
                f"  {n} worker(s): {done} calls ({runner.skipped} skipped) in {seconds:.2f} s "
                f"= {rates[n]:.1f} calls/s"
            )
        print(f"  {workers} workers / 1 worker = {rates[workers] / rates[1]:.2f}x")

        # Per instance: one export; per call: a throwaway copy. Baseline: a fresh checkout per call.
        commits = [shas[-1 - (i % 10)] for i in range(10)]
        calls_per_instance = 3
        started = time.perf_counter()
        for i, sha in enumerate(commits):
            with repos.exported("bench/repo", sha) as tree:
                for n in range(calls_per_instance):
                    copy_tree(tree, root / f"scratch-{i}-{n}", sandbox_uid(0))
        ours = (time.perf_counter() - started) / (len(commits) * calls_per_instance)
        started = time.perf_counter()
        for i, sha in enumerate(commits):
            for n in range(calls_per_instance):
                checkout = git.Repo.clone_from(
                    str(repos.bare_path("bench/repo")), root / f"fresh-{i}-{n}", no_checkout=True
                )
                checkout.git.checkout("--detach", sha)
        fresh = (time.perf_counter() - started) / (len(commits) * calls_per_instance)
        print(
            f"  throwaway tree {ours * 1000:.0f} ms vs fresh checkout {fresh * 1000:.0f} ms per call: "
            f"{fresh / ours:.1f}x cheaper"
        )


if __name__ == "__main__":
    main()
