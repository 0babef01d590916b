"""What the quality gates and `audit` cost per 1,000 samples, next to the model time the same
build spent per 1,000 samples (read from its manifest). The build's published rows are repeated
up to 1,000 (the gates' caches are cleared between passes, so repeats cost what new rows would).

    python benchmarks/quality_cost.py BUILD_DIR     # a finished build with samples, e.g. `make demo`'s
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core import gates
from lettuce_build.core.schema import row_to_sample, sample_to_row
from lettuce_build.prompts import load_prompt
from lettuce_build.view.audit import quality_report
from lettuce_build.view.validate import read_rows

SAMPLES = 1000


def gate_every_row(samples: list, instructions: str) -> None:
    """Each gate a build runs, once per row: the question's, the clean answer's, each edit's."""
    gates._runs.cache_clear()
    for sample in samples:
        gates.question_problem(sample.question, sample.context)
        gates.answer_problem(sample.answer, sample.context, instructions=instructions)
        for edit in (sample.metadata.get("injection") or {}).get("applied", []):
            gates.edit_problem(
                edit["original"],
                edit["hallucinated"],
                category="unsupported_addition",
                context=sample.context,
            )


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = Path(sys.argv[1])
    manifest = BuildDir(folder).read_manifest()
    published = [row_to_sample(raw.data) for raw in read_rows(folder / "dataset") if raw.data]
    if not published or manifest.counts is None:
        sys.exit(f"{folder}: a finished build with samples is needed")
    samples = (published * (SAMPLES // len(published) + 1))[:SAMPLES]
    model_seconds = sum(s.backend_seconds for s in manifest.stages)
    per_thousand_model = model_seconds / len(published) * SAMPLES
    instructions = load_prompt("answer").instructions

    started = time.perf_counter()
    gate_every_row(samples, instructions)
    gate_seconds = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.jsonl"
        rows.write_text("".join(json.dumps(sample_to_row(s)) + "\n" for s in samples), encoding="utf-8")
        started = time.perf_counter()
        report = quality_report(rows)
        audit_seconds = time.perf_counter() - started
    assert report.rows == SAMPLES

    print(f"{folder}: {len(published)} published rows, repeated to {SAMPLES}")
    print(f"  model time (the build's backend seconds, per {SAMPLES} samples): {per_thousand_model:9.2f} s")
    print(f"  quality gates over {SAMPLES} samples:                      {gate_seconds:9.2f} s")
    print(f"  audit over {SAMPLES} samples (read, signals, report):      {audit_seconds:9.2f} s")
    print(
        f"  gates / model time {gate_seconds / per_thousand_model:.5f}; "
        f"audit / model time {audit_seconds / per_thousand_model:.5f}"
    )


if __name__ == "__main__":
    main()
