"""Execution: hostile commands time out, stay offline and inside the worktree, outputs are capped."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lettuce_build.squeez.execute import Executor, cap_lines, number_lines, strip_revision
from lettuce_build.squeez.sandbox import detect_isolation
from lettuce_build.squeez.toolcalls import ToolCall
from lettuce_build.swebench.repos import RepoManager

from ..support.gitrepos import make_widgets_repo
from ..support.processes import processes_matching

ISOLATION = detect_isolation()
needs_bwrap = pytest.mark.skipif(
    ISOLATION.mode != "bwrap", reason=f"write confinement needs bubblewrap; here: {ISOLATION.note}"
)


@pytest.fixture
def setup(tmp_path, plain_env):
    info = make_widgets_repo(tmp_path / "src" / "acme" / "widgets")
    repos = RepoManager(tmp_path / "out", f"file://{tmp_path}/src/{{repo}}")
    assert repos.clone("acme/widgets").ok
    return Runner(Executor(repos, ISOLATION), plain_env), info["base_commit"], tmp_path


class Runner:
    """Runs one call at a time on a ready environment, as phase 4 does after building it."""

    def __init__(self, executor, env):
        self.executor, self.env, self.repos = executor, env, executor.repos

    def run(self, call, **kw):
        return self.executor.run(call, env=self.env, **kw)

    def __getattr__(self, name):  # the repositories' own methods (export, has_commit)
        return getattr(self.repos, name)


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
    result = repos.run(
        call(commit, "read_file", ["git", "show", f"{commit}:widgets/core.py"], runs_in="bare")
    )
    lines = result.output.split("\n")
    assert lines[0] == '     1\t"""Core widgets."""' and result.exit_code == 0


def test_a_command_that_hangs_is_killed_and_the_timeout_is_output(setup):
    repos, commit, _ = setup
    result = repos.run(call(commit, "python", ["python", "-c", "import time; time.sleep(600)"], timeout=2))
    assert result.timed_out and result.exit_code is None
    assert result.output.endswith("[timed out after 2 s]")


def test_the_network_is_unreachable(setup):
    repos, commit, _ = setup
    code = (
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 80), timeout=3)\n    print('ONLINE')\n"
        "except OSError as err:\n    print('OFFLINE', err)"
    )
    result = repos.run(call(commit, "python", ["python", "-c", code]))
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
    result = repos.run(call(commit, "python", ["python", "-c", code]))
    assert not any(t.exists() for t in targets)
    assert result.output.count("REFUSED") == 2


def test_no_secret_reaches_the_command(setup, monkeypatch):
    repos, commit, _ = setup
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    result = repos.run(call(commit, "python", ["python", "-c", "import os; print(sorted(os.environ))"]))
    assert "HF_TOKEN" not in result.output and "OPENAI_API_KEY" not in result.output
    assert "secret" not in result.output and "PATH" in result.output


def test_a_huge_output_is_capped_with_an_omission_marker(setup):
    repos, commit, _ = setup
    result = repos.run(call(commit, "python", ["python", "-c", "for i in range(200000): print(i)"]))
    lines = result.output.split("\n")
    assert len(lines) == 501 and lines[-1].startswith("... [") and "more lines omitted]" in lines[-1]
    assert result.truncated_lines > 0


def test_a_binary_file_is_shown_as_a_marker(setup):
    repos, commit, _ = setup
    result = repos.run(
        call(commit, "read_file", ["git", "show", f"{commit}:assets/logo.bin"], runs_in="bare")
    )
    assert result.output.startswith("[binary output:")


def test_curl_is_skipped_without_network_permission(setup):
    repos, commit, _ = setup
    result = repos.run(call(commit, "curl", ["curl", "-sS", "https://example.org"], needs_network=True))
    assert result.skipped.startswith("network disabled")


def test_the_worktree_is_cleaned_between_commands(setup):
    repos, commit, _ = setup
    executor = repos
    executor.run(call(commit, "python", ["python", "-c", "open('leftover.txt', 'w').write('x')"]))
    result = executor.run(call(commit, "ls", ["ls", "-la"]))
    assert "leftover.txt" not in result.output and "widgets" in result.output


def test_cap_and_numbering_helpers():
    text, omitted = cap_lines("\n".join(str(i) for i in range(10)), max_lines=4)
    assert text.split("\n") == ["0", "1", "2", "3", "... [6 more lines omitted]"] and omitted == 6
    assert number_lines("a\nb") == "     1\ta\n     2\tb"


# Attacks from the security review (issue 11): each reproduces what hostile repository code did.


def run_python(repos, commit, code, **kw):
    return repos.run(call(commit, "python", ["python", "-c", code], **kw))


@needs_bwrap
def test_a_forged_git_file_in_the_tree_never_reaches_host_git(setup):
    repos, commit, tmp_path = setup
    marker = tmp_path / "hook-ran"
    forge = (
        "import os\n"
        "os.makedirs('evil/hooks', exist_ok=True)\n"
        f"open('evil/hooks/post-checkout', 'w').write('#!/bin/sh\\nenv > {marker}\\n')\n"
        "os.chmod('evil/hooks/post-checkout', 0o755)\n"
        "open('.git', 'w').write('gitdir: ' + os.path.abspath('evil') + '\\n')\n"
        "print('FORGED')"
    )
    assert "FORGED" in run_python(repos, commit, forge).output
    # the next call of the same instance starts from a clean copy and host git keeps working
    listing = repos.run(call(commit, "ls", ["ls", "-a"]))
    assert ".git" not in listing.output.split() and "evil" not in listing.output
    assert not marker.exists()
    assert repos.has_commit("acme/widgets", commit)


@needs_bwrap
def test_a_command_cannot_change_the_files_later_commands_see(setup):
    repos, commit, _ = setup
    executor = repos
    tree = repos.export("acme/widgets", commit)
    vandal = (
        "import os\n"
        "try:\n    open('widgets/core.py', 'a').write('vandalised in place')\n"
        "except OSError as err:\n    print('IN PLACE REFUSED', err)\n"
        "open('new.py', 'w').write('vandalised')\nos.replace('new.py', 'widgets/core.py')\n"
        "print(open('widgets/core.py').read())"
    )
    assert "vandalised" in executor.run(call(commit, "python", ["python", "-c", vandal]), tree=tree).output
    after = executor.run(
        call(commit, "python", ["python", "-c", "print(open('widgets/core.py').read())"]), tree=tree
    )
    assert "Core widgets" in after.output and "vandalised" not in (tree / "widgets" / "core.py").read_text()


@needs_bwrap
def test_the_host_environment_cannot_be_read_through_proc(setup, monkeypatch):
    repos, commit, _ = setup
    monkeypatch.setenv("HF_TOKEN", "hf_" + "A" * 34)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-" + "b" * 30)
    host = [f"/proc/{os.getpid()}/environ", f"/proc/{os.getppid()}/environ"]
    snoop = (
        "import os, glob\n"
        f"paths = glob.glob('/proc/*/environ') + {host!r}\n"
        "for p in paths:\n"
        "    try:\n"
        "        print(p, open(p, 'rb').read().replace(b'\\0', b' ').decode())\n"
        "    except OSError as err:\n"
        "        print(p, 'DENIED', err)\n"
        "print('PIDS', sorted(int(d) for d in os.listdir('/proc') if d.isdigit()))"
    )
    result = run_python(repos, commit, snoop)
    assert result.skipped is None, result.skipped
    assert "hf_AAAA" not in result.output and "sk-fake" not in result.output
    pids = result.output.split("PIDS ")[1]
    assert str(os.getpid()) not in pids.replace("[", " ").replace("]", " ").replace(",", " ").split()


@needs_bwrap
def test_host_secrets_in_etc_are_out_of_reach(setup):
    repos, commit, _ = setup
    probe = (
        "import os\nprint('ETC', sorted(os.listdir('/etc')))\n"
        "try:\n    print(open('/etc/shadow').read())\nexcept OSError as err:\n    print('NO SHADOW', err)"
    )
    result = run_python(repos, commit, probe)
    assert "NO SHADOW" in result.output and "root:" not in result.output.split("NO SHADOW")[0].split("ETC")[0]
    assert "'shadow'" not in result.output


@needs_bwrap
def test_processes_that_detach_die_with_the_call_on_timeout_and_on_exit(setup):
    repos, commit, _ = setup
    daemon = (
        "import subprocess\n"
        "for _ in range(3):\n"
        "    subprocess.Popen(['setsid', 'sleep', '{seconds}'], start_new_session=True)\n"
        "{tail}"
    )
    hung = run_python(
        repos, commit, daemon.format(seconds=913, tail="import time; time.sleep(60)"), timeout=2
    )
    assert hung.timed_out
    exited = run_python(repos, commit, daemon.format(seconds=914, tail="print('LEFT')"))
    assert "LEFT" in exited.output
    time.sleep(0.5)
    assert processes_matching("sleep 913") == [] and processes_matching("sleep 914") == []


@needs_bwrap
def test_the_process_limit_holds_even_when_lettuce_build_runs_as_root(setup):
    repos, commit, _ = setup
    bomb = (
        "import subprocess\nstarted = 0\n"
        "try:\n"
        "    for _ in range(300):\n"
        "        subprocess.Popen(['sleep', '915'])\n"
        "        started += 1\n"
        "except OSError as err:\n"
        "    print('REFUSED', err)\n"
        "print('STARTED', started)"
    )
    result = run_python(repos, commit, bomb)
    assert "REFUSED" in result.output
    assert int(result.output.split("STARTED ")[1].split()[0]) < 256
    assert processes_matching("sleep 915") == []


def test_an_output_holding_a_secret_is_withheld(setup, monkeypatch):
    repos, commit, _ = setup
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plainly-secret-value-123")
    leak = repos.run(call(commit, "git_log", ["echo", "ghp_" + "x" * 36], runs_in="bare"))
    assert leak.output == "" and leak.skipped.startswith("output withheld: it holds a secret (github token)")
    fresh = Executor(repos.repos, ISOLATION)  # secret values are read when an executor starts
    own = fresh.run(call(commit, "git_log", ["echo", "token=plainly-secret-value-123"], runs_in="bare"))
    assert own.output == "" and "a secret environment value" in own.skipped


def test_grep_hits_name_paths_as_an_agent_sees_them_without_the_commit(setup):
    repos, commit, _ = setup
    result = repos.run(
        call(commit, "grep", ["git", "grep", "-n", "-F", "-e", "scale", commit], runs_in="bare")
    )
    assert result.output.split("\n")[0].startswith("tests/test_core.py:1:from widgets.core import")
    assert commit not in result.output
    assert strip_revision(f"{commit}:a.py:1:{commit}:", commit) == f"a.py:1:{commit}:"  # the prefix only


#: a call run in a process of its own, as `lettuce-build squeez` runs it: it says when its
#: sandboxed code has started, then waits to be killed
_KILLED_DRIVER = """
import sys
from pathlib import Path
from lettuce_build.squeez.environments import EnvStatus
from lettuce_build.squeez.execute import Executor
from lettuce_build.squeez.sandbox import detect_isolation
from lettuce_build.squeez.toolcalls import ToolCall
from lettuce_build.swebench.repos import RepoManager

out, template, env, call = sys.argv[1:5]
executor = Executor(RepoManager(Path(out), template), detect_isolation(), allow_network=True)
executor.run(ToolCall.model_validate_json(call), env=EnvStatus.model_validate_json(Path(env).read_text()))
"""


@needs_bwrap
def test_a_call_s_processes_die_with_lettuce_build_when_it_is_killed_with_sigkill(setup, plain_env):
    """SIGKILL leaves a process no time to clean up: the sandbox, everything started inside it
    (detached ones included) and its user-mode network die with it, by the kernel's doing."""
    repos, commit, tmp_path = setup
    code = "import subprocess\nsubprocess.Popen(['setsid', 'sleep', '931'], start_new_session=True)\n"
    code += "subprocess.run(['sleep', '932'])"
    # under --allow-network a call has a network namespace of its own, served by pasta
    request = call(commit, "python", ["python", "-c", code], timeout=600, needs_network=True)
    env = tmp_path / "env.json"
    env.write_text(plain_env.model_dump_json())
    args = [str(tmp_path / "out"), f"file://{tmp_path}/src/{{repo}}", str(env), request.model_dump_json()]
    driver = subprocess.Popen(
        [sys.executable, "-c", _KILLED_DRIVER, *args], stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not processes_matching("sleep 932") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_matching("sleep 932"), driver.stderr.read() if driver.poll() is not None else "no start"
    assert processes_matching("pasta")
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (processes_matching("sleep 93") or processes_matching("pasta")):
        time.sleep(0.1)
    assert processes_matching("sleep 931") == [] and processes_matching("sleep 932") == []
    assert processes_matching("pasta ") == []
