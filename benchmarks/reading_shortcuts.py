"""Whether a build's data must be read to be labelled, before and after a change, on the same
inputs: samples per work item (passages skipped at chunking count as work items), the
hallucinated share, the spelling baseline (core/shortcuts.py: example and word F1, the share of
spans holding a word the context never spells), the spans per subcategory, and the model's tokens
per published sample. Each figure of AFTER is printed beside BEFORE's, with their ratio.

    python benchmarks/reading_shortcuts.py BEFORE_DIR AFTER_DIR   # two finished build folders
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.view.audit import quality_report


def figures(folder: Path) -> dict[str, float]:
    manifest = BuildDir(folder).read_manifest()
    counts = manifest.counts
    assert counts is not None, f"{folder}: the build has not finished"
    samples = counts.hallucinated + counts.clean
    items = counts.items + sum(counts.skipped.values())
    report = quality_report(folder)
    shortcuts = report.shortcuts
    tokens = manifest.cost.prompt_tokens + manifest.cost.completion_tokens
    return {
        "work items (skipped included)": items,
        "samples": samples,
        "samples per work item": samples / items if items else 0.0,
        "hallucinated share": counts.hallucinated / samples if samples else 0.0,
        "spelling baseline, example F1": shortcuts.example_f1,
        "spelling baseline, word F1": shortcuts.word_f1,
        "spans holding a new word": shortcuts.spans.share,
        "subcategories with spans": len(shortcuts.by_subcategory),
        "model tokens per sample": tokens / samples if samples else 0.0,
    }


def subcategories(folder: Path) -> Counter[str]:
    report = quality_report(folder).shortcuts
    return Counter({kind: share.spans for kind, share in report.by_subcategory.items()})


def main() -> None:
    before, after = (Path(arg) for arg in sys.argv[1:3])
    old, new = figures(before), figures(after)
    print(f"{'':34} {'before':>10} {'after':>10} {'after/before':>13}")
    for name, value in old.items():
        ratio = f"{new[name] / value:.2f}x" if value else "-"
        print(f"{name:34} {value:10.2f} {new[name]:10.2f} {ratio:>13}")
    print(f"spans by subcategory, before: {dict(subcategories(before))}")
    print(f"spans by subcategory, after:  {dict(subcategories(after))}")


if __name__ == "__main__":
    main()
