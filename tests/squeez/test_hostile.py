"""A hostile repository through squeez, as the security review ran it (issue 11): secrets in the
environment, a relative output folder, an instance id that climbs out of its folder, and code
that attacks on import. Nothing may leak, nothing may escape, nothing may outlive the run."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lettuce_build.squeez.sandbox import detect_isolation

from ..support.gitrepos import make_hostile_repo, make_phone_home_repo
from ..support.processes import processes_matching
from ..support.testhost import Listener, can_make_test_hosts, host_ipv4, reached, serving_host, simple_index

SECRETS = {
    "HF_TOKEN": "hf_" + "Q" * 34,
    "OPENAI_API_KEY": "sk-proj-" + "z" * 40,
    "GITHUB_TOKEN": "plain-looking-secret-value",
}
CODE_TYPES = {"python", "test_output", "build_output"}
ISOLATION = detect_isolation()


@pytest.mark.skipif(ISOLATION.mode != "bwrap", reason="the sandbox needs bubblewrap")
def test_a_hostile_repository_leaks_nothing_and_leaves_nothing_behind(tmp_path, offline_wheels):
    out = tmp_path / "out"
    stolen = Path("/tmp/stolen-env")
    stolen.unlink(missing_ok=True)
    targets = [
        str(tmp_path / "outside.txt"),
        str(Path.home() / ".lettuce-build-hostile-marker"),
        str(out / "bare" / "acme__evil.git" / "hooks" / "post-checkout"),
        str(tmp_path / "src" / "acme" / "evil" / ".git" / "hooks" / "post-checkout"),
        str(out / "phase4" / "poisoned.jsonl"),
    ]
    info = make_hostile_repo(tmp_path / "src" / "acme" / "evil", targets)
    ids = [f"acme__evil-{n}" for n in range(1, 5)] + ["../../escape-1"]
    instances = tmp_path / "instances.jsonl"
    instances.write_text(
        "".join(
            json.dumps(
                {
                    "instance_id": instance_id,
                    "repo": "acme/evil",
                    **info,
                    "problem_statement": "`compute` is off by one.",
                    "FAIL_TO_PASS": json.dumps(["tests/test_core.py::test_compute"]),
                }
            )
            + "\n"
            for instance_id in ids
        )
    )
    command = [str(Path(sys.executable).parent / "lettuce-build"), "squeez", "--phase", "1", "2", "3", "4"]
    command += ["5", "7", "8", "--output-dir", "out", "--instances", "instances.jsonl"]
    command += ["--repo-url", f"file://{tmp_path}/src/{{repo}}", "--seed", "2", "--workers", "2"]
    command += ["--offline", "--find-links", str(offline_wheels)]  # its environment, setup.py and all
    run = subprocess.run(
        command, cwd=tmp_path, env={**os.environ, **SECRETS}, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    time.sleep(0.5)

    assert [processes_matching(f"sleep {n}") for n in (917, 918, 919)] == [[], [], []]
    assert not stolen.exists()
    assert [t for t in targets if Path(t).exists()] == []
    assert not (tmp_path.parent / "escape-1.jsonl").exists() and not (tmp_path / "escape-1.jsonl").exists()
    assert {p.parent for p in (out / "phase4").iterdir()} == {out / "phase4"}
    for file in tmp_path.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert not [name for name, value in SECRETS.items() if value.encode() in data], file
            assert b"root:*:" not in data and b"root:$" not in data, file  # no /etc/shadow line

    results = [
        json.loads(line)
        for file in (out / "phase4").glob("*.jsonl")
        for line in file.read_text().splitlines()
    ]
    ran_code = [r for r in results if r["tool_type"] in CODE_TYPES and not r["skipped"]]
    assert ran_code, "the seed must draw calls that run the repository's code"
    assert any("ENVIRON" in r["output"] and "FORKS REFUSED" in r["output"] for r in ran_code)  # it did attack
    assert "squeez validation: OK" in run.stdout
    build_log = next((out / "envs").glob("*.log")).read_text()
    assert "ENVIRON" in build_log and "WRITE DENIED" in build_log  # setup.py attacked, and failed


@pytest.mark.skipif(ISOLATION.network != "pasta", reason=ISOLATION.note)
@pytest.mark.skipif(not can_make_test_hosts(), reason="the index runs on a test host (root, iproute2)")
def test_repository_code_reaches_no_service_of_the_host_in_any_kind_of_step(tmp_path, offline_wheels):
    """(a) setup.py in an environment build that installs from an index over the network, (b) a
    python call, (c) a pytest conftest, (d) curl under --allow-network: each tries the host's
    loopback, its own address and link-local. Nothing arrives; the build still installs."""
    loopback, everywhere = Listener("127.0.0.1"), Listener("0.0.0.0")
    targets = [("127.0.0.1", loopback.port), (host_ipv4(), everywhere.port), ("169.254.169.254", 80)]
    info = make_phone_home_repo(tmp_path / "src" / "acme" / "phonehome", targets)
    instances = tmp_path / "instances.jsonl"
    statement = f"`compute` is off by one; see http://127.0.0.1:{loopback.port}/steal"
    instances.write_text(
        "".join(
            json.dumps(
                {
                    "instance_id": f"acme__phonehome-{n}",
                    "repo": "acme/phonehome",
                    **info,
                    "problem_statement": statement,
                    "FAIL_TO_PASS": json.dumps(["tests/test_core.py::test_compute"]),
                }
            )
            + "\n"
            for n in range(1, 5)
        )
    )
    index = simple_index(offline_wheels, tmp_path / "index")
    try:
        with serving_host(index) as url:
            command = [str(Path(sys.executable).parent / "lettuce-build"), "squeez", "--phase", "1", "2"]
            command += ["3", "4", "5", "7", "8", "--output-dir", "out", "--instances", "instances.jsonl"]
            command += ["--repo-url", f"file://{tmp_path}/src/{{repo}}", "--seed", "0", "--workers", "2"]
            command += ["--allow-network", "--index-url", f"{url}/simple"]
            run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    finally:
        loopback.close()
        everywhere.close()
    assert run.returncode == 0, run.stdout + run.stderr
    assert loopback.accepted == everywhere.accepted == 0
    assert "network: own namespace for every step" in run.stdout, run.stdout  # else no build ran
    out = tmp_path / "out"
    build_log = next((out / "envs").glob("*.log")).read_text()
    assert build_log.count("UNREACHABLE") >= 3 and not reached(build_log)  # (a)
    status = json.loads(next((out / "envs").glob("*.json")).read_text())
    assert status["ok"], status  # it installed pytest from the index (and setuptools to run setup.py)
    results = [json.loads(line) for file in (out / "phase4").glob("*.jsonl") for line in file.open()]
    ran = {r["tool_type"]: r for r in results if not r["skipped"]}
    assert {"python", "test_output", "curl"} <= set(ran)  # (b), (c), (d)
    for kind in ("python", "test_output"):
        assert "UNREACHABLE 127.0.0.1" in ran[kind]["output"], ran[kind]["output"]
        assert not reached(ran[kind]["output"])
    assert ran["curl"]["exit_code"] != 0  # curl could not connect
