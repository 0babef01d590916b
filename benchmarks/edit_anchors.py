"""Injection with constrained edit anchors against free-form ``original``, on the embedded model.

The same 40 real-shaped (context, clean answer) pairs go through the generic menu stage twice,
one attempt each: once with each edit's ``original`` constrained to the answer's anchors (the
default), once free-form. Printed per mode: items with at least one valid span, edits dropped
as ``not_found`` (their ``original`` is not in the answer), generated tokens per second; then
the ratios constrained / free-form (goal: at least 2x the items, 0 ``not_found``).

Pairs come from real READMEs that nobody here wrote: the long descriptions of the packages
installed in this environment (their METADATA files), chunked like the readme source does;
questions and clean answers are made once by the question and answer stages (cached in the
benchmark's folder, so a second run starts at injection).

    python benchmarks/edit_anchors.py [PAIRS] [FOLDER]
"""

from __future__ import annotations

import email
import json
import sys
import tempfile
from pathlib import Path

from datasets import Dataset, disable_progress_bars

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.vllm_backend import VLLMBackend
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.stages.answers import AnswerStage
from lettuce_build.stages.injection import InjectMenuStage
from lettuce_build.stages.questions import QuestionStage


class OneAttempt(InjectMenuStage):
    max_attempts = 1


def installed_readmes(folder: Path) -> Path:
    """Markdown long descriptions of the installed packages, one file each."""
    folder.mkdir(parents=True, exist_ok=True)
    for metadata in sorted(Path(sys.prefix).glob("lib/python*/site-packages/*.dist-info/METADATA")):
        message = email.message_from_string(metadata.read_text(encoding="utf-8", errors="replace"))
        body = message.get_payload()
        name = str(message.get("Name", "")).lower()
        if "markdown" in str(message.get("Description-Content-Type", "")) and len(body) > 2500:
            if name != "lettuce-build":
                (folder / f"{name}.md").write_text(body)
    return folder


def pairs(runner: Runner, docs: Path, wanted: int) -> Dataset:
    items = Dataset.from_list(ReadmeSource().load(str(docs), LoadOptions(limit=wanted * 2)).items)
    for stage in (QuestionStage(), AnswerStage()):
        items = runner.run(items, stage).ok
    return items.select(range(min(wanted, len(items))))


def measure(runner: Runner, items: Dataset, anchors: str) -> dict[str, float]:
    result = runner.run(items, OneAttempt("markdown", anchors=anchors))  # type: ignore[arg-type]
    dropped = [d for row in result.ok["injection"][:] for d in json.loads(row)["dropped"]]
    not_found = sum(d["reason"] == "not_found" for d in dropped)
    not_found += sum(f.detail.count("'not_found'") for f in result.failures)
    stats = result.stats
    return {
        "valid": len(result.ok),
        "not_found": not_found,
        "tokens_per_s": stats.completion_tokens / stats.backend_seconds if stats.backend_seconds else 0.0,
        "seconds": stats.backend_seconds,
    }


def main() -> None:
    wanted = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    folder = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="edit-anchors-"))
    disable_progress_bars()
    backend = VLLMBackend("smollm2-135m")
    cache = BuildDir(folder).open_cache()
    runner = Runner(Completions(backend, cache), seed=0)
    items = pairs(runner, installed_readmes(folder / "readmes"), wanted)
    print(f"{len(items)} (context, clean answer) pairs from installed packages' READMEs; one attempt each")
    results = {mode: measure(runner, items, mode) for mode in ("free", "constrained")}
    cache.close()
    for mode, r in results.items():
        print(
            f"  {mode:<12} items with a valid span {r['valid']:>3}/{len(items)} "
            f"({r['valid'] / len(items):.0%}), not_found {r['not_found']:>3}, "
            f"{r['tokens_per_s']:.0f} generated tokens/s, {r['seconds']:.1f} s"
        )
    free, constrained = results["free"], results["constrained"]
    ratio = constrained["valid"] / free["valid"] if free["valid"] else float("inf")
    print(
        f"  constrained / free-form: {ratio:.1f}x the items with a valid span (goal >= 2x), "
        f"not_found {constrained['not_found']} (goal 0), "
        f"time {constrained['seconds'] / free['seconds']:.2f}x"
    )


if __name__ == "__main__":
    main()
