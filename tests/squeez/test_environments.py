"""Per-instance environments: found interpreters, swebench specs, sandboxed offline builds, and
execution calls that run the repository's own code on them."""

import json
import os
import stat
from pathlib import Path

import git
import pytest

from lettuce_build.squeez.env_specs import (
    EnvOptions,
    _spec_version,
    detect_version,
    find_interpreters,
    spec_for,
    swebench_specs,
    tag_version,
)
from lettuce_build.squeez.environments import apply_overlay
from lettuce_build.squeez.options import SqueezOptions
from lettuce_build.squeez.pipeline import Squeez
from lettuce_build.squeez.sandbox import detect_isolation
from lettuce_build.swebench.repos import RepoManager

from ..support.gitrepos import TINYUNITS, make_src_layout_repo
from ..support.wheels import make_wheel

needs_bwrap = pytest.mark.skipif(detect_isolation().mode != "bwrap", reason="needs bubblewrap")


def fake_python(folder, name):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_interpreters_are_found_on_the_path_and_in_pyenv_folders(tmp_path, monkeypatch):
    on_path = fake_python(tmp_path / "bin", "python3.12")
    pyenv = fake_python(tmp_path / "pyenv" / "versions" / "3.9.18" / "bin", "python3.9")
    fake_python(tmp_path / "bin", "python3.12-config")  # not an interpreter
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    found = find_interpreters(str(tmp_path / "bin"))
    assert found["3.12"] == on_path.resolve()
    assert found["3.9"] == pyenv.resolve()


def test_the_version_is_read_from_the_repository_when_the_instance_has_none(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text('__version__ = "2.3.1"\n')
    assert detect_version(tmp_path) == "2.3"
    assert detect_version(tmp_path / "src" / "pkg") is None


def test_without_a_version_file_the_nearest_release_tag_names_the_version(tmp_path):
    # setuptools_scm projects (pytest, say) write their version nowhere in the repository
    origin = git.Repo.init(tmp_path / "src" / "acme" / "scm", initial_branch="main")
    (tmp_path / "src" / "acme" / "scm" / "a.py").write_text("x = 1\n")
    origin.index.add(["a.py"])
    author = git.Actor("A", "a@example.org")
    tagged = origin.index.commit("release", author=author, committer=author)
    origin.create_tag("v1.4.2", ref=tagged)
    later = origin.index.commit("later", author=author, committer=author)
    repos = RepoManager(tmp_path / "out", f"file://{tmp_path}/src/{{repo}}")
    repos.clone("acme/scm")
    assert repos.nearest_tag("acme/scm", later.hexsha) == "v1.4.2"
    assert tag_version("v1.4.2") == "1.4" and tag_version("release-7.10.0rc1") == "7.10"
    spec = spec_for(
        "acme/scm",
        None,
        tree=tmp_path,
        interpreters={"3.11": tmp_path / "python3.11"},
        options=EnvOptions(),
        tag="v1.4.2",
    )
    assert spec.version == "1.4" and spec.key == "acme__scm-1.4-py3.11"


def test_a_version_without_a_spec_takes_the_newest_spec_not_above_it():
    assert _spec_version(["0.12", "1.0", "2.0"], "1.0") == "1.0"
    assert _spec_version(["0.12", "1.0", "2.0"], "1.1") == "1.0"
    assert _spec_version(["0.12", "1.0", "2.0"], "0.1") == "0.12"
    assert _spec_version(["0.12", "1.0", "2.0"], None) == "2.0"


@pytest.mark.skipif(not swebench_specs()[0], reason="the swebench package is not installed")
def test_swebench_pins_and_python_are_used_where_it_has_a_spec(tmp_path):
    interpreters = {"3.9": tmp_path / "python3.9", "3.11": tmp_path / "python3.11"}
    spec = spec_for("pallets/flask", "2.0", tree=tmp_path, interpreters=interpreters, options=EnvOptions())
    assert spec.python == "3.9" and spec.interpreter.endswith("python3.9")
    assert any(p.lower().startswith("werkzeug") for p in spec.packages)
    newer = spec_for(
        "pallets/flask",
        "2.0",
        tree=tmp_path,
        interpreters={"3.11": tmp_path / "python3.11"},
        options=EnvOptions(),
    )
    assert newer.python == "3.11" and "Python 3.9 is not installed: 3.11 used" in newer.notes
    chosen = spec_for(
        "pallets/flask", "2.0", tree=tmp_path, interpreters=interpreters, options=EnvOptions(python="3.11")
    )
    assert chosen.python == "3.11"
    assert spec_for("pallets/flask", "2.0", tree=tmp_path, interpreters={}, options=EnvOptions()).startswith(
        "no Python 3.9 or newer"
    )


def test_a_repository_without_a_spec_gets_its_own_dependencies_pytest_and_setuptools(tmp_path):
    spec = spec_for(
        "acme/gauges",
        None,
        tree=tmp_path,
        interpreters={"3.11": tmp_path / "python3.11"},
        options=EnvOptions(),
    )
    assert spec.packages == ["pytest", "setuptools<81"]
    assert "no swebench spec for this repository: its own dependencies only" in spec.notes


def gauges_world(tmp_path, offline_wheels):
    """A src-layout repository, an instance for it, and a wheel of its dependency."""
    fix = make_src_layout_repo(tmp_path / "src" / "acme" / "gauges")
    instance = {
        "instance_id": "acme__gauges-1",
        "repo": "acme/gauges",
        **fix,
        "problem_statement": "`needle` is stuck at zero: it must be a share of the full scale.",
    }
    instances = tmp_path / "instances.jsonl"
    instances.write_text(json.dumps(instance) + "\n")
    make_wheel(tmp_path / "deps", "tinyunits", "1.0", TINYUNITS)
    options = SqueezOptions(offline=True, find_links=[offline_wheels, tmp_path / "deps"])
    return instances, f"file://{tmp_path}/src/{{repo}}", options


def results_by_type(squeez):
    return {r.tool_type: r for r in squeez.results()}


@needs_bwrap
def test_a_src_layout_package_runs_its_own_code_and_tests_on_its_environment(tmp_path, offline_wheels):
    instances, template, options = gauges_world(tmp_path, offline_wheels)
    squeez = Squeez(tmp_path / "out", options.model_copy(update={"repo_url": template, "seed": 0}))
    squeez.phase1(str(instances))
    squeez.phase2()
    squeez.phase3()
    assert "environments: 1 of 1 ready" in squeez.phase4()
    status = json.loads(next((tmp_path / "out" / "envs").glob("*.json")).read_text())
    assert status["ok"] and status["key"] == "acme__gauges-0.3-py3.11"
    # the module the build wrote into its copy of the tree is laid over every call's copy
    assert (Path(status["overlay"]) / "src" / "gauges" / "_version.py").is_file()
    results = results_by_type(squeez)
    test_run = results["test_output"]
    assert test_run.command.endswith("tests/test_dial.py")  # found by name: no FAIL_TO_PASS, no test patch
    # pytest ran the repository's tests: the package (under src/) and its dependency imported
    assert "1 failed, 1 passed" in test_run.output
    assert "test_needle_is_a_share_of_full_scale" in test_run.output
    assert "ModuleNotFoundError" not in test_run.output


@needs_bwrap
def test_environments_are_built_once_and_shared(tmp_path, offline_wheels):
    instances, template, options = gauges_world(tmp_path, offline_wheels)
    second = json.loads(instances.read_text())
    second["instance_id"] = "acme__gauges-2"
    with instances.open("a") as handle:
        handle.write(json.dumps(second) + "\n")
    squeez = Squeez(tmp_path / "out", options.model_copy(update={"repo_url": template, "seed": 0}))
    squeez.phase1(str(instances))
    squeez.phase2()
    squeez.phase3()
    assert "environments: 1 of 1 ready" in squeez.phase4()
    status = json.loads((tmp_path / "out" / "envs" / "acme__gauges-0.3-py3.11.json").read_text())
    assert status["built_from"] in ("acme__gauges-1", "acme__gauges-2")
    ran = [r for r in squeez.results() if r.tool_type == "test_output"]
    assert len(ran) == 2 and all("1 failed, 1 passed" in r.output for r in ran)


@needs_bwrap
def test_an_environment_that_cannot_build_skips_its_calls_with_the_reason(tmp_path, offline_wheels):
    # the dependency's wheel is missing: offline, the repository's install cannot resolve it, and
    # neither can the pins an unusable --python asks for
    instances, template, _ = gauges_world(tmp_path, offline_wheels)
    options = SqueezOptions(
        offline=True, find_links=[offline_wheels], python=str(tmp_path / "no" / "python3")
    )
    squeez = Squeez(tmp_path / "out", options.model_copy(update={"repo_url": template, "seed": 0}))
    squeez.phase1(str(instances))
    squeez.phase2()
    squeez.phase3()
    summary = squeez.phase4()
    assert "environments: 0 of 1 ready; failed: acme__gauges-0.3-py" in summary
    assert "create the virtualenv" in summary
    executed = [r for r in squeez.results() if r.tool_type in ("python", "test_output", "build_output")]
    assert executed and all(r.skipped and "failed: create the virtualenv" in r.skipped for r in executed)
    assert all(r.output == "" for r in executed)  # never passed off as tool output
    log = next((tmp_path / "out" / "envs").glob("*.log")).read_text()
    assert str(tmp_path / "no" / "python3") in log
    assert not os.environ.get("HF_TOKEN") or os.environ["HF_TOKEN"] not in log


def test_an_overlay_is_never_laid_through_a_linked_folder_of_the_tree(tmp_path):
    overlay, tree, outside = tmp_path / "overlay", tmp_path / "tree", tmp_path / "outside"
    (overlay / "pkg").mkdir(parents=True)
    (overlay / "pkg" / "_version.py").write_text("version = '1'\n")
    (overlay / "data").mkdir()
    (overlay / "data" / "planted").write_text("x")
    (tree / "pkg").mkdir(parents=True)
    outside.mkdir()
    (tree / "data").symlink_to(outside)  # the repository ships a link to elsewhere
    apply_overlay(overlay, tree, None)
    assert (tree / "pkg" / "_version.py").read_text() == "version = '1'\n"
    assert not (outside / "planted").exists()
