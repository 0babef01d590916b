"""A default build on the real engine prints its stage bars, summary and sample, and nothing from
vLLM, torch, transformers or `datasets`' internals."""

import subprocess
import sys
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


def build(tmp_path):
    """A fresh process: third-party libraries read their switches when first imported."""
    command = "from lettuce_build.cli import main; main()"
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    args = ["build", "--source", "readme", "--input", str(docs), "--out", str(out), "--limit", "1"]
    return subprocess.run(
        [sys.executable, "-c", command, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_default_build_prints_nothing_but_its_own_bars_summary_and_sample(tmp_path):
    result = build(tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    printed = (result.stdout + result.stderr).replace("\r", "\n")
    lines = [line for line in printed.splitlines() if line.strip()]
    third_party = [line for line in lines if any(marker in line for marker in THIRD_PARTY_MARKERS)]
    assert third_party == []
    bars = [line for line in result.stderr.replace("\r", "\n").splitlines() if line.strip()]
    assert bars and all(line.startswith("stage ") for line in bars)  # stderr: only the stage bars
    assert "samples in" in result.stdout and "load it: " in result.stdout
