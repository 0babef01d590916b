"""A build stops when asked: the first Ctrl-C (SIGINT) or SIGTERM to its process group ends it
within seconds with one line and the shell's status (130, 143), its manifest says
``interrupted``, every answer received is kept, and the same command then finishes with exactly
the rows of a build never interrupted. Real processes, real signals, a loopback endpoint."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lettuce_build.view.samples import load_samples

from ..support.batch_server import serve_batches
from ..support.documents import respond, write_readmes
from ..support.openai_server import serve

#: the command line, as a user runs it
CLI = [sys.executable, "-c", "from lettuce_build.cli import main; main()"]
ENV = {**os.environ, "OPENAI_API_KEY": "x"}


class SlowModel:
    """The scripted model behind a loopback endpoint, a little slow, counting what it answered."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.answered = 0
        self.lock = threading.Lock()

    def __call__(self, request):
        time.sleep(self.delay)
        with self.lock:
            self.answered += 1
        return respond(request)


def command(readmes: Path, out: Path, url: str) -> list[str]:
    return [
        *CLI,
        "build",
        "--source",
        "readme",
        "--input",
        str(readmes),
        "--out",
        str(out),
        "--backend",
        "openai",
        "--base-url",
        url,
        "--model",
        "scripted",
        "--concurrency",
        "1",
    ]


def rows(out: Path) -> list[tuple[str, str, str]]:
    return sorted(
        (s.metadata["key"], s.answer, json.dumps([span.model_dump() for span in s.labels]))
        for s in load_samples(out)
    )


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[list[tuple[str, str, str]], int]:
    """The rows of the same build never interrupted, and how many requests it asked."""
    tmp_path = tmp_path_factory.mktemp("uninterrupted")
    readmes, model = write_readmes(tmp_path / "readmes"), SlowModel(delay=0)
    with serve(model) as url:
        once = subprocess.run(
            command(readmes, tmp_path / "whole", url), env=ENV, capture_output=True, text=True, timeout=300
        )
    assert once.returncode == 0, once.stderr[-2000:]
    return rows(tmp_path / "whole"), model.answered


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_build_keeps_its_answers_and_the_rerun_finishes_it(
    tmp_path, signum, status, uninterrupted
):
    readmes = write_readmes(tmp_path / "readmes")
    env = ENV
    model = SlowModel(delay=0.1)
    with serve(model) as url:
        out = tmp_path / "out"
        process = subprocess.Popen(
            command(readmes, out, url), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while model.answered < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()
        asked_at = time.monotonic()
        os.killpg(process.pid, signum)
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - asked_at < 10
        said = [line for line in err.splitlines() if "Exception" in line or "Interrupted" in line]
        assert process.returncode == status, f"answered {model.answered}: {said} " + err[-3000:]
        lines = [line for line in err.splitlines() if line.startswith("interrupted: ")]
        assert (
            len(lines) == 1 and "answers kept" in lines[0] and "run the same command to continue" in lines[0]
        )
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        answered, model.delay = model.answered, 0  # slow only until the signal
        rerun = subprocess.run(
            command(readmes, out, url), env=env, capture_output=True, text=True, timeout=300
        )
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        resumed = model.answered - answered
    whole, asked = uninterrupted
    assert rows(out) == whole  # exactly the rows of a build never interrupted
    # the rerun asked only what was missing: the one request in flight at the signal at most twice
    assert answered + resumed <= asked + 1


def test_a_batch_build_stopped_leaves_its_batch_at_the_provider_says_so_and_collects_it_next_run(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    out, env = tmp_path / "out", ENV
    with serve(respond) as upstream, serve_batches(upstream) as (url, server):
        server.hold.clear()  # the provider takes its time: the batch stays in progress
        batched = [*command(readmes, out, url), "--batch", "--batch-poll-seconds", "0.2"]
        process = subprocess.Popen(
            batched,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        server.await_running_batch(process)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130, err[-3000:]
        (line,) = [line for line in err.splitlines() if line.startswith("interrupted: ")]
        assert "1 batch(es) left running at the provider, collected by the next run" in line
        assert all(batch["status"] != "cancelled" for batch in server.batches.values())
        server.hold.set()
        rerun = subprocess.run(batched, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert set(server.submitted.values()) == {1}  # the stopped build's batch was collected, not sent again
    assert json.loads((out / "manifest.json").read_text())["status"] == "finished"
