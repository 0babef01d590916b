"""`--batch` end to end with real answers: a loopback Batch API whose lines the suite's real vLLM
server answers. A batch build writes the rows a live build of the same seeds writes, and a build
killed (SIGKILL) while its batch runs re-attaches to it on the next run: no request is sent twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import lettuce_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger

from ..support.batch_server import serve_batches
from ..support.documents import write_readmes


def settings(docs: Path, out: Path, url: str, **more: object) -> dict[str, object]:
    return {
        "source": "readme",
        "input": str(docs),
        "out": out,
        "backend": "openai",
        "base_url": url,
        "model": "smollm2-135m",
        "concurrency": 1,  # the server answers one request at a time, as the batch does
        "batch_poll_seconds": 0.2,
        **more,
    }


def two_readmes(folder: Path) -> Path:
    """Two of the suite's READMEs: each request is answered one at a time, twice over (live, then
    batched), so a third document would add a third to the test's minute."""
    docs = write_readmes(folder)
    (docs / "mintcache.md").unlink()
    return docs


def rows(result: lettuce_build.BuildResult) -> list[dict]:
    return sorted((row for split in result.dataset.values() for row in split), key=lambda r: r["metadata"])


def test_a_batch_build_writes_the_rows_a_live_build_of_the_same_seeds_writes(vllm_server, tmp_path):
    docs = two_readmes(tmp_path / "docs")
    live = lettuce_build.build(recipe=Recipe.checked(settings(docs, tmp_path / "live", vllm_server)))
    with serve_batches(vllm_server) as (url, server):
        batched = lettuce_build.build(
            recipe=Recipe.checked(
                settings(docs, tmp_path / "batched", url, batch=True, price_per_mtok=(3, 15))
            )
        )
    assert server.submitted and set(server.submitted.values()) == {1}
    assert rows(batched) == rows(live) and rows(live)
    cost = batched.summary.cost
    assert cost.batched_completion_tokens == cost.completion_tokens > 0  # scoring has no completion
    assert (
        cost.dollars is not None and cost.dollars < 3e-6 * cost.prompt_tokens + 15e-6 * cost.completion_tokens
    )


def test_a_build_killed_while_its_batch_runs_reattaches_and_sends_nothing_twice(vllm_server, tmp_path):
    docs, out = two_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve_batches(vllm_server) as (url, server):
        server.hold.clear()  # the provider takes its time: the batch stays in progress
        command = ["build", "--source", "readme", "--input", str(docs), "--out", str(out)]
        command += ["--backend", "openai", "--base-url", url, "--model", "smollm2-135m", "--batch"]
        command += ["--batch-poll-seconds", "0.2", "--concurrency", "1"]
        process = subprocess.Popen(
            [sys.executable, "-c", "from lettuce_build.cli import main; main()", *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server.await_running_batch(process)
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=30) == -signal.SIGKILL
        (record,) = BatchLedger(out / BATCHES_FILE).open()
        assert record.batch_id in server.batches and record.requests == 2
        status = CliRunner().invoke(main, ["status", str(out)])
        assert "batches: 1 sent, 1 in flight" in status.output
        assert f"{record.batch_id} in_progress" in status.output

        server.hold.set()
        result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert set(server.submitted.values()) == {1}  # the killed build's batch was collected, not sent again
    # the questions' scores (the questions are made: no call), the answers, then the injections
    assert sum(server.submitted.values()) >= 3
    assert all(r.collected for r in BatchLedger(out / BATCHES_FILE).records())
    assert BuildDir(out).read_manifest().status == "finished"
