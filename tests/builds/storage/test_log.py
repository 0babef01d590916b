"""OUT/build.log: every build appends its story with timestamps, the libraries' warnings the
terminal does not show included, secrets redacted."""

import logging
import re

import pytest

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.core.quiet import quiet

from ...support.documents import respond, write_readmes
from ...support.scripted import ScriptedBackend

SECRET = "hf_log0123456789abcdefSECRET"


@pytest.fixture
def readmes(tmp_path):
    return str(write_readmes(tmp_path / "readmes"))


def noisy(request):
    """A responder that, like a library mid-build, warns (once with a secret in the message)."""
    logging.getLogger("huggingface_hub").warning("slow download of shard 3, token %s", SECRET)
    return respond(request)


def test_a_build_logs_its_stages_with_timestamps_and_a_rerun_appends(tmp_path, readmes):
    out = tmp_path / "out"
    run_build(Recipe(source="readme", input=readmes, out=out, ratio=0.5), ScriptedBackend(respond))
    first = (out / "build.log").read_text()
    lines = first.splitlines()
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING) ", line) for line in lines)
    assert "build readme into" in lines[0]
    assert any(re.search(r"loaded \d+ documents into \d+ work items", line) for line in lines)
    for stage in ("question", "answer", "inject"):
        assert any(f"stage {stage} starts: " in line for line in lines)
        assert any(
            re.search(rf"stage {stage} done: \d+ in, \d+ ok, \d+ failed, \d+ cache hits", line)
            for line in lines
        )
    assert "finished: " in lines[-1] and "this run" in lines[-1]

    run_build(Recipe(source="readme", input=readmes, out=out, ratio=0.5), ScriptedBackend(respond))
    both = (out / "build.log").read_text()
    assert both.startswith(first) and both.count("build readme into") == 2
    assert "all 2 runs" in both.splitlines()[-1]


def test_a_librarys_warning_reaches_the_log_not_the_terminal_and_never_a_secret(
    tmp_path, readmes, monkeypatch, capfd
):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    quiet()
    out = tmp_path / "out"
    run_build(Recipe(source="readme", input=readmes, out=out, ratio=0.5), ScriptedBackend(noisy))
    text = (out / "build.log").read_text()
    assert "WARNING huggingface_hub: slow download of shard 3, token [redacted]" in text
    assert SECRET not in text
    terminal = capfd.readouterr()
    assert "slow download" not in terminal.out + terminal.err


def test_a_failed_build_logs_its_error(tmp_path, readmes):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        run_build(
            Recipe(source="readme", input=readmes, out=out, ratio=0.5),
            ScriptedBackend(respond, fail_on_call=2),
        )
    last = (out / "build.log").read_text().splitlines()[-1]
    assert " ERROR " in last and "build failed: RuntimeError: scripted backend failure on call 2" in last
