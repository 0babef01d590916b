"""How good generator-mode spans are: `lettuce-build report OUT` and the card's numbers.

A generated sample keeps two views of its hallucinations (stages/generation.py): the spans a
character-level diff against the clean answer recovered, and the phrases the model reported,
found in its answer. On the same samples:

- precision: of the characters the diff marked, the share inside a reported phrase;
- recall: of the reported characters, the share the diff marked;
- unreported diff spans: diff spans that overlap no report, i.e. paraphrase the model did not
  call a hallucination (the diff's false alarms, or the model's under-reporting);
- passed validation: of the generations that produced spans, the share whose spans passed the
  injection's validation rules (the rest are failure rows of stage ``generate``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.spans import SpanFailureReason

if TYPE_CHECKING:
    from datasets import DatasetDict

GENERATE_STAGE = "generate"


class SpanQuality(BaseModel):
    generated_samples: int
    by_origin: dict[str, int]
    diff_precision: float
    diff_recall: float
    unreported_diff_spans: float
    passed_validation: float
    validation_failures: dict[str, int]

    def text(self) -> str:
        return "\n".join(
            [
                f"generated samples: {self.generated_samples} (spans by origin: {self.by_origin})",
                f"  diff spans vs reported phrases, in characters: precision {self.diff_precision:.2f}, "
                f"recall {self.diff_recall:.2f}",
                "  diff spans overlapping no report (unreported paraphrase): "
                f"{self.unreported_diff_spans:.2f}",
                f"  generations whose spans passed the injection rules: {self.passed_validation:.2f} "
                f"(failed: {self.validation_failures or 'none'})",
            ]
        )


def _chars(spans: list[Any]) -> set[int]:
    return {n for start, end in spans for n in range(start, end)}


def span_quality(out: Path, dataset: DatasetDict | None = None) -> SpanQuality | None:
    """The report over a build folder's generated samples (``dataset``: its samples, when the
    caller has them loaded already); None when it has none."""
    from datasets import load_from_disk

    folder = out / "dataset"
    if dataset is None and folder.exists():
        dataset = load_from_disk(str(folder))
    generated, origins = 0, Counter[str]()
    marked = reported = both = 0
    unreported = diff_total = 0
    for record in _generated(dataset):
        generated += 1
        origins[record.get("span_origin", "?")] += 1
        diff = _chars(record.get("diff") or [])
        located = [(r["start"], r["end"]) for r in record.get("located") or []]
        said = _chars(located)
        marked, reported, both = marked + len(diff), reported + len(said), both + len(diff & said)
        for start, end in record.get("diff") or []:
            diff_total += 1
            unreported += not any(s < end and start < e for s, e in located)
    if not generated:
        return None
    validation = set(get_args(SpanFailureReason))
    failed = Counter(f.reason for f in BuildDir(out).iter_failures(GENERATE_STAGE) if f.reason in validation)
    return SpanQuality(
        generated_samples=generated,
        by_origin=dict(origins),
        diff_precision=both / marked if marked else 0.0,
        diff_recall=both / reported if reported else 0.0,
        unreported_diff_spans=unreported / diff_total if diff_total else 0.0,
        passed_validation=generated / (generated + sum(failed.values())),
        validation_failures=dict(failed),
    )


def _generated(dataset: DatasetDict | None) -> Iterator[dict[str, Any]]:
    """The injection record of each generated sample, read a batch of metadata at a time."""
    for split in dataset.values() if dataset is not None else []:
        for batch in split.select_columns(["metadata"]).iter(batch_size=1_000):
            for metadata in batch["metadata"]:
                injection = json.loads(metadata or "{}").get("injection") or {}
                if injection.get("mode") == "generate":
                    yield injection
