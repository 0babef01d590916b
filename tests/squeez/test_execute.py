"""Execution: hostile commands time out, stay offline and inside the worktree, outputs are capped."""

from pathlib import Path

import pytest

from lettuce_build.squeez.execute import Executor, cap_lines, number_lines
from lettuce_build.squeez.sandbox import detect_isolation
from lettuce_build.squeez.repos import RepoManager
from lettuce_build.squeez.toolcalls import ToolCall

from ..support.gitrepos import make_widgets_repo

ISOLATION = detect_isolation()
needs_bwrap = pytest.mark.skipif(
    ISOLATION.mode != "bwrap", reason=f"write confinement needs bubblewrap; here: {ISOLATION.note}"
)


@pytest.fixture
def setup(tmp_path):
    info = make_widgets_repo(tmp_path / "src" / "acme" / "widgets")
    repos = RepoManager(tmp_path / "out", f"file://{tmp_path}/src/{{repo}}")
    assert repos.clone("acme/widgets").ok
    return repos, info["base_commit"], tmp_path


def call(commit, tool_type, argv, runs_in="tree", timeout=20.0, **kw):
    return ToolCall(
        instance_id="i1",
        repo="acme/widgets",
        base_commit=commit,
        tool_type=tool_type,
        argv=argv,
        runs_in=runs_in,
        query="q",
        timeout=timeout,
        **kw,
    )


def test_read_file_shows_numbered_lines_from_the_bare_clone(setup):
    repos, commit, _ = setup
    result = Executor(repos, ISOLATION).run(
        call(commit, "read_file", ["git", "show", f"{commit}:widgets/core.py"], runs_in="bare")
    )
    lines = result.output.split("\n")
    assert lines[0] == '     1\t"""Core widgets."""' and result.exit_code == 0


def test_a_command_that_hangs_is_killed_and_the_timeout_is_output(setup):
    repos, commit, _ = setup
    result = Executor(repos, ISOLATION).run(
        call(commit, "python", ["python", "-c", "import time; time.sleep(600)"], timeout=2)
    )
    assert result.timed_out and result.exit_code is None
    assert result.output.endswith("[timed out after 2 s]")


def test_the_network_is_unreachable(setup):
    repos, commit, _ = setup
    code = (
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 80), timeout=3)\n    print('ONLINE')\n"
        "except OSError as err:\n    print('OFFLINE', err)"
    )
    result = Executor(repos, ISOLATION).run(call(commit, "python", ["python", "-c", code]))
    if ISOLATION.mode == "none":
        pytest.skip(f"no network isolation here: {ISOLATION.note}")
    assert "OFFLINE" in result.output and "ONLINE\n" not in result.output


@needs_bwrap
def test_writes_outside_the_worktree_never_reach_the_host(setup):
    repos, commit, tmp_path = setup
    targets = [tmp_path / "outside-marker", Path.home() / ".lettuce-build-squeez-marker"]
    for target in targets:
        target.unlink(missing_ok=True)
    attempt = "try:\n    open({!r}, 'w').write('x')\nexcept OSError as err:\n    print('REFUSED', err)"
    code = "\n".join(attempt.format(str(t)) for t in targets)
    result = Executor(repos, ISOLATION).run(call(commit, "python", ["python", "-c", code]))
    assert not any(t.exists() for t in targets)
    assert result.output.count("REFUSED") == 2


def test_no_secret_reaches_the_command(setup, monkeypatch):
    repos, commit, _ = setup
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    result = Executor(repos, ISOLATION).run(
        call(commit, "python", ["python", "-c", "import os; print(sorted(os.environ))"])
    )
    assert "HF_TOKEN" not in result.output and "OPENAI_API_KEY" not in result.output
    assert "secret" not in result.output and "PATH" in result.output


def test_a_huge_output_is_capped_with_an_omission_marker(setup):
    repos, commit, _ = setup
    result = Executor(repos, ISOLATION).run(
        call(commit, "python", ["python", "-c", "for i in range(200000): print(i)"])
    )
    lines = result.output.split("\n")
    assert len(lines) == 501 and lines[-1].startswith("... [") and "more lines omitted]" in lines[-1]
    assert result.truncated_lines > 0


def test_a_binary_file_is_shown_as_a_marker(setup):
    repos, commit, _ = setup
    result = Executor(repos, ISOLATION).run(
        call(commit, "read_file", ["git", "show", f"{commit}:assets/logo.bin"], runs_in="bare")
    )
    assert result.output.startswith("[binary output:")


def test_curl_is_skipped_without_network_permission(setup):
    repos, commit, _ = setup
    result = Executor(repos, ISOLATION).run(
        call(commit, "curl", ["curl", "-sS", "https://example.org"], needs_network=True)
    )
    assert result.skipped.startswith("network disabled")


def test_the_worktree_is_cleaned_between_commands(setup):
    repos, commit, _ = setup
    executor = Executor(repos, ISOLATION)
    executor.run(call(commit, "python", ["python", "-c", "open('leftover.txt', 'w').write('x')"]))
    result = executor.run(call(commit, "ls", ["ls", "-la"]))
    assert "leftover.txt" not in result.output and "widgets" in result.output


def test_cap_and_numbering_helpers():
    text, omitted = cap_lines("\n".join(str(i) for i in range(10)), max_lines=4)
    assert text.split("\n") == ["0", "1", "2", "3", "... [6 more lines omitted]"] and omitted == 6
    assert number_lines("a\nb") == "     1\ta\n     2\tb"
