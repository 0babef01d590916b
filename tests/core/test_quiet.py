"""A default build on the real engine prints its stage bars, summary and sample, and nothing from
vLLM, torch, transformers or `datasets`' internals; a Ctrl-C while its engine answers ends it in
seconds with one line, and the same command finishes it."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..support.documents import write_readmes

REPO_ROOT = Path(__file__).resolve().parents[2]
#: what third-party output looks like: log records, warnings, and datasets' internal bars
THIRD_PARTY_MARKERS = (
    "WARNING",
    "INFO",
    "Warning",
    "vllm",
    "torch",
    "transformers",
    "Loading safetensors",
    "Saving the dataset",
    "Creating parquet",
    "Flattening the indices",
    "Map:",
)


def command(tmp_path: Path) -> list[str]:
    """A default build, in a fresh process: third-party libraries read their switches when first
    imported."""
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    args = ["build", "--source", "readme", "--input", str(docs), "--out", str(out), "--limit", "2"]
    return [sys.executable, "-m", "lettuce_build", *args]


def interrupted_once_started(args: list[str]) -> tuple[int, str, float]:
    """Run ``args``; once the engine answers (a stage's bar is drawn), Ctrl-C its process group:
    the exit status, what it printed, and the seconds from the Ctrl-C to its end."""
    process = subprocess.Popen(
        args, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    printed = bytearray()
    reader = threading.Thread(target=_read_all, args=(process.stdout, printed), daemon=True)
    reader.start()
    deadline = time.monotonic() + 300
    while b"stage " not in printed and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, printed.decode(errors="replace")[-2000:]
    asked_at = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    status = process.wait(timeout=60)
    took = time.monotonic() - asked_at
    reader.join(timeout=10)
    return status, printed.decode(errors="replace"), took


def _read_all(stream, into: bytearray) -> None:
    while chunk := stream.read1(4096):
        into.extend(chunk)


def third_party(printed: str) -> list[str]:
    lines = [line for line in printed.replace("\r", "\n").splitlines() if line.strip()]
    return [line for line in lines if any(marker in line for marker in THIRD_PARTY_MARKERS)]


def test_a_default_real_engine_build_stops_at_ctrl_c_then_finishes_printing_only_its_own_lines(tmp_path):
    """Ctrl-C while the engine answers: one line, status 130 within 10 s, nothing of vLLM's; the
    same command then finishes from the answers kept, printing its bars, summary and sample."""
    args = command(tmp_path)
    status, printed, took = interrupted_once_started(args)
    assert status == 130 and took < 10, printed[-3000:]
    assert printed.replace("\r", "\n").strip().splitlines()[-1].startswith("interrupted: "), printed[-1500:]
    assert "Traceback" not in printed and third_party(printed) == []
    rerun = subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert third_party(rerun.stdout + rerun.stderr) == []
    bars = [line for line in rerun.stderr.replace("\r", "\n").splitlines() if line.strip()]
    assert bars and all(line.startswith("stage ") for line in bars)  # stderr: only the stage bars
    assert "samples in" in rerun.stdout and "load it: " in rerun.stdout
